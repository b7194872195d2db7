//! Connector tool descriptions ([`ToolSpec`], defined with the host in `guild-types`) converted
//! to and from the raw bindings, and call results ([`ToolOutcome`]) with their builder.
//!
//! ```
//! use guild_sdk::{Approval, ToolSpec};
//! let spec = ToolSpec::new("create_issue", "Create an issue.")
//!     .schema(serde_json::json!({"type": "object", "required": ["title"]}))
//!     .mutating("issue", "create")
//!     .approval(Approval::Always);
//! assert!(spec.mutating && spec.needs_approval());
//! ```

use guild_types::{Approval, ToolSpec};
use serde_json::Value;

use crate::bindings::specialist::guild::plugin::types as raw;

impl From<ToolSpec> for raw::ToolSpec {
    fn from(spec: ToolSpec) -> Self {
        Self {
            name: spec.name,
            description: spec.description,
            input_schema: spec.input_schema,
            mutating: spec.mutating,
            receipt_type: spec.receipt_type,
            operation: spec.operation,
            requires_skill: spec.requires_skill,
            approval: match spec.approval {
                Approval::Never => raw::Approval::Never,
                Approval::Always => raw::Approval::Always,
            },
        }
    }
}

impl From<raw::ToolSpec> for ToolSpec {
    fn from(spec: raw::ToolSpec) -> Self {
        Self {
            name: spec.name,
            description: spec.description,
            input_schema: spec.input_schema,
            mutating: spec.mutating,
            receipt_type: spec.receipt_type,
            operation: spec.operation,
            requires_skill: spec.requires_skill,
            approval: match spec.approval {
                raw::Approval::Never => Approval::Never,
                raw::Approval::Always => Approval::Always,
            },
        }
    }
}

/// Status of a tool call as the connector reports it. A failed call carries its error, so an
/// outcome is never both a success and an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallStatus {
    /// Committed in the external system.
    Success,
    /// Started, not finished; resolved later.
    Pending,
    /// Did not happen; the text, kept verbatim in the receipt, says why.
    Failed(String),
}

/// Facts a connector reports about one call. The host, never the plugin, turns them into a
/// receipt.
///
/// ```
/// use guild_sdk::ToolOutcome;
/// let done = ToolOutcome::success(serde_json::json!({"number": 7}))
///     .external_id("7")
///     .verifiable_url("https://example.com/issues/7")
///     .preview("#7 crash on start");
/// let refused = ToolOutcome::failed("HTTP 403: rate limited");
/// assert!(done.is_success() && !refused.is_success());
/// assert_eq!(refused.error(), Some("HTTP 403: rate limited"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// Output for the caller, as a JSON document.
    pub output: String,
    /// Whether the call happened; a failure carries its error.
    pub status: CallStatus,
    /// Identifier in the external system (issue number, message id, ...).
    pub external_id: Option<String>,
    /// A public URL where the effect can be checked.
    pub verifiable_url: Option<String>,
    /// Short human-readable preview of what changed.
    pub preview: Option<String>,
}

impl ToolOutcome {
    fn with_status(status: CallStatus, output: String) -> Self {
        Self {
            output,
            status,
            external_id: None,
            verifiable_url: None,
            preview: None,
        }
    }

    /// The call was committed; `output` goes back to the caller.
    pub fn success(output: Value) -> Self {
        Self::with_status(CallStatus::Success, output.to_string())
    }

    /// The call started and is resolved later.
    pub fn pending(output: Value) -> Self {
        Self::with_status(CallStatus::Pending, output.to_string())
    }

    /// The call did not happen. `error` is kept verbatim; the output is `{"error": error}`.
    pub fn failed(error: impl Into<String>) -> Self {
        let error = error.into();
        let output = serde_json::json!({ "error": error }).to_string();
        Self::with_status(CallStatus::Failed(error), output)
    }

