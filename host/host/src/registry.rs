//! The registry: the set of loaded plugin versions, swapped atomically as a whole.
//!
//! Loading a plugin means: parse and validate its manifest, resolve its grant into effective
//! capabilities, compile its component (cache first), check that the component implements the
//! world its manifest declares, pre-instantiate it against the host linker, and ask it once for
//! its self-description (a specialist's `describe`, a connector's `tools`). A plugin that fails
//! any step is reported with a clear error and left out; every other plugin still loads.
//! Running tasks hold the [`Snapshot`] they started with, so a swap never changes a plugin under
//! a task; [`Registry`] holds the current one.
//!
//! A load may leave plugins whose code must be compiled out of the set: [`load_all`] returns
//! them staged, for the host's background loader (`deferred`), which adds each with
//! [`Snapshot::with_plugin`] when it is ready.
//!
//! Loading is given what it uses — the runtime that compiles and describes a component and
//! the skills service that resolves skill sources — and imports nothing of the modules above.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde::Serialize;

use guild_core::capability::CapabilityRow;
use guild_core::config::Config;
use guild_core::error::LoadError;
use guild_core::manifest::{Manifest, PluginKind, parse_tool_name};
use guild_core::types::{RosterEntry, ToolSpec};
use guild_runtime::{Compiler, FileStamp, Plugin, Runtime};
use guild_skills::Skills;

use crate::plugin_load::{self, Staged};
use crate::reach::{Reach, has_network};

/// One loaded plugin version.
pub(crate) struct LoadedPlugin {
    pub(crate) manifest: Manifest,
    /// The `plugin.toml` text `manifest` was parsed from (a reload compares it).
    pub(crate) manifest_text: String,
    pub(crate) name: Arc<str>,
    /// `name@version`.
    pub(crate) ident: Arc<str>,
    pub(crate) rows: Vec<CapabilityRow>,
    /// The compiled, pre-instantiated component with its effective capabilities.
    pub(crate) runtime: Plugin,
    pub(crate) description: String,
    /// A connector's tools, as it described them at load time.
    pub(crate) tools: Vec<ToolSpec>,
    /// The skill sources the manifest declares, resolved once here instead of per task.
    pub(crate) skill_sources: Vec<crate::skills::SkillSource>,
    /// The component file's stamp when it was settled as it was last read: a reload that
    /// finds it unchanged takes `runtime`'s digest instead of hashing the file again.
    pub(crate) component_stamp: Option<FileStamp>,
}

impl LoadedPlugin {
    /// Hex sha256 of its definition: `plugin.toml` and `prompt.md` ([`definition_sha256`]).
    pub(crate) fn definition_sha256(&self) -> String {
        definition_sha256(
            &self.manifest_text,
            self.runtime.definition().prompt.as_deref(),
        )
    }

    /// This version with `runtime` (the same component, compiled again) as its code.
    pub(crate) fn with_runtime(&self, runtime: Plugin) -> Self {
        Self {
            manifest: self.manifest.clone(),
            manifest_text: self.manifest_text.clone(),
            name: self.name.clone(),
            ident: self.ident.clone(),
            rows: self.rows.clone(),
            runtime,
            description: self.description.clone(),
            tools: self.tools.clone(),
            skill_sources: self.skill_sources.clone(),
            component_stamp: self.component_stamp,
        }
    }
}

/// Hex sha256 of a plugin's definition: the `plugin.toml` text, then (after a NUL, which
/// neither file holds) the `prompt.md` text when the folder has one. Hosts sharing a database
/// compare it, beside the component's digest, for plugins of the same name
/// (docs/postgres.md#joining): a prompt-defined specialist shares its component with others.
pub(crate) fn definition_sha256(manifest_text: &str, prompt: Option<&str>) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(manifest_text.as_bytes());
    if let Some(prompt) = prompt {
        hash.update([0]);
        hash.update(prompt.as_bytes());
    }
    hex::encode(hash.finalize())
}

/// What `guild plugins list/show` prints about one plugin.
#[derive(Debug, Clone, Serialize)]
pub struct PluginInfo {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: PluginKind,
    /// One-line description.
    pub description: String,
    /// Folder it was loaded from.
    pub dir: PathBuf,
    /// Hex sha256 of the component.
    pub sha256: String,
    /// Aliases.
    pub aliases: Vec<String>,
    /// Requested vs granted vs denied.
    pub capabilities: Vec<CapabilityRow>,
    /// A connector's tools.
    pub tools: Vec<ToolSpec>,
    /// Why a specialist is not on the roster, if it is not.
    pub unavailable: Option<String>,
    /// Whether it still runs baseline (Winch) code while Cranelift compiles it in the
    /// background (docs/performance.md).
    pub baseline: bool,
    /// What it may change or reach with its grants.
    pub reach: Reach,
}

