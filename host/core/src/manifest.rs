//! Plugin manifests (`plugin.toml`): what a plugin *requests*.
//!
//! Parsing is strict (`deny_unknown_fields`) and happens before any wasm is read or compiled, so
//! `guild plugins check` can validate a folder without an engine. Nothing here grants anything:
//! the effective capability set is computed in [`crate::capability`] from a manifest *and* the
//! operator's grant.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component as PathComponent, Path, PathBuf};

use serde::Deserialize;

use crate::error::ManifestError;
use crate::tool_names::TOOL_NAME_RULE;
use guild_http::HostPattern;

/// File name of a plugin manifest inside a plugin folder.
pub const MANIFEST_FILE: &str = "plugin.toml";

/// A parsed and validated `plugin.toml`.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// `[plugin]`: identity.
    pub plugin: PluginSection,
    /// `[requires]`: roster gating.
    pub requires: Requires,
    /// `[capabilities]`: requested, never granted by asking.
    pub capabilities: Requested,
    /// `[limits]`: the plugin's own ceilings (the operator may lower them).
    pub limits: Limits,
    /// `[agent]`: a prompt-defined specialist's settings, handed to it as JSON (the WIT's
    /// `definition.settings`); the host does not interpret them.
    pub agent: toml::Table,
    /// The folder the manifest was read from.
    pub dir: PathBuf,
}

/// The `[plugin]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSection {
    /// `[a-z0-9-]{1,64}`, unique in a host.
    pub name: String,
    /// Semantic version; the registry keys versions by it.
    pub version: semver::Version,
    /// Which WIT world the component implements.
    pub kind: PluginKind,
    /// Path of the component, relative to the plugin folder.
    pub component: PathBuf,
    /// Optional one-line description (specialists also describe themselves).
    #[serde(default)]
    pub description: Option<String>,
    /// Legacy names that still route here.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// A specialist whose background task may run again from the start when the host running
    /// it dies (on a shared store another host takes it up as a new attempt, docs/postgres.md);
    /// otherwise such a task ends `interrupted`. Only for specialists whose every mutating
    /// call carries an idempotency key, so that a second run replays what the first did.
    #[serde(default)]
    pub retryable: bool,
}

/// The WIT world a plugin implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PluginKind {
    /// Exports `describe` and `run`.
    Specialist,
    /// Exports `tools` and `call`.
    Connector,
    /// Exports `list`, `load` and `read`.
    SkillLoader,
}

impl fmt::Display for PluginKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Specialist => "specialist",
            Self::Connector => "connector",
            Self::SkillLoader => "skill-loader",
        })
    }
}

/// `[requires]`: a specialist is on the roster only when these connectors are loaded.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// Connector requirement.
    #[serde(default)]
    pub connectors: Option<ConnectorRequirement>,
}

/// All-of or any-of a set of connector names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
pub enum ConnectorRequirement {
    /// Every listed connector must be loaded.
    All(Vec<String>),
    /// At least one listed connector must be loaded.
    Any(Vec<String>),
}

impl ConnectorRequirement {
    /// Whether the requirement holds for the given set of loaded connectors; `Err` says what is missing.
    pub fn check(&self, loaded: &BTreeSet<String>) -> Result<(), String> {
        match self {
            Self::All(names) => {
                let missing: Vec<_> = names.iter().filter(|n| !loaded.contains(*n)).collect();
                if missing.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "needs all of connectors {names:?}; missing {missing:?}"
                    ))
                }
            }
            Self::Any(names) => {
                if names.iter().any(|n| loaded.contains(n)) {
                    Ok(())
                } else {
                    Err(format!("needs any of connectors {names:?}; none is loaded"))
                }
            }
        }
    }
}

