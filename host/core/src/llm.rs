//! Model access (docs/models.md): the operator's `[llm]` settings (endpoints, model aliases,
//! transcripts), a manifest's `[capabilities] llm` request, a plugin's `[grants.NAME.llm]`, and
//! the plain chat-completion records the runtime and the broker exchange.
//!
//! Keys are named here, never held: an endpoint says which environment variable of the host
//! holds its key, and the broker reads it at start.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// `[llm]`: the endpoints and model aliases this host offers to granted plugins.
///
/// ```toml
/// [llm]
/// record_transcripts = false
/// [llm.endpoints.openai]
/// base_url = "https://api.openai.com/v1"
/// api_key_env = "OPENAI_API_KEY"
/// [llm.models]
/// fast = { endpoint = "openai", model = "gpt-4o-mini" }
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// OpenAI-compatible endpoints by name.
    #[serde(default)]
    pub endpoints: BTreeMap<String, Endpoint>,
    /// Model aliases plugins name, each an endpoint and the model id it serves.
    #[serde(default)]
    pub models: BTreeMap<String, ModelAlias>,
    /// Whether each call's request and answer are stored (redacted) with the task.
    #[serde(default)]
    pub record_transcripts: bool,
}

/// `[llm.endpoints.NAME]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// Base URL; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The host environment variable holding the API key (none: no `Authorization` header,
    /// as a local Ollama needs).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Or a file holding the key (relative to `guild.toml`; trailing newlines trimmed), for
    /// keys mounted as files.
    #[serde(default)]
    pub api_key_file: Option<std::path::PathBuf>,
    /// Longest one request may take, seconds (never past the task's deadline).
    #[serde(default = "default_request_timeout_s")]
    pub timeout_s: u32,
}

fn default_request_timeout_s() -> u32 {
    120
}

/// One `[llm.models]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelAlias {
    /// An `[llm.endpoints]` name.
    pub endpoint: String,
    /// The model id the endpoint knows.
    pub model: String,
}

