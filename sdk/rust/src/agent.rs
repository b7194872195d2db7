//! A tool-calling loop for specialists that mix model calls with their own logic: offer the
//! granted connector tools (and tools of your own) to a model, run the calls it asks for through
//! [`tools::call`](crate::tools::call), send the results back, and stop at its answer or at the
//! step limit. Every connector call is recorded ([`CallRecord`]) with its outcome, so a report
//! can claim exactly what happened.
//!
//! Connector tools are named `connector.tool`; OpenAI-compatible endpoints only accept
//! `[a-zA-Z0-9_-]{1,64}`, so each is offered as `connector__tool` ([`function_name`]) and mapped
//! back through the loop's own table: a name the loop did not offer is never called.
//!
//! ```no_run
//! use guild_sdk::agent::{HostTools, ToolLoop, Ending};
//! use guild_sdk::llm::HostModel;
//!
//! let mut chat = ToolLoop::new("fast")
//!     .system("You file bugs with the tracker tools.")
//!     .user("File: the save button does nothing.")
//!     .max_steps(6)
//!     .offer_granted();
//! let end = chat.run(&mut HostModel, &mut HostTools);
//! match end {
//!     Ending::Answered(text) => guild_sdk::log::info(text),
//!     Ending::StepLimit => guild_sdk::log::warn("no answer within 6 steps"),
//!     Ending::ModelError(e) => guild_sdk::log::error(e.to_string()),
//! }
//! for call in chat.calls() {
//!     guild_sdk::log::info(format!("{} -> {:?}", call.tool, call.external_id()));
//! }
//! ```

use serde_json::{Value, json};

use crate::llm::{LlmError, Message, Model, Request, ToolCall, ToolDefinition, Usage};
use crate::tool::{CallStatus, ToolOutcome};
use crate::tools::{self, GrantedTool};
use crate::types::HostError;

/// What the loop calls to run tools. [`HostTools`] calls the host; a native test scripts it.
pub trait Tools {
    /// Calls connector tool `name` (`connector.tool`) with a JSON object `input`.
    fn call(&mut self, name: &str, input: &str) -> Result<ToolOutcome, HostError>;

    /// Runs one of the caller's own tools ([`ToolLoop::offer_local`]); returns what the model
    /// reads. By default no local tool exists.
    fn local(&mut self, name: &str, arguments: &Value) -> String {
        let _ = arguments;
        refusal(&format!("tool `{name}` is not available"))
    }

    /// Called after each connector call (to send progress, log, count). Nothing by default.
    fn after_call(&mut self, record: &CallRecord) {
        let _ = record;
    }
}

/// The host's connector tools, as [`tools::call_raw`] calls them (a refusal without a caller's
/// line: the model chose the call).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostTools;

impl Tools for HostTools {
    fn call(&mut self, name: &str, input: &str) -> Result<ToolOutcome, HostError> {
        tools::host_call(name, input, None)
    }
}

/// One connector call the model asked for and the loop ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// The model's id for the call.
    pub call_id: String,
    /// The tool, `connector.tool`.
    pub tool: String,
    /// True when the tool changes something outside (the host receipted it).
    pub mutating: bool,
    /// The input sent, a JSON object.
    pub input: String,
    /// What the connector reported, or why the host refused the call.
    pub outcome: Result<ToolOutcome, HostError>,
}

impl CallRecord {
    /// True when the connector reported success.
    pub fn succeeded(&self) -> bool {
        self.outcome.as_ref().is_ok_and(ToolOutcome::is_success)
    }

    /// The external id the connector returned, if any.
    pub fn external_id(&self) -> Option<&str> {
        self.outcome.as_ref().ok()?.external_id.as_deref()
    }
}

/// How a [`ToolLoop::run`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The model answered without asking for tools; its text (empty when it sent none).
    Answered(String),
    /// The step limit was reached while the model still asked for tools.
    StepLimit,
    /// A completion failed; [`LlmError::is_final`] says whether trying again can help.
    ModelError(LlmError),
}

