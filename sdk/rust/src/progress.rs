//! Progress reports to whoever started the task (the `progress` interface). Sending never ends
//! the run; the host decides whether the report is kept for the next check or pushed at once.

use std::fmt;

use crate::bindings::specialist::guild::plugin::progress as raw;
use crate::bindings::specialist::guild::plugin::types::ProgressError as RawError;
use crate::types::without_kind;

/// Why a progress report was not delivered. The run goes on either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressError {
    /// The task's direct parent is not live (cancelled, session closed): nobody will read the
    /// report, and later reports fail the same way.
    ParentGone,
    /// Progress reports were not granted to this plugin; the text names plugin and capability.
    Denied(String),
    /// The report is too large, or the task already sent too many.
    LimitExceeded(String),
}

impl ProgressError {
    fn from_raw(err: RawError) -> Self {
        match err {
            RawError::ParentGone => Self::ParentGone,
            RawError::Denied(m) => Self::Denied(m),
            RawError::LimitExceeded(m) => Self::LimitExceeded(m),
        }
    }
}

/// The protocol's texts: `direct parent is not live; report was not delivered` when the parent
/// is gone, else `kind: message` with the kind once:
///
/// ```
/// use guild_sdk::progress::ProgressError;
///
/// let gone = ProgressError::ParentGone;
/// assert_eq!(gone.to_string(), "direct parent is not live; report was not delivered");
/// let denied = ProgressError::Denied("denied: plugin 'p' capability report: not granted".into());
/// assert_eq!(denied.to_string(), "denied: plugin 'p' capability report: not granted");
/// ```
impl fmt::Display for ProgressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ParentGone => f.write_str("direct parent is not live; report was not delivered"),
            Self::Denied(m) => write!(f, "denied: {}", without_kind("denied", m)),
            Self::LimitExceeded(m) => {
                write!(f, "limit-exceeded: {}", without_kind("limit-exceeded", m))
            }
        }
    }
}

impl std::error::Error for ProgressError {}

/// Sends one progress report; returns its message id.
pub fn send(output: impl AsRef<str>) -> Result<String, ProgressError> {
    raw::send(output.as_ref()).map_err(ProgressError::from_raw)
}