/// An immutable set of loaded plugins.
#[derive(Default)]
pub(crate) struct Snapshot {
    pub(crate) plugins: BTreeMap<String, Arc<LoadedPlugin>>,
    pub(crate) aliases: BTreeMap<String, String>,
    pub(crate) errors: Vec<String>,
    /// Problems that load anyway, e.g. a tool requested or granted that no connector offers.
    pub(crate) warnings: Vec<String>,
    /// Names of the plugins this load kept from the previous set, unchanged (see `plugin_load::stage`).
    pub(crate) kept: BTreeSet<String>,
}

impl Snapshot {
    /// A copy of this set (its plugins shared), to change and swap in.
    pub(crate) fn copy(&self) -> Snapshot {
        Snapshot {
            plugins: self.plugins.clone(),
            aliases: self.aliases.clone(),
            errors: self.errors.clone(),
            warnings: self.warnings.clone(),
            kept: self.kept.clone(),
        }
    }

    /// This set with a plugin the background loader finished: `loaded` added (or its load
    /// error recorded, in the same words as a load at start), specialists naming a loader that
    /// is no skill-loader refused again, and, once `last` (nothing is queued any more), the
    /// warnings about tools no connector offers, which need every connector.
    pub(crate) fn with_plugin(
        &self,
        loaded: Result<Arc<LoadedPlugin>, String>,
        last: bool,
        config_file: &Path,
    ) -> Snapshot {
        let mut next = self.copy();
        match loaded {
            Ok(plugin) => {
                if let Err(e) = insert(&mut next, plugin) {
                    next.errors.push(e.to_string());
                }
            }
            Err(e) => next.errors.push(e),
        }
        refuse_wrong_loaders(&mut next);
        next.warnings = match last {
            true => unoffered_tools(&next, config_file),
            false => Vec::new(),
        };
        next
    }

    /// This set with the plugins of `current` named in `names` that it lacks (a batch or a
    /// tree pinned a set before they finished loading): the versions it has stay as they are.
    pub(crate) fn with_added(&self, current: &Snapshot, names: &[String]) -> Snapshot {
        let mut next = self.copy();
        for name in names {
            if next.plugins.contains_key(name) {
                continue;
            }
            if let Some(plugin) = current.plugins.get(name) {
                let _ = insert(&mut next, plugin.clone());
            }
        }
        next
    }

    /// A plugin by name or alias.
    pub(crate) fn resolve(&self, name: &str) -> Option<&Arc<LoadedPlugin>> {
        self.plugins
            .get(name)
            .or_else(|| self.aliases.get(name).and_then(|n| self.plugins.get(n)))
    }

    fn connectors(&self) -> BTreeSet<String> {
        self.plugins
            .values()
            .filter(|p| p.manifest.plugin.kind == PluginKind::Connector)
            .map(|p| p.name.to_string())
            .collect()
    }

    /// Why a specialist cannot be called, if it cannot.
    pub(crate) fn unavailable(&self, plugin: &LoadedPlugin) -> Option<String> {
        let requirement = plugin.manifest.requires.connectors.as_ref()?;
        requirement.check(&self.connectors()).err()
    }

    /// Specialists that can be called, sorted by name.
    pub(crate) fn roster(&self) -> Vec<RosterEntry> {
        self.plugins
            .values()
            .filter(|p| p.manifest.plugin.kind == PluginKind::Specialist)
            .filter(|p| self.unavailable(p).is_none())
            .map(|p| RosterEntry {
                name: p.name.to_string(),
                version: p.manifest.plugin.version.to_string(),
                description: p.description.clone(),
                aliases: p.manifest.plugin.aliases.clone(),
            })
            .collect()
    }

    /// Every tool the loaded connectors offer, as `connector.tool`, sorted.
    pub(crate) fn offered_tools(&self) -> Vec<String> {
        self.plugins
            .values()
            .filter(|p| p.manifest.plugin.kind == PluginKind::Connector)
            .flat_map(|p| {
                p.tools
                    .iter()
                    .map(move |t| format!("{}.{}", p.name, t.name))
            })
            .collect()
    }

    /// The spec of `connector.tool`, if that connector is loaded and has it.
    pub(crate) fn tool_spec(&self, full: &str) -> Option<ToolSpec> {
        let (connector, tool) = parse_tool_name(full).ok()?;
        let plugin = self.plugins.get(connector)?;
        plugin.tools.iter().find(|t| t.name == tool).cloned()
    }

