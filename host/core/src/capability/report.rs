//! Rows of the requested / granted / denied table that `guild plugins show` prints.

use serde::Serialize;

/// One requested or granted item and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapabilityRow {
    /// Capability area: fs, http, tools, config, secrets, ...
    pub capability: String,
    /// The item (guest path, pattern, tool, key, ...).
    pub target: String,
    /// Outcome.
    #[serde(flatten)]
    pub status: RowStatus,
}

/// What became of one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "lowercase")]
pub enum RowStatus {
    /// Requested and granted; the detail says how.
    Granted(String),
    /// Requested, not granted; the detail says why.
    Denied(String),
    /// Granted by the operator but never requested: has no effect.
    Unused,
}

impl CapabilityRow {
    pub(super) fn new(capability: &str, target: &str, status: RowStatus) -> Self {
        Self {
            capability: capability.to_owned(),
            target: target.to_owned(),
            status,
        }
    }
    pub(super) fn granted(capability: &str, target: &str, detail: &str) -> Self {
        Self::new(capability, target, RowStatus::Granted(detail.to_owned()))
    }
    pub(super) fn denied(capability: &str, target: &str, why: &str) -> Self {
        Self::new(capability, target, RowStatus::Denied(why.to_owned()))
    }
    pub(super) fn unused(capability: &str, target: &str) -> Self {
        Self::new(capability, target, RowStatus::Unused)
    }
}
