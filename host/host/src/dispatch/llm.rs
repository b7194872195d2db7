//! A task's model calls (docs/models.md): each goes to the host's broker with the task's
//! plugin, grant, tokens spent so far and deadline, and its answer is accounted here, per alias,
//! for the task result; a child task's calls also spend its delegation tree's tokens
//! (docs/delegation.md), refused once its node has none left. Transcripts are kept only when the broker recorded one
//! (`[llm] record_transcripts`).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use guild_core::config::Config;
use guild_core::llm::{ChatAnswer, ChatRequest, LlmError, ModelUsage};
use guild_llm::CallScope;
use tokio::time::Instant;

use super::TaskScope;
use crate::registry::LoadedPlugin;

/// The task's deadline: the specialist's own time limit, or `[dispatch] task_timeout_s` when
/// that is sooner (a child's tree deadline may bring it closer: [`TaskModels::cap_deadline`]).
/// No model request is sent, and no answer awaited, past it.
pub(crate) fn deadline(config: &Config, plugin: &LoadedPlugin) -> Instant {
    let own = plugin.runtime.effective().limits.timeout_s;
    let host = config.dispatch.task_timeout_s;
    let secs = if host == 0 { own } else { own.min(host) };
    Instant::now() + Duration::from_secs(u64::from(secs))
}

/// What one task spent on models.
pub(crate) struct TaskModels {
    deadline: Instant,
    spent: Mutex<Spent>,
}

#[derive(Default)]
struct Spent {
    tokens: u64,
    by_alias: BTreeMap<String, ModelUsage>,
    transcripts: Vec<serde_json::Value>,
}

impl TaskModels {
    pub(crate) fn new(deadline: Instant) -> Self {
        Self {
            deadline,
            spent: Mutex::new(Spent::default()),
        }
    }

    /// Brings the deadline to `tree` when that is sooner: a child's end, when the wall time its
    /// delegation tree leaves it runs out (docs/delegation.md).
    pub(crate) fn cap_deadline(&mut self, tree: Instant) {
        self.deadline = self.deadline.min(tree);
    }

    fn spent(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.spent.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TaskScope {
    /// One chat completion through the host's broker, accounted to this task.
    pub(crate) async fn model_call(&self, request: ChatRequest) -> Result<ChatAnswer, LlmError> {
        let alias = request.model.clone();
        // A child's calls spend its tree's tokens: refused once none are left to its node.
        self.tree_tokens_left()?;
        let grant = &self.plugin.runtime.effective().llm;
        let scope = CallScope {
            plugin: &self.plugin.name,
            grant,
            task_tokens: self.llm.spent().tokens,
            deadline: self.llm.deadline,
        };
        let done = self.services.llm.complete(&scope, request).await?;
        self.charge_tree_tokens(done.answer.usage.total());
        let mut spent = self.llm.spent();
        spent.tokens += done.answer.usage.total();
        spent
            .by_alias
            .entry(alias)
            .or_default()
            .add(done.answer.usage);
        if let Some(t) = done.transcript {
            spent.transcripts.push(t);
        }
        Ok(done.answer)
    }

    /// The task's model usage by alias, for its result.
    pub(crate) fn take_model_usage(&self) -> BTreeMap<String, ModelUsage> {
        std::mem::take(&mut self.llm.spent().by_alias)
    }

    /// The task's recorded transcripts, for its result.
    pub(crate) fn take_transcripts(&self) -> Vec<serde_json::Value> {
        std::mem::take(&mut self.llm.spent().transcripts)
    }
}
