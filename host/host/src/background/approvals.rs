//! Approvals for background tasks: a tool with `approval = always` pauses the task until the
//! caller answers through `check_task` (which shows the request) and `approve_task`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use crate::session::{ApprovalRequest, Approver};

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

impl Approver for Approvals {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, bool> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(request.task_id.clone(), (request, tx));
        // A dropped sender (cancel, update, host shutdown) means "not approved".
        Box::pin(async move { rx.await.unwrap_or(false) })
    }
}
