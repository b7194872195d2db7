//! The operator's `guild.toml`: host settings and per-plugin grants.
//!
//! A grant is what the operator allows; the effective capability set is the intersection with
//! what the manifest requests ([`crate::capability`]). Nothing here is ever granted by default:
//! a plugin with no `[grants.NAME]` table gets nothing but logging.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::ConfigError;
use crate::manifest::{FsMode, key_at};
use crate::settings::DispatchSettings;
use toml::de::{DeTable, DeValue};

/// A parsed `guild.toml`, with relative paths resolved against its folder.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `[host]`.
    pub host: HostSettings,
    /// `[grants.<plugin>]`.
    pub grants: BTreeMap<String, Grant>,
    /// `[dispatch]` (after environment overrides, when loaded from a file).
    pub dispatch: DispatchSettings,
    /// `[skills]`: the supervisor's skill sources, shared skill folders, strict allowed-tools.
    pub skills: crate::skill_sources::SkillsSettings,
    /// `[memory]`: whose team and private memory this host serves.
    pub memory: MemorySettings,
    /// `[trust]`: who may sign the bundles `guild bundle install` accepts.
    pub trust: TrustSettings,
    /// `[serve]`: how `guild serve` bounds its clients (token, sessions, request size).
    pub serve: crate::serve::ServeSettings,
    /// `[llm]`: model endpoints and aliases (docs/models.md).
    pub llm: crate::llm::LlmSettings,
    /// `[store]`: SQLite files in the data dir, or a shared PostgreSQL (docs/postgres.md).
    pub store: crate::store::StoreSettings,
    /// `[delegate]`: the limits of every delegation tree (docs/delegation.md).
    pub delegate: crate::settings::DelegateSettings,
    /// Folder relative paths are resolved against.
    pub base_dir: PathBuf,
    /// The file this config was read from (empty when built in code): a plugin that could
    /// write it would grant itself anything at the next start, so no grant may reach it.
    pub file: PathBuf,
}

/// `[host]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSettings {
    /// Every direct sub-folder holding a `plugin.toml` is loaded.
    #[serde(default)]
    pub plugins_dir: Option<PathBuf>,
    /// Individual plugin folders, in addition to `plugins_dir`.
    #[serde(default)]
    pub plugins: Vec<PathBuf>,
    /// Host-owned state: the compile cache lives in `DATA_DIR/cache`. No plugin can see it.
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// Whether compiled components are cached on disk (default true).
    #[serde(default = "yes")]
    pub compile_cache: bool,
    /// Bytes a guest may pass to the host in one call, KiB (wasmtime's default is 128 MiB).
    #[serde(default = "default_hostcall_kb")]
    pub hostcall_kb: u32,
    /// Bytes of guest stdout/stderr forwarded to tracing per instance, KiB; the rest is dropped.
    #[serde(default = "default_stdio_kb")]
    pub stdio_kb: u32,
    /// Handles (open files, directories, streams) one instance may hold at once.
    #[serde(default = "default_max_handles")]
    pub max_handles: u32,
    /// Largest component file loaded, MiB: the ceiling over every manifest's `component_mb`.
    #[serde(default = "default_max_component_mb")]
    pub max_component_mb: u32,
    /// Longest a component may take to compile, seconds, when compiling in a child process.
    #[serde(default = "default_compile_timeout_s")]
    pub compile_timeout_s: u32,
    /// Address space the compiling child process may use, MiB.
    #[serde(default = "default_compile_memory_mb")]
    pub compile_memory_mb: u32,
    /// Whether a plugin with no optimized artifact in the compile cache is first compiled with
    /// the baseline compiler (Winch, seconds) and served at once while Cranelift compiles it in
    /// the background (default true); false serves each plugin only once Cranelift compiled it.
    #[serde(default = "yes")]
    pub baseline_tier: bool,
    /// Disk quota of a read-write folder grant that sets no `quota_mb`, MiB: the bytes of all
    /// files under the folder together.
    #[serde(default = "default_fs_quota_mb")]
    pub fs_quota_mb: u32,
    /// Files (and folders, and links) under a read-write folder grant that sets no
    /// `quota_files`.
    #[serde(default = "default_fs_quota_files")]
    pub fs_quota_files: u32,
    /// The program that compiles components in a child process under the two limits above
    /// (the `guild` binary sets itself). Never read from the file; `None` compiles in-process.
    #[serde(skip)]
    pub compile_helper: Option<PathBuf>,
    /// Origins `verify_receipt` may fetch although they are not public (loopback, private):
    /// `scheme://host[:port]`, each naming the address. Public origins need no entry.
    #[serde(default)]
    pub verify_origins: Vec<String>,
}

