//! Calling a skill-loader plugin: `list`, `load` and `read`, each in a fresh instance under the
//! plugin's limits (like a connector call). The host crate wraps these in the skills library's
//! `SkillLoaders` trait over its registry. Every answer leaves with the loader's granted secrets
//! redacted ([`guild_http::redact`]): skills are served to every client.

use std::time::Instant;

use guild_skills::LoaderSkill;

use crate::Runtime;
use crate::bindings::types::HostError;
use crate::instance::{Failure, guarded, wrong_kind};
use crate::plugin::{Plugin, PluginPre};

/// What a loader call answers: the loader's own result, or how its instance failed.
/// A loader's answer: its own error as text, or an instance failure.
pub type Answer<T> = Result<Result<T, String>, Failure>;

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

fn check_size(plugin: &Plugin, size: usize) -> Result<(), Failure> {
    let limit_kb = plugin.effective.limits.max_output_kb;
    if size > limit_kb as usize * 1024 {
        Err(Failure::OutputTooLarge { size, limit_kb })
    } else {
        Ok(())
    }
}

/// Calls `list` of a skill loader.
impl Runtime {
    /// `list` of a skill loader.
    pub async fn loader_list(&self, plugin: &Plugin) -> Result<Vec<LoaderSkill>, Failure> {
        if !matches!(*plugin.pre, PluginPre::SkillLoader(_)) {
            return Err(wrong_kind(plugin, "skill-loader"));
        }
        let (answer, _) = guarded(self, plugin, None, |store, pre, t: &mut Instant| {
            Box::pin(async move {
                let PluginPre::SkillLoader(pre) = pre else {
                    return Err(not_a_loader());
                };
                pre.list(store, t).await
            })
        })
        .await;
        let items = answer?;
        let size = items
            .iter()
            .map(|m| m.name.len() + m.description.len())
            .sum();
        check_size(plugin, size)?;
        let redact = |text: String| plugin.redactor.redact_str(&text).into_owned();
        Ok(items
            .into_iter()
            .map(|m| LoaderSkill {
                name: redact(m.name),
                description: redact(m.description),
            })
            .collect())
    }

    /// Calls `load` of a skill loader.
    /// `load` of a skill loader: one skill's body, or the loader's own error.
    pub async fn loader_load(&self, plugin: &Plugin, name: &str) -> Answer<String> {
        if !matches!(*plugin.pre, PluginPre::SkillLoader(_)) {
            return Err(wrong_kind(plugin, "skill-loader"));
        }
        let name = name.to_owned();
        let (answer, _) = guarded(self, plugin, None, move |store, pre, _| {
            Box::pin(async move {
                let PluginPre::SkillLoader(pre) = pre else {
                    return Err(not_a_loader());
                };
                pre.load(store, &name).await
            })
        })
        .await;
        let body = answer?;
        if let Ok(text) = &body {
            check_size(plugin, text.len())?;
        }
        let redact = |text: String| plugin.redactor.redact_str(&text).into_owned();
        Ok(body.map(redact).map_err(|e| redact(host_error(e))))
    }

    /// `read` of a skill loader: one resource, or the loader's own error.
    pub async fn loader_read(&self, plugin: &Plugin, name: &str, path: &str) -> Answer<Vec<u8>> {
        if !matches!(*plugin.pre, PluginPre::SkillLoader(_)) {
            return Err(wrong_kind(plugin, "skill-loader"));
        }
        let (name, path) = (name.to_owned(), path.to_owned());
        let (answer, _) = guarded(self, plugin, None, move |store, pre, _| {
            Box::pin(async move {
                let PluginPre::SkillLoader(pre) = pre else {
                    return Err(not_a_loader());
                };
                pre.read(store, &name, &path).await
            })
        })
        .await;
        let bytes = answer?;
        if let Ok(b) = &bytes {
            check_size(plugin, b.len())?;
        }
        let redactor = &plugin.redactor;
        Ok(bytes
            .map(|b| redactor.redact(&b).into_owned())
            .map_err(|e| redactor.redact_str(&host_error(e)).into_owned()))
    }
}
