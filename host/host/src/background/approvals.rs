//! Approvals for background tasks: a tool with `approval = always` pauses the task until the
//! caller answers through `check_task` (which shows the request) and `approve_task`.
//!
//! Bounded by construction: one request per task id (a new one replaces the old), and a
//! request is freed when it is answered, forgotten, or when the waiting call goes away (the task
//! ended, timed out or was dropped) — nothing is held for a task that no longer waits.
//!
//! On a store other hosts share, [`SharedApprover`] also writes each request to the task's log
//! and takes an answer recorded there by any host (it looks every watch interval), so
//! `approve_task` works from every host (docs/postgres.md#background-tasks).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use super::backend::TaskBackend;
use crate::approval::{ApprovalRequest, Approver};

type Waiting = HashMap<String, (ApprovalRequest, oneshot::Sender<bool>)>;

/// Pending approval requests of background tasks, by task id.
#[derive(Clone, Default)]
pub(crate) struct Approvals {
    waiting: Arc<Mutex<Waiting>>,
}

impl Approvals {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The request a task is waiting on, if any.
    pub(crate) fn pending(&self, task_id: &str) -> Option<ApprovalRequest> {
        self.lock().get(task_id).map(|(r, _)| r.clone())
    }

    /// Answers a waiting request; false when the task is not waiting.
    pub(crate) fn answer(&self, task_id: &str, approved: bool) -> bool {
        match self.lock().remove(task_id) {
            Some((_, tx)) => tx.send(approved).is_ok(),
            None => false,
        }
    }

    /// Drops a task's request (cancelled or restarted): the waiting call is refused.
    pub(crate) fn forget(&self, task_id: &str) {
        self.lock().remove(task_id);
    }
}

/// Frees a task's request when the call waiting on it goes away unanswered.
struct Waiter {
    approvals: Approvals,
    task_id: String,
    rx: Option<oneshot::Receiver<bool>>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Dropping the receiver closes the sender; only that (stale) entry is removed, never a
        // newer request of the same task.
        drop(self.rx.take());
        let mut waiting = self.approvals.lock();
        if waiting
            .get(&self.task_id)
            .is_some_and(|(_, tx)| tx.is_closed())
        {
            waiting.remove(&self.task_id);
        }
    }
}

impl Approver for Approvals {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, bool> {
        let (tx, rx) = oneshot::channel();
        let task_id = request.task_id.clone();
        self.lock().insert(task_id.clone(), (request, tx));
        let mut waiter = Waiter {
            approvals: self.clone(),
            task_id,
            rx: Some(rx),
        };
        // A dropped sender (cancel, update, host shutdown) means "not approved".
        Box::pin(async move {
            match waiter.rx.as_mut() {
                Some(rx) => rx.await.unwrap_or(false),
                None => false,
            }
        })
    }
}

/// A verdict as the task log records it.
pub(crate) fn verdict(approved: bool) -> &'static str {
    if approved { "approved" } else { "denied" }
}

/// The approver of a task on a shared store: the request is held here and written to the
/// store; the first answer, given on this host or recorded by any host, decides.
pub(crate) struct SharedApprover {
    pub(crate) approvals: Approvals,
    pub(crate) store: Arc<dyn TaskBackend>,
    /// How often the store is asked for an answer.
    pub(crate) every: Duration,
}

impl Approver for SharedApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, bool> {
        let here = self.approvals.approve(request.clone());
        let (store, every) = (self.store.clone(), self.every);
        Box::pin(async move {
            let id = request.task_id.clone();
            let json = serde_json::to_string(&request).unwrap_or_else(|_| "{}".into());
            let written = {
                let (store, id) = (store.clone(), id.clone());
                tokio::task::spawn_blocking(move || store.request_approval(&id, &json)).await
            };
            let seq = match written {
                Ok(Ok(Some(seq))) => seq,
                Ok(Ok(None)) => return here.await,
                Ok(Err(e)) => {
                    tracing::error!(task_id = %id, "failed to record an approval request: {e}");
                    return here.await;
                }
                Err(e) => {
                    tracing::error!(task_id = %id, "recording an approval request stopped: {e}");
                    return here.await;
                }
            };
            tokio::select! {
                approved = here => approved,
                approved = recorded_answer(store, id, seq, every) => approved,
            }
        })
    }
}

/// Resolves once the store holds an answer to the request at `seq` (a failed read is retried).
async fn recorded_answer(
    store: Arc<dyn TaskBackend>,
    id: String,
    seq: u64,
    every: Duration,
) -> bool {
    loop {
        tokio::time::sleep(every).await;
        let (s, i) = (store.clone(), id.clone());
        if let Ok(Ok(Some(answer))) =
            tokio::task::spawn_blocking(move || s.approval_answer(&i, seq)).await
        {
            return answer == verdict(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(task_id: &str) -> ApprovalRequest {
        ApprovalRequest {
            task_id: task_id.to_owned(),
            specialist: "probe@0.1.0".to_owned(),
            tool: "echo.guarded".to_owned(),
            description: "sends".to_owned(),
            input: "{}".to_owned(),
        }
    }

    #[tokio::test]
    async fn answered_request_is_approved_and_freed() {
        let approvals = Approvals::default();
        let waiting = approvals.approve(request("t1"));
        assert!(approvals.pending("t1").is_some());
        assert!(approvals.answer("t1", true));
        assert!(waiting.await);
        assert!(approvals.pending("t1").is_none());
    }

    #[tokio::test]
    async fn request_of_a_call_that_went_away_is_freed() {
        let approvals = Approvals::default();
        let waiting = approvals.approve(request("t1"));
        assert!(approvals.pending("t1").is_some());
        drop(waiting);
        assert!(approvals.pending("t1").is_none(), "freed with its task");
        assert!(approvals.lock().is_empty());
    }

    #[tokio::test]
    async fn a_stale_waiter_never_frees_a_newer_request() {
        let approvals = Approvals::default();
        let old = approvals.approve(request("t1"));
        let new = approvals.approve(request("t1"));
        drop(old);
        assert!(approvals.pending("t1").is_some(), "the newer request stays");
        assert!(approvals.answer("t1", false));
        assert!(!new.await);
    }
}
