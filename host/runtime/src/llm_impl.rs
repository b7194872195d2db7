//! The host side of the `llm` and `definition` interfaces.
//!
//! `llm`: the grant is checked here (capability requested and granted, alias granted), then the
//! call goes to the task's [`TaskHost::llm_complete`](crate::TaskHost::llm_complete), behind
//! which the broker applies budgets, concurrency, retries and the deadline, and accounts the
//! tokens to the task (docs/models.md). Every text handed back passes the plugin's redactor too,
//! so a granted secret an upstream echoes never reaches the guest.
//!
//! `definition`: the plugin's own name, `prompt.md` and `[agent]` settings, read at load.

use guild_core::capability::{denied, trace_decision};
use guild_core::llm::{
    BudgetKind, ChatAnswer, ChatMessage, ChatRequest, FinishReason, LlmError, ToolCall,
    ToolDefinition,
};

use crate::bindings::{definition, llm};
use crate::state::StoreState;

fn message(m: llm::Message) -> ChatMessage {
    match m {
        llm::Message::System(content) => ChatMessage::System { content },
        llm::Message::User(content) => ChatMessage::User { content },
        llm::Message::Assistant(turn) => ChatMessage::Assistant {
            content: turn.content,
            tool_calls: turn.tool_calls.into_iter().map(tool_call).collect(),
        },
        llm::Message::Tool(r) => ChatMessage::Tool {
            call_id: r.call_id,
            content: r.content,
        },
    }
}

fn tool_call(c: llm::ToolCall) -> ToolCall {
    ToolCall {
        id: c.id,
        name: c.name,
        arguments: c.arguments,
    }
}

fn request(r: llm::Request) -> ChatRequest {
    ChatRequest {
        model: r.model,
        messages: r.messages.into_iter().map(message).collect(),
        tools: r
            .tools
            .into_iter()
            .map(|t| ToolDefinition {
                name: t.name,
                description: t.description,
                parameters: t.parameters,
            })
            .collect(),
        max_tokens: r.max_tokens,
        temperature: r.temperature,
        stop: r.stop,
    }
}

impl StoreState {
    /// `text` with the plugin's granted secrets redacted.
    fn clean(&self, text: String) -> String {
        self.redactor.redact_str(&text).into_owned()
    }

    fn answer(&self, a: ChatAnswer) -> llm::Answer {
        llm::Answer {
            content: a.content.map(|c| self.clean(c)),
            tool_calls: a
                .tool_calls
                .into_iter()
                .map(|c| llm::ToolCall {
                    id: self.clean(c.id),
                    name: self.clean(c.name),
                    arguments: self.clean(c.arguments),
                })
                .collect(),
            finish_reason: match a.finish_reason {
                FinishReason::Stop => llm::FinishReason::Stop,
                FinishReason::Length => llm::FinishReason::Length,
                FinishReason::ToolCalls => llm::FinishReason::ToolCalls,
                FinishReason::ContentFilter => llm::FinishReason::ContentFilter,
                FinishReason::Other => llm::FinishReason::Other,
            },
            usage: llm::Usage {
                prompt_tokens: a.usage.prompt_tokens,
                completion_tokens: a.usage.completion_tokens,
            },
        }
    }

    fn error(&self, e: LlmError) -> llm::LlmError {
        match e {
            LlmError::Denied(m) => llm::LlmError::Denied(m),
            LlmError::ModelNotGranted(m) => llm::LlmError::ModelNotGranted(m),
            LlmError::BudgetExceeded {
                budget,
                limit,
                used,
            } => llm::LlmError::BudgetExceeded(llm::BudgetExceeded {
                budget: match budget {
                    // The tree's tokens left to a child task are that task's budget.
                    BudgetKind::TaskTokens | BudgetKind::TreeTokens => llm::Budget::TaskTokens,
                    BudgetKind::DailyTokens => llm::Budget::DailyTokens,
                },
                limit,
                used,
            }),
            LlmError::RateLimited(ms) => llm::LlmError::RateLimited(ms),
            LlmError::Upstream { status, message } => llm::LlmError::Upstream(llm::UpstreamError {
                status,
                message: self.clean(message),
            }),
            LlmError::Timeout(m) => llm::LlmError::Timeout(m),
            LlmError::MalformedAnswer(m) => llm::LlmError::MalformedAnswer(self.clean(m)),
            LlmError::InvalidRequest(m) => llm::LlmError::InvalidRequest(m),
        }
    }

    /// Why this instance may not call `alias` at all, or `None`.
    fn llm_refusal(&self, alias: &str) -> Option<LlmError> {
        let grant = &self.caps.llm;
        if !grant.requested || grant.models.is_empty() {
            let why = if grant.requested {
                "not granted: the operator adds `[grants.NAME.llm] models` in guild.toml"
            } else {
                "not requested: add `llm = true` (or a list of aliases) to `[capabilities]` in \
                 plugin.toml"
            };
            return Some(LlmError::Denied(denied(&self.name, "llm", alias, why)));
        }
        if self.task.is_none() {
            return Some(LlmError::Denied(denied(
                &self.name,
                "llm",
                alias,
                "no task: models are called only while running a task",
            )));
        }
        grant
            .refusal(&self.name, alias)
            .map(LlmError::ModelNotGranted)
    }
}

impl llm::Host for StoreState {
    async fn models(&mut self) -> wasmtime::Result<Vec<String>> {
        if !self.caps.llm.requested {
            return Ok(Vec::new());
        }
        Ok(self.caps.llm.models.iter().cloned().collect())
    }

    async fn complete(
        &mut self,
        r: llm::Request,
    ) -> wasmtime::Result<Result<llm::Answer, llm::LlmError>> {
        let alias = r.model.clone();
        if let Some(refusal) = self.llm_refusal(&alias) {
            trace_decision(&self.plugin, "llm", &alias, false);
            self.count_refusal()?;
            return Ok(Err(self.error(refusal)));
        }
        trace_decision(&self.plugin, "llm", &alias, true);
        let Some(task) = self.task.clone() else {
            return Ok(Err(llm::LlmError::Denied("no task".to_owned())));
        };
        let answer = task.llm_complete(request(r)).await;
        if matches!(answer, Err(LlmError::BudgetExceeded { .. })) {
            self.count_refusal()?;
        }
        Ok(answer.map(|a| self.answer(a)).map_err(|e| self.error(e)))
    }
}

impl definition::Host for StoreState {
    async fn name(&mut self) -> wasmtime::Result<String> {
        Ok(self.definition.name.clone())
    }

    async fn prompt(&mut self) -> wasmtime::Result<Option<String>> {
        Ok(self.definition.prompt.clone())
    }

    async fn settings(&mut self) -> wasmtime::Result<String> {
        Ok(self.definition.settings.clone())
    }
}
