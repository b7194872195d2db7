//! The host side of the `skills` interface: progressive disclosure of the skills a specialist
//! declared in its own manifest (never the caller's). The catalog is built once per task; every
//! level is accounted in the task's skill stats, and loading a skill is what opens the tools
//! whose spec says `requires-skill`.

use std::sync::Arc;

use super::bindings::skills;
use super::bindings::types::{HostError, SkillMeta};
use super::host_impl::denied;
use super::skill_loader::HostLoaders;
use super::state::StoreState;
use crate::dispatch::TaskScope;
use crate::host::Shared;
use crate::skills::{Catalog, SkillError, SkillErrorKind};

/// The task and its catalog (built on first use), or the refusal for a caller without one.
/// Takes owned handles: the store state itself is not `Sync` and cannot cross an await.
async fn skill_scope(
    task: Option<Arc<TaskScope>>,
    shared: Arc<Shared>,
    plugin: &str,
    target: &str,
) -> Result<(Arc<TaskScope>, HostLoaders), HostError> {
    let Some(task) = task else {
        return Err(HostError::Denied(denied(
            plugin,
            "skills",
            target,
            "only specialists running a task can read skills",
        )));
    };
    let loaders = HostLoaders {
        shared: shared.clone(),
        snapshot: task.snapshot.clone(),
    };
    task.skill_catalog
        .get_or_init(|| shared.skills.catalog(&task.skill_sources, &loaders))
        .await;
    Ok((task, loaders))
}

fn catalog_of(task: &TaskScope) -> &Catalog {
    // `skill_scope` initialised it; an empty catalog is the safe answer if it ever was not.
    static EMPTY: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
    task.skill_catalog
        .get()
        .unwrap_or_else(|| EMPTY.get_or_init(Catalog::default))
}

fn to_wit(plugin: &str, target: &str, e: SkillError) -> HostError {
    let message = e.to_string();
    match e.kind() {
        SkillErrorKind::Denied => HostError::Denied(denied(plugin, "skills", target, &message)),
        SkillErrorKind::InvalidInput => HostError::InvalidInput(message),
        SkillErrorKind::LimitExceeded => HostError::LimitExceeded(message),
        SkillErrorKind::Failed => HostError::Failed(message),
    }
}

impl skills::Host for StoreState {
    async fn catalog(&mut self) -> wasmtime::Result<Vec<SkillMeta>> {
        let plugin = self.name.clone();
        let scope = skill_scope(self.task.clone(), self.shared.clone(), &plugin, "catalog");
        let Ok((task, _)) = scope.await else {
            return Ok(Vec::new());
        };
        let catalog = catalog_of(&task);
        // Level 1 is accounted like every other level.
        let _ = self.shared.skills.disclose_catalog(catalog, &task.skills);
        Ok(catalog
            .items()
            .into_iter()
            .map(|i| SkillMeta {
                name: i.name,
                description: i.description,
            })
            .collect())
    }

    async fn load(&mut self, name: String) -> wasmtime::Result<Result<String, HostError>> {
        let plugin = self.name.clone();
        let (task, loaders) =
            match skill_scope(self.task.clone(), self.shared.clone(), &plugin, &name).await {
                Ok(v) => v,
                Err(e) => return Ok(Err(e)),
            };
        let answer = self
            .shared
            .skills
            .load(catalog_of(&task), &task.skills, &name, &loaders)
            .await;
        Ok(answer
            .map(|d| d.content)
            .map_err(|e| to_wit(&self.name, &name, e)))
    }

    async fn read(
        &mut self,
        name: String,
        path: String,
    ) -> wasmtime::Result<Result<Vec<u8>, HostError>> {
        let target = format!("{name}/{path}");
        let plugin = self.name.clone();
        let (task, loaders) =
            match skill_scope(self.task.clone(), self.shared.clone(), &plugin, &target).await {
                Ok(v) => v,
                Err(e) => return Ok(Err(e)),
            };
        let answer = self
            .shared
            .skills
            .read(catalog_of(&task), &task.skills, &name, &path, &loaders)
            .await;
        Ok(answer
            .map(|d| d.content)
            .map_err(|e| to_wit(&self.name, &target, e)))
    }
}
