//! `[skills]` in `guild.toml`, and the skill *sources* a manifest or the operator declares.
//!
//! ```toml
//! [skills]
//! # What the supervisor sees: folders (relative to guild.toml), shared folders, loaders.
//! supervisor = ["skills", "shared:team", "loader:team-skills"]
//! # Folders a specialist may declare as `shared:NAME` in its plugin.toml.
//! shared = { team = "team-skills" }
//! # Specialists for which a loaded skill's `allowed-tools` is enforced (off by default).
//! strict_allowed_tools = ["triage"]
//! ```
//!
//! A specialist's `capabilities.skills` entries are one of: a relative path inside its own
//! plugin folder (`"skills/"`), `"shared:NAME"` (a folder the operator named above), or
//! `"loader:NAME"` (a skill-loader plugin). A manifest can never name an arbitrary host folder.
//! Each entry is parsed once, at load, into a [`SourceRequest`].
//!
//! Like every capability, a source is only *requested* by the manifest: the operator grants it
//! with the same strings in `[grants.NAME] skills` of `guild.toml`, and only requested ∩ granted
//! sources are visible ([`crate::capability`] computes the intersection). That includes the
//! plugin's own bundled `skills/` folder: an operator who installs a plugin decides which
//! instructions its model reads, and no specialist can make the host run a skill-loader by
//! naming it.
//!
//! ```toml
//! [grants.triage]
//! skills = ["skills/", "shared:team", "loader:team-skills"]
//! ```
//!
//! The supervisor's sources (`[skills] supervisor`) are written by the operator and need no grant.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::manifest::validate_name;

/// A source entry in a manifest or `guild.toml` that is malformed or names nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("skill source {source_entry:?}: {reason}")]
pub struct SourceError {
    /// The entry as written.
    pub source_entry: String,
    /// What is wrong.
    pub reason: String,
}

/// The `[skills]` table.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SkillsSettings {
    /// The supervisor's sources: folder paths (relative to `guild.toml`), `shared:NAME`,
    /// `loader:NAME`. Empty by default: the supervisor sees no skills.
    #[serde(default)]
    pub supervisor: Vec<String>,
    /// Named shared folders that specialists may declare as `shared:NAME`.
    #[serde(default)]
    pub shared: BTreeMap<String, PathBuf>,
    /// Specialists for which strict allowed-tools mode is on.
    #[serde(default)]
    pub strict_allowed_tools: Vec<String>,
    /// Largest resource file served, KiB (default 1024).
    #[serde(default = "default_max_resource_kb")]
    pub max_resource_kb: u32,
    /// How often the watcher re-scans skill folders, milliseconds (default 1000).
    #[serde(default = "default_watch_ms")]
    pub watch_interval_ms: u64,
    /// Most bytes of the catalog shown to a model (default 16384, at least 1024); skills past
    /// it are left out, and a last line says how many.
    #[serde(default = "default_catalog_max_bytes")]
    pub catalog_max_bytes: usize,
    /// Use file-system events (inotify on Linux) so that a re-scan compares only the skill
    /// folders an event named (default true). `false` compares every skill folder's stamps each
    /// interval: for folders changed from other machines (NFS and the like), where no local
    /// event fires. Either way every 30th re-scan compares in full.
    #[serde(default = "default_watch_events")]
    pub watch_events: bool,
}

fn default_watch_events() -> bool {
    true
}

fn default_max_resource_kb() -> u32 {
    1024
}
fn default_watch_ms() -> u64 {
    1000
}
fn default_catalog_max_bytes() -> usize {
    16 * 1024
}

impl Default for SkillsSettings {
    /// No skills for the supervisor, no shared folders, strict allowed-tools off, 1 MiB
    /// resource cap, 1 s watch interval, 16 KiB catalog.
    fn default() -> Self {
        Self {
            supervisor: Vec::new(),
            shared: BTreeMap::new(),
            strict_allowed_tools: Vec::new(),
            max_resource_kb: default_max_resource_kb(),
            watch_interval_ms: default_watch_ms(),
            watch_events: default_watch_events(),
            catalog_max_bytes: default_catalog_max_bytes(),
        }
    }
}

