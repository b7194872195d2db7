//! The runtime's [`TaskHost`] view of a running task, implemented over [`TaskScope`].
//!
//! Tool calls go to the one tool-call path (grant check included); reports to the task's
//! report log; skills to the specialist's own sources, with the catalog built once per task
//! and every level of disclosure accounted in the task's skill stats.

use futures::future::BoxFuture;
use guild_core::skills::{Catalog, SkillError};
use guild_core::types::{ToolError, ToolOutcome, ToolSpec};
use guild_runtime::{ReportError, SkillSummary, TaskHost};

use super::TaskScope;
use super::tool_call::call_tool;
use crate::skills_host::HostLoaders;

impl TaskScope {
    fn loaders(&self) -> HostLoaders {
        HostLoaders {
            shared: self.shared.clone(),
            snapshot: self.snapshot.clone(),
        }
    }

    /// The specialist's catalog, built from its own declared sources on first use.
    async fn catalog(&self) -> &Catalog {
        self.skill_catalog
            .get_or_init(|| async {
                self.shared
                    .skills
                    .catalog(&self.plugin.skill_sources, &self.loaders())
                    .await
            })
            .await
    }
}

impl TaskHost for TaskScope {
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
        Box::pin(async move { call_tool(self, &tool, input, idempotency_key).await })
    }

    fn send_report(&self, output: String) -> Result<String, ReportError> {
        self.accept_report(output)
    }

    fn skill_catalog(&self) -> BoxFuture<'_, Vec<SkillSummary>> {
        Box::pin(async move {
            let catalog = self.catalog().await;
            // Level 1 is accounted like every other level.
            let _ = self.shared.skills.disclose_catalog(catalog, &self.skills);
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
            self.shared
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
            self.shared
                .skills
                .read(catalog, &self.skills, &name, &path, &self.loaders())
                .await
                .map(|d| d.content)
        })
    }
}
