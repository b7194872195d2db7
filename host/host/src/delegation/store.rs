//! The tree store: every delegation tree in SQLite (`trees.db` in the data dir, opened through
//! `guild-store`), so that a restart of the host loses no tree — pending reviews, approved next
//! tasks and budgets spent included. One row per node (its parent and root ids as columns, the
//! rest as JSON) and one per root anchor. After each change the host saves the tree: the rows
//! that differ from what the store holds (the changed nodes), in one transaction, in WAL mode
//! with `synchronous = NORMAL` (why that is enough: docs/delegation.md#where-the-trees-are-kept).
//! At start it reads every tree, and a node whose task was running when the host stopped reads
//! as interrupted.

use std::collections::{HashMap, HashSet};
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
    db: Mutex<Db>,
    path: PathBuf,
}

/// The connection, and what the store's rows hold (as this process read or wrote them): a
/// save writes only the rows that differ.
struct Db {
    conn: Connection,
    /// Each node row's JSON, by task id.
    nodes: HashMap<String, String>,
    /// The roots whose anchor row is written (an anchor never changes).
    anchors: HashSet<String>,
}

impl TreeStore {
    /// Opens (creating when missing) the tree store at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self, TreeStoreError> {
        let conn = dbfile::open(path, &SPEC, Access::ReadWrite)?.conn;
        let store = Self::with(conn, path);
        {
            let db = store.db();
            db.conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
                .map_err(|e| store.sql(e))?;
            // A commit survives the process at once and the disk at the next checkpoint
            // (docs/delegation.md#where-the-trees-are-kept).
            db.conn
                .pragma_update(None, "synchronous", "NORMAL")
                .map_err(|e| store.sql(e))?;
        }
        Ok(store)
    }

    /// Opens an existing tree store with `SQLITE_OPEN_READ_ONLY` (nothing is written).
    pub(crate) fn open_read_only(path: &Path) -> Result<Self, TreeStoreError> {
        let conn = dbfile::open(path, &SPEC, Access::ReadOnly)?.conn;
        Ok(Self::with(conn, path))
    }

    fn with(conn: Connection, path: &Path) -> Self {
        Self {
            db: Mutex::new(Db {
                conn,
                nodes: HashMap::new(),
                anchors: HashSet::new(),
            }),
            path: path.to_path_buf(),
        }
    }

    fn db(&self) -> std::sync::MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
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
        let mut roots = HashSet::new();
        for node in state.nodes.values_mut() {
            if node.status == NodeStatus::Running {
                node.status = NodeStatus::Interrupted;
                roots.insert(node.root.clone());
            }
        }
        for root in roots {
            self.save(&state, &root)?;
        }
        Ok(state)
    }

    /// Every stored tree, as stored.
    pub(crate) fn read(&self) -> Result<ForestState, TreeStoreError> {
        let mut state = ForestState::default();
        let mut db = self.db();
        let Db {
            conn,
            nodes: written,
            anchors: anchored,
        } = &mut *db;
        let mut nodes = conn
            .prepare("SELECT task_id, node FROM nodes")
            .map_err(|e| self.sql(e))?;
        let rows = nodes
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql(e))?;
        for row in rows {
            let (id, json) = row.map_err(|e| self.sql(e))?;
            let node: Node = serde_json::from_str(&json).map_err(|e| self.row(&id, &e))?;
            state.nodes.insert(id.clone(), node);
            written.insert(id, json);
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
            state.anchors.insert(root.clone(), anchor);
            anchored.insert(root);
        }
        Ok(state)
    }

    /// Saves the tree of `root`: the rows that differ from what the store holds (its anchor
    /// once, each changed node), in one transaction; nothing when nothing changed.
    pub(crate) fn save(&self, state: &ForestState, root: &str) -> Result<(), TreeStoreError> {
        let mut db = self.db();
        let anchor = match state.anchors.get(root) {
            Some(anchor) if !db.anchors.contains(root) => {
                Some(serde_json::to_string(anchor).map_err(|e| self.row(root, &e))?)
            }
            _ => None,
        };
        let mut changed = Vec::new();
        for (id, node) in state.nodes.iter().filter(|(_, n)| n.root == root) {
            let json = serde_json::to_string(node).map_err(|e| self.row(id, &e))?;
            if db.nodes.get(id) != Some(&json) {
                changed.push((id, node.parent.as_deref(), json));
            }
        }
        if anchor.is_none() && changed.is_empty() {
            return Ok(());
        }
        let now = super::now_ms() as i64;
        let tx = db.conn.transaction().map_err(|e| self.sql(e))?;
        if let Some(json) = &anchor {
            tx.execute(
                "INSERT INTO anchors (root, anchor) VALUES (?1, ?2)
                 ON CONFLICT (root) DO UPDATE SET anchor = excluded.anchor",
                params![root, json],
            )
            .map_err(|e| self.sql(e))?;
        }
        for (id, parent, json) in &changed {
            tx.execute(
                "INSERT INTO nodes (task_id, root, parent, node, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (task_id) DO UPDATE SET node = excluded.node,
                     updated_ms = excluded.updated_ms",
                params![id, root, parent, json, now],
            )
            .map_err(|e| self.sql(e))?;
        }
        tx.commit().map_err(|e| self.sql(e))?;
        // Only what is committed counts as written.
        if anchor.is_some() {
            db.anchors.insert(root.to_owned());
        }
        for (id, _, json) in changed {
            db.nodes.insert(id.clone(), json);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use guild_delegate::{Budget, TreeLimits};

    use super::*;

    /// The rows SQLite changed since the connection opened.
    fn changes(store: &TreeStore) -> u64 {
        store.db().conn.total_changes()
    }

    #[test]
    fn a_save_writes_only_the_changed_nodes_and_a_restart_reads_them_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(TREES_FILE);
        let limits = TreeLimits {
            max_depth: 2,
            max_children: 4,
            budget: Budget {
                tasks: 4,
                tool_calls: 8,
                tokens: 100,
                wall_ms: 1_000,
            },
        };
        let anchor =
            RootAnchor::new("sort the issues", &["sorted".to_owned()], &[]).expect("anchor");
        let mut state = ForestState::default();
        state
            .plant_root("top", "boss", &limits, anchor.clone())
            .expect("root");
        state
            .plant_root("other", "boss", &limits, anchor)
            .expect("another tree");
        let store = TreeStore::open(&path).expect("open");
        store.save(&state, "top").expect("save");
        // The anchor and the one node of the tree; nothing of the other tree.
        assert_eq!(changes(&store), 2);
        store.save(&state, "top").expect("save");
        assert_eq!(changes(&store), 2, "nothing changed, nothing written");
        state
            .charge(
                "top",
                &Budget {
                    tool_calls: 3,
                    ..Budget::default()
                },
            )
            .expect("charge");
        store.save(&state, "top").expect("save");
        assert_eq!(changes(&store), 3, "one node changed, one row written");
        drop(store);

        let store = TreeStore::open(&path).expect("reopen");
        let read = store.load().expect("load");
        let top = &read.nodes["top"];
        assert_eq!(top.state.remaining.tool_calls, 5);
        // It was running: it reads (and is stored) interrupted, and only that row is written.
        assert_eq!(top.status, NodeStatus::Interrupted);
        assert!(!read.nodes.contains_key("other"), "never saved");
        assert_eq!(changes(&store), 1);
        assert_eq!(
            TreeStore::open_read_only(&path)
                .expect("read")
                .read()
                .expect("read")
                .nodes["top"]
                .status,
            NodeStatus::Interrupted
        );
    }
}