    /// The call did not happen because its input was wrong: a failed outcome whose error
    /// starts with `invalid input:` and whose output is
    /// `{"error": ..., "kind": "invalid-input"}`, so a caller (often a model) can fix its call.
    ///
    /// ```
    /// let refused = guild_sdk::ToolOutcome::invalid_input("field `title` is required");
    /// assert_eq!(refused.error(), Some("invalid input: field `title` is required"));
    /// ```
    pub fn invalid_input(message: impl Into<String>) -> Self {
        let error = format!("invalid input: {}", message.into());
        let output = serde_json::json!({ "error": error, "kind": "invalid-input" }).to_string();
        Self::with_status(CallStatus::Failed(error), output)
    }

    /// A success whose output is `value` serialized; a value that does not serialize becomes a
    /// failed outcome saying so.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct Created { number: u64 }
    /// let done = guild_sdk::ToolOutcome::success_json(&Created { number: 7 });
    /// assert_eq!(done.output, r#"{"number":7}"#);
    /// ```
    pub fn success_json<T: serde::Serialize + ?Sized>(value: &T) -> Self {
        match serde_json::to_value(value) {
            Ok(output) => Self::success(output),
            Err(e) => Self::failed(format!("the tool's output does not serialize: {e}")),
        }
    }

    /// Member `name` of a tool's JSON `input`, a string; otherwise the outcome to answer with,
    /// an [`ToolOutcome::invalid_input`] naming the member. The host has checked the input
    /// against the tool's schema; this names the member for other callers.
    ///
    /// ```
    /// use guild_sdk::ToolOutcome;
    /// assert_eq!(ToolOutcome::string_field(r#"{"text": "hi"}"#, "text").ok().as_deref(), Some("hi"));
    /// let refused = ToolOutcome::string_field(r#"{"text": 3}"#, "text").unwrap_err();
    /// assert_eq!(refused.error(), Some("invalid input: field `text` is required and must be a string"));
    /// ```
    pub fn string_field(input: &str, name: &str) -> Result<String, Self> {
        let input: Value = serde_json::from_str(input)
            .map_err(|e| Self::invalid_input(format!("the input is not JSON: {e}")))?;
        input
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                Self::invalid_input(format!("field `{name}` is required and must be a string"))
            })
    }

    /// Sets the identifier in the external system.
    pub fn external_id(mut self, id: impl Into<String>) -> Self {
        self.external_id = Some(id.into());
        self
    }

    /// Sets a public URL where the effect can be checked.
    pub fn verifiable_url(mut self, url: impl Into<String>) -> Self {
        self.verifiable_url = Some(url.into());
        self
    }

    /// Sets a short human-readable preview of what changed.
    pub fn preview(mut self, preview: impl Into<String>) -> Self {
        self.preview = Some(preview.into());
        self
    }

    /// True when the status is [`CallStatus::Success`].
    pub fn is_success(&self) -> bool {
        self.status == CallStatus::Success
    }

    /// The error of a failed call, verbatim; `None` for any other status.
    pub fn error(&self) -> Option<&str> {
        match &self.status {
            CallStatus::Failed(error) => Some(error),
            CallStatus::Success | CallStatus::Pending => None,
        }
    }

    /// Parses the output document.
    pub fn output_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.output)
    }

    pub(crate) fn into_raw(self) -> raw::ToolOutcome {
        raw::ToolOutcome {
            output: self.output,
            status: match self.status {
                CallStatus::Success => raw::CallStatus::Success,
                CallStatus::Pending => raw::CallStatus::Pending,
                CallStatus::Failed(error) => raw::CallStatus::Failed(error),
            },
            external_id: self.external_id,
            verifiable_url: self.verifiable_url,
            preview: self.preview,
        }
    }

    pub(crate) fn from_raw(outcome: raw::ToolOutcome) -> Self {
        Self {
            output: outcome.output,
            status: match outcome.status {
                raw::CallStatus::Success => CallStatus::Success,
                raw::CallStatus::Pending => CallStatus::Pending,
                raw::CallStatus::Failed(error) => CallStatus::Failed(error),
            },
            external_id: outcome.external_id,
            verifiable_url: outcome.verifiable_url,
            preview: outcome.preview,
        }
    }
}
