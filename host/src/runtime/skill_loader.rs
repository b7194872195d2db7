//! Calling a skill-loader plugin: `list`, `load` and `read`, each in a fresh instance under the
//! plugin's limits (like a connector call), and [`HostLoaders`], the [`SkillLoaders`]
//! implementation the skills library uses to reach loaders in a registry snapshot.

use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;

use super::bindings::types::HostError;
use super::instance::{Failure, guarded};
use crate::host::Shared;
use crate::manifest::PluginKind;
use crate::registry::{LoadedPlugin, PluginPre, Snapshot};
use crate::skills::{LoaderSkill, SkillLoaders};

/// What a loader call answers: the loader's own result, or how its instance failed.
type Answer<T> = Result<Result<T, String>, Failure>;

fn not_a_loader() -> wasmtime::Error {
    wasmtime::Error::msg("plugin kind changed under a running call")
}

fn host_error(e: HostError) -> String {
    match e {
        HostError::Denied(m) => format!("denied: {m}"),
        HostError::InvalidInput(m) => format!("invalid input: {m}"),
        HostError::LimitExceeded(m) => format!("limit exceeded: {m}"),
        HostError::Failed(m) => format!("failed: {m}"),
    }
}

fn check_size(plugin: &LoadedPlugin, size: usize) -> Result<(), Failure> {
    let limit_kb = plugin.effective.limits.max_output_kb;
    if size > limit_kb as usize * 1024 {
        Err(Failure::OutputTooLarge { size, limit_kb })
    } else {
        Ok(())
    }
}

/// Calls `list` of a skill loader.
pub(crate) async fn list(
    shared: &Arc<Shared>,
    plugin: &LoadedPlugin,
) -> Result<Vec<LoaderSkill>, Failure> {
    let (answer, _) = guarded(shared, plugin, None, |store, pre, t: &mut Instant| {
        Box::pin(async move {
            let PluginPre::SkillLoader(pre) = pre else {
                return Err(not_a_loader());
            };
            let instance = pre.instantiate_async(&mut *store).await?;
            *t = Instant::now();
            instance.call_list(&mut *store).await
        })
    })
    .await;
    let items = answer?;
    let size = items
        .iter()
        .map(|m| m.name.len() + m.description.len())
        .sum();
    check_size(plugin, size)?;
    Ok(items
        .into_iter()
        .map(|m| LoaderSkill {
            name: m.name,
            description: m.description,
        })
        .collect())
}

/// Calls `load` of a skill loader.
pub(crate) async fn load(
    shared: &Arc<Shared>,
    plugin: &LoadedPlugin,
    name: &str,
) -> Answer<String> {
    let name = name.to_owned();
    let (answer, _) = guarded(shared, plugin, None, move |store, pre, _| {
        Box::pin(async move {
            let PluginPre::SkillLoader(pre) = pre else {
                return Err(not_a_loader());
            };
            let instance = pre.instantiate_async(&mut *store).await?;
            instance.call_load(&mut *store, &name).await
        })
    })
    .await;
    let body = answer?;
    if let Ok(text) = &body {
        check_size(plugin, text.len())?;
    }
    Ok(body.map_err(host_error))
}

/// Calls `read` of a skill loader.
pub(crate) async fn read(
    shared: &Arc<Shared>,
    plugin: &LoadedPlugin,
    name: &str,
    path: &str,
) -> Answer<Vec<u8>> {
    let (name, path) = (name.to_owned(), path.to_owned());
    let (answer, _) = guarded(shared, plugin, None, move |store, pre, _| {
        Box::pin(async move {
            let PluginPre::SkillLoader(pre) = pre else {
                return Err(not_a_loader());
            };
            let instance = pre.instantiate_async(&mut *store).await?;
            instance.call_read_file(&mut *store, &name, &path).await
        })
    })
    .await;
    let bytes = answer?;
    if let Ok(b) = &bytes {
        check_size(plugin, b.len())?;
    }
    Ok(bytes.map_err(host_error))
}

/// Skill-loader plugins of one registry snapshot.
pub(crate) struct HostLoaders {
    pub(crate) shared: Arc<Shared>,
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
            list(&self.shared, p).await.map_err(|f| f.to_string())
        })
    }

    fn load<'a>(&'a self, plugin: &'a str, name: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let p = self.loader(plugin)?;
            load(&self.shared, p, name)
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
            read(&self.shared, p, name, path)
                .await
                .map_err(|f| f.to_string())?
        })
    }
}
