//! The task store: background tasks and their event logs in SQLite, so that a host restart
//! never silently loses a task. Each live task names the host process that owns it (see
//! [`super::owner`]); a task whose owner is gone is marked `interrupted` (its reports are
//! kept) by the next host that opens the store or beats its heartbeat. The file is marked as a
//! task store (`PRAGMA application_id` = [`APPLICATION_ID`]); an empty file or another
//! application's database is refused, never adopted.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::owner::{self, Claim, Clock, Heartbeat, Owner, SystemClock, Watch, interrupt_orphans};
use crate::types::{ProgressReport, TaskResult};
use guild_store::{self as dbfile, Access, DbFileError, DbSpec};

/// Status of a background task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundStatus {
    /// Waiting for a slot.
    Queued,
    /// An attempt is running.
    Running,
    /// Finished with a report.
    Succeeded,
    /// Finished without an acceptable report.
    Failed,
    /// Ran out of time.
    TimedOut,
    /// Cancelled by the caller.
    Cancelled,
    /// The host stopped while it was queued or running.
    Interrupted,
}

impl BackgroundStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
        }
    }

    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "queued" => Self::Queued,
            "running" => Self::Running,
            "succeeded" => Self::Succeeded,
            "timed_out" => Self::TimedOut,
            "cancelled" => Self::Cancelled,
            "interrupted" => Self::Interrupted,
            _ => Self::Failed,
        }
    }

    /// Whether the task can still change.
    pub fn is_live(self) -> bool {
        matches!(self, Self::Queued | Self::Running)
    }
}

/// One stored task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRecord {
    /// Task id.
    pub id: String,
    /// Specialist asked for.
    pub specialist: String,
    /// The original brief.
    pub description: String,
    /// Updates appended with `update_task`, in order.
    pub updates: Vec<String>,
    /// Current status.
    pub status: BackgroundStatus,
    /// Attempt number (1 + number of updates that restarted it).
    pub attempt: u32,
    /// The final result of the last attempt.
    pub result: Option<TaskResult>,
    /// Created, ms since the epoch.
    pub created_ms: u64,
    /// Last change, ms since the epoch.
    pub updated_ms: u64,
}

/// File name of the task store in the host's data dir.
pub const TASKS_FILE: &str = "tasks.db";

/// `PRAGMA application_id` of a task store: "GLDT".
pub const APPLICATION_ID: i32 = 0x474C_4454;

/// The schema this build writes (version 1: with task owners).
const SCHEMA: &str = "
CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    specialist TEXT NOT NULL,
    description TEXT NOT NULL,
    updates TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 1,
    result TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    checked_seq INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    owner_boot TEXT,
    owner_pid INTEGER,
    lease_ms INTEGER
);
CREATE TABLE events (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
);
";

/// What builds before the marks and owners wrote (no application id, no owner columns).
const LEGACY_SCHEMA: &str = "
CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    specialist TEXT NOT NULL,
    description TEXT NOT NULL,
    updates TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 1,
    result TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    checked_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE events (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
);
";

const SPEC: DbSpec = DbSpec {
    what: "task store",
    application_id: APPLICATION_ID,
    version: 1,
    schema: SCHEMA,
    legacy_schema: LEGACY_SCHEMA,
    upgrade_legacy: "ALTER TABLE tasks ADD COLUMN owner TEXT;
        ALTER TABLE tasks ADD COLUMN owner_boot TEXT;
        ALTER TABLE tasks ADD COLUMN owner_pid INTEGER;
        ALTER TABLE tasks ADD COLUMN lease_ms INTEGER;",
    upgrades: &[],
};

