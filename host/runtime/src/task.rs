//! [`TaskHost`]: the narrow view of a running task that host functions need.
//!
//! A specialist instance serves exactly one task. Its `tools`, `progress`, `skills`, `memory`,
//! `llm` and `delegate` imports
//! call through this trait, which dispatch implements: the grant checks, approvals, receipts and
//! skill accounting all live behind it, in the one tool-call path. The runtime never sees the
//! ledger, the registry or the session; store state holds only this trait object.

use futures::future::BoxFuture;
use guild_core::llm::{ChatAnswer, ChatRequest, LlmError};
use guild_core::types::{Report, ToolError, ToolOutcome, ToolSpec};
use guild_delegate::{BudgetKind, ReviewEffect, TaskBrief, TaskReview};
use guild_memory::{Scope, Usage};
use guild_skills::SkillError;
use guild_validate::{Check, CheckStatus, Decision};

/// Why a progress report was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// Nobody is waiting for reports any more (cancelled, session closed).
    #[error("{}", guild_core::limits::PARENT_GONE)]
    ParentGone,
    /// The report broke a rule (size, count).
    #[error("{0}")]
    Rejected(String),
}

/// One skill as a specialist's catalog lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
}

/// A memory document as a specialist reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryText {
    /// The newest version's text (empty when nothing was stored yet).
    pub text: String,
    /// The newest version number; 0 when nothing was stored yet.
    pub version: u64,
    /// Its size against the limits.
    pub usage: Usage,
}

/// What an accepted memory update did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryWrite {
    /// A new version was stored.
    Stored {
        /// Its number.
        version: u64,
        /// What the writer should know.
        warnings: Vec<String>,
        /// The stored size against the limits.
        usage: Usage,
    },
    /// Nothing changed.
    NoOp {
        /// Why (a sentinel, an empty text, the stored text itself).
        reason: String,
        /// The stored size against the limits.
        usage: Usage,
    },
}

/// Why a memory read or update did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryCallError {
    /// The validator refused the text; nothing was stored.
    #[error("memory update refused: {}", .errors.join(" "))]
    Refused {
        /// Every rule the text broke.
        errors: Vec<String>,
        /// The refused text's size against the limits.
        usage: Usage,
    },
    /// The update was based on a version that is no longer the newest: another writer stored
    /// one since this instance read it. Nothing was stored.
    #[error("{message}")]
    Conflict {
        /// The version the instance read.
        base: u64,
        /// The newest version now.
        current: u64,
        /// The host's message, naming the document and both versions.
        message: String,
    },
    /// The specialist may not use this scope (the text names plugin, capability and scope).
    #[error("{0}")]
    Denied(String),
    /// The task reached a limit.
    #[error("{0}")]
    LimitExceeded(String),
    /// Allowed, but it failed (no workspace/user named, the store failed).
    #[error("{0}")]
    Failed(String),
}

/// A finished child task, its report validated (docs/delegation.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildReport {
    /// The child's task id.
    pub child_id: String,
    /// The validated report: the child's own, or the host's when it broke the protocol.
    pub report: Report,
    /// The report is the host's (the child failed or broke the report protocol).
    pub protocol_error: bool,
    /// Why the child failed, when it did.
    pub error: Option<String>,
    /// The worst check status.
    pub verdict: CheckStatus,
    /// Every check.
    pub checks: Vec<Check>,
    /// What the decision matrix allows for this verdict and outcome.
    pub allowed: Vec<Decision>,
    /// Wall-clock milliseconds the child ran.
    pub wall_ms: u64,
    /// Tool calls it made.
    pub tool_calls: u64,
    /// Model tokens it spent.
    pub tokens: u64,
}