fn default_data_dir() -> PathBuf {
    PathBuf::from(".guild")
}
fn yes() -> bool {
    true
}
fn default_hostcall_kb() -> u32 {
    4 * 1024
}
fn default_stdio_kb() -> u32 {
    64
}
fn default_max_handles() -> u32 {
    512
}
fn default_max_component_mb() -> u32 {
    64
}
fn default_compile_timeout_s() -> u32 {
    120
}
fn default_compile_memory_mb() -> u32 {
    4096
}
fn default_fs_quota_mb() -> u32 {
    256
}
fn default_fs_quota_files() -> u32 {
    10_000
}

/// The range `[host] max_handles` must fall in: enough for the preopens and stdio, far below
/// any process's descriptor limit.
pub const MAX_HANDLES_RANGE: std::ops::RangeInclusive<u32> = 16..=65_536;

impl Default for HostSettings {
    fn default() -> Self {
        Self {
            plugins_dir: None,
            plugins: Vec::new(),
            data_dir: default_data_dir(),
            compile_cache: true,
            hostcall_kb: default_hostcall_kb(),
            stdio_kb: default_stdio_kb(),
            max_handles: default_max_handles(),
            max_component_mb: default_max_component_mb(),
            compile_timeout_s: default_compile_timeout_s(),
            compile_memory_mb: default_compile_memory_mb(),
            baseline_tier: true,
            fs_quota_mb: default_fs_quota_mb(),
            fs_quota_files: default_fs_quota_files(),
            compile_helper: None,
            verify_origins: Vec::new(),
        }
    }
}

/// `[memory]`: the workspace whose team memory and the user whose private memory this host
/// serves. The operator names them (CLI flags override); plugins never choose.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySettings {
    /// The workspace (team memory); without one, team memory is unavailable.
    #[serde(default)]
    pub workspace: Option<String>,
    /// The user (private memory); without one, private memory is unavailable.
    #[serde(default)]
    pub user: Option<String>,
}

/// `[trust]`: the signed-bundle policy (docs/bundles.md, "Trust"). Paths resolve against `guild.toml`'s folder.
///
/// ```toml
/// [trust]
/// allowed_signers = "allowed_signers"   # git's format; `guild keys add` edits it
/// revoked = "revoked_signers"           # one key or SHA256 fingerprint per line; always wins
/// require_signed = true                 # default: unsigned bundles are refused
/// threshold = 1                         # distinct trusted keys a bundle needs
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustSettings {
    /// The team's `allowed_signers` file.
    #[serde(default = "default_allowed_signers")]
    pub allowed_signers: PathBuf,
    /// The revocation list (a missing file revokes nothing).
    #[serde(default = "default_revoked")]
    pub revoked: PathBuf,
    /// Refuse bundles without enough trusted signatures (default true).
    #[serde(default = "yes")]
    pub require_signed: bool,
    /// Distinct trusted keys a bundle needs (default 1).
    #[serde(default = "one")]
    pub threshold: u32,
}

fn default_allowed_signers() -> PathBuf {
    PathBuf::from("allowed_signers")
}
fn default_revoked() -> PathBuf {
    PathBuf::from("revoked_signers")
}
fn one() -> u32 {
    1
}

impl Default for TrustSettings {
    fn default() -> Self {
        Self {
            allowed_signers: default_allowed_signers(),
            revoked: default_revoked(),
            require_signed: true,
            threshold: one(),
        }
    }
}

