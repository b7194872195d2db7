//! Chat completions through the models the operator configured (the `llm` interface).
//! Specialists only. A plugin names a model by the alias the operator gave it; the host holds
//! every key, enforces the grant (aliases, token budgets, concurrent calls), retries what is
//! worth retrying and accounts every call's tokens to the task.
//!
//! ```no_run
//! use guild_sdk::llm::{self, Message, Request};
//!
//! # fn run() -> Result<(), guild_sdk::llm::LlmError> {
//! let answer = llm::complete(
//!     &Request::new("fast")
//!         .message(Message::system("You answer in one sentence."))
//!         .message(Message::user("What is a receipt?"))
//!         .max_tokens(200),
//! )?;
//! guild_sdk::log::info(answer.content.unwrap_or_default());
//! # Ok(())
//! # }
//! ```
//!
//! Code that drives a model through a trait ([`Model`]) instead of calling [`complete`] directly
//! can be tested natively with a scripted model; [`HostModel`] is the host's.

use std::fmt;

use crate::bindings::specialist::guild::plugin::llm as raw;
use crate::types::without_kind;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The model's id for the call; the [`Message::Tool`] that answers it carries the same id.
    pub id: String,
    /// The tool's name, as offered in [`Request::tools`].
    pub name: String,
    /// The arguments as the model wrote them: a JSON document, not checked by the host.
    pub arguments: String,
}

/// An assistant turn, as the model answered it (sent back in the next request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssistantTurn {
    /// The text, if any.
    pub content: Option<String>,
    /// The tool calls, if any.
    pub tool_calls: Vec<ToolCall>,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Instructions.
    System(String),
    /// The user's (or the brief's) words.
    User(String),
    /// What the model answered earlier.
    Assistant(AssistantTurn),
    /// The answer to one tool call.
    Tool {
        /// The [`ToolCall::id`] this answers.
        call_id: String,
        /// What the tool returned (usually a JSON document).
        content: String,
    },
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System(text.into())
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(text.into())
    }

    /// The answer to tool call `call_id`.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self::Tool {
            call_id: call_id.into(),
            content: content.into(),
        }
    }

    fn into_raw(self) -> raw::Message {
        match self {
            Self::System(text) => raw::Message::System(text),
            Self::User(text) => raw::Message::User(text),
            Self::Assistant(turn) => raw::Message::Assistant(raw::AssistantTurn {
                content: turn.content,
                tool_calls: turn.tool_calls.into_iter().map(call_into_raw).collect(),
            }),
            Self::Tool { call_id, content } => {
                raw::Message::Tool(raw::ToolResult { call_id, content })
            }
        }
    }
}

fn call_into_raw(call: ToolCall) -> raw::ToolCall {
    raw::ToolCall {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDefinition {
    /// `[a-zA-Z0-9_-]{1,64}`, as OpenAI-compatible endpoints require.
    pub name: String,
    /// When to use the tool.
    pub description: String,
    /// The arguments' JSON Schema, as a JSON document.
    pub parameters: String,
}

impl ToolDefinition {
    /// A tool whose arguments follow `parameters` (a JSON Schema).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: &serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: parameters.to_string(),
        }
    }
}

/// One chat completion, built from a model alias.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// A model alias the operator granted to this plugin.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// A cap on the answer's tokens.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Sequences that end the answer.
    pub stop: Vec<String>,
}