/// Where an offered function name leads.
#[derive(Debug, Clone)]
enum Target {
    Connector { tool: String, mutating: bool },
    Local,
}

#[derive(Debug, Clone)]
struct Offered {
    definition: ToolDefinition,
    target: Target,
}

/// A conversation with a model that may call tools, within a step limit (one step is one
/// completion). Runs can be resumed: add a message and call [`ToolLoop::run`] again; the steps
/// and the call records carry over.
#[derive(Debug, Clone)]
pub struct ToolLoop {
    request: Request,
    offered: Vec<Offered>,
    max_steps: u32,
    steps: u32,
    calls: Vec<CallRecord>,
    usage: Usage,
}

impl ToolLoop {
    /// An empty conversation with model alias `model`, at most 10 steps.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            request: Request::new(model),
            offered: Vec::new(),
            max_steps: 10,
            steps: 0,
            calls: Vec::new(),
            usage: Usage::default(),
        }
    }

    /// Adds a system message.
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.push(Message::system(text));
        self
    }

    /// Adds a user message.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.push(Message::user(text));
        self
    }

    /// Sets the step limit (completions, across runs).
    pub fn max_steps(mut self, steps: u32) -> Self {
        self.max_steps = steps;
        self
    }

    /// Caps each answer's tokens.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.request.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.request.temperature = Some(temperature);
        self
    }

    /// Offers every tool granted to this specialist ([`tools::granted`]).
    pub fn offer_granted(self) -> Self {
        tools::granted()
            .iter()
            .fold(self, |chat, tool| chat.offer_connector(tool))
    }

    /// Offers one granted connector tool, with its description and input schema.
    pub fn offer_connector(mut self, tool: &GrantedTool) -> Self {
        let name = self.unique_name(function_name(&tool.name));
        let definition = ToolDefinition {
            name,
            description: tool.spec.description.clone(),
            parameters: tool.spec.input_schema.clone(),
        };
        self.offered.push(Offered {
            definition,
            target: Target::Connector {
                tool: tool.name.clone(),
                mutating: tool.spec.mutating,
            },
        });
        self
    }

    /// Offers a tool of the caller's own, run by [`Tools::local`] under `definition.name`.
    pub fn offer_local(mut self, definition: ToolDefinition) -> Self {
        self.offered.push(Offered {
            definition,
            target: Target::Local,
        });
        self
    }

    /// Adds a message to the conversation.
    pub fn push(&mut self, message: Message) {
        self.request.messages.push(message);
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.request.messages
    }

    /// The tools offered, as the model sees them.
    pub fn offered(&self) -> Vec<&ToolDefinition> {
        self.offered.iter().map(|o| &o.definition).collect()
    }

    /// The connector tool (`connector.tool`) offered under function name `name`.
    pub fn connector_tool(&self, name: &str) -> Option<&str> {
        self.offered
            .iter()
            .find(|o| o.definition.name == name)
            .and_then(|o| match &o.target {
                Target::Connector { tool, .. } => Some(tool.as_str()),
                Target::Local => None,
            })
    }

    /// Every connector call run so far, in order.
    pub fn calls(&self) -> &[CallRecord] {
        &self.calls
    }

    /// Completions made so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Steps left before the limit.
    pub fn steps_left(&self) -> u32 {
        self.max_steps.saturating_sub(self.steps)
    }

    /// Tokens spent so far, as the endpoints counted them.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Asks the model, runs the tool calls it wants, and again, until it answers without tool
    /// calls, a completion fails, or the step limit is reached.
    pub fn run(&mut self, model: &mut dyn Model, tools: &mut dyn Tools) -> Ending {
        self.request.tools = self.offered.iter().map(|o| o.definition.clone()).collect();
        while self.steps < self.max_steps {
            self.steps += 1;
            let answer = match model.complete(&self.request) {
                Ok(answer) => answer,
                Err(err) => return Ending::ModelError(err),
            };
            self.usage.prompt_tokens += answer.usage.prompt_tokens;
            self.usage.completion_tokens += answer.usage.completion_tokens;
            self.push(Message::Assistant(answer.turn()));
            if answer.tool_calls.is_empty() {
                return Ending::Answered(answer.content.unwrap_or_default());
            }
            for call in &answer.tool_calls {
                let content = self.dispatch(call, tools);
                self.push(Message::tool(call.id.clone(), content));
            }
        }
        Ending::StepLimit
    }

    /// Runs one tool call; returns what the model reads. Unknown names and malformed arguments
    /// are answered with an error the model can act on; nothing is called for them.
    fn dispatch(&mut self, call: &ToolCall, tools: &mut dyn Tools) -> String {
        let Some(offered) = self.offered.iter().find(|o| o.definition.name == call.name) else {
            let names: Vec<&str> = self
                .offered
                .iter()
                .map(|o| o.definition.name.as_str())
                .collect();
            return refusal(&format!(
                "no tool named `{}` is available to you; call one of: {}",
                call.name,
                names.join(", ")
            ));
        };
        let arguments = match parse_arguments(&call.arguments) {
            Ok(arguments) => arguments,
            Err(why) => {
                return refusal(&format!(
                    "the arguments of `{}` are not a JSON object ({why}); call it again with \
                     arguments that match its parameters schema",
                    call.name
                ));
            }
        };
        let (tool, mutating) = match &offered.target {
            Target::Local => return tools.local(&call.name, &arguments),
            Target::Connector { tool, mutating } => (tool.clone(), *mutating),
        };
        let input = arguments.to_string();
        let outcome = tools.call(&tool, &input);
        let record = CallRecord {
            call_id: call.id.clone(),
            tool,
            mutating,
            input,
            outcome,
        };
        tools.after_call(&record);
        let content = tool_message(&record);
        self.calls.push(record);
        content
    }

    /// `name`, or `name` shortened and numbered when another offered tool already has it.
    fn unique_name(&self, name: String) -> String {
        let taken = |n: &str| self.offered.iter().any(|o| o.definition.name == n);
        if !taken(&name) {
            return name;
        }
        let stem: String = name.chars().take(58).collect();
        (2..)
            .map(|i| format!("{stem}_{i}"))
            .find(|n| !taken(n))
            .unwrap_or(name)
    }
}

