//! The task store: background tasks and their event logs in SQLite, so that a host restart
//! never silently loses a task. A task that was queued or running when the host stopped is
//! marked `interrupted` when the store is next opened; its reports are kept.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::types::{ProgressReport, TaskResult};

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
    fn as_str(self) -> &'static str {
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

    fn parse(s: &str) -> Self {
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

pub(crate) struct TaskStore {
    conn: Mutex<Connection>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

type Sql<T> = Result<T, rusqlite::Error>;

impl TaskStore {
    /// Opens (creating) the store and marks tasks left live by a previous host as interrupted.
    pub(crate) fn open(path: &Path) -> Sql<Self> {
        let conn = Connection::open(path)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA synchronous=FULL;
             CREATE TABLE IF NOT EXISTS tasks (
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
             CREATE TABLE IF NOT EXISTS events (
                 task_id TEXT NOT NULL,
                 seq INTEGER NOT NULL,
                 kind TEXT NOT NULL,
                 payload TEXT NOT NULL,
                 at_ms INTEGER NOT NULL,
                 PRIMARY KEY (task_id, seq)
             );",
        )?;
        let store = Self {
            conn: Mutex::new(conn),
        };
        store.interrupt_leftovers()?;
        Ok(store)
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn interrupt_leftovers(&self) -> Sql<()> {
        let ids: Vec<String> = {
            let conn = self.conn();
            let mut stmt =
                conn.prepare("SELECT id FROM tasks WHERE status IN ('queued', 'running')")?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<Sql<Vec<String>>>()?
        };
        for id in ids {
            self.set_status(&id, BackgroundStatus::Interrupted)?;
            self.event(
                &id,
                "status",
                "interrupted: the host stopped while this task was live",
            )?;
        }
        Ok(())
    }

    pub(crate) fn insert(&self, id: &str, specialist: &str, description: &str) -> Sql<()> {
        let now = now_ms() as i64;
        self.conn().execute(
            "INSERT INTO tasks (id, specialist, description, status, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, 'queued', ?4, ?4)",
            params![id, specialist, description, now],
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

    pub(crate) fn finish(
        &self,
        id: &str,
        status: BackgroundStatus,
        result: &TaskResult,
    ) -> Sql<()> {
        let json = serde_json::to_string(result).unwrap_or_else(|_| "null".into());
        self.conn().execute(
            "UPDATE tasks SET status = ?2, result = ?3, updated_ms = ?4 WHERE id = ?1",
            params![id, status.as_str(), json, now_ms() as i64],
        )?;
        Ok(())
    }

    /// Appends an update and starts the next attempt; returns the new attempt number.
    pub(crate) fn add_update(&self, id: &str, update: &str) -> Sql<u32> {
        let record = self.get(id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
        let mut updates = record.updates;
        updates.push(update.to_owned());
        let json = serde_json::to_string(&updates).unwrap_or_else(|_| "[]".into());
        let attempt = record.attempt + 1;
        self.conn().execute(
            "UPDATE tasks SET updates = ?2, attempt = ?3, status = 'queued', result = NULL, updated_ms = ?4 WHERE id = ?1",
            params![id, json, attempt, now_ms() as i64],
        )?;
        Ok(attempt)
    }

    /// Appends an event; returns its sequence number.
    pub(crate) fn event(&self, id: &str, kind: &str, payload: &str) -> Sql<u64> {
        let conn = self.conn();
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

    pub(crate) fn report(&self, id: &str, report: &ProgressReport) -> Sql<u64> {
        let json = serde_json::to_string(report).unwrap_or_else(|_| "{}".into());
        self.event(id, "report", &json)
    }

    /// Reports not yet returned by a check; moves the task's cursor past them.
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
        if let Some((last, _)) = rows.last() {
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

    pub(crate) fn get(&self, id: &str) -> Sql<Option<TaskRecord>> {
        self.conn()
            .query_row(
                "SELECT id, specialist, description, updates, status, attempt, result, created_ms, updated_ms
                 FROM tasks WHERE id = ?1",
                params![id],
                row_to_record,
            )
            .optional()
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
        Ok(rows)
    }
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
