//! The PostgreSQL task store ([`guild_pg::PgTaskStore`]) as a [`TaskBackend`]: background tasks
//! that every host on the database sees, held by the host that runs them under a lease
//! (docs/postgres.md#background-tasks). guild-pg stores plain text; this module turns it into
//! the host's types.
//!
//! A cancel may come from any host: it is written to the row, and the host running the task
//! sees it within [`WATCH`] (its running attempt asks [`TaskBackend::still_running_here`]) and
//! stops it. The same check stops an attempt whose lease expired and another host interrupted.
//! Approval requests are written to the task's log too, and answered there from any host: the
//! running host polls for the answer at the same interval (`approvals.rs`). A retryable task
//! whose host died is taken up by a live host that has its specialist (`orphans.rs`).

use std::time::Duration;

use guild_pg::{PgTask, PgTaskStore};

use super::TaskRecord;
use super::backend::TaskBackend;
use super::store::{BackgroundStatus, StoreError};
use crate::types::{ProgressReport, TaskResult};

/// How often a running attempt asks whether it is still this host's (at most; a shorter lease
/// makes it shorter).
const WATCH: Duration = Duration::from_millis(500);

fn record(t: PgTask) -> TaskRecord {
    TaskRecord {
        id: t.id,
        specialist: t.specialist,
        description: t.description,
        updates: t.updates,
        status: BackgroundStatus::parse(&t.status),
        attempt: t.attempt,
        result: t.result.and_then(|s| serde_json::from_str(&s).ok()),
        created_ms: t.created_ms,
        updated_ms: t.updated_ms,
    }
}

fn reports(payloads: Vec<String>) -> Vec<ProgressReport> {
    payloads
        .iter()
        .filter_map(|p| serde_json::from_str(p).ok())
        .collect()
}

impl TaskBackend for PgTaskStore {
    fn insert(&self, id: &str, specialist: &str, description: &str) -> Result<(), StoreError> {
        Ok(PgTaskStore::insert(self, id, specialist, description)?)
    }

    fn insert_retryable(
        &self,
        id: &str,
        specialist: &str,
        description: &str,
    ) -> Result<(), StoreError> {
        Ok(PgTaskStore::insert_retryable(
            self,
            id,
            specialist,
            description,
        )?)
    }

    fn claim_orphans(&self, specialists: &[String]) -> Result<Vec<TaskRecord>, StoreError> {
        Ok(PgTaskStore::claim_orphans(self, specialists)?
            .into_iter()
            .map(record)
            .collect())
    }

    fn start_attempt(&self, id: &str, attempt: u32) -> Result<bool, StoreError> {
        Ok(PgTaskStore::start_attempt(self, id, attempt)?)
    }

    fn finish(
        &self,
        id: &str,
        attempt: u32,
        status: BackgroundStatus,
        result: &TaskResult,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(result).unwrap_or_else(|_| "null".into());
        Ok(PgTaskStore::finish(
            self,
            id,
            attempt,
            status.as_str(),
            &json,
        )?)
    }

    /// Only a live task changes: a cancel that crosses the task's end leaves the end as it is.
    fn set_status(&self, id: &str, status: BackgroundStatus) -> Result<(), StoreError> {
        PgTaskStore::end(self, id, status.as_str())?;
        Ok(())
    }

    fn add_update(&self, id: &str, update: &str) -> Result<u32, StoreError> {
        PgTaskStore::add_update(self, id, update)?.ok_or_else(|| {
            StoreError::Postgres(guild_pg::PgError::Query {
                target: "the shared task store".into(),
                op: "update a task",
                reason: format!("no task with id '{id}'"),
            })
        })
    }

    fn event(&self, id: &str, kind: &str, payload: &str) -> Result<u64, StoreError> {
        Ok(PgTaskStore::event(self, id, kind, payload)?)
    }

    fn report(&self, id: &str, report: &ProgressReport) -> Result<u64, StoreError> {
        let json = serde_json::to_string(report).unwrap_or_else(|_| "{}".into());
        Ok(PgTaskStore::event(self, id, "report", &json)?)
    }

    fn take_new_reports(&self, id: &str) -> Result<Vec<ProgressReport>, StoreError> {
        Ok(reports(PgTaskStore::take_new_reports(self, id)?))
    }

    fn reports(&self, id: &str) -> Result<Vec<ProgressReport>, StoreError> {
        Ok(reports(PgTaskStore::reports(self, id)?))
    }

    fn get(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        Ok(PgTaskStore::get(self, id)?.map(record))
    }

    fn list(&self, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        Ok(PgTaskStore::list(self, limit)?
            .into_iter()
            .map(record)
            .collect())
    }

    fn live_elsewhere(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(PgTaskStore::live_elsewhere(self, id)?)
    }

    fn watch_interval(&self) -> Option<Duration> {
        Some(WATCH.min(self.lease() / 3))
    }

    fn still_running_here(&self, id: &str, attempt: u32) -> Result<bool, StoreError> {
        Ok(PgTaskStore::still_running_here(self, id, attempt)?)
    }

    fn request_approval(&self, id: &str, request: &str) -> Result<Option<u64>, StoreError> {
        Ok(Some(PgTaskStore::event(
            self,
            id,
            "approval_request",
            request,
        )?))
    }

    fn pending_approval(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(PgTaskStore::pending_approval(self, id)?.map(|(_, request)| request))
    }

    fn answer_approval(&self, id: &str, verdict: &str) -> Result<bool, StoreError> {
        Ok(PgTaskStore::answer_approval(self, id, verdict)?)
    }

    fn approval_answer(&self, id: &str, request: u64) -> Result<Option<String>, StoreError> {
        Ok(PgTaskStore::approval_answer(self, id, request)?)
    }
}
