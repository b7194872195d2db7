//! Approvals: what a caller is asked when a tool's spec says `approval = always`, and the
//! [`Approver`] trait that answers. Dispatch asks through it; sessions carry the caller's
//! approver and background tasks hold their requests until `approve_task` answers. It sits
//! below all three so none of them imports another for it.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// What the caller is asked when a tool's spec says `approval = always`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The task waiting for the answer.
    pub task_id: String,
    /// `specialist@version` asking.
    pub specialist: String,
    /// `connector.tool`.
    pub tool: String,
    /// The tool's description.
    pub description: String,
    /// The input, as JSON (truncated to 2 KiB).
    pub input: String,
}

/// Answers approval requests for a session (a prompt, a UI, a policy).
pub trait Approver: Send + Sync {
    /// True to let the call run.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, bool>;
}
