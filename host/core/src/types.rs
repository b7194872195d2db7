//! Public result types of the library API.
//!
//! They mirror the WIT records but are plain serde types: wasmtime's generated types stay inside
//! the runtime crate. Field names follow docs/architecture.md and docs/receipts-and-validation.md
//! so batch dispatch, receipts and validation can extend them without breaking callers.
//!
//! The records a plugin builds too (the report and what it points at, a connector's tool specs)
//! are defined once in `guild-types`, which the Rust SDK shares, and re-exported here.

use serde::{Deserialize, Serialize};

pub use guild_types::{
    Approval, ArtifactRef, Claim, NextAction, NextStep, Outcome, Report, ToolSpec,
};

/// Final status of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The specialist returned a report.
    Succeeded,
    /// The specialist returned an error, trapped, exceeded a limit or returned garbage.
    Failed,
    /// The wall-clock budget ran out.
    TimedOut,
}

/// Status of one tool call, as the connector reported it (or as the host observed it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// Committed in the external system.
    Success,
    /// Started, not finished.
    Pending,
    /// Did not happen.
    Failed,
}

/// What a connector call produced. Also what a specialist receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// JSON output.
    pub output: String,
    /// Status.
    pub status: CallStatus,
    /// Id in the external system.
    pub external_id: Option<String>,
    /// Where the effect can be checked.
    pub verifiable_url: Option<String>,
    /// Short preview (≤ 200 characters).
    pub preview: Option<String>,
    /// Verbatim error when failed.
    pub error: Option<String>,
}

/// One tool call a task made, as recorded by the host.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// `connector.tool`.
    pub tool: String,
    /// `connector@version` that served it (empty when refused before dispatch).
    pub plugin: String,
    /// Whether the tool's spec says it mutates.
    pub mutating: bool,
    /// Hex sha256 of the input document.
    pub input_sha256: String,
    /// What happened.
    pub outcome: ToolOutcome,
    /// The receipt the host wrote (mutating tools only).
    pub receipt_id: Option<String>,
    /// True when an idempotency key replayed a recorded outcome (the connector did not run).
    pub replayed: bool,
    /// Wall time, milliseconds.
    pub wall_ms: u64,
}

/// One progress report a specialist sent while it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressReport {
    /// Stable message id.
    pub id: String,
    /// 1-based position within the task.
    pub sequence: u32,
    /// What the specialist sent.
    pub output: String,
    /// When it was accepted, milliseconds since the Unix epoch.
    pub at_ms: u64,
}

/// Resource use of a task.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Wall time of the whole task, milliseconds.
    pub wall_ms: u64,
    /// Time to create the instance, microseconds.
    pub instantiate_us: u64,
    /// Tool calls made (including refused ones).
    pub tool_calls: u32,
    /// Peak linear memory of the specialist's instance, bytes.
    pub peak_memory_bytes: u64,
    /// Model calls by alias: calls answered, prompt and completion tokens (docs/models.md).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub models: std::collections::BTreeMap<String, crate::llm::ModelUsage>,
}

/// One entry of the roster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterEntry {
    /// Specialist name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// One-line description.
    pub description: String,
    /// Aliases that route here.
    pub aliases: Vec<String>,
}

/// Why the tool-call path refused or could not complete a call. Each variant maps to the WIT
/// `host-error` case of the same name, so the specialist can act on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// Not granted, not approved, or blocked by a skill rule.
    #[error("{0}")]
    Denied(String),
    /// Malformed tool name or input.
    #[error("{0}")]
    InvalidInput(String),
    /// A limit of the connector or of the task was hit.
    #[error("{0}")]
    LimitExceeded(String),
    /// The call could not be made or the connector failed.
    #[error("{0}")]
    Failed(String),
}
