//! The task and tool-call records callers read: the core's vocabulary ([`guild_core::types`]) and
//! [`TaskResult`], which also carries a task's receipts, the host's validation and the skills it
//! loaded, so it sits above the crates that own those.

use serde::{Deserialize, Serialize};

pub use guild_core::types::*;

/// The result of one task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskResult {
    /// Host-assigned id.
    pub task_id: String,
    /// `name@version` of the specialist that ran.
    pub specialist: String,
    /// Final status.
    pub status: TaskStatus,
    /// The report, when the specialist produced an acceptable one.
    pub report: Option<Report>,
    /// What went wrong, when status is not succeeded; says what the caller can do.
    pub error: Option<String>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Progress reports, in order.
    pub reports: Vec<ProgressReport>,
    /// Receipts the host wrote for this task's mutating calls.
    pub receipts: Vec<guild_receipts::Receipt>,
    /// The host's verdict on the report.
    pub validation: Option<guild_validate::Validation>,
    /// Skills the task loaded and the bytes each disclosure level returned.
    pub skills: guild_skills::TaskSkillStats,
    /// The session's one-time billable warning, on the result that crossed the threshold.
    pub warning: Option<String>,
    /// Resource use.
    pub usage: Usage,
    /// Each model call's request and answer (keys redacted), when `[llm] record_transcripts`
    /// is on (docs/models.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcripts: Vec<serde_json::Value>,
}

impl TaskResult {
    /// The result of a task that ended before any instance of its specialist ran (it could
    /// not start, or its time ran out while its plugins loaded): no calls, reports or
    /// receipts, no validation.
    pub fn not_started(
        task_id: String,
        specialist: String,
        status: TaskStatus,
        error: Option<String>,
    ) -> Self {
        Self {
            task_id,
            specialist,
            status,
            report: None,
            error,
            tool_calls: Vec::new(),
            reports: Vec::new(),
            receipts: Vec::new(),
            validation: None,
            skills: Default::default(),
            warning: None,
            usage: Usage::default(),
            transcripts: Vec::new(),
        }
    }
}