impl SkillsSettings {
    /// Whether strict allowed-tools mode is on for `specialist`.
    pub fn strict_allowed_tools_for(&self, specialist: &str) -> bool {
        self.strict_allowed_tools.iter().any(|s| s == specialist)
    }

    /// Largest resource served, bytes.
    pub fn max_resource_bytes(&self) -> u64 {
        u64::from(self.max_resource_kb) * 1024
    }

    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (String, String)> {
        for entry in &self.supervisor {
            SkillSource::parse_supervisor(entry, Path::new("."), self)
                .map_err(|e| ("skills.supervisor".to_owned(), e.to_string()))?;
        }
        for (name, path) in &self.shared {
            validate_name(name).map_err(|m| (format!("skills.shared.{name}"), m))?;
            if path.as_os_str().is_empty() || path == Path::new("/") {
                return Err((
                    format!("skills.shared.{name}"),
                    "expected a dedicated skills folder, never '/'".to_owned(),
                ));
            }
        }
        for name in &self.strict_allowed_tools {
            validate_name(name).map_err(|m| ("skills.strict_allowed_tools".to_owned(), m))?;
        }
        if self.max_resource_kb == 0 {
            return Err((
                "skills.max_resource_kb".into(),
                "expected at least 1".into(),
            ));
        }
        if self.catalog_max_bytes < 1024 {
            return Err((
                "skills.catalog_max_bytes".into(),
                "expected at least 1024".into(),
            ));
        }
        if self.watch_interval_ms < 50 {
            return Err((
                "skills.watch_interval_ms".into(),
                "expected at least 50".into(),
            ));
        }
        Ok(())
    }
}

/// The kind of a source; it decides precedence on name collisions (lower wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// The plugin's own `skills/` folder (or the supervisor's own folders).
    Own,
    /// A folder the operator shares.
    Shared,
    /// A skill-loader plugin.
    Loader,
}

/// One resolved skill source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum SkillSource {
    /// A folder of skill folders.
    Folder {
        /// Absolute (or config-relative, resolved) folder.
        path: PathBuf,
        /// How the caller declared it; shown to models instead of the host path.
        label: String,
        /// Own or shared.
        kind: SourceKind,
    },
    /// A skill-loader plugin.
    Loader {
        /// Plugin name.
        plugin: String,
    },
}

impl SkillSource {
    /// Its kind.
    pub fn kind(&self) -> SourceKind {
        match self {
            Self::Folder { kind, .. } => *kind,
            Self::Loader { .. } => SourceKind::Loader,
        }
    }

    /// The label shown in catalogs.
    pub fn label(&self) -> String {
        match self {
            Self::Folder { label, .. } => label.clone(),
            Self::Loader { plugin } => format!("loader:{plugin}"),
        }
    }

    /// Where a granted request points, with `plugin`'s folder and the operator's shared
    /// folders (`shared:NAME` must name one of `[skills.shared]`).
    pub fn from_request(
        request: &SourceRequest,
        plugin: &str,
        plugin_dir: &Path,
        settings: &SkillsSettings,
        base_dir: &Path,
    ) -> Result<Self, SourceError> {
        match request {
            SourceRequest::Own(rel) => Ok(Self::Folder {
                path: plugin_dir.join(rel),
                label: format!("plugin:{plugin}/{}", rel.display()),
                kind: SourceKind::Own,
            }),
            SourceRequest::Shared(_) | SourceRequest::Loader(_) => {
                Self::parse_named(&request.to_string(), settings, base_dir)?.ok_or_else(|| {
                    SourceError {
                        source_entry: request.to_string(),
                        reason: "not a named source".to_owned(),
                    }
                })
            }
        }
    }