    pub(crate) fn info(&self, plugin: &LoadedPlugin) -> PluginInfo {
        PluginInfo {
            name: plugin.name.to_string(),
            version: plugin.manifest.plugin.version.to_string(),
            kind: plugin.manifest.plugin.kind,
            description: plugin.description.clone(),
            dir: plugin.manifest.dir.clone(),
            sha256: plugin.runtime.sha256().to_owned(),
            aliases: plugin.manifest.plugin.aliases.clone(),
            capabilities: plugin.rows.clone(),
            tools: plugin.tools.clone(),
            unavailable: if plugin.manifest.plugin.kind == PluginKind::Specialist {
                self.unavailable(plugin)
            } else {
                None
            },
            reach: self.reach(plugin),
            baseline: plugin.runtime.compiler() == Compiler::Baseline,
        }
    }

    /// What `plugin` may change or reach: its own grants and the granted tools' connectors.
    fn reach(&self, plugin: &LoadedPlugin) -> Reach {
        Reach::of(plugin.runtime.effective(), |full| {
            let spec = self.tool_spec(full)?;
            let (connector, _) = parse_tool_name(full).ok()?;
            let network = self
                .plugins
                .get(connector)
                .is_some_and(|c| has_network(c.runtime.effective()));
            Some((spec, network))
        })
    }
}

/// The current plugin set, swapped whole by a reload; a task keeps the one it started with.
#[derive(Default)]
pub(crate) struct Registry {
    current: RwLock<Arc<Snapshot>>,
}

impl Registry {
    /// The current plugin set.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        // A poisoned lock means a panic while swapping an `Arc`: the old value is still whole.
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Makes `snapshot` the current plugin set.
    pub(crate) fn swap(&self, snapshot: Snapshot) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
    }
}

/// Loads every plugin folder `config` names into a new snapshot. Failures are collected, not
/// fatal: a plugin whose new version fails any step keeps its `previous` version serving (the
/// error says so); a plugin that never loaded is left out.
///
/// A plugin that is new (nothing serves from its folder), that `defer` picks and whose code no
/// cache holds is not compiled here: it is returned staged, in folder order, for the
/// background loader; the warnings that need every connector are then left to it.
pub(crate) async fn load_all(
    runtime: &Runtime,
    skills: &Skills,
    config: &Config,
    previous: &Snapshot,
    defer: impl Fn(&Staged) -> bool,
) -> (Snapshot, Vec<Staged>) {
    let mut snapshot = Snapshot::default();
    let mut deferred = Vec::new();
    let folders = match config.plugin_folders() {
        Ok(f) => f,
        Err(e) => {
            snapshot
                .errors
                .push(format!("cannot list plugin folders: {e}"));
            return (snapshot, deferred);
        }
    };
    // Errors are returned to the caller (`Host::load_errors`), which shows each one once; the
    // log repeats them only at debug level.
    for dir in folders {
        let serving = previous.plugins.values().find(|p| p.manifest.dir == dir);
        let loaded = match plugin_load::stage(skills, config, &dir, serving).await {
            Ok(staged) => {
                let staged = match serving.is_none() && defer(&staged) {
                    true => match has_code(runtime, staged).await {
                        (staged, true) => staged,
                        (staged, false) => {
                            deferred.push(staged);
                            continue;
                        }
                    },
                    false => staged,
                };
                plugin_load::finish(runtime, staged).await
            }
            Err(e) => Err(e),
        };
        let loaded = match loaded {
            Ok(plugin) => {
                if serving.is_some_and(|old| Runtime::same_component(&old.runtime, &plugin.runtime))
                {
                    snapshot.kept.insert(plugin.name.to_string());
                }
                Arc::new(plugin)
            }
            Err(e) => {
                tracing::debug!("{e}");
                match serving {
                    Some(old) => {
                        snapshot.errors.push(format!(
                            "{e} (the new version was rejected; {} keeps serving)",
                            old.ident
                        ));
                        old.clone()
                    }
                    None => {
                        snapshot.errors.push(e.to_string());
                        continue;
                    }
                }
            }
        };
        if let Err(e) = insert(&mut snapshot, loaded) {
            tracing::debug!("{e}");
            snapshot.errors.push(e.to_string());
        }
    }
    refuse_wrong_loaders(&mut snapshot);
    if deferred.is_empty() {
        snapshot.warnings = unoffered_tools(&snapshot, &config.file);
    }
    (snapshot, deferred)
}

