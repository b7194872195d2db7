//! The host side of the `skills` interface: progressive disclosure of the skills a specialist
//! declared in its own manifest (never the caller's). Each level goes to the task's
//! [`TaskHost`](crate::TaskHost), which builds the catalog once per task, accounts every level
//! and opens the tools whose spec says `requires-skill` once their skill is loaded.

use guild_core::capability::{denied, trace_decision};
use guild_skills::{SkillError, SkillErrorKind};

use crate::bindings::skills;
use crate::bindings::types::{HostError, SkillMeta};
use crate::state::StoreState;

fn to_wit(plugin: &str, target: &str, e: SkillError) -> HostError {
    let message = e.to_string();
    match e.kind() {
        SkillErrorKind::Denied => HostError::Denied(denied(plugin, "skills", target, &message)),
        SkillErrorKind::InvalidInput => HostError::InvalidInput(message),
        SkillErrorKind::LimitExceeded => HostError::LimitExceeded(message),
        SkillErrorKind::Failed => HostError::Failed(message),
    }
}

impl StoreState {
    /// The refusal for an instance that serves no task (connectors and loaders never do).
    fn no_task(&self, target: &str) -> HostError {
        trace_decision(&self.plugin, "skills", target, false);
        HostError::Denied(denied(
            &self.name,
            "skills",
            target,
            "only specialists running a task can read skills",
        ))
    }
}

impl skills::Host for StoreState {
    async fn catalog(&mut self) -> wasmtime::Result<Vec<SkillMeta>> {
        let Some(task) = self.task.clone() else {
            let _ = self.no_task("catalog");
            self.count_refusal()?;
            return Ok(Vec::new());
        };
        Ok(task
            .skill_catalog()
            .await
            .into_iter()
            .map(|i| SkillMeta {
                name: i.name,
                description: i.description,
            })
            .collect())
    }

    async fn load(&mut self, name: String) -> wasmtime::Result<Result<String, HostError>> {
        let Some(task) = self.task.clone() else {
            let refusal = self.no_task(&name);
            return self.counted(Err(refusal));
        };
        let answer = task.load_skill(name.clone()).await;
        let answer = answer.map_err(|e| to_wit(&self.name, &name, e));
        self.counted(answer)
    }

    async fn read(
        &mut self,
        name: String,
        path: String,
    ) -> wasmtime::Result<Result<Vec<u8>, HostError>> {
        let target = format!("{name}/{path}");
        let Some(task) = self.task.clone() else {
            let refusal = self.no_task(&target);
            return self.counted(Err(refusal));
        };
        let answer = task.read_skill_resource(name, path).await;
        let answer = answer.map_err(|e| to_wit(&self.name, &target, e));
        self.counted(answer)
    }
}
