//! [`Skills`]: the one service every adapter calls. It resolves who sees which sources, builds
//! catalogs (folders cached and re-scanned incrementally, loaders asked on demand), and serves
//! the three disclosure levels, recording each in the task's [`TaskSkills`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::catalog::{Catalog, CatalogDiff, SkillEntry, SkillLocation, listed_description};
use super::contents::Contents;
use super::disclose::{
    Disclosure, Level, already_loaded_note, check_relative, folder_body, loader_body,
    read_resource, resolve_base_dir,
};
use super::events::{Check, Events};
use super::folder::{FolderScan, rescan_if_changed, scan_folder, scan_skill, unlisted_problem};
use super::format::{Mode, Problem, SKILL_FILE, Severity, parse_skill_md, validate_skill_name};
use super::safe_text::{first_disguising, neutralize};
use super::task::TaskSkills;
use super::{SkillError, SkillLoaders};
use guild_core::skill_sources::{SkillSource, SkillsSettings, SourceRequest};

/// A change the watcher saw in one folder.
#[derive(Debug, Clone, Serialize)]
pub struct FolderChange {
    /// The folder of skill folders.
    pub dir: PathBuf,
    /// Its label.
    pub label: String,
    /// What changed.
    pub diff: CatalogDiff,
}

type FolderKey = (PathBuf, String);

/// The skills service of one host (or one CLI run).
pub struct Skills {
    settings: SkillsSettings,
    base_dir: PathBuf,
    /// Lenient scans of every folder used so far, by (path, label).
    folders: Mutex<BTreeMap<FolderKey, Arc<FolderScan>>>,
    /// File-system events for [`Skills::refresh`], set up by its first call (a service that is
    /// never re-scanned holds no watches). The lock also keeps re-scans one at a time.
    events: Mutex<Option<Events>>,
}

impl Skills {
    /// A service for `settings`, with relative paths resolved against `base_dir` (the folder of
    /// `guild.toml`). Nothing is scanned until first use.
    pub fn new(settings: SkillsSettings, base_dir: impl Into<PathBuf>) -> Self {
        Self {
            settings,
            base_dir: base_dir.into(),
            folders: Mutex::new(BTreeMap::new()),
            events: Mutex::new(None),
        }
    }

    /// The `[skills]` settings.
    pub fn settings(&self) -> &SkillsSettings {
        &self.settings
    }

    /// The supervisor's sources, from `[skills] supervisor`.
    pub fn supervisor_sources(&self) -> Result<Vec<SkillSource>, SkillError> {
        self.settings
            .supervisor
            .iter()
            .map(|e| SkillSource::parse_supervisor(e, &self.base_dir, &self.settings))
            .collect::<Result<_, _>>()
            .map_err(SkillError::from)
    }

    /// A plugin's sources: the effective (requested ∩ granted) entries computed by
    /// [`guild_core::capability::resolve`], never inherited from whoever called it.
    pub fn sources_for(
        &self,
        plugin: &str,
        plugin_dir: &Path,
        granted: &[SourceRequest],
    ) -> Result<Vec<SkillSource>, SkillError> {
        granted
            .iter()
            .map(|r| {
                SkillSource::from_request(r, plugin, plugin_dir, &self.settings, &self.base_dir)
            })
            .collect::<Result<_, _>>()
            .map_err(SkillError::from)
    }

    fn folders(&self) -> std::sync::MutexGuard<'_, BTreeMap<FolderKey, Arc<FolderScan>>> {
        // A poisoned lock means a panic while swapping an `Arc`: the map is still whole.
        self.folders.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The (cached) lenient scan of one folder; the first call scans it, and from then on the
    /// watcher keeps it current.
    pub fn folder(&self, path: &Path, label: &str) -> Arc<FolderScan> {
        let key = (path.to_owned(), label.to_owned());
        if let Some(scan) = self.folders().get(&key) {
            return scan.clone();
        }
        let scan = Arc::new(scan_folder(path, Mode::Lenient, label));
        self.cache(key, scan)
    }