/// `[capabilities]`: what the plugin asks for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requested {
    /// Connector tools, `connector.tool`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Skill sources (served by the skills subsystem; not granted by this host version).
    #[serde(default)]
    pub skills: Vec<String>,
    /// Outbound HTTP origins, `scheme://host[:port]` with wildcards.
    #[serde(default)]
    pub http: Vec<String>,
    /// Filesystem mounts by guest path.
    #[serde(default)]
    pub fs: Vec<FsRequest>,
    /// Model access (docs/models.md): `true` for any alias the operator grants, or a list of
    /// aliases.
    #[serde(default)]
    pub llm: crate::llm::LlmRequest,
    /// Specialists this plugin asks to start as child tasks (docs/delegation.md).
    #[serde(default)]
    pub delegate: Vec<String>,
    /// Memory rights (`team:read`, `team:write`, `private:read`, `private:write`), parsed
    /// when the manifest is read.
    #[serde(default)]
    pub memory: Vec<crate::memory_access::MemoryAccess>,
    /// Report channel (not granted by this host version).
    #[serde(default)]
    pub report: bool,
    /// Non-secret configuration keys.
    #[serde(default)]
    pub config: Vec<String>,
    /// Secrets the host attaches to outbound requests.
    #[serde(default)]
    pub secrets: Vec<SecretRequest>,
}

/// One requested filesystem mount.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsRequest {
    /// Absolute guest path, e.g. `/workspace`.
    pub guest: String,
    /// Access mode.
    pub mode: FsMode,
}

/// Filesystem access mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FsMode {
    /// Read only.
    Ro,
    /// Read and write.
    Rw,
}

impl fmt::Display for FsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ro => "ro",
            Self::Rw => "rw",
        })
    }
}

/// A secret the host attaches as a header to requests for the listed hosts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretRequest {
    /// Secret name, looked up in the operator's grant.
    pub name: String,
    /// Origins the plugin asks the secret to be sent to. Only a request: the operator's grant
    /// names where it is sent, and a request outside the grant refuses the load. Empty (the
    /// default) asks for nothing beyond what the operator grants.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Header name, e.g. `Authorization`.
    pub header: String,
    /// Header value template; `{}` is replaced by the secret.
    #[serde(default = "default_secret_format")]
    pub format: String,
}

fn default_secret_format() -> String {
    "{}".to_owned()
}

/// `[limits]`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Sum of all linear memories of one instance, MiB.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u32,
    /// Wall-clock budget of one call, seconds.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u32,
    /// Cap on what one call returns to the host, KiB.
    #[serde(default = "default_max_output_kb")]
    pub max_output_kb: u32,
    /// Largest component file this plugin may ship, MiB; never above the operator's
    /// `[host] max_component_mb`, which is the cap when this is absent.
    #[serde(default)]
    pub component_mb: Option<u32>,
}

fn default_memory_mb() -> u32 {
    64
}
fn default_timeout_s() -> u32 {
    300
}
fn default_max_output_kb() -> u32 {
    256
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_mb: default_memory_mb(),
            timeout_s: default_timeout_s(),
            max_output_kb: default_max_output_kb(),
            component_mb: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    plugin: PluginSection,
    #[serde(default)]
    requires: Requires,
    #[serde(default)]
    capabilities: Requested,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    agent: toml::Table,
}

impl Manifest {
    /// Reads and validates `DIR/plugin.toml`.
    pub fn load(dir: &Path) -> Result<Self, ManifestError> {
        Self::load_with_text(dir).map(|(manifest, _)| manifest)
    }

    /// [`load`](Self::load), also giving the text it parsed (a reload compares it with the
    /// text of the version serving).
    pub fn load_with_text(dir: &Path) -> Result<(Self, String), ManifestError> {
        let file = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&file).map_err(|e| ManifestError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Ok((Self::parse(&text, dir)?, text))
    }

    /// Parses and validates manifest text; `dir` is the plugin folder it belongs to.
    pub fn parse(text: &str, dir: &Path) -> Result<Self, ManifestError> {
        let file = dir.join(MANIFEST_FILE);
        let raw: RawManifest = toml::from_str(text).map_err(|e| ManifestError::Syntax {
            file: file.clone(),
            message: e.message().to_owned(),
            key: e.span().map(|s| key_at(text, s.start)).unwrap_or_default(),
        })?;
        let manifest = Manifest {
            plugin: raw.plugin,
            requires: raw.requires,
            capabilities: raw.capabilities,
            limits: raw.limits,
            agent: raw.agent,
            dir: dir.to_owned(),
        };
        manifest
            .validate()
            .map_err(|(key, message)| ManifestError::Invalid {
                file,
                key: key.to_owned(),
                message,
            })?;
        Ok(manifest)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.plugin.name
    }

    /// Absolute path of the component file.
    pub fn component_path(&self) -> PathBuf {
        self.dir.join(&self.plugin.component)
    }