/// `[grants.<plugin>]`: what the operator allows one plugin.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// Tools, `connector.tool`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Outbound HTTP origins.
    #[serde(default)]
    pub http: Vec<String>,
    /// Filesystem mounts: guest path → host folder.
    #[serde(default)]
    pub fs: Vec<FsGrant>,
    /// Configuration values by key.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// Secrets by name: where each value comes from and the hosts it may be sent to.
    #[serde(default)]
    pub secrets: BTreeMap<String, SecretGrant>,
    /// Skill sources, spelled as the manifest requests them (`"skills/"`, `"shared:NAME"`,
    /// `"loader:NAME"`); a requested source is visible only if listed here.
    #[serde(default)]
    pub skills: Vec<crate::skill_sources::SourceRequest>,
    /// Memory rights (`team:read`, `team:write`, `private:read`, `private:write`); a requested
    /// right is effective only if listed here.
    #[serde(default)]
    pub memory: Vec<crate::memory_access::MemoryAccess>,
    /// Progress reports through the report channel.
    #[serde(default)]
    pub report: bool,
    /// Model aliases and token budgets (`[grants.NAME.llm]`, docs/models.md); none denies.
    #[serde(default)]
    pub llm: Option<crate::llm::LlmGrant>,
    /// Specialists this plugin may start as child tasks (docs/delegation.md); none denies.
    #[serde(default)]
    pub delegate: Vec<String>,
    /// Lower ceilings than the manifest's.
    #[serde(default)]
    pub limits: LimitOverrides,
}

/// One granted filesystem mount.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsGrant {
    /// Guest path, as requested in the manifest.
    pub guest: String,
    /// Host folder (relative to `guild.toml`).
    pub host: PathBuf,
    /// The most the operator allows; the effective mode is the lower of this and the request.
    pub mode: FsMode,
    /// Bytes all files under the folder may take together when mounted read-write, MiB
    /// (default `[host] fs_quota_mb`). A write past it fails with `insufficient-space`.
    #[serde(default)]
    pub quota_mb: Option<u32>,
    /// Files, folders and links the folder may hold when mounted read-write (default
    /// `[host] fs_quota_files`).
    #[serde(default)]
    pub quota_files: Option<u32>,
}

/// `[grants.NAME.secrets.SECRET]`: one secret's value source and the hosts it is sent to.
///
/// The operator names the hosts; a manifest may only request a subset of them. Exactly one of
/// `env`, `file` or `value` gives the value:
///
/// ```toml
/// [grants.tracker.secrets.TRACKER_TOKEN]
/// env = "TRACKER_TOKEN"
/// hosts = ["https://api.github.com"]
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawSecretGrant")]
pub struct SecretGrant {
    /// Where the value comes from.
    pub source: SecretSource,
    /// Origins (`scheme://host[:port]` patterns) the host attaches the secret to.
    pub hosts: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSecretGrant {
    env: Option<String>,
    file: Option<PathBuf>,
    value: Option<String>,
    hosts: Vec<String>,
}

impl TryFrom<RawSecretGrant> for SecretGrant {
    type Error = String;

    fn try_from(raw: RawSecretGrant) -> Result<Self, String> {
        let source = match (raw.env, raw.file, raw.value) {
            (Some(var), None, None) => SecretSource::Env(var),
            (None, Some(path), None) => SecretSource::File(path),
            (None, None, Some(v)) => SecretSource::Value(v),
            _ => {
                return Err(
                    "expected exactly one value source: `env`, `file` or `value`".to_owned(),
                );
            }
        };
        Ok(Self {
            source,
            hosts: raw.hosts,
        })
    }
}

/// Where a secret's value comes from. The value never reaches a plugin.
#[derive(Debug, Clone)]
pub enum SecretSource {
    /// An environment variable of the host process.
    Env(String),
    /// A file (relative to `guild.toml`); trailing newlines are trimmed.
    File(PathBuf),
    /// A literal value. Meant for tests and local stand-ins only.
    Value(String),
}

impl SecretSource {
    /// Reads the secret's value.
    pub fn read(&self, base_dir: &Path) -> Result<String, String> {
        match self {
            Self::Env(var) => {
                std::env::var(var).map_err(|_| format!("environment variable {var} is not set"))
            }
            Self::File(path) => std::fs::read_to_string(base_dir.join(path))
                .map(|s| s.trim_end_matches(['\n', '\r']).to_owned())
                .map_err(|e| format!("cannot read {}: {e}", path.display())),
            Self::Value(v) => Ok(v.clone()),
        }
    }
}

/// Operator limits; each lowers the manifest's value.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    /// MiB.
    pub memory_mb: Option<u32>,
    /// Seconds.
    pub timeout_s: Option<u32>,
    /// KiB.
    pub max_output_kb: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    host: HostSettings,
    #[serde(default)]
    grants: BTreeMap<String, Grant>,
    #[serde(default)]
    dispatch: DispatchSettings,
    #[serde(default)]
    skills: crate::skill_sources::SkillsSettings,
    #[serde(default)]
    memory: MemorySettings,
    #[serde(default)]
    trust: TrustSettings,
    #[serde(default)]
    serve: crate::serve::ServeSettings,
    #[serde(default)]
    llm: crate::llm::LlmSettings,
    #[serde(default)]
    store: crate::store::StoreSettings,
    #[serde(default)]
    delegate: crate::settings::DelegateSettings,
}