/// `staged` back, and whether a cache holds the code of its component (asked off the async
/// workers; a check that could not run counts as no code, so the plugin is queued).
async fn has_code(runtime: &Runtime, staged: Staged) -> (Staged, bool) {
    let runtime = runtime.clone();
    let checked = tokio::task::spawn_blocking(move || {
        let cached = runtime.has_code(staged.component());
        (staged, cached)
    })
    .await;
    match checked {
        Ok(answer) => answer,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// One warning per tool a loaded plugin requests in its manifest or is granted in the
/// configuration that no loaded connector offers: most often a typo, which would otherwise
/// surface only as a refusal when the specialist runs. Each names the plugin, where the name
/// is written, and the nearest offered tool.
fn unoffered_tools(snapshot: &Snapshot, config_file: &Path) -> Vec<String> {
    let offered = snapshot.offered_tools();
    let mut warnings = Vec::new();
    for plugin in snapshot.plugins.values() {
        let eff = plugin.runtime.effective();
        let requested = plugin.manifest.capabilities.tools.iter();
        let granted = eff.tools.iter().chain(&eff.tools_not_requested);
        let places = requested
            .map(|t| (t, "[capabilities] tools in its plugin.toml".to_owned()))
            .chain(granted.map(|t| {
                (
                    t,
                    format!(
                        "[grants.{}] tools in {}",
                        plugin.name,
                        config_file.display()
                    ),
                )
            }));
        let mut seen = BTreeSet::new();
        for (tool, place) in places {
            if offered.contains(tool) || !seen.insert((tool.clone(), place.clone())) {
                continue;
            }
            let why =
                guild_core::tool_names::unknown_tool(tool, offered.iter().map(String::as_str));
            warnings.push(format!(
                "plugin '{}': {place} names `{tool}`, but {why}",
                plugin.name
            ));
        }
    }
    warnings
}

/// Refuses every specialist whose granted skill sources name, as `loader:X`, a loaded plugin
/// that is not a skill-loader: the host would otherwise call a connector's or specialist's
/// component as a loader on every catalog. Checked once the whole set is loaded, so the order
/// of the plugin folders does not matter. A loader that is not loaded at all is left to the
/// catalog, which reports it unavailable (it may be added by a later reload).
fn refuse_wrong_loaders(snapshot: &mut Snapshot) {
    let mut refused = Vec::new();
    for plugin in snapshot.plugins.values() {
        for source in &plugin.skill_sources {
            let crate::skills::SkillSource::Loader { plugin: loader } = source else {
                continue;
            };
            let Some(target) = snapshot.plugins.get(loader) else {
                continue;
            };
            let kind = target.manifest.plugin.kind;
            if kind == PluginKind::SkillLoader {
                continue;
            }
            let e = LoadError::Grant {
                plugin: plugin.name.to_string(),
                message: format!(
                    "key `capabilities.skills` of {}: \"loader:{loader}\" names plugin '{loader}', \
                     which is a {kind}, not a skill-loader; name a skill-loader plugin there \
                     (and in `[grants.{}] skills`) or remove the entry",
                    plugin.manifest.dir.join("plugin.toml").display(),
                    plugin.name
                ),
            };
            tracing::debug!("{e}");
            snapshot.errors.push(e.to_string());
            refused.push(plugin.name.to_string());
            break;
        }
    }
    for name in refused {
        snapshot.plugins.remove(&name);
        snapshot.aliases.retain(|_, target| *target != name);
    }
}

/// Takes plugin `name` out of `snapshot` with its aliases, and puts `instead` (the version that
/// served before) back in its place when there is one.
pub(crate) fn replace(snapshot: &mut Snapshot, name: &str, instead: Option<&Arc<LoadedPlugin>>) {
    snapshot.plugins.remove(name);
    snapshot.aliases.retain(|_, target| target != name);
    snapshot.kept.remove(name);
    if let Some(old) = instead
        && let Err(e) = insert(snapshot, old.clone())
    {
        snapshot.errors.push(e.to_string());
    }
}

fn insert(snapshot: &mut Snapshot, plugin: Arc<LoadedPlugin>) -> Result<(), LoadError> {
    let name = plugin.name.to_string();
    let taken = |n: &str| {
        snapshot
            .plugins
            .get(n)
            .map(|p| format!("plugin at {}", p.manifest.dir.display()))
            .or_else(|| {
                snapshot
                    .aliases
                    .get(n)
                    .map(|t| format!("an alias of '{t}'"))
            })
    };
    if let Some(other) = taken(&name) {
        return Err(LoadError::Duplicate {
            plugin: name,
            other,
        });
    }
    for alias in &plugin.manifest.plugin.aliases {
        if let Some(other) = taken(alias) {
            return Err(LoadError::Duplicate {
                plugin: format!("{name}' alias '{alias}"),
                other,
            });
        }
    }
    for alias in &plugin.manifest.plugin.aliases {
        snapshot.aliases.insert(alias.clone(), name.clone());
    }
    snapshot.plugins.insert(name, plugin);
    Ok(())
}