    /// The component file, checked on disk: a regular file (not a symlink) whose canonical path
    /// lies inside the plugin folder. Plugin folders are the host's alone, so what is compiled
    /// is exactly what the folder holds; a link out of it would let anything the link reaches
    /// run with this plugin's grants. The `Err` says what is wrong.
    pub fn component_file(&self) -> Result<PathBuf, String> {
        let file = self.component_path();
        let meta = std::fs::symlink_metadata(&file).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                "file not found (did the plugin build run?)".to_owned()
            } else {
                format!("cannot read: {e}")
            }
        })?;
        if meta.file_type().is_symlink() {
            return Err(
                "is a symbolic link; the component must be a regular file inside the plugin folder"
                    .to_owned(),
            );
        }
        if !meta.is_file() {
            return Err("is not a regular file".to_owned());
        }
        let dir = self
            .dir
            .canonicalize()
            .map_err(|e| format!("plugin folder {}: {e}", self.dir.display()))?;
        let canonical = file
            .canonicalize()
            .map_err(|e| format!("cannot read: {e}"))?;
        if !canonical.starts_with(&dir) {
            return Err(format!(
                "resolves to {}, outside the plugin folder {} (a symbolic link on the way?)",
                canonical.display(),
                dir.display()
            ));
        }
        Ok(canonical)
    }

    /// Refuses a component file larger than `[limits] component_mb` (capped by the operator's
    /// `ceiling_mb`), judged by its metadata before any of it is read, so an oversized file
    /// (a compile bomb, a huge custom section) never reaches memory or the compiler.
    pub fn check_component_size(&self, ceiling_mb: u32) -> Result<(), String> {
        let file = self.component_path();
        let size = std::fs::metadata(&file)
            .map_err(|e| format!("cannot read its size: {e}"))?
            .len();
        let (cap_mb, key) = match self.limits.component_mb {
            Some(mb) if mb <= ceiling_mb => (mb, "`[limits] component_mb` of plugin.toml"),
            _ => (ceiling_mb, "`[host] max_component_mb` of guild.toml"),
        };
        let cap = u64::from(cap_mb) * 1024 * 1024;
        if size > cap {
            return Err(format!(
                "is {size} bytes, over the limit of {cap_mb} MiB ({key}); ship a smaller component or ask the operator to raise the limit"
            ));
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), (&'static str, String)> {
        validate_name(&self.plugin.name).map_err(|m| ("plugin.name", m))?;
        for alias in &self.plugin.aliases {
            validate_alias(alias).map_err(|m| ("plugin.aliases", m))?;
        }
        validate_relative(&self.plugin.component).map_err(|m| ("plugin.component", m))?;
        if let Some(d) = &self.plugin.description
            && (d.trim().is_empty() || d.len() > 1024)
        {
            return Err((
                "plugin.description",
                "expected 1 to 1024 characters".to_owned(),
            ));
        }
        if self.plugin.retryable && self.plugin.kind != PluginKind::Specialist {
            return Err((
                "plugin.retryable",
                format!(
                    "only a specialist's tasks are retried; this plugin is a {}",
                    self.plugin.kind
                ),
            ));
        }
        if self.requires.connectors.is_some() && self.plugin.kind != PluginKind::Specialist {
            return Err((
                "requires.connectors",
                format!(
                    "only specialists can require connectors, this plugin is a {}",
                    self.plugin.kind
                ),
            ));
        }
        let caps = &self.capabilities;
        for tool in &caps.tools {
            parse_tool_name(tool).map_err(|m| ("capabilities.tools", m))?;
        }
        if !caps.tools.is_empty() && self.plugin.kind != PluginKind::Specialist {
            return Err((
                "capabilities.tools",
                "only specialists can call connector tools".to_owned(),
            ));
        }
        for pattern in &caps.http {
            HostPattern::parse(pattern).map_err(|e| ("capabilities.http", e.to_string()))?;
        }
        let mut guests = BTreeSet::new();
        for fs in &caps.fs {
            validate_guest_path(&fs.guest).map_err(|m| ("capabilities.fs", m))?;
            if !guests.insert(fs.guest.as_str()) {
                return Err((
                    "capabilities.fs",
                    format!("guest path {:?} is listed twice", fs.guest),
                ));
            }
        }
        for key in &caps.config {
            validate_config_key(key).map_err(|m| ("capabilities.config", m))?;
        }
        for secret in &caps.secrets {
            validate_config_key(&secret.name).map_err(|m| ("capabilities.secrets.name", m))?;
            for host in &secret.hosts {
                HostPattern::parse(host)
                    .map_err(|e| ("capabilities.secrets.hosts", e.to_string()))?;
            }
            reqwest::header::HeaderName::from_bytes(secret.header.as_bytes()).map_err(|_| {
                (
                    "capabilities.secrets.header",
                    format!("{:?} is not a valid HTTP header name", secret.header),
                )
            })?;
            if secret.format.matches("{}").count() != 1 {
                return Err((
                    "capabilities.secrets.format",
                    format!(
                        "{:?} must contain exactly one {{}} placeholder",
                        secret.format
                    ),
                ));
            }
        }
        let l = &self.limits;
        if l.memory_mb == 0 || l.memory_mb > 4096 {
            return Err(("limits.memory_mb", "expected 1 to 4096".to_owned()));
        }
        if l.timeout_s == 0 || l.timeout_s > 86_400 {
            return Err(("limits.timeout_s", "expected 1 to 86400".to_owned()));
        }
        if l.max_output_kb == 0 || l.max_output_kb > 64 * 1024 {
            return Err(("limits.max_output_kb", "expected 1 to 65536".to_owned()));
        }
        if l.component_mb.is_some_and(|mb| mb == 0 || mb > 4096) {
            return Err(("limits.component_mb", "expected 1 to 4096".to_owned()));
        }
        Ok(())
    }
}