    /// Caches a cold scan (unless another caller cached one first) and starts walking its
    /// skills' contents in the background.
    fn cache(&self, key: FolderKey, scan: Arc<FolderScan>) -> Arc<FolderScan> {
        let cached = self.folders().entry(key).or_insert(scan).clone();
        Contents::prefetch(cached.catalog.iter().map(|e| e.contents.clone()).collect());
        cached
    }

    /// [`Skills::folder`] for async callers: a folder not cached yet is scanned on tokio's
    /// blocking pool, never on a worker thread that serves other tasks (a cold scan of a big
    /// folder takes hundreds of milliseconds). Outside a runtime it scans inline.
    pub async fn folder_off_thread(&self, path: &Path, label: &str) -> Arc<FolderScan> {
        let key = (path.to_owned(), label.to_owned());
        if let Some(scan) = self.folders().get(&key) {
            return scan.clone();
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return self.folder(path, label);
        }
        let (dir, name) = key.clone();
        let scanned = tokio::task::spawn_blocking(move || scan_folder(&dir, Mode::Lenient, &name))
            .await
            .map(Arc::new);
        match scanned {
            Ok(scan) => self.cache(key, scan),
            // The scan panicked (a bug, not bad input): scanning inline reports it where it is.
            Err(_) => self.folder(path, label),
        }
    }

    /// Re-scans every cached folder; returns the folders whose catalog changed.
    pub fn refresh(&self) -> Vec<FolderChange> {
        let cached: Vec<(FolderKey, Arc<FolderScan>)> = self
            .folders()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let events = events.get_or_insert_with(|| Events::new(self.settings.watch_events));
        events.drain();
        // One check per folder, shared by every label it is cached under.
        let mut checks: BTreeMap<PathBuf, Check> = BTreeMap::new();
        for ((path, _), _) in &cached {
            if !checks.contains_key(path) {
                checks.insert(path.clone(), events.take(path));
            }
        }
        let mut changes = Vec::new();
        for ((path, label), old) in cached {
            let check = checks.get(&path).cloned().unwrap_or(Check::All);
            let new = rescan_if_changed(&path, Mode::Lenient, &label, &old, &check);
            let quiet = matches!(&check, Check::Only(dirty) if dirty.is_empty());
            if new.is_some() || !quiet || !events.is_watched(&path) {
                events.watch(&path, new.as_ref().unwrap_or(&old).children());
            }
            // Unchanged (the common case, every interval): the cached scan stays as it is.
            let Some(new) = new else {
                continue;
            };
            tracing::debug!(folder = %path.display(), compared = new.compared(), "skills re-scanned");
            let diff = Catalog::diff(&old.catalog, &new.catalog);
            // Always kept: it carries the stamps the next re-scan compares against.
            self.folders()
                .insert((path.clone(), label.clone()), Arc::new(new));
            if !diff.is_empty() {
                tracing::info!(folder = %path.display(), %diff, "skills changed");
                changes.push(FolderChange {
                    dir: path,
                    label,
                    diff,
                });
            }
        }
        changes
    }

    /// The catalog for `sources`: own folders, then shared folders, then loaders, each kind in
    /// listed order; the first skill of a name wins and a collision warns.
    pub async fn catalog(&self, sources: &[SkillSource], loaders: &dyn SkillLoaders) -> Catalog {
        let mut ordered: Vec<&SkillSource> = sources.iter().collect();
        ordered.sort_by_key(|s| s.kind());
        let mut layers = Vec::with_capacity(ordered.len());
        for source in ordered {
            match source {
                SkillSource::Folder { path, label, .. } => {
                    layers.push(self.folder_off_thread(path, label).await.catalog.clone());
                }
                SkillSource::Loader { plugin } => {
                    layers.push(loader_catalog(plugin, loaders).await);
                }
            }
        }
        Catalog::merge(layers).with_budget(self.settings.catalog_max_bytes)
    }