impl LlmSettings {
    /// Checks that every alias names a configured endpoint and every base URL is http(s);
    /// `Err` is `(key, message)`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        for (name, e) in &self.endpoints {
            let key = format!("llm.endpoints.{name}.base_url");
            let url = url::Url::parse(&e.base_url).map_err(|err| (key.clone(), err.to_string()))?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err((key, "expected an http(s) URL with a host".to_owned()));
            }
            if e.api_key_env.is_some() && e.api_key_file.is_some() {
                return Err((
                    format!("llm.endpoints.{name}"),
                    "set api_key_env or api_key_file, not both".to_owned(),
                ));
            }
            if e.timeout_s == 0 {
                return Err((
                    format!("llm.endpoints.{name}.timeout_s"),
                    "expected at least 1".to_owned(),
                ));
            }
        }
        for (alias, m) in &self.models {
            if !self.endpoints.contains_key(&m.endpoint) {
                return Err((
                    format!("llm.models.{alias}.endpoint"),
                    format!(
                        "names endpoint `{}`, which `[llm.endpoints]` does not define",
                        m.endpoint
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `[capabilities] llm` in a manifest: `true` asks for whatever aliases the operator grants,
/// a list asks for those aliases only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum LlmRequest {
    /// `llm = true` (any granted alias) or `llm = false` (none).
    Any(bool),
    /// `llm = ["fast", ...]`.
    Aliases(Vec<String>),
    /// Absent.
    #[default]
    #[serde(skip)]
    None,
}

impl LlmRequest {
    /// Whether the manifest asks for model access at all.
    pub fn is_requested(&self) -> bool {
        match self {
            Self::Any(any) => *any,
            Self::Aliases(a) => !a.is_empty(),
            Self::None => false,
        }
    }

    /// Whether `alias` is among what the manifest asks for.
    pub fn covers(&self, alias: &str) -> bool {
        match self {
            Self::Any(any) => *any,
            Self::Aliases(a) => a.iter().any(|x| x == alias),
            Self::None => false,
        }
    }
}

/// `[grants.NAME.llm]`: the model aliases one plugin may use and its budgets.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmGrant {
    /// `[llm.models]` aliases.
    #[serde(default)]
    pub models: Vec<String>,
    /// Tokens (prompt + completion) one task may spend; none: no per-task cap.
    #[serde(default)]
    pub tokens_per_task: Option<u64>,
    /// Tokens the plugin may spend per UTC day, across tasks and restarts; none: no cap.
    #[serde(default)]
    pub tokens_per_day: Option<u64>,
    /// Calls of this plugin in flight at once (all its tasks together).
    #[serde(default = "default_concurrency")]
    pub concurrency: u32,
}

fn default_concurrency() -> u32 {
    2
}

/// What one plugin may do with models, after intersecting request and grant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelGrant {
    /// Aliases requested and granted.
    pub models: BTreeSet<String>,
    /// Tokens per task, if capped.
    pub tokens_per_task: Option<u64>,
    /// Tokens per UTC day, if capped.
    pub tokens_per_day: Option<u64>,
    /// Calls in flight at once.
    pub concurrency: u32,
    /// Whether the manifest asked for model access at all (explains a refusal).
    pub requested: bool,
}

impl ModelGrant {
    /// Why `plugin` may not call `alias`, naming what would allow it; `None` when allowed.
    pub fn refusal(&self, plugin: &str, alias: &str) -> Option<String> {
        if self.models.contains(alias) {
            return None;
        }
        let granted: Vec<&str> = self.models.iter().map(String::as_str).collect();
        Some(format!(
            "model `{alias}` is not granted to plugin '{plugin}' (granted: {}); the operator \
             adds it to `[grants.{plugin}.llm] models` in guild.toml, and `[llm.models]` must \
             define it",
            if granted.is_empty() {
                "none".to_owned()
            } else {
                granted.join(", ")
            }
        ))
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    /// Instructions.
    System {
        /// The text.
        content: String,
    },
    /// The user's turn.
    User {
        /// The text.
        content: String,
    },
    /// A model turn sent back.
    Assistant {
        /// Its text, if any.
        content: Option<String>,
        /// Its tool calls.
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's answer to one call.
    Tool {
        /// The call it answers.
        call_id: String,
        /// The answer.
        content: String,
    },
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON document as the model wrote it.
    pub arguments: String,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// `[a-zA-Z0-9_-]{1,64}`.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The arguments' JSON Schema, as JSON text.
    pub parameters: String,
}

/// One chat completion as a plugin asks for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// A granted alias.
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// Tools offered.
    pub tools: Vec<ToolDefinition>,
    /// Completion cap.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Stop sequences.
    pub stop: Vec<String>,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end or a stop sequence.
    Stop,
    /// `max_tokens`.
    Length,
    /// It asked for tool calls.
    ToolCalls,
    /// A content filter.
    ContentFilter,
    /// Anything else the endpoint said.
    Other,
}

/// Tokens one call spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Completion tokens.
    pub completion_tokens: u32,
}

impl TokenUsage {
    /// Both together.
    pub fn total(self) -> u64 {
        u64::from(self.prompt_tokens) + u64::from(self.completion_tokens)
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatAnswer {
    /// Its text, if any.
    pub content: Option<String>,
    /// Tool calls it asked for.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    pub finish_reason: FinishReason,
    /// What it cost.
    pub usage: TokenUsage,
}

/// Which budget a refused call would have exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    /// `tokens_per_task`.
    TaskTokens,
    /// `tokens_per_day`.
    DailyTokens,
    /// What a delegation tree's `[delegate.budget] tokens` leaves to a child task's node
    /// (docs/delegation.md); a guest sees it as its task's token budget.
    TreeTokens,
}

/// Why a completion did not happen; each variant is the WIT `llm-error` case of that name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The capability is not requested or not granted.
    #[error("denied: {0}")]
    Denied(String),
    /// The alias is not granted (or not configured).
    #[error("model not granted: {0}")]
    ModelNotGranted(String),
    /// A budget is spent; nothing was sent.
    #[error("budget exceeded: {budget:?} limit {limit}, used {used}")]
    BudgetExceeded {
        /// Which budget.
        budget: BudgetKind,
        /// Its size, tokens.
        limit: u64,
        /// Tokens already spent against it.
        used: u64,
    },
    /// The endpoint kept rate limiting; retry after this many ms, if it said.
    #[error("rate limited (retry after {0:?} ms)")]
    RateLimited(Option<u64>),
    /// The endpoint answered with an error (status 0: unreachable). Secrets redacted.
    #[error("upstream error {status}: {message}")]
    Upstream {
        /// HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The task's deadline or the call's timeout passed.
    #[error("timeout: {0}")]
    Timeout(String),
    /// The answer was not a chat completion.
    #[error("malformed answer: {0}")]
    MalformedAnswer(String),
    /// The request was malformed.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

/// One model's use within a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelUsage {
    /// Calls answered.
    pub calls: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

impl ModelUsage {
    /// Adds one answered call.
    pub fn add(&mut self, usage: TokenUsage) {
        self.calls += 1;
        self.prompt_tokens += u64::from(usage.prompt_tokens);
        self.completion_tokens += u64::from(usage.completion_tokens);
    }
}
