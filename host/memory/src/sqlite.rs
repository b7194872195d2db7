//! The default [`MemoryStore`]: one SQLite file in the host's data dir (`memory.db`), every
//! accepted version of every document kept (append-only: `UPDATE` and `DELETE` are refused by
//! triggers).
//!
//! The file is marked as Guild's memory store (`PRAGMA application_id` = [`APPLICATION_ID`],
//! schema version in `user_version`) and opened through the same code as the receipts ledger
//! ([`guild_store`]): an empty file or another application's database is refused,
//! never adopted. WAL with `synchronous=FULL`, so an acknowledged version survives a power
//! loss. One connection behind a mutex; every method blocks (async callers use
//! `spawn_blocking`). An append checks the head inside a `BEGIN IMMEDIATE` transaction, so two
//! processes writing the same file never both win.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::{DocId, MemoryStore, MemoryStoreError, NewVersion, StoredVersion, VersionInfo};
use guild_store::{self as dbfile, Access, DbSpec};

/// File name of the memory store in the host's data dir.
pub const MEMORY_FILE: &str = "memory.db";

/// `PRAGMA application_id` of a memory store: "GLDM".
pub const APPLICATION_ID: i32 = 0x474C_444D;

const SCHEMA: &str = "
CREATE TABLE versions (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    version INTEGER NOT NULL,
    actor TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    chars INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    restored_from INTEGER,
    text TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX versions_doc ON versions (scope, owner, version);
CREATE TRIGGER versions_no_update BEFORE UPDATE ON versions
BEGIN
    SELECT RAISE(ABORT, 'memory versions are append-only: UPDATE refused');
END;
CREATE TRIGGER versions_no_delete BEFORE DELETE ON versions
BEGIN
    SELECT RAISE(ABORT, 'memory versions are append-only: DELETE refused');
END;
";

const SPEC: DbSpec = DbSpec {
    what: "memory store",
    application_id: APPLICATION_ID,
    version: 1,
    schema: SCHEMA,
    // No build wrote unstamped memory stores: only a file with exactly this schema would be
    // adopted, and an unmarked database without it (even an empty one) is refused.
    legacy_schema: SCHEMA,
    upgrade_legacy: "",
    upgrades: &[],
};

const COLUMNS: &str = "version, actor, at_ms, sha256, chars, bytes, restored_from, text";

/// The SQLite memory store.
pub struct SqliteMemoryStore {
    conn: Mutex<Connection>,
    path: PathBuf,
}

type Result<T> = std::result::Result<T, MemoryStoreError>;

fn sql(op: &'static str) -> impl FnOnce(rusqlite::Error) -> MemoryStoreError {
    move |source| MemoryStoreError::Sqlite { op, source }
}

impl SqliteMemoryStore {
    /// Opens (creating when no file is there) the store at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let conn = dbfile::open(&path, &SPEC, Access::ReadWrite)?.conn;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
            .map_err(sql("enable WAL on"))?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sql("set synchronous=FULL on"))?;
        Ok(Self {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// A store in memory only (tests, dry runs).
    pub fn open_in_memory() -> Result<Self> {
        Ok(Self {
            conn: Mutex::new(dbfile::open_in_memory(&SPEC)?),
            path: PathBuf::from(":memory:"),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves the connection usable: SQLite rolled back.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(VersionInfo, String)> {
    let info = VersionInfo {
        version: r.get::<_, i64>(0)? as u64,
        actor: r.get(1)?,
        at_ms: r.get::<_, i64>(2)? as u64,
        sha256: r.get(3)?,
        chars: r.get::<_, i64>(4)? as usize,
        bytes: r.get::<_, i64>(5)? as usize,
        restored_from: r.get::<_, Option<i64>>(6)?.map(|v| v as u64),
    };
    Ok((info, r.get(7)?))
}

fn head(conn: &Connection, doc: &DocId) -> rusqlite::Result<u64> {
    conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM versions WHERE scope = ?1 AND owner = ?2",
        params![doc.scope.as_str(), doc.owner],
        |r| r.get::<_, i64>(0),
    )
    .map(|v| v as u64)
}

impl MemoryStore for SqliteMemoryStore {
    fn current(&self, doc: &DocId) -> Result<Option<StoredVersion>> {
        let found = self
            .conn()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM versions WHERE scope = ?1 AND owner = ?2 \
                     ORDER BY version DESC LIMIT 1"
                ),
                params![doc.scope.as_str(), doc.owner],
                row,
            )
            .optional()
            .map_err(sql("read the current version from"))?;
        found
            .map(|f| StoredVersion::checked(doc, f.0, f.1))
            .transpose()
    }

    fn version(&self, doc: &DocId, version: u64) -> Result<Option<StoredVersion>> {
        let found = self
            .conn()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM versions WHERE scope = ?1 AND owner = ?2 AND version = ?3"
                ),
                params![doc.scope.as_str(), doc.owner, version as i64],
                row,
            )
            .optional()
            .map_err(sql("read a version from"))?;
        found
            .map(|f| StoredVersion::checked(doc, f.0, f.1))
            .transpose()
    }

    fn history(&self, doc: &DocId, limit: usize) -> Result<Vec<VersionInfo>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT version, actor, at_ms, sha256, chars, bytes, restored_from, '' \
                 FROM versions WHERE scope = ?1 AND owner = ?2 ORDER BY version DESC LIMIT ?3",
            )
            .map_err(sql("read the history from"))?;
        let rows = stmt
            .query_map(
                params![
                    doc.scope.as_str(),
                    doc.owner,
                    limit.min(i64::MAX as usize) as i64
                ],
                row,
            )
            .map_err(sql("read the history from"))?;
        rows.map(|r| r.map(|(info, _)| info))
            .collect::<rusqlite::Result<_>>()
            .map_err(sql("read the history from"))
    }

    fn append(&self, doc: &DocId, parent: Option<u64>, new: NewVersion) -> Result<VersionInfo> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql("start a write to"))?;
        let found = head(&tx, doc).map_err(sql("read the head of"))?;
        let expected = parent.unwrap_or(0);
        if found != expected {
            return Err(MemoryStoreError::Conflict {
                doc: doc.to_string(),
                expected,
                found,
            });
        }
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let info = new.info(found + 1, at_ms);
        tx.execute(
            "INSERT INTO versions (scope, owner, version, actor, at_ms, sha256, chars, bytes, \
             restored_from, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                doc.scope.as_str(),
                doc.owner,
                info.version as i64,
                info.actor,
                info.at_ms as i64,
                info.sha256,
                info.chars as i64,
                info.bytes as i64,
                info.restored_from.map(|v| v as i64),
                new.text,
            ],
        )
        .map_err(sql("append a version to"))?;
        tx.commit().map_err(sql("commit a version to"))?;
        Ok(info)
    }
}