impl Config {
    /// Reads `guild.toml`.
    pub fn load(file: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(file).map_err(|e| ConfigError::Io {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        let base = file
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let mut config = Self::parse(&text, file, &base)?;
        config
            .dispatch
            .apply_overrides(|var| std::env::var(var).ok())
            .map_err(|message| ConfigError::Invalid {
                file: file.to_owned(),
                key: "dispatch".to_owned(),
                message,
            })?;
        Ok(config)
    }

    /// Parses config text; relative paths resolve against `base_dir`.
    pub fn parse(text: &str, file: &Path, base_dir: &Path) -> Result<Self, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| syntax_error(&e, text, file))?;
        let config = Config {
            host: raw.host,
            grants: raw.grants,
            dispatch: raw.dispatch,
            skills: raw.skills,
            memory: raw.memory,
            trust: raw.trust,
            serve: raw.serve,
            llm: raw.llm,
            store: raw.store,
            delegate: raw.delegate,
            base_dir: base_dir.to_owned(),
            file: file.to_owned(),
        };
        config
            .dispatch
            .validate()
            .map_err(|message| ConfigError::Invalid {
                file: file.to_owned(),
                key: "dispatch".to_owned(),
                message,
            })?;
        config.validate(file)?;
        Ok(config)
    }

    fn validate(&self, file: &Path) -> Result<(), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid {
            file: file.to_owned(),
            key,
            message,
        };
        self.skills
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        self.serve
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        self.llm
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        self.store
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        self.delegate
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        for (key, name) in [
            ("memory.workspace", &self.memory.workspace),
            ("memory.user", &self.memory.user),
        ] {
            if let Some(name) = name {
                crate::memory_access::validate_owner_name(name)
                    .map_err(|m| invalid(key.to_owned(), m))?;
            }
        }
        if !MAX_HANDLES_RANGE.contains(&self.host.max_handles) {
            return Err(invalid(
                "host.max_handles".into(),
                format!(
                    "{} is out of range: expected {} to {}",
                    self.host.max_handles,
                    MAX_HANDLES_RANGE.start(),
                    MAX_HANDLES_RANGE.end()
                ),
            ));
        }
        if self.dispatch.outcome_linger_ms > crate::settings::MAX_OUTCOME_LINGER_MS {
            return Err(invalid(
                "dispatch.outcome_linger_ms".into(),
                format!(
                    "{} is out of range: expected 0 to {} (milliseconds an outcome may wait to \
                     share a commit)",
                    self.dispatch.outcome_linger_ms,
                    crate::settings::MAX_OUTCOME_LINGER_MS
                ),
            ));
        }
        if self.trust.threshold == 0 {
            return Err(invalid(
                "trust.threshold".into(),
                "expected at least 1 distinct key".into(),
            ));
        }
        for (key, value) in [
            ("max_component_mb", self.host.max_component_mb),
            ("compile_timeout_s", self.host.compile_timeout_s),
            ("compile_memory_mb", self.host.compile_memory_mb),
            ("fs_quota_mb", self.host.fs_quota_mb),
            ("fs_quota_files", self.host.fs_quota_files),
        ] {
            if value == 0 {
                return Err(invalid(format!("host.{key}"), "expected at least 1".into()));
            }
        }
        for (name, grant) in &self.grants {
            crate::manifest::validate_name(name)
                .map_err(|m| invalid(format!("grants.{name}"), m))?;
            for tool in &grant.tools {
                crate::manifest::parse_tool_name(tool)
                    .map_err(|m| invalid(format!("grants.{name}.tools"), m))?;
            }
            for pattern in &grant.http {
                guild_http::HostPattern::parse(pattern)
                    .map_err(|e| invalid(format!("grants.{name}.http"), e.to_string()))?;
            }
            for (secret, g) in &grant.secrets {
                let key = format!("grants.{name}.secrets.{secret}.hosts");
                if g.hosts.is_empty() {
                    return Err(invalid(
                        key,
                        "lists no hosts; a secret must name where it may be sent".to_owned(),
                    ));
                }
                for pattern in &g.hosts {
                    guild_http::HostPattern::parse(pattern)
                        .map_err(|e| invalid(key.clone(), e.to_string()))?;
                }
            }
            if let Some(llm) = &grant.llm {
                self.validate_llm_grant(name, llm)
                    .map_err(|(key, message)| invalid(key, message))?;
            }
            for (i, fs) in grant.fs.iter().enumerate() {
                for (key, value) in [("quota_mb", fs.quota_mb), ("quota_files", fs.quota_files)] {
                    if value == Some(0) {
                        return Err(invalid(
                            format!("grants.{name}.fs[{i}].{key}"),
                            "expected at least 1; a folder the plugin may not write is granted \
                             with mode = \"ro\""
                                .to_owned(),
                        ));
                    }
                }
                if fs.host.as_os_str().is_empty() || fs.host == Path::new("/") {
                    return Err(invalid(
                        format!("grants.{name}.fs"),
                        format!(
                            "host folder {:?} for guest {:?} is not allowed: grant a dedicated folder, never '/'",
                            fs.host, fs.guest
                        ),
                    ));
                }
            }
            if self.host.hostcall_kb == 0 {
                return Err(invalid(
                    "host.hostcall_kb".into(),
                    "expected at least 1".into(),
                ));
            }
        }
        self.refuse_nested_grants(file)
    }

    /// A model grant names configured aliases and allows at least one call at a time.
    fn validate_llm_grant(
        &self,
        plugin: &str,
        grant: &crate::llm::LlmGrant,
    ) -> Result<(), (String, String)> {
        for alias in &grant.models {
            if !self.llm.models.contains_key(alias) {
                return Err((
                    format!("grants.{plugin}.llm.models"),
                    format!("names model `{alias}`, which `[llm.models]` does not define"),
                ));
            }
        }
        if grant.concurrency == 0 {
            return Err((
                format!("grants.{plugin}.llm.concurrency"),
                "expected at least 1".to_owned(),
            ));
        }
        Ok(())
    }

    /// Refuses a folder grant (of any plugin) that lies inside another one granted read-write:
    /// the writer could re-point it (docs/security.md, "Folder grants").
    fn refuse_nested_grants(&self, file: &Path) -> Result<(), ConfigError> {
        let mut keys = Vec::new();
        let mut written = Vec::new();
        for (name, grant) in &self.grants {
            for (i, fs) in grant.fs.iter().enumerate() {
                keys.push((format!("grants.{name}.fs[{i}]"), fs));
                written.push((self.resolve(&fs.host), fs.mode == FsMode::Rw));
            }
        }
        let places: Vec<_> = written
            .iter()
            .map(|(p, w)| crate::host_paths::GrantPlace {
                written: p,
                writable: *w,
            })
            .collect();
        let Some((outer, inner)) = crate::host_paths::nested_in_writable(&places) else {
            return Ok(());
        };
        let ((outer_key, outer_fs), (inner_key, inner_fs)) = (&keys[outer], &keys[inner]);
        Err(ConfigError::Invalid {
            file: file.to_owned(),
            key: format!("{inner_key}.host"),
            message: format!(
                "{} (guest {}) lies inside `{outer_key}` {} (guest {}), which is granted \
                 read-write: a plugin that can write a folder could replace a folder on the path \
                 of a grant inside it (with a symbolic link, say) and re-point that grant; grant \
                 folders side by side, or the outer folder alone",
                inner_fs.host.display(),
                inner_fs.guest,
                outer_fs.host.display(),
                outer_fs.guest
            ),
        })
    }

    /// Resolves a path from the config against its folder.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_owned()
        } else {
            self.base_dir.join(path)
        }
    }

    /// Plugin folders to load: children of `plugins_dir` holding a manifest, then `plugins`.
    pub fn plugin_folders(&self) -> std::io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        if let Some(dir) = &self.host.plugins_dir {
            let dir = self.resolve(dir);
            let mut children: Vec<PathBuf> = std::fs::read_dir(&dir)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join(crate::manifest::MANIFEST_FILE).is_file())
                .collect();
            children.sort();
            out.extend(children);
        }
        out.extend(self.host.plugins.iter().map(|p| self.resolve(p)));
        Ok(out)
    }

    /// Refuses a plugin folder found under `[host] plugins_dir` that is a symbolic link leading
    /// outside the plugins folder: what lies under `plugins_dir` is the host's own (never
    /// grantable), and a link out of it would load, and protect, whatever it points at. Folders
    /// listed one by one in `[host] plugins` are the operator's explicit choice and not judged
    /// here.
    pub fn check_plugin_folder(&self, dir: &Path) -> Result<(), String> {
        let Some(plugins_dir) = &self.host.plugins_dir else {
            return Ok(());
        };
        let plugins_dir = self.resolve(plugins_dir);
        if dir.parent() != Some(plugins_dir.as_path()) {
            return Ok(());
        }
        let is_link = std::fs::symlink_metadata(dir)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_link {
            return Ok(());
        }
        let target = crate::host_paths::canonical_or_planned(dir);
        let root = crate::host_paths::canonical_or_planned(&plugins_dir);
        if crate::host_paths::strictly_inside(&target, &root) {
            return Ok(());
        }
        Err(format!(
            "plugin folder {} is a symbolic link to {}, outside the plugins folder {} \
             (`[host] plugins_dir`); a plugin under plugins_dir must lie inside it: copy the \
             plugin in, or name its folder in `[host] plugins`",
            dir.display(),
            target.display(),
            root.display()
        ))
    }

    /// The host-owned data folder.
    pub fn data_dir(&self) -> PathBuf {
        self.resolve(&self.host.data_dir)
    }
}

