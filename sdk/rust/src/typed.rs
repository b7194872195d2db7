//! Typed connector tools: a tool is a type whose input is a serde `Deserialize` type with a
//! JSON Schema derived from it (`schemars`), so a connector neither parses JSON by hand nor
//! writes its schemas. [`Toolbox`] lists the tools' specs and routes calls to them.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::ToolSpec;
use crate::tool::ToolOutcome;

/// One tool of a connector, as a type.
///
/// ```
/// use guild_sdk::{Tool, ToolOutcome, Toolbox};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Input of `create_issue`.
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct CreateIssue {
///     /// Issue title.
///     title: String,
///     /// Label names.
///     #[serde(default)]
///     labels: Vec<String>,
/// }
///
/// struct Create;
///
/// impl Tool for Create {
///     type Input = CreateIssue;
///     const NAME: &'static str = "create_issue";
///     const DESCRIPTION: &'static str = "Create an issue.";
///
///     fn spec(spec: guild_sdk::ToolSpec) -> guild_sdk::ToolSpec {
///         spec.mutating("issue", "create")
///     }
///
///     fn run(input: CreateIssue) -> ToolOutcome {
///         ToolOutcome::success(serde_json::json!({ "title": input.title, "labels": input.labels }))
///     }
/// }
///
/// let tools = Toolbox::new().tool::<Create>();
/// let spec = &tools.specs()[0];
/// assert!(spec.mutating && spec.input_schema.contains("\"title\""));
///
/// let done = tools.call("create_issue", r#"{"title": "crash on start"}"#);
/// assert!(done.is_success());
/// let refused = tools.call("create_issue", r#"{"labels": []}"#);
/// assert!(refused.error().is_some_and(|e| e.starts_with("invalid input") && e.contains("title")));
/// let unknown = tools.call("delete_issue", "{}");
/// assert!(unknown.error().is_some_and(|e| e.contains("tools: create_issue")));
/// ```
pub trait Tool {
    /// The input, deserialized from the call's JSON; its JSON Schema becomes the tool's.
    type Input: DeserializeOwned + JsonSchema;
    /// Tool name, unique within the connector: `[a-z0-9_]{1,64}`.
    const NAME: &'static str;
    /// One paragraph that tells a model when to use the tool.
    const DESCRIPTION: &'static str;

    /// Adjusts the derived spec: [`ToolSpec::mutating`], [`ToolSpec::approval`],
    /// [`ToolSpec::requires_skill`]. Unchanged by default.
    fn spec(spec: ToolSpec) -> ToolSpec {
        spec
    }

    /// Runs the tool with a valid input.
    fn run(input: Self::Input) -> ToolOutcome;
}

/// The spec of tool `T`: its name, description and the JSON Schema of its input.
pub fn spec_of<T: Tool>() -> ToolSpec {
    let schema = schemars::schema_for!(T::Input);
    let schema =
        serde_json::to_value(&schema).unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    T::spec(ToolSpec::new(T::NAME, T::DESCRIPTION).schema(schema))
}

/// Deserializes `input` and runs tool `T`; an input that does not fit becomes
/// [`ToolOutcome::invalid_input`] naming what was wrong.
pub fn call_typed<T: Tool>(input: &str) -> ToolOutcome {
    match serde_json::from_str::<T::Input>(input) {
        Ok(input) => T::run(input),
        Err(e) => ToolOutcome::invalid_input(format!("tool `{}`: {e}", T::NAME)),
    }
}

/// One registered tool: its spec and how to call it.
struct Entry {
    spec: ToolSpec,
    call: fn(&str) -> ToolOutcome,
}

/// A connector's typed tools, in the order they were added. A [`Connector`](crate::Connector)
/// answers `tools()` with [`Toolbox::specs`] and `call()` with [`Toolbox::call`].
#[derive(Default)]
pub struct Toolbox {
    entries: Vec<Entry>,
}

impl Toolbox {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds tool `T`.
    pub fn tool<T: Tool>(mut self) -> Self {
        self.entries.push(Entry {
            spec: spec_of::<T>(),
            call: call_typed::<T>,
        });
        self
    }

    /// The specs of every tool, for `Connector::tools`.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries.iter().map(|e| e.spec.clone()).collect()
    }

    /// Runs tool `name` with a JSON input, for `Connector::call`. An unknown name fails with
    /// the list of tools; an input that does not fit fails as invalid input.
    pub fn call(&self, name: &str, input: &str) -> ToolOutcome {
        match self.entries.iter().find(|e| e.spec.name == name) {
            Some(entry) => (entry.call)(input),
            None => {
                let names: Vec<&str> = self.entries.iter().map(|e| e.spec.name.as_str()).collect();
                ToolOutcome::failed(format!(
                    "unknown tool `{name}`; tools: {}",
                    names.join(", ")
                ))
            }
        }
    }
}
