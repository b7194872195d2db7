//! Approval requests of background tasks in the shared task log, so that any host can see and
//! answer what a task waits on (docs/postgres.md#background-tasks).
//!
//! The host running the task writes the request as an `approval_request` event and waits; an
//! answer from any host is an `approval` event, written only while a request is pending (under
//! the task row's lock, so two hosts answering at once record one answer); the running host
//! polls for it, as it does for a cancel. A request is pending while the task is live and no
//! `approval` or `status` event (a cancel, an update's restart, an interruption) came after it.

use crate::tasks::append_event;
use crate::{PgError, PgTaskStore};

/// The newest approval request of task `id` that is still pending: (its sequence, payload).
const PENDING: &str = "SELECT e.seq, e.payload FROM task_events e JOIN tasks t ON t.id = e.task_id \
     WHERE e.task_id = $1 AND e.kind = 'approval_request' \
     AND t.status IN ('queued', 'running') \
     AND NOT EXISTS (SELECT 1 FROM task_events l WHERE l.task_id = e.task_id \
         AND l.seq > e.seq AND l.kind IN ('approval', 'status')) \
     ORDER BY e.seq DESC LIMIT 1";

impl PgTaskStore {
    /// The approval request task `id` waits on, if any: (its event's sequence, payload).
    pub fn pending_approval(&self, id: &str) -> Result<Option<(u64, String)>, PgError> {
        let id = id.to_owned();
        self.call("read a task's approval request", move |c| {
            c.query_opt(PENDING, &[&id])?
                .map(|r| {
                    Ok((
                        u64::try_from(r.try_get::<_, i64>(0)?).unwrap_or(0),
                        r.try_get(1)?,
                    ))
                })
                .transpose()
        })
    }

    /// Answers the pending approval request of task `id` with `verdict`, from any host; whether
    /// one was pending (only then is the answer recorded).
    pub fn answer_approval(&self, id: &str, verdict: &str) -> Result<bool, PgError> {
        let (id, verdict) = (id.to_owned(), verdict.to_owned());
        self.call("answer a task's approval request", move |c| {
            let mut tx = c.transaction()?;
            tx.execute("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE", &[&id])?;
            if tx.query_opt(PENDING, &[&id])?.is_none() {
                return Ok(false);
            }
            append_event(&mut tx, &id, "approval", &verdict)?;
            tx.commit()?;
            Ok(true)
        })
    }

    /// The answer recorded after the request at sequence `request`, if one was.
    pub fn approval_answer(&self, id: &str, request: u64) -> Result<Option<String>, PgError> {
        let id = id.to_owned();
        let request = i64::try_from(request).unwrap_or(i64::MAX);
        self.call("read a task's approval answer", move |c| {
            c.query_opt(
                "SELECT payload FROM task_events WHERE task_id = $1 AND kind = 'approval' \
                 AND seq > $2 ORDER BY seq LIMIT 1",
                &[&id, &request],
            )?
            .map(|r| r.try_get(0))
            .transpose()
        })
    }
}