/// Checks a plugin name: `[a-z0-9-]{1,64}`.
pub fn validate_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a valid plugin name: expected 1 to 64 characters of a-z, 0-9 and '-'"
        ))
    }
}

fn validate_alias(alias: &str) -> Result<(), String> {
    let ok = !alias.is_empty()
        && alias.len() <= 64
        && alias
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{alias:?} is not a valid alias: expected 1 to 64 characters of a-z, 0-9, '-' and '_'"
        ))
    }
}

/// Splits `connector.tool` into its parts, checking both.
pub fn parse_tool_name(full: &str) -> Result<(&str, &str), String> {
    let (connector, tool) = full
        .split_once('.')
        .ok_or_else(|| format!("{full:?} is not a tool name: {TOOL_NAME_RULE}"))?;
    validate_name(connector)
        .map_err(|_| format!("{full:?} is not a tool name: {TOOL_NAME_RULE}"))?;
    let ok = !tool.is_empty()
        && tool.len() <= 64
        && tool
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if ok {
        Ok((connector, tool))
    } else {
        Err(format!("{full:?} is not a tool name: {TOOL_NAME_RULE}"))
    }
}

fn validate_config_key(key: &str) -> Result<(), String> {
    let ok = !key.is_empty()
        && key.len() <= 128
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{key:?} is not a valid key: expected 1 to 128 characters of letters, digits, '_', '-' and '.'"
        ))
    }
}

/// A guest mount point: absolute, normalised, not `/` itself.
fn validate_guest_path(path: &str) -> Result<(), String> {
    let p = Path::new(path);
    let normal = p.is_absolute()
        && path != "/"
        && p.components()
            .all(|c| matches!(c, PathComponent::RootDir | PathComponent::Normal(_)))
        && !path.ends_with('/');
    if normal {
        Ok(())
    } else {
        Err(format!(
            "{path:?} is not a valid guest path: expected an absolute path such as \"/workspace\", without '..', '.' or a trailing '/', and not '/' itself"
        ))
    }
}

/// A path inside the plugin folder: relative, no `..`.
fn validate_relative(path: &Path) -> Result<(), String> {
    let inside = !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, PathComponent::Normal(_) | PathComponent::CurDir));
    if inside {
        Ok(())
    } else {
        Err(format!(
            "{} must be a relative path inside the plugin folder",
            path.display()
        ))
    }
}

/// Best-effort dotted key for a byte offset in TOML text: the table header above it plus the
/// key on its line. Used only to make syntax errors point somewhere useful.
pub(crate) fn key_at(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let table = before
        .lines()
        .rev()
        .find_map(|l| {
            let t = l.trim();
            t.strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .map(|s| s.trim_matches(['[', ']']).trim().to_owned())
        })
        .unwrap_or_default();
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().to_owned())
        .filter(|k| !k.starts_with('['))
        .unwrap_or_default();
    match (table.is_empty(), key.is_empty()) {
        (true, _) => key,
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    }
}