impl Request {
    /// An empty conversation with model alias `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            messages: Vec::new(),
            tools: Vec::new(),
            max_tokens: None,
            temperature: None,
            stop: Vec::new(),
        }
    }

    /// Adds a message.
    pub fn message(mut self, message: Message) -> Self {
        self.messages.push(message);
        self
    }

    /// Offers a tool.
    pub fn tool(mut self, tool: ToolDefinition) -> Self {
        self.tools.push(tool);
        self
    }

    /// Caps the answer's tokens.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Adds a stop sequence.
    pub fn stop(mut self, sequence: impl Into<String>) -> Self {
        self.stop.push(sequence.into());
        self
    }

    fn to_raw(&self) -> raw::Request {
        raw::Request {
            model: self.model.clone(),
            messages: self
                .messages
                .iter()
                .cloned()
                .map(Message::into_raw)
                .collect(),
            tools: self
                .tools
                .iter()
                .map(|t| raw::ToolDefinition {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    parameters: t.parameters.clone(),
                })
                .collect(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            stop: self.stop.clone(),
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// A natural end, or a stop sequence.
    Stop,
    /// The answer hit the token cap.
    Length,
    /// The model asked for tool calls.
    ToolCalls,
    /// The provider filtered the answer.
    ContentFilter,
    /// Anything else the endpoint said.
    Other,
}

/// Tokens one call spent, as the endpoint counted them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Tokens of the request.
    pub prompt_tokens: u32,
    /// Tokens of the answer.
    pub completion_tokens: u32,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The text, if any.
    pub content: Option<String>,
    /// The tool calls the model asked for, if any.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// Tokens spent.
    pub usage: Usage,
}

impl Answer {
    /// A plain text answer (for scripted models in tests).
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: Some(content.into()),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
        }
    }

    /// An answer asking for tool calls (for scripted models in tests).
    pub fn calls(tool_calls: Vec<ToolCall>) -> Self {
        Self {
            content: None,
            tool_calls,
            finish_reason: FinishReason::ToolCalls,
            usage: Usage::default(),
        }
    }

    /// The answer as the assistant turn to send back in the next request.
    pub fn turn(&self) -> AssistantTurn {
        AssistantTurn {
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }

    fn from_raw(answer: raw::Answer) -> Self {
        Self {
            content: answer.content,
            tool_calls: answer
                .tool_calls
                .into_iter()
                .map(|c| ToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            finish_reason: match answer.finish_reason {
                raw::FinishReason::Stop => FinishReason::Stop,
                raw::FinishReason::Length => FinishReason::Length,
                raw::FinishReason::ToolCalls => FinishReason::ToolCalls,
                raw::FinishReason::ContentFilter => FinishReason::ContentFilter,
                raw::FinishReason::Other => FinishReason::Other,
            },
            usage: Usage {
                prompt_tokens: answer.usage.prompt_tokens,
                completion_tokens: answer.usage.completion_tokens,
            },
        }
    }
}

/// Which token budget a refused call would have exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// The grant's tokens per task.
    TaskTokens,
    /// The grant's tokens per day (UTC).
    DailyTokens,
}

/// Why a completion did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmError {
    /// The `llm` capability was not requested or not granted.
    Denied(String),
    /// The alias is not granted to this plugin (or not configured); the text lists the granted ones.
    ModelNotGranted(String),
    /// A token budget is spent; nothing was sent.
    BudgetExceeded {
        /// Which budget.
        budget: Budget,
        /// The budget, in tokens.
        limit: u64,
        /// Tokens already spent against it.
        used: u64,
    },
    /// The endpoint is rate limiting and the host's retries ran out.
    RateLimited {
        /// Retry after this many milliseconds, if the endpoint said.
        retry_after_ms: Option<u64>,
    },
    /// The endpoint answered with an error.
    Upstream {
        /// The HTTP status (0 when the endpoint could not be reached).
        status: u16,
        /// The provider's message (secrets redacted).
        message: String,
    },
    /// The task's deadline or the call's timeout passed before an answer.
    Timeout(String),
    /// The endpoint's answer was not a chat completion.
    MalformedAnswer(String),
    /// The request was malformed (empty messages, a bad tool name or schema, too large).
    InvalidRequest(String),
}