/// Why a delegation or a review did not happen; every text names what was wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DelegateError {
    /// The capability is not requested or not granted.
    #[error("{0}")]
    Denied(String),
    /// The brief broke a rule.
    #[error("{message}")]
    BriefRefused {
        /// The rule's name.
        rule: &'static str,
        /// The field it concerns.
        field: String,
        /// The host's message.
        message: String,
    },
    /// The review broke a rule.
    #[error("{message}")]
    ReviewRefused {
        /// The host's message.
        message: String,
        /// What the matrix allows for the report under review.
        allowed: Vec<Decision>,
    },
    /// A tree budget is spent.
    #[error("{message}")]
    BudgetExceeded {
        /// Which.
        kind: BudgetKind,
        /// What was left.
        limit: u64,
        /// What was asked.
        used: u64,
        /// The host's message.
        message: String,
    },
    /// Too deep.
    #[error("{0}")]
    TooDeep(String),
    /// Too many children.
    #[error("{0}")]
    TooManyChildren(String),
    /// A review is pending.
    #[error("{0}")]
    ReviewPending(String),
    /// Nothing to review under that id.
    #[error("{0}")]
    NoPendingReview(String),
    /// The task was cancelled.
    #[error("{0}")]
    Cancelled(String),
    /// The child could not start.
    #[error("{0}")]
    ChildFailed(String),
}

/// What the host functions of one specialist instance need from the task it serves.
pub trait TaskHost: Send + Sync {
    /// The tools this specialist may call, by `connector.tool`, with their specs.
    fn granted_tools(&self) -> Vec<(String, ToolSpec)>;

    /// Calls `connector.tool` with JSON `input`. The grant check, approvals, skill gates and
    /// receipts all happen behind this call.
    fn call_tool(
        &self,
        tool: String,
        input: String,
        idempotency_key: Option<String>,
    ) -> BoxFuture<'_, Result<ToolOutcome, ToolError>>;

    /// Sends a progress report to whoever started the task; returns its message id.
    fn send_report(&self, output: String) -> Result<String, ReportError>;

    /// Level 1 of skill disclosure: the specialist's own catalog (accounted).
    fn skill_catalog(&self) -> BoxFuture<'_, Vec<SkillSummary>>;

    /// Level 2: one skill's body.
    fn load_skill(&self, name: String) -> BoxFuture<'_, Result<String, SkillError>>;

    /// Level 3: one resource file of a skill.
    fn read_skill_resource(
        &self,
        name: String,
        path: String,
    ) -> BoxFuture<'_, Result<Vec<u8>, SkillError>>;

    /// Reads `scope`'s memory document. The grant check happens behind this call.
    fn memory_read(&self, scope: Scope) -> BoxFuture<'_, Result<MemoryText, MemoryCallError>>;

    /// Replaces `scope`'s memory document with `text`: grant check, validation and receipt
    /// all happen behind this call. `base` is the version this instance last read or stored
    /// of `scope` (`None`: it read none): compare-and-swap, a newer stored version is
    /// [`MemoryCallError::Conflict`].
    fn memory_update(
        &self,
        scope: Scope,
        base: Option<u64>,
        text: String,
    ) -> BoxFuture<'_, Result<MemoryWrite, MemoryCallError>>;

    /// One chat completion for a model alias the specialist's grant holds (checked by the
    /// caller): budgets, concurrency, retries, the task's deadline and the task's accounting all
    /// happen behind this call (docs/models.md).
    fn llm_complete(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatAnswer, LlmError>>;

    /// Runs one child task for `brief` to its end (the caller checked the grant is not empty):
    /// the brief, tree limits and budget checks, the child's own dispatch and the validation
    /// of its report all happen behind this call (docs/delegation.md).
    fn delegate_run(&self, brief: TaskBrief) -> BoxFuture<'_, Result<ChildReport, DelegateError>>;

    /// The parent's review of the pending report of `child_id`, checked by the host.
    fn delegate_review(
        &self,
        child_id: String,
        review: TaskReview,
    ) -> BoxFuture<'_, Result<ReviewEffect, DelegateError>>;
}
