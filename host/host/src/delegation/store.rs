//! The tree store: every delegation tree in SQLite (`trees.db` in the data dir, opened through
//! `guild-store`), so that a restart of the host loses no tree — pending reviews, approved next
//! tasks and budgets spent included. One row per node (its parent and root ids as columns, the
//! rest as JSON) and one per root anchor. The host writes a tree whole, in one transaction,
//! after each change; at start it reads every tree, and a node whose task was running when the
//! host stopped reads as interrupted.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use guild_delegate::RootAnchor;
use guild_store::{self as dbfile, Access, DbFileError, DbSpec};
use rusqlite::{Connection, params};

use super::{ForestState, Node, NodeStatus};

/// File name of the tree store in the host's data dir.
pub const TREES_FILE: &str = "trees.db";

/// `PRAGMA application_id` of a tree store: "GLDD".
pub(super) const APPLICATION_ID: i32 = 0x474C_4444;

const SCHEMA: &str = "
CREATE TABLE nodes (
    task_id TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    parent TEXT,
    node TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE INDEX nodes_root ON nodes (root);
CREATE TABLE anchors (
    root TEXT PRIMARY KEY,
    anchor TEXT NOT NULL
);
";

const SPEC: DbSpec = DbSpec {
    what: "tree store",
    application_id: APPLICATION_ID,
    version: 1,
    schema: SCHEMA,
    // No build wrote trees before this one: nothing to adopt but the schema itself.
    legacy_schema: SCHEMA,
    upgrade_legacy: "",
    upgrades: &[],
};

/// Why the tree store could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum TreeStoreError {
    /// The file is missing, empty, not SQLite, or not a Guild tree store.
    #[error(transparent)]
    File(#[from] DbFileError),
    /// A read or write failed.
    #[error("tree store {}: {source}", path.display())]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// A stored row is not a node or anchor this build reads.
    #[error("tree store {}: row {id}: {message}", path.display())]
    Row {
        /// The file.
        path: PathBuf,
        /// The row's key.
        id: String,
        /// What was wrong.
        message: String,
    },
}

pub(crate) struct TreeStore {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl TreeStore {
    /// Opens (creating when missing) the tree store at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self, TreeStoreError> {
        let conn = dbfile::open(path, &SPEC, Access::ReadWrite)?.conn;
        let store = Self {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        };
        {
            let conn = store.conn();
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
                .map_err(|e| store.sql(e))?;
            conn.pragma_update(None, "synchronous", "FULL")
                .map_err(|e| store.sql(e))?;
        }
        Ok(store)
    }

    /// Opens an existing tree store with `SQLITE_OPEN_READ_ONLY` (nothing is written).
    pub(crate) fn open_read_only(path: &Path) -> Result<Self, TreeStoreError> {
        let conn = dbfile::open(path, &SPEC, Access::ReadOnly)?.conn;
        Ok(Self {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sql(&self, source: rusqlite::Error) -> TreeStoreError {
        TreeStoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn row(&self, id: &str, e: &serde_json::Error) -> TreeStoreError {
        TreeStoreError::Row {
            path: self.path.clone(),
            id: id.to_owned(),
            message: e.to_string(),
        }
    }

    /// Every stored tree. Nodes that were running when the host stopped are interrupted (and
    /// stored so).
    pub(crate) fn load(&self) -> Result<ForestState, TreeStoreError> {
        let mut state = self.read()?;
        for node in state.nodes.values_mut() {
            if node.status == NodeStatus::Running {
                node.status = NodeStatus::Interrupted;
            }
        }
        let roots: Vec<String> = state.anchors.keys().cloned().collect();
        for root in roots {
            self.save(&state, &root)?;
        }
        Ok(state)
    }

    /// Every stored tree, as stored.
    pub(crate) fn read(&self) -> Result<ForestState, TreeStoreError> {
        let mut state = ForestState::default();
        let conn = self.conn();
        let mut nodes = conn
            .prepare("SELECT task_id, node FROM nodes")
            .map_err(|e| self.sql(e))?;
        let rows = nodes
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql(e))?;
        for row in rows {
            let (id, json) = row.map_err(|e| self.sql(e))?;
            let node: Node = serde_json::from_str(&json).map_err(|e| self.row(&id, &e))?;
            state.nodes.insert(id, node);
        }
        let mut anchors = conn
            .prepare("SELECT root, anchor FROM anchors")
            .map_err(|e| self.sql(e))?;
        let rows = anchors
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql(e))?;
        for row in rows {
            let (root, json) = row.map_err(|e| self.sql(e))?;
            let anchor: RootAnchor =
                serde_json::from_str(&json).map_err(|e| self.row(&root, &e))?;
            state.anchors.insert(root, anchor);
        }
        Ok(state)
    }

    /// Writes the tree of `root` whole, in one transaction.
    pub(crate) fn save(&self, state: &ForestState, root: &str) -> Result<(), TreeStoreError> {
        let now = super::now_ms() as i64;
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.sql(e))?;
        if let Some(anchor) = state.anchors.get(root) {
            let json = serde_json::to_string(anchor).map_err(|e| self.row(root, &e))?;
            tx.execute(
                "INSERT INTO anchors (root, anchor) VALUES (?1, ?2)
                 ON CONFLICT (root) DO UPDATE SET anchor = excluded.anchor",
                params![root, json],
            )
            .map_err(|e| self.sql(e))?;
        }
        for (id, node) in state.nodes.iter().filter(|(_, n)| n.root == root) {
            let json = serde_json::to_string(node).map_err(|e| self.row(id, &e))?;
            tx.execute(
                "INSERT INTO nodes (task_id, root, parent, node, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (task_id) DO UPDATE SET node = excluded.node,
                     updated_ms = excluded.updated_ms",
                params![id, root, node.parent, json, now],
            )
            .map_err(|e| self.sql(e))?;
        }
        tx.commit().map_err(|e| self.sql(e))
    }
}