/// The parser's error, with the key path it is about: an unknown key (a typo) says which
/// table it is in and which keys that table takes.
fn syntax_error(e: &toml::de::Error, text: &str, file: &Path) -> ConfigError {
    let message = e.message().trim_end();
    let path = e
        .span()
        .map(|s| key_path_at(text, s.start))
        .unwrap_or_default();
    if let (Some(rest), Some((key, table))) =
        (message.strip_prefix("unknown field `"), path.split_last())
        && let Some((_, expected)) = rest.split_once("`, ")
    {
        return ConfigError::UnknownKey {
            file: file.to_owned(),
            table: join_path(table),
            key: key.clone(),
            expected: expected.to_owned(),
        };
    }
    // The line the parser stopped at: a repeated table (two pasted `[host]` tables) has no key
    // path of its own, so the line's text names it.
    let at = e.span().map(|s| s.start.min(text.len()));
    let line = at.map(|start| {
        let number = text[..start].matches('\n').count() + 1;
        let text = text.lines().nth(number - 1).unwrap_or_default().trim();
        (number, text)
    });
    let key = match line {
        Some((_, header)) if message.starts_with("duplicate key") && header.starts_with('[') => {
            header.to_owned()
        }
        _ if path.is_empty() => at.map(|start| key_at(text, start)).unwrap_or_default(),
        _ => join_path(&path),
    };
    ConfigError::Syntax {
        file: file.to_owned(),
        key,
        message: match line {
            Some((number, _)) => format!("{message} (line {number})"),
            None => message.to_owned(),
        },
    }
}