impl LlmError {
    /// True when calling again within this task cannot help: the capability or the model is
    /// not granted, a budget is spent, or the deadline passed. A loop should end its run and
    /// report why.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            Self::Denied(_)
                | Self::ModelNotGranted(_)
                | Self::BudgetExceeded { .. }
                | Self::Timeout(_)
        )
    }

    fn from_raw(err: raw::LlmError) -> Self {
        match err {
            raw::LlmError::Denied(m) => Self::Denied(m),
            raw::LlmError::ModelNotGranted(m) => Self::ModelNotGranted(m),
            raw::LlmError::BudgetExceeded(b) => Self::BudgetExceeded {
                budget: match b.budget {
                    raw::Budget::TaskTokens => Budget::TaskTokens,
                    raw::Budget::DailyTokens => Budget::DailyTokens,
                },
                limit: b.limit,
                used: b.used,
            },
            raw::LlmError::RateLimited(retry_after_ms) => Self::RateLimited { retry_after_ms },
            raw::LlmError::Upstream(u) => Self::Upstream {
                status: u.status,
                message: u.message,
            },
            raw::LlmError::Timeout(m) => Self::Timeout(m),
            raw::LlmError::MalformedAnswer(m) => Self::MalformedAnswer(m),
            raw::LlmError::InvalidRequest(m) => Self::InvalidRequest(m),
        }
    }
}

/// `kind: message`, with the kind once:
///
/// ```
/// use guild_sdk::llm::{Budget, LlmError};
///
/// let spent = LlmError::BudgetExceeded { budget: Budget::TaskTokens, limit: 1000, used: 1200 };
/// assert_eq!(spent.to_string(), "budget-exceeded: task token budget spent (1200 of 1000 tokens)");
/// let late = LlmError::Timeout("timeout: the task's deadline passed".into());
/// assert_eq!(late.to_string(), "timeout: the task's deadline passed");
/// ```
impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Denied(m) => write!(f, "denied: {}", without_kind("denied", m)),
            Self::ModelNotGranted(m) => {
                write!(
                    f,
                    "model-not-granted: {}",
                    without_kind("model-not-granted", m)
                )
            }
            Self::BudgetExceeded {
                budget,
                limit,
                used,
            } => {
                let which = match budget {
                    Budget::TaskTokens => "task",
                    Budget::DailyTokens => "daily",
                };
                write!(
                    f,
                    "budget-exceeded: {which} token budget spent ({used} of {limit} tokens)"
                )
            }
            Self::RateLimited {
                retry_after_ms: Some(ms),
            } => write!(f, "rate-limited: retry after {ms} ms"),
            Self::RateLimited {
                retry_after_ms: None,
            } => f.write_str("rate-limited: the endpoint is rate limiting"),
            Self::Upstream { status, message } => write!(f, "upstream: HTTP {status}: {message}"),
            Self::Timeout(m) => write!(f, "timeout: {}", without_kind("timeout", m)),
            Self::MalformedAnswer(m) => {
                write!(
                    f,
                    "malformed-answer: {}",
                    without_kind("malformed-answer", m)
                )
            }
            Self::InvalidRequest(m) => {
                write!(f, "invalid-request: {}", without_kind("invalid-request", m))
            }
        }
    }
}

impl std::error::Error for LlmError {}

impl From<LlmError> for crate::RunError {
    fn from(err: LlmError) -> Self {
        Self::Failed(err.to_string())
    }
}

/// The model aliases this plugin may use (requested and granted).
pub fn models() -> Vec<String> {
    raw::models()
}

/// One chat completion.
pub fn complete(request: &Request) -> Result<Answer, LlmError> {
    raw::complete(&request.to_raw())
        .map(Answer::from_raw)
        .map_err(LlmError::from_raw)
}

/// Something that answers chat completions: the host's models ([`HostModel`]), or a scripted
/// model in a native test.
pub trait Model {
    /// One chat completion.
    fn complete(&mut self, request: &Request) -> Result<Answer, LlmError>;
}

/// The operator's models, through the host ([`complete`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostModel;

impl Model for HostModel {
    fn complete(&mut self, request: &Request) -> Result<Answer, LlmError> {
        complete(request)
    }
}
