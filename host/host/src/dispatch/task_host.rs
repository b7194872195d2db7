//! The runtime's [`TaskHost`] view of a running task, implemented over [`TaskScope`].
//!
//! Tool calls go to the one tool-call path (grant check included); reports to the task's
//! report log; skills to the specialist's own sources, with the catalog built once per task
//! and every level of disclosure accounted in the task's skill stats; memory to
//! `TaskScope::memory_read` / `memory_update` (grant check, validation, receipt); children to
//! `TaskScope::delegate_run` / `delegate_review` ([`super::delegate`]). While a child's report
//! waits for this task's review, tool calls and memory updates are refused; reads go on.

use futures::future::BoxFuture;
use guild_core::llm::{ChatAnswer, ChatRequest, LlmError};
use guild_core::types::{ToolError, ToolOutcome, ToolSpec};
use guild_delegate::{ReviewEffect, TaskBrief, TaskReview};
use guild_runtime::{
    ChildReport, DelegateError, MemoryCallError, MemoryText, MemoryWrite, ReportError,
    SkillSummary, TaskHost,
};
use guild_skills::{Catalog, SkillError};

use super::TaskScope;
use super::tool_call::call_tool;
use crate::memory::{MemoryError, Scope, UpdateOutcome};
use crate::skills_host::HostLoaders;

/// A memory failure as the runtime passes it on (denied keeps its text naming plugin,
/// capability and scope).
fn memory_call_error(e: MemoryError) -> MemoryCallError {
    match e {
        MemoryError::Denied(m) => MemoryCallError::Denied(m),
        MemoryError::LimitExceeded(m) => MemoryCallError::LimitExceeded(m),
        e @ MemoryError::Conflict { base, current, .. } => MemoryCallError::Conflict {
            base,
            current,
            message: e.to_string(),
        },
        other => MemoryCallError::Failed(other.to_string()),
    }
}

impl TaskScope {
    fn loaders(&self) -> HostLoaders {
        HostLoaders {
            runtime: self.services.runtime.clone(),
            snapshot: self.snapshot.clone(),
        }
    }

    /// The specialist's catalog, built from its own declared sources on first use.
    async fn catalog(&self) -> &Catalog {
        self.skill_catalog
            .get_or_init(|| async {
                self.services
                    .skills
                    .catalog(&self.plugin.skill_sources, &self.loaders())
                    .await
            })
            .await
    }
}

impl TaskHost for TaskScope {
    fn llm_complete(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatAnswer, LlmError>> {
        Box::pin(self.model_call(request))
    }

    fn granted_tools(&self) -> Vec<(String, ToolSpec)> {
        self.plugin
            .runtime
            .effective()
            .tools
            .iter()
            .filter_map(|full| Some((full.clone(), self.snapshot.tool_spec(full)?)))
            .collect()
    }

    fn call_tool(
        &self,
        tool: String,
        input: String,
        idempotency_key: Option<String>,
    ) -> BoxFuture<'_, Result<ToolOutcome, ToolError>> {
        Box::pin(async move {
            if let Some(refusal) = self.review_gate(&format!("tool call `{tool}`")) {
                self.record_refusal(&tool, &input, &refusal);
                return Err(ToolError::Denied(refusal));
            }
            call_tool(self, &tool, input, idempotency_key).await
        })
    }

    fn send_report(&self, output: String) -> Result<String, ReportError> {
        self.accept_report(output)
    }

    fn skill_catalog(&self) -> BoxFuture<'_, Vec<SkillSummary>> {
        Box::pin(async move {
            let catalog = self.catalog().await;
            // Level 1 is accounted like every other level.
            let _ = self.services.skills.disclose_catalog(catalog, &self.skills);
            catalog
                .items()
                .into_iter()
                .map(|i| SkillSummary {
                    name: i.name,
                    description: i.description,
                })
                .collect()
        })
    }

    fn load_skill(&self, name: String) -> BoxFuture<'_, Result<String, SkillError>> {
        Box::pin(async move {
            let catalog = self.catalog().await;
            self.services
                .skills
                .load(catalog, &self.skills, &name, &self.loaders())
                .await
                .map(|d| d.content)
        })
    }

    fn read_skill_resource(
        &self,
        name: String,
        path: String,
    ) -> BoxFuture<'_, Result<Vec<u8>, SkillError>> {
        Box::pin(async move {
            let catalog = self.catalog().await;
            self.services
                .skills
                .read(catalog, &self.skills, &name, &path, &self.loaders())
                .await
                .map(|d| d.content)
        })
    }

    fn memory_read(&self, scope: Scope) -> BoxFuture<'_, Result<MemoryText, MemoryCallError>> {
        Box::pin(async move {
            let doc = TaskScope::memory_read(self, scope)
                .await
                .map_err(memory_call_error)?;
            Ok(MemoryText {
                text: doc.text,
                version: doc.version.map_or(0, |v| v.version),
                usage: doc.usage,
            })
        })
    }

    fn memory_update(
        &self,
        scope: Scope,
        base: Option<u64>,
        text: String,
    ) -> BoxFuture<'_, Result<MemoryWrite, MemoryCallError>> {
        Box::pin(async move {
            if let Some(refusal) = self.review_gate("memory update") {
                return Err(MemoryCallError::Denied(refusal));
            }
            match TaskScope::memory_update(self, scope, base, text).await {
                Ok(UpdateOutcome::Stored {
                    version,
                    warnings,
                    usage,
                    ..
                }) => Ok(MemoryWrite::Stored {
                    version: version.version,
                    warnings,
                    usage,
                }),
                Ok(UpdateOutcome::NoOp { reason, usage, .. }) => {
                    Ok(MemoryWrite::NoOp { reason, usage })
                }
                Ok(UpdateOutcome::Refused { errors, usage, .. }) => {
                    Err(MemoryCallError::Refused { errors, usage })
                }
                Err(e) => Err(memory_call_error(e)),
            }
        })
    }

    fn delegate_run(&self, brief: TaskBrief) -> BoxFuture<'_, Result<ChildReport, DelegateError>> {
        Box::pin(TaskScope::delegate_run(self, brief))
    }

    fn delegate_review(
        &self,
        child_id: String,
        review: TaskReview,
    ) -> BoxFuture<'_, Result<ReviewEffect, DelegateError>> {
        Box::pin(async move { TaskScope::delegate_review(self, &child_id, &review) })
    }
}