    /// Level 1: renders `catalog` for a model and records it in `task`.
    pub fn disclose_catalog(&self, catalog: &Catalog, task: &TaskSkills) -> Disclosure<String> {
        let d = Disclosure::new(Level::Catalog, None, catalog.render());
        task.record_catalog(d.bytes, catalog.full_bytes());
        d
    }

    /// Level 2: the body of `name`, if it is in `catalog`. A second load in the same task
    /// returns a short "already loaded" note instead.
    pub async fn load(
        &self,
        catalog: &Catalog,
        task: &TaskSkills,
        name: &str,
        loaders: &dyn SkillLoaders,
    ) -> Result<Disclosure<String>, SkillError> {
        let entry = visible(catalog, name)?;
        if task.is_loaded(name) {
            return Ok(note(task, name));
        }
        let (text, full, allowed_tools) = match &entry.location {
            SkillLocation::Folder { dir } => {
                let (text, full) = folder_body(entry, dir)?;
                (text, full, entry.meta.allowed_tools.clone())
            }
            SkillLocation::Loader { plugin } => {
                let raw =
                    loaders
                        .load(plugin, name)
                        .await
                        .map_err(|reason| SkillError::Loader {
                            plugin: plugin.clone(),
                            reason: format!("load('{name}'): {reason}"),
                        })?;
                within_cap(
                    name,
                    SKILL_FILE,
                    raw.len(),
                    self.settings.max_resource_bytes(),
                )?;
                // A loader may serve a whole SKILL.md: its allowed-tools count like a folder's.
                let file = PathBuf::from(format!("loader:{plugin}/{name}/{SKILL_FILE}"));
                let tools = parse_skill_md(&raw, &file, None, Mode::Lenient)
                    .0
                    .and_then(|p| p.meta.allowed_tools);
                (loader_body(name, &raw), 0, tools)
            }
        };
        let d = Disclosure::new(Level::Body, Some(name), text);
        let full = if full > 0 { full } else { d.bytes };
        if !task.record_body(name, d.bytes, full, allowed_tools) {
            // Another call of the same task loaded it in between.
            return Ok(note(task, name));
        }
        tracing::debug!(skill = name, bytes = d.bytes, "skill body disclosed");
        Ok(d)
    }

    /// Level 3: one resource file of `name`, by path relative to the skill folder.
    pub async fn read(
        &self,
        catalog: &Catalog,
        task: &TaskSkills,
        name: &str,
        path: &str,
        loaders: &dyn SkillLoaders,
    ) -> Result<Disclosure<Vec<u8>>, SkillError> {
        let entry = visible(catalog, name)?;
        let max = self.settings.max_resource_bytes();
        // `{baseDir}/x` (written for other clients) is `x`: resource paths are relative to the
        // skill's own root already.
        let path = resolve_base_dir(path);
        let bytes = match &entry.location {
            SkillLocation::Folder { dir } => read_resource(name, dir, path, max)?,
            SkillLocation::Loader { plugin } => {
                check_relative(name, path)?;
                let bytes = loaders.read(plugin, name, path).await.map_err(|reason| {
                    SkillError::Loader {
                        plugin: plugin.clone(),
                        reason: format!("read('{name}', {path:?}): {reason}"),
                    }
                })?;
                within_cap(name, path, bytes.len(), max)?;
                bytes
            }
        };
        let d = Disclosure::new(Level::Resource, Some(name), bytes);
        task.record_resource(name, path, d.bytes);
        Ok(d)
    }
}

fn visible<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a Arc<SkillEntry>, SkillError> {
    catalog.get(name).ok_or_else(|| SkillError::NotVisible {
        skill: name.to_owned(),
        visible: catalog.listed_names(),
    })
}

fn note(task: &TaskSkills, name: &str) -> Disclosure<String> {
    let mut d = Disclosure::new(Level::Body, Some(name), already_loaded_note(name));
    d.already_loaded = true;
    task.record_note(d.bytes);
    d
}