    /// Parses one entry of `[skills] supervisor` (paths resolve against `base_dir`).
    pub fn parse_supervisor(
        entry: &str,
        base_dir: &Path,
        settings: &SkillsSettings,
    ) -> Result<Self, SourceError> {
        if let Some(parsed) = Self::parse_named(entry, settings, base_dir)? {
            return Ok(parsed);
        }
        if entry.trim().is_empty() {
            return Err(SourceError {
                source_entry: entry.to_owned(),
                reason: "empty source".to_owned(),
            });
        }
        let path = Path::new(entry);
        // The label is what models see: the folder's name, never its host path.
        let name = path
            .components()
            .rev()
            .find_map(|c| match c {
                Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .unwrap_or_else(|| "folder".to_owned());
        Ok(Self::Folder {
            path: if path.is_absolute() {
                path.to_owned()
            } else {
                base_dir.join(path)
            },
            label: format!("supervisor:{name}"),
            kind: SourceKind::Own,
        })
    }

    /// `shared:NAME` and `loader:NAME`; `Ok(None)` for anything else.
    fn parse_named(
        entry: &str,
        settings: &SkillsSettings,
        base_dir: &Path,
    ) -> Result<Option<Self>, SourceError> {
        let bad = |reason: String| SourceError {
            source_entry: entry.to_owned(),
            reason,
        };
        if let Some(name) = entry.strip_prefix("loader:") {
            validate_name(name).map_err(bad)?;
            return Ok(Some(Self::Loader {
                plugin: name.to_owned(),
            }));
        }
        if let Some(name) = entry.strip_prefix("shared:") {
            let path = settings.shared.get(name).ok_or_else(|| {
                bad(format!(
                    "no shared skills folder named '{name}' in [skills.shared] of guild.toml"
                ))
            })?;
            return Ok(Some(Self::Folder {
                path: if path.is_absolute() {
                    path.clone()
                } else {
                    base_dir.join(path)
                },
                label: entry.to_owned(),
                kind: SourceKind::Shared,
            }));
        }
        Ok(None)
    }
}

/// One skill source as a manifest requests it or an operator grants it, parsed once at load.
///
/// Two entries that name the same source compare equal (`"skills"`, `"skills/"` and
/// `"./skills"` are one folder), so requested ∩ granted is a plain comparison.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub enum SourceRequest {
    /// A folder inside the plugin's own folder, relative, with no `..`.
    Own(PathBuf),
    /// `shared:NAME`: a folder the operator names in `[skills.shared]`.
    Shared(String),
    /// `loader:NAME`: a skill-loader plugin.
    Loader(String),
}

impl SourceRequest {
    /// Parses one entry; the error says what forms are accepted.
    pub fn parse(entry: &str) -> Result<Self, SourceError> {
        let bad = |reason: String| SourceError {
            source_entry: entry.to_owned(),
            reason,
        };
        if let Some(name) = entry.strip_prefix("loader:") {
            validate_name(name).map_err(bad)?;
            return Ok(Self::Loader(name.to_owned()));
        }
        if let Some(name) = entry.strip_prefix("shared:") {
            validate_name(name).map_err(bad)?;
            return Ok(Self::Shared(name.to_owned()));
        }
        let rel = Path::new(entry);
        let inside = !rel.is_absolute()
            && rel
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        let normal: PathBuf = rel
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        if !inside || normal.as_os_str().is_empty() {
            return Err(bad(
                "expected a folder inside the plugin's own folder (like \"skills/\"), \"shared:NAME\" or \"loader:NAME\""
                    .to_owned(),
            ));
        }
        Ok(Self::Own(normal))
    }
}

impl TryFrom<String> for SourceRequest {
    type Error = String;

    fn try_from(entry: String) -> Result<Self, String> {
        Self::parse(&entry).map_err(|e| e.to_string())
    }
}

impl fmt::Display for SourceRequest {
    /// The canonical spelling: `skills/`, `shared:NAME`, `loader:NAME`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Own(rel) => write!(f, "{}/", rel.display()),
            Self::Shared(name) => write!(f, "shared:{name}"),
            Self::Loader(name) => write!(f, "loader:{name}"),
        }
    }
}
