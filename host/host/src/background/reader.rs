//! [`TaskReader`]: background tasks read straight from a task store, without a host — no
//! plugins loaded, nothing written (what `guild tasks list` and `guild tasks check` use): the
//! task store file of the data dir, or the shared PostgreSQL store of `[store] url`.

use std::path::Path;

use super::TaskBackend;
use super::store::{StoreError, TaskStore};
use super::{BackgroundError, TaskCheck, TaskRecord, store_err};
use crate::types::ProgressReport;

/// A task store opened for reading: the SQLite file with `SQLITE_OPEN_READ_ONLY`, or the shared
/// store as a reader (no host registered, no lease held, no cursor moved).
///
/// Statuses are the truth at the time of reading: a live task whose owner process is gone
/// reads as `interrupted` (the next host to open the store records that). `check` does not
/// move the report cursor, so it returns the reports that the task's host has not yet
/// handed to a caller, and never a pending approval (only the owner knows those).
pub struct TaskReader {
    store: Box<dyn TaskBackend>,
}

impl TaskReader {
    /// Opens an existing task store; a missing, empty or foreign file is an error.
    pub fn open(path: &Path) -> Result<TaskReader, StoreError> {
        Ok(TaskReader {
            store: Box::new(TaskStore::open_read_only(path)?),
        })
    }

    /// Reads the tasks of every host on the shared PostgreSQL store.
    pub fn open_shared(config: &guild_pg::PgConfig) -> Result<TaskReader, StoreError> {
        Ok(TaskReader {
            store: Box::new(guild_pg::PgTaskStore::open_reader(config)?),
        })
    }

    /// Tasks, newest first.
    pub fn list(&self, limit: usize) -> Result<Vec<TaskRecord>, BackgroundError> {
        self.store.list(limit).map_err(store_err)
    }

    /// One task with the reports its host has not handed out yet.
    pub fn check(&self, id: &str) -> Result<TaskCheck, BackgroundError> {
        let task = self
            .store
            .get(id)
            .map_err(store_err)?
            .ok_or_else(|| BackgroundError::NotFound(id.to_owned()))?;
        Ok(TaskCheck {
            task,
            new_reports: self.store.take_new_reports(id).map_err(store_err)?,
            pending_approval: None,
        })
    }

    /// One task with every report it sent, those a check already returned included (what
    /// `guild tasks show` prints; an interrupted task's reports stay readable).
    pub fn show(&self, id: &str) -> Result<(TaskRecord, Vec<ProgressReport>), BackgroundError> {
        let task = self
            .store
            .get(id)
            .map_err(store_err)?
            .ok_or_else(|| BackgroundError::NotFound(id.to_owned()))?;
        let reports = self.store.reports(id).map_err(store_err)?;
        Ok((task, reports))
    }
}