/// The function name a connector tool is offered under: `connector.tool` becomes
/// `connector__tool`, any character outside `[a-zA-Z0-9_-]` becomes `_`, at most 64 characters.
///
/// ```
/// assert_eq!(guild_sdk::agent::function_name("tracker.create_issue"), "tracker__create_issue");
/// ```
pub fn function_name(tool: &str) -> String {
    let name: String = tool
        .replace('.', "__")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "tool".to_owned()
    } else {
        name
    }
}

/// The arguments as a JSON object; empty text is an empty object.
fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!("got {}", kind_of(&other))),
        Err(e) => Err(e.to_string()),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `{"error": why}`: what a model reads when a call did not happen.
pub fn refusal(why: &str) -> String {
    json!({ "error": why }).to_string()
}

/// What the model reads about one connector call: status, output, and the external id and URL
/// it can cite.
fn tool_message(record: &CallRecord) -> String {
    let outcome = match &record.outcome {
        Ok(outcome) => outcome,
        Err(err) => return json!({ "status": "refused", "error": err.to_string() }).to_string(),
    };
    let output = serde_json::from_str::<Value>(&outcome.output)
        .unwrap_or_else(|_| Value::String(outcome.output.clone()));
    let mut message = json!({ "call_id": record.call_id, "output": output });
    match &outcome.status {
        CallStatus::Success => message["status"] = json!("success"),
        CallStatus::Pending => message["status"] = json!("pending"),
        CallStatus::Failed(error) => {
            message["status"] = json!("failed");
            message["error"] = json!(error);
        }
    }
    if let Some(id) = &outcome.external_id {
        message["external_id"] = json!(id);
    }
    if let Some(url) = &outcome.verifiable_url {
        message["url"] = json!(url);
    }
    message.to_string()
}

#[cfg(test)]
mod tests;