/// Why the task store could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is missing (read-only open), empty, not SQLite, or not a Guild task store.
    #[error(transparent)]
    File(#[from] DbFileError),
    /// The shared PostgreSQL task store failed (the error names the server and database).
    #[error(transparent)]
    Postgres(#[from] guild_pg::PgError),
    /// A read or write failed.
    #[error("task store {}: {source}", path.display())]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
}

pub(crate) struct TaskStore {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// This process, as the owner of the tasks it starts; `None` for a read-only store.
    owner: Option<Owner>,
    /// Read-only open of a store of an earlier build: it has no owner columns.
    legacy: bool,
    /// How this store tells whether another owner is gone (shared with the heartbeat).
    watch: Arc<Watch>,
    /// Keeps this owner's leases fresh; stops when the store is dropped.
    _heartbeat: Option<Heartbeat>,
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

type Sql<T> = Result<T, rusqlite::Error>;

impl TaskStore {
    /// Opens the store for a host that runs tasks (creating it when no file is there), starts
    /// the heartbeat of this owner, and marks live tasks whose owner is gone as interrupted.
    /// Live tasks of another live owner are left alone.
    pub(crate) fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with_clock(path, Arc::new(SystemClock))
    }

    /// [`TaskStore::open`] on `clock` (tests give it a clock that runs ahead).
    pub(crate) fn open_with_clock(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        let conn = dbfile::open(path, &SPEC, Access::ReadWrite)?.conn;
        // A full disk is said as such (SQLite would say "disk I/O error").
        let sql = |source| match DbFileError::from_sqlite(
            SPEC.what,
            path.to_path_buf(),
            "prepare",
            source,
        ) {
            DbFileError::Sqlite { source, .. } => StoreError::Sqlite {
                path: path.to_path_buf(),
                source,
            },
            other => StoreError::File(other),
        };
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
            .map_err(sql)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sql)?;
        let owner = Owner::this_process();
        let watch = Arc::new(Watch::new(clock));
        let heartbeat = Heartbeat::start(path, &owner, watch.clone()).map_err(sql)?;
        let store = Self {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            owner: Some(owner),
            legacy: false,
            watch,
            _heartbeat: Some(heartbeat),
        };
        store.interrupt_orphans().map_err(sql)?;
        Ok(store)
    }

    /// Opens an existing store with `SQLITE_OPEN_READ_ONLY`: nothing is created, upgraded,
    /// claimed or moved (not even the report cursor). A live task whose owner is gone reads
    /// as interrupted, as the next host to open the store will record it.
    pub(crate) fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        let opened = dbfile::open(path, &SPEC, Access::ReadOnly)?;
        Ok(Self {
            conn: Mutex::new(opened.conn),
            path: path.to_path_buf(),
            owner: None,
            legacy: opened.legacy,
            watch: Arc::new(Watch::new(Arc::new(SystemClock))),
            _heartbeat: None,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the row of task `id` says about its owner (nothing in a legacy store).
    fn claim(&self, id: &str) -> Sql<Option<Claim>> {
        if self.legacy {
            return Ok(Some(Claim::default()));
        }
        self.conn()
            .query_row(
                "SELECT owner, owner_boot, owner_pid, lease_ms FROM tasks WHERE id = ?1",
                params![id],
                |r| {
                    Ok(Claim {
                        owner: r.get(0)?,
                        boot: r.get(1)?,
                        pid: r.get(2)?,
                        lease_ms: r.get(3)?,
                    })
                },
            )
            .optional()
    }

    /// Why the owner of task `id` is gone (`None`: it may still be running it).
    fn orphaned(&self, id: &str) -> Sql<Option<String>> {
        Ok(self.claim(id)?.and_then(|c| self.watch.gone(id, &c)))
    }

    /// Marks the live tasks of owners that are gone as interrupted (reports are kept).
    pub(crate) fn interrupt_orphans(&self) -> Sql<()> {
        interrupt_orphans(&self.conn(), self.owner.as_ref(), &self.watch)
    }

    /// Where this owner's heartbeat starts: its wall clock plus the lease.
    fn lease_until(&self) -> i64 {
        (self.watch.wall_ms() + owner::LEASE.as_millis() as u64) as i64
    }

    /// This process as the owner (`Err` on a read-only store, which never writes).
    fn me(&self) -> Sql<&Owner> {
        self.owner.as_ref().ok_or(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            Some("the task store was opened read-only".into()),
        ))
    }

    /// A new queued task owned by this process.
    pub(crate) fn insert(&self, id: &str, specialist: &str, description: &str) -> Sql<()> {
        let me = self.me()?;
        let now = now_ms() as i64;
        self.conn().execute(
            "INSERT INTO tasks (id, specialist, description, status, created_ms, updated_ms,
                                owner, owner_boot, owner_pid, lease_ms)
             VALUES (?1, ?2, ?3, 'queued', ?4, ?4, ?5, ?6, ?7, ?8)",
            params![
                id,
                specialist,
                description,
                now,
                me.id,
                me.boot,
                me.pid,
                self.lease_until()
            ],
        )?;
        Ok(())
    }

    pub(crate) fn set_status(&self, id: &str, status: BackgroundStatus) -> Sql<()> {
        self.conn().execute(
            "UPDATE tasks SET status = ?2, updated_ms = ?3 WHERE id = ?1",
            params![id, status.as_str(), now_ms() as i64],
        )?;
        Ok(())
    }

    /// Attempt `attempt` got a slot: running, unless it was cancelled or replaced meanwhile;
    /// whether it may run.
    pub(crate) fn start_attempt(&self, id: &str, attempt: u32) -> Sql<bool> {
        let changed = self.conn().execute(
            "UPDATE tasks SET status = 'running', updated_ms = ?3
             WHERE id = ?1 AND attempt = ?2 AND status = 'queued'",
            params![id, attempt, now_ms() as i64],
        )?;
        Ok(changed == 1)
    }

    /// Records the result of attempt `attempt`, unless the task was cancelled or moved on to
    /// a later attempt meanwhile. An attempt reaped as interrupted while it still ran (where
    /// only its heartbeat could be watched, and its owner stalled) still records its real result.
    pub(crate) fn finish(
        &self,
        id: &str,
        attempt: u32,
        status: BackgroundStatus,
        result: &TaskResult,
    ) -> Sql<()> {
        let json = serde_json::to_string(result).unwrap_or_else(|_| "null".into());
        self.conn().execute(
            "UPDATE tasks SET status = ?2, result = ?3, updated_ms = ?4
             WHERE id = ?1 AND attempt = ?5 AND status IN ('queued', 'running', 'interrupted')",
            params![id, status.as_str(), json, now_ms() as i64, attempt],
        )?;
        Ok(())
    }

    /// For a live task owned by another process that is still there: which one.
    pub(crate) fn live_elsewhere(&self, id: &str) -> Sql<Option<String>> {
        let me = self.me()?;
        let live = self.get(id)?.is_some_and(|r| r.status.is_live());
        let Some(claim) = self.claim(id)?.filter(|_| live) else {
            return Ok(None);
        };
        let mine = claim.owner.as_deref() == Some(me.id.as_str());
        let gone = self.watch.gone(id, &claim).is_some();
        Ok((!mine && !gone).then(|| match claim.pid {
            Some(pid) => format!("process {pid}"),
            None => "another process".to_owned(),
        }))
    }

    /// Appends an update and queues the next attempt, owned by this process from now on;
    /// returns the new attempt number.
    pub(crate) fn add_update(&self, id: &str, update: &str) -> Sql<u32> {
        let me = self.me()?;
        let record = self.get(id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        let mut updates = record.updates;
        updates.push(update.to_owned());
        let json = serde_json::to_string(&updates).unwrap_or_else(|_| "[]".into());
        let attempt = record.attempt + 1;
        self.conn().execute(
            "UPDATE tasks SET updates = ?2, attempt = ?3, status = 'queued', result = NULL,
                 updated_ms = ?4, owner = ?5, owner_boot = ?6, owner_pid = ?7, lease_ms = ?8
             WHERE id = ?1",
            params![
                id,
                json,
                attempt,
                now_ms() as i64,
                me.id,
                me.boot,
                me.pid,
                self.lease_until()
            ],
        )?;
        Ok(attempt)
    }

    /// Appends an event; returns its sequence number.
    pub(crate) fn event(&self, id: &str, kind: &str, payload: &str) -> Sql<u64> {
        append_event(&self.conn(), id, kind, payload)
    }

    pub(crate) fn report(&self, id: &str, report: &ProgressReport) -> Sql<u64> {
        let json = serde_json::to_string(report).unwrap_or_else(|_| "{}".into());
        self.event(id, "report", &json)
    }

    /// Reports not yet returned by a check; moves the task's cursor past them (a read-only
    /// store leaves the cursor where it is).
    pub(crate) fn take_new_reports(&self, id: &str) -> Sql<Vec<ProgressReport>> {
        let conn = self.conn();
        let from: i64 = conn
            .query_row(
                "SELECT checked_seq FROM tasks WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        let mut stmt = conn.prepare(
            "SELECT seq, payload FROM events WHERE task_id = ?1 AND kind = 'report' AND seq > ?2 ORDER BY seq",
        )?;
        let rows: Vec<(i64, String)> = stmt
            .query_map(params![id, from], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Sql<_>>()?;
        if let (Some((last, _)), Some(_)) = (rows.last(), &self.owner) {
            conn.execute(
                "UPDATE tasks SET checked_seq = ?2 WHERE id = ?1",
                params![id, last],
            )?;
        }
        Ok(rows
            .into_iter()
            .filter_map(|(_, p)| serde_json::from_str(&p).ok())
            .collect())
    }

    /// Every report of the task, in order, whether or not a check returned it already; the
    /// cursor is not moved (reports of a finished or interrupted task can be shown again).
    pub(crate) fn reports(&self, id: &str) -> Sql<Vec<ProgressReport>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT payload FROM events WHERE task_id = ?1 AND kind = 'report' ORDER BY seq",
        )?;
        let rows: Vec<String> = stmt
            .query_map(params![id], |r| r.get(0))?
            .collect::<Sql<_>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|p| serde_json::from_str(&p).ok())
            .collect())
    }

    pub(crate) fn get(&self, id: &str) -> Sql<Option<TaskRecord>> {
        let record = self
            .conn()
            .query_row(
                "SELECT id, specialist, description, updates, status, attempt, result, created_ms, updated_ms
                 FROM tasks WHERE id = ?1",
                params![id],
                row_to_record,
            )
            .optional()?;
        record.map(|r| self.as_read(r)).transpose()
    }

    /// On a read-only store, a live task whose owner is gone reads as interrupted: that is
    /// what it is, though only a writing host records it.
    fn as_read(&self, mut record: TaskRecord) -> Sql<TaskRecord> {
        if self.owner.is_none() && record.status.is_live() && self.orphaned(&record.id)?.is_some() {
            record.status = BackgroundStatus::Interrupted;
        }
        Ok(record)
    }

    pub(crate) fn list(&self, limit: usize) -> Sql<Vec<TaskRecord>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT id, specialist, description, updates, status, attempt, result, created_ms, updated_ms
             FROM tasks ORDER BY created_ms DESC, id DESC LIMIT ?1",
        )?;
        let rows = stmt
            .query_map(params![limit as i64], row_to_record)?
            .collect::<Sql<Vec<_>>>()?;
        drop(stmt);
        drop(conn);
        rows.into_iter().map(|r| self.as_read(r)).collect()
    }
}

/// Appends an event to a task's log; returns its sequence number.
pub(super) fn append_event(conn: &Connection, id: &str, kind: &str, payload: &str) -> Sql<u64> {
    let seq: i64 = conn.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE task_id = ?1",
        params![id],
        |r| r.get(0),
    )?;
    conn.execute(
        "INSERT INTO events (task_id, seq, kind, payload, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, seq, kind, payload, now_ms() as i64],
    )?;
    Ok(seq as u64)
}

fn row_to_record(r: &rusqlite::Row<'_>) -> Sql<TaskRecord> {
    let updates: String = r.get(3)?;
    let status: String = r.get(4)?;
    let result: Option<String> = r.get(6)?;
    Ok(TaskRecord {
        id: r.get(0)?,
        specialist: r.get(1)?,
        description: r.get(2)?,
        updates: serde_json::from_str(&updates).unwrap_or_default(),
        status: BackgroundStatus::parse(&status),
        attempt: r.get::<_, i64>(5)? as u32,
        result: result.and_then(|s| serde_json::from_str(&s).ok()),
        created_ms: r.get::<_, i64>(7)? as u64,
        updated_ms: r.get::<_, i64>(8)? as u64,
    })
}
