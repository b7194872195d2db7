//! [`HostSkills`]: the skills service bound to a running host — its configuration, its
//! plugins' manifests (for visibility) and its skill-loader plugins (through the registry).
//! The CLI and the integration tests use it (`Host::skills`); the `skills` WIT import uses the
//! same calls. [`HostLoaders`] is the skills library's [`SkillLoaders`] over a registry
//! snapshot. Both are given the runtime and the registry, not the host.

use std::sync::Arc;

use futures::future::BoxFuture;
use guild_core::manifest::PluginKind;
use guild_runtime::Runtime;
use guild_skills::{
    Catalog, Disclosure, LoaderSkill, SkillError, SkillLoaders, SkillSource, Skills, TaskSkills,
};

use crate::registry::{LoadedPlugin, Registry, Snapshot};

/// The skills of one host. Cheap to clone.
#[derive(Clone)]
pub struct HostSkills {
    runtime: Runtime,
    registry: Arc<Registry>,
    skills: Arc<Skills>,
}

impl HostSkills {
    /// The skills service `skills`, with the skill-loader plugins of `registry`'s current set
    /// run on `runtime`.
    pub(crate) fn new(runtime: Runtime, registry: Arc<Registry>, skills: Arc<Skills>) -> Self {
        Self {
            runtime,
            registry,
            skills,
        }
    }

    /// The underlying service (settings, folder cache, watcher).
    pub fn service(&self) -> &Arc<Skills> {
        &self.skills
    }

    /// The host's skill-loader plugins, as of the current plugin set.
    pub fn loaders(&self) -> Arc<dyn SkillLoaders> {
        Arc::new(HostLoaders {
            runtime: self.runtime.clone(),
            snapshot: self.registry.snapshot(),
        })
    }

    /// The sources `specialist` requested in its own manifest and the operator granted (as
    /// computed at load, the set its tasks see), or the supervisor's sources from
    /// `guild.toml` when `specialist` is `None`.
    pub fn sources(&self, specialist: Option<&str>) -> Result<Vec<SkillSource>, SkillError> {
        let Some(name) = specialist else {
            return self.skills.supervisor_sources();
        };
        let snapshot = self.registry.snapshot();
        let plugin = snapshot
            .resolve(name)
            .filter(|p| p.manifest.plugin.kind == PluginKind::Specialist)
            .ok_or_else(|| SkillError::UnknownSpecialist(name.to_owned()))?;
        Ok(plugin.skill_sources.clone())
    }

    /// The catalog `specialist` (or the supervisor, for `None`) may see.
    pub async fn catalog(&self, specialist: Option<&str>) -> Result<Catalog, SkillError> {
        let sources = self.sources(specialist)?;
        let loaders = self.loaders();
        Ok(self.skills.catalog(&sources, loaders.as_ref()).await)
    }

    /// Level 1, recorded in `task`.
    pub fn disclose_catalog(&self, catalog: &Catalog, task: &TaskSkills) -> Disclosure<String> {
        self.skills.disclose_catalog(catalog, task)
    }

    /// Level 2: the body of `name` from `catalog`.
    pub async fn load(
        &self,
        catalog: &Catalog,
        task: &TaskSkills,
        name: &str,
    ) -> Result<Disclosure<String>, SkillError> {
        let loaders = self.loaders();
        self.skills
            .load(catalog, task, name, loaders.as_ref())
            .await
    }

    /// Level 3: one resource of `name` from `catalog`.
    pub async fn read(
        &self,
        catalog: &Catalog,
        task: &TaskSkills,
        name: &str,
        path: &str,
    ) -> Result<Disclosure<Vec<u8>>, SkillError> {
        let loaders = self.loaders();
        self.skills
            .read(catalog, task, name, path, loaders.as_ref())
            .await
    }
}

/// Reaches the skill-loader plugins of one registry snapshot, each call in a fresh instance.
pub(crate) struct HostLoaders {
    pub(crate) runtime: Runtime,
    pub(crate) snapshot: Arc<Snapshot>,
}

impl HostLoaders {
    fn loader(&self, name: &str) -> Result<&Arc<LoadedPlugin>, String> {
        let plugin = self
            .snapshot
            .plugins
            .get(name)
            .ok_or_else(|| format!("no skill-loader plugin named '{name}' is loaded"))?;
        if plugin.manifest.plugin.kind != PluginKind::SkillLoader {
            return Err(format!(
                "plugin '{name}' is a {}, not a skill-loader",
                plugin.manifest.plugin.kind
            ));
        }
        Ok(plugin)
    }
}

impl SkillLoaders for HostLoaders {
    fn list<'a>(&'a self, plugin: &'a str) -> BoxFuture<'a, Result<Vec<LoaderSkill>, String>> {
        Box::pin(async move {
            let p = self.loader(plugin)?;
            self.runtime
                .loader_list(&p.runtime)
                .await
                .map_err(|f| f.to_string())
        })
    }

    fn load<'a>(&'a self, plugin: &'a str, name: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let p = self.loader(plugin)?;
            self.runtime
                .loader_load(&p.runtime, name)
                .await
                .map_err(|f| f.to_string())?
        })
    }

    fn read<'a>(
        &'a self,
        plugin: &'a str,
        name: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, String>> {
        Box::pin(async move {
            let p = self.loader(plugin)?;
            self.runtime
                .loader_read(&p.runtime, name, path)
                .await
                .map_err(|f| f.to_string())?
        })
    }
}