/// `grants.kb.fs[0].mode` from its segments.
fn join_path(segments: &[String]) -> String {
    let mut out = String::new();
    for s in segments {
        if !out.is_empty() && !s.starts_with('[') {
            out.push('.');
        }
        out.push_str(s);
    }
    out
}

/// The segments of the key path at `offset` in `text` (array elements as `[i]`): the deepest
/// key or value whose span holds it. Empty when the text does not parse as TOML.
fn key_path_at(text: &str, offset: usize) -> Vec<String> {
    let Ok(doc) = DeTable::parse(text) else {
        return Vec::new();
    };
    let mut path = Vec::new();
    find_in_table(doc.get_ref(), offset, &mut path);
    path
}

/// Tables are searched whole: a table split over several `[a.b]` headers has no one span.
fn find_in_table(table: &DeTable<'_>, offset: usize, path: &mut Vec<String>) -> bool {
    for (key, value) in table {
        path.push(key.get_ref().to_string());
        if key.span().contains(&offset) || find_in_value(value, offset, path) {
            return true;
        }
        path.pop();
    }
    false
}

fn find_in_value(
    value: &toml::Spanned<DeValue<'_>>,
    offset: usize,
    path: &mut Vec<String>,
) -> bool {
    match value.get_ref() {
        DeValue::Table(t) => find_in_table(t, offset, path) || value.span().contains(&offset),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(format!("[{i}]"));
                if find_in_value(item, offset, path) {
                    return true;
                }
                path.pop();
            }
            value.span().contains(&offset)
        }
        _ => value.span().contains(&offset),
    }
}
