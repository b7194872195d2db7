//! What a connector says about one of its tools ([`ToolSpec`]), with its builder: the plugin
//! builds it, the host checks it at load time and enforces it on every call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a tool call must be approved by the caller before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Runs without asking (the default).
    #[default]
    Never,
    /// Pauses the task until the caller approves.
    Always,
}

/// What a connector says about one of its tools.
///
/// ```
/// use guild_types::ToolSpec;
/// let spec = ToolSpec::new("create_issue", "Create an issue.")
///     .schema(serde_json::json!({"type": "object", "required": ["title"]}))
///     .mutating("issue", "create");
/// assert!(spec.mutating);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name, unique within the connector: `[a-z0-9_]{1,64}` (the host refuses a connector
    /// whose tools break this when it loads).
    pub name: String,
    /// One paragraph that tells a model when to use the tool.
    pub description: String,
    /// JSON Schema of the input object, as a JSON document.
    pub input_schema: String,
    /// True when the call changes something outside the plugin; the host writes a receipt.
    pub mutating: bool,
    /// Receipt type for mutating tools: issue, message, page, file, ...
    pub receipt_type: Option<String>,
    /// Receipt operation for mutating tools: create, update, delete, send, ...
    pub operation: Option<String>,
    /// A skill the caller must have loaded before this tool answers.
    pub requires_skill: Option<String>,
    /// Whether the caller must approve each call.
    pub approval: Approval,
}

impl ToolSpec {
    /// A non-mutating tool whose input schema is any JSON object.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema: r#"{"type":"object"}"#.to_owned(),
            mutating: false,
            receipt_type: None,
            operation: None,
            requires_skill: None,
            approval: Approval::Never,
        }
    }

    /// Sets the JSON Schema of the input object.
    pub fn schema(mut self, schema: Value) -> Self {
        self.input_schema = schema.to_string();
        self
    }

    /// Marks the tool as mutating: the host writes a receipt of `receipt_type` (issue, message,
    /// ...) and `operation` (create, update, ...) for every call.
    pub fn mutating(
        mut self,
        receipt_type: impl Into<String>,
        operation: impl Into<String>,
    ) -> Self {
        self.mutating = true;
        self.receipt_type = Some(receipt_type.into());
        self.operation = Some(operation.into());
        self
    }

    /// Requires the caller to have loaded `skill` first.
    pub fn requires_skill(mut self, skill: impl Into<String>) -> Self {
        self.requires_skill = Some(skill.into());
        self
    }

    /// Sets whether each call needs the caller's approval.
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// True when each call needs the caller's approval.
    pub fn needs_approval(&self) -> bool {
        self.approval == Approval::Always
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_tool_mutates_nothing_and_needs_no_approval() {
        let spec = ToolSpec::new("search", "Search.");
        assert!(!spec.mutating && !spec.needs_approval());
        assert_eq!(spec.input_schema, r#"{"type":"object"}"#);
        let spec = spec.approval(Approval::Always).mutating("issue", "create");
        assert!(spec.mutating && spec.needs_approval());
        assert_eq!(spec.receipt_type.as_deref(), Some("issue"));
    }

    #[test]
    fn approval_is_a_word_on_the_wire() -> Result<(), serde_json::Error> {
        let spec = ToolSpec::new("post", "Post.").approval(Approval::Always);
        let json = serde_json::to_value(&spec)?;
        assert_eq!(json["approval"], "always");
        assert_eq!(serde_json::from_value::<ToolSpec>(json)?, spec);
        Ok(())
    }
}