/// A loader's catalog; a failing loader is a problem, not an error: other sources still serve.
async fn loader_catalog(plugin: &str, loaders: &dyn SkillLoaders) -> Catalog {
    let label = format!("loader:{plugin}");
    let context = PathBuf::from(&label);
    let mut catalog = Catalog::default();
    let items = match loaders.list(plugin).await {
        Ok(items) => items,
        Err(reason) => {
            catalog.problems.push(Problem::new(
                &context,
                "",
                format!("list() failed: {reason}"),
                Severity::Error,
            ));
            return catalog;
        }
    };
    for item in items {
        let file = context.join(&item.name);
        if let Err(reason) = validate_skill_name(&item.name) {
            catalog
                .problems
                .push(Problem::new(&file, "name", reason, Severity::Error));
            continue;
        }
        if item.description.trim().is_empty() {
            catalog.problems.push(Problem::new(
                &file,
                "description",
                "is empty; a skill without a description cannot be chosen",
                Severity::Error,
            ));
            continue;
        }
        let mut h = Sha256::new();
        h.update(item.name.as_bytes());
        h.update([0]);
        h.update(item.description.as_bytes());
        if let Some(reason) = first_disguising(&item.description, true) {
            catalog.problems.push(Problem::new(
                &file,
                "description",
                format!("{reason}; shown escaped"),
                Severity::Warning,
            ));
        }
        let (description, cut) = listed_description(&item.name, &item.description, &file);
        catalog.problems.extend(cut);
        let entry = SkillEntry {
            name: item.name.clone(),
            description,
            meta: super::format::SkillMeta {
                name: item.name.clone(),
                description: neutralize(&item.description).into_owned(),
                ..Default::default()
            },
            location: SkillLocation::Loader {
                plugin: plugin.to_owned(),
            },
            source: label.clone(),
            contents: Contents::none(),
            skill_md_bytes: 0,
            fingerprint: hex::encode(&h.finalize()[..12]),
        };
        catalog.insert_first_wins(Arc::new(entry), &context);
    }
    catalog.warn_lookalikes(false);
    catalog
}

/// What `guild skills check DIR` found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The folder checked.
    pub dir: PathBuf,
    /// Skills valid under the specification.
    pub valid: Vec<String>,
    /// Every problem, one per violation.
    pub problems: Vec<Problem>,
}

impl CheckReport {
    /// True when no problem is an error.
    pub fn ok(&self) -> bool {
        !self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

/// Checks `dir` strictly: a single skill folder (holding `SKILL.md`) or a folder of them.
pub fn check_dir(dir: &Path) -> CheckReport {
    let (valid, problems) = if dir.join(SKILL_FILE).is_file() {
        let (entry, mut problems) = scan_skill(dir, Mode::Strict, &dir.display().to_string());
        problems.extend(unlisted_problem(dir));
        (entry.map(|e| vec![e.name]).unwrap_or_default(), problems)
    } else {
        let scan = scan_folder(dir, Mode::Strict, &dir.display().to_string());
        let mut problems = scan.catalog.problems.clone();
        // A check walks every skill: the scan itself leaves that to first use.
        problems.extend(scan.catalog.iter().filter_map(|e| match &e.location {
            SkillLocation::Folder { dir } => unlisted_problem(dir),
            SkillLocation::Loader { .. } => None,
        }));
        (scan.catalog.names(), problems)
    };
    CheckReport {
        dir: dir.to_owned(),
        valid,
        problems,
    }
}

/// Refuses what a loader returned when it is over the resource cap.
fn within_cap(skill: &str, path: &str, size: usize, limit: u64) -> Result<(), SkillError> {
    if size as u64 > limit {
        return Err(SkillError::TooLarge {
            skill: skill.to_owned(),
            path: path.to_owned(),
            size: size as u64,
            limit,
        });
    }
    Ok(())
}
