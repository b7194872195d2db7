//! Approvals of `approval = always` tool calls made by this connection's `task` calls. A
//! waiting request is answered either by the `approve_task` tool or, when the client declared
//! the elicitation capability, by the user's accept/decline of an `elicitation/create` request
//! the server sends while the single task waits.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use futures::future::BoxFuture;
use guild_host::text::one_line;
use guild_host::{ApprovalRequest, Approver};
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::{Peer, RoleServer};
use tokio::sync::{broadcast, oneshot};

/// The requests waiting for an answer, by task id.
pub(crate) struct Approvals {
    waiting: Mutex<HashMap<String, (ApprovalRequest, oneshot::Sender<bool>)>>,
    /// Requests already sent to the client by elicitation (each is asked once, even when
    /// several `task` calls of the connection see it).
    elicited: Mutex<HashSet<String>>,
    pub(super) asked: broadcast::Sender<ApprovalRequest>,
}

impl Default for Approvals {
    fn default() -> Self {
        Self {
            waiting: Mutex::new(HashMap::new()),
            elicited: Mutex::new(HashSet::new()),
            asked: broadcast::channel(16).0,
        }
    }
}

impl Approvals {
    /// Answers a waiting request; false when none waits for `task_id`.
    pub(super) fn answer(&self, task_id: &str, approved: bool) -> bool {
        let entry = self
            .waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(task_id);
        self.elicited
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(task_id);
        match entry {
            Some((_, tx)) => tx.send(approved).is_ok(),
            None => false,
        }
    }

    /// True the first time it is called for a waiting request: the caller asks the client.
    pub(super) fn claim_for_elicitation(&self, task_id: &str) -> bool {
        self.pending(task_id).is_some()
            && self
                .elicited
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(task_id.to_owned())
    }

    pub(super) fn pending(&self, task_id: &str) -> Option<ApprovalRequest> {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(task_id)
            .map(|(r, _)| r.clone())
    }
}

impl Approver for Approvals {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, bool> {
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(request.task_id.clone(), (request.clone(), tx));
        // Nobody listening is fine: `check_task` shows the request too.
        let _ = self.asked.send(request);
        // A dropped sender (the call was cancelled) refuses.
        Box::pin(async move { rx.await.unwrap_or(false) })
    }
}

/// True when the client declared the elicitation capability at initialize.
pub(super) fn client_elicits(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some())
}

/// Asks the user through `elicitation/create`: accept approves, decline or cancel refuses.
/// `None` when the client could not be asked (the request stays open for `approve_task`).
pub(super) async fn elicit(peer: &Peer<RoleServer>, request: &ApprovalRequest) -> Option<bool> {
    let message = format!(
        "{} wants to call {} ({}) with {}. Allow this call?",
        one_line(&request.specialist),
        one_line(&request.tool),
        one_line(&request.description),
        one_line(&request.input),
    );
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        // Nothing to fill in: the answer is the action itself.
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    };
    let sent = peer
        .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
        .await;
    match sent {
        Ok(ClientResult::ElicitResult(result)) => Some(result.action == ElicitationAction::Accept),
        Ok(other) => {
            tracing::warn!("elicitation/create was answered with {other:?}; use approve_task");
            None
        }
        Err(e) => {
            tracing::warn!("elicitation/create failed ({e}); the call waits for approve_task");
            None
        }
    }
}
