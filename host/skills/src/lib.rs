//! Skills with progressive disclosure (docs/skills.md): the Agent Skills format, skill sources,
//! per-caller catalogs, the three disclosure levels with byte accounting, per-task tracking,
//! the gates the tool-call path asks, and watching skill folders for changes.
//!
//! The library is independent of wasm: skill-loader plugins are reached through the
//! [`SkillLoaders`] trait, which the runtime implements over the plugin registry
//! (`guild_host` wires both together for a running host). Every adapter (the
//! `skills` WIT import, the CLI, later MCP) calls the same functions:
//!
//! | level | function | returns |
//! |---|---|---|
//! | 1 catalog | [`Skills::catalog`] then [`Skills::disclose_catalog`] | name + description + source of every visible skill |
//! | 2 body | [`Skills::load`] | the body, wrapped with the name and a listing of resources |
//! | 3 resource | [`Skills::read`] | one file, confined and size-capped |
//!
//! Visibility: a caller sees only its own sources, never its caller's: a specialist the sources
//! its manifest requests and the operator grants ([`Skills::sources_for`] over the effective
//! capability set), the supervisor `[skills] supervisor` of `guild.toml`
//! ([`Skills::supervisor_sources`]).

mod bounds;
mod catalog;
mod contents;
mod disclose;
mod events;
mod folder;
mod format;
mod layout;
mod lookalike;
mod plain_yaml;
mod safe_text;
mod service;
mod task;
mod watch;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_events;
#[cfg(test)]
mod tests_wild;

use std::path::PathBuf;

use futures::future::BoxFuture;
use thiserror::Error;

pub use bounds::{MAX_DEPTH, MAX_FRONTMATTER};
pub use catalog::{Catalog, CatalogDiff, CatalogItem, Omitted, SkillEntry, SkillLocation};
pub use contents::{Contents, MAX_LISTED, ResourceFile, Walked};
pub use disclose::{
    BASE_DIR, Disclosure, Level, already_loaded_note, approx_tokens, check_relative, read_resource,
    resolve_base_dir, wrap_body,
};
pub use folder::{FolderScan, MAX_SKILL_MD, rescan_folder, scan_folder, scan_skill};
pub use format::{
    ALLOWED_KEYS, DISABLE_MODEL_INVOCATION, MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_NAME, Mode,
    ParsedSkill, Problem, SKILL_FILE, Severity, SkillMeta, frontmatter_json, nfkc, parse_skill_md,
    split_frontmatter, strip_frontmatter, validate_skill_name,
};
pub use guild_core::skill_sources::{
    SkillSource, SkillsSettings, SourceError, SourceKind, SourceRequest,
};
pub use safe_text::{catalog_line, neutralize};
pub use service::{CheckReport, FolderChange, Skills, check_dir};
pub use task::{TaskSkillStats, TaskSkills, tool_matches};
pub use watch::SkillWatcher;

/// Why a skill call failed. Each variant names the skill, file or source, and the reason.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SkillError {
    /// The skill is not in the caller's catalog (not declared, or does not exist).
    #[error(
        "skill '{skill}' is not visible here; visible skills: {}",
        list(visible)
    )]
    NotVisible {
        /// Requested name.
        skill: String,
        /// Names the caller may load.
        visible: Vec<String>,
    },
    /// A source entry in a manifest or `guild.toml` is malformed or names nothing.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// No plugin of that name, or not one that can have skills.
    #[error("unknown specialist '{0}'")]
    UnknownSpecialist(String),
    /// A resource path that is absolute, climbs out with `..`, or leads outside the folder.
    #[error("skill '{skill}': resource {path:?}: {reason}")]
    InvalidPath {
        /// Skill.
        skill: String,
        /// Path as given.
        path: String,
        /// Why it is refused.
        reason: String,
    },
    /// No such resource file.
    #[error("skill '{skill}': resource {path:?} not found")]
    NotFound {
        /// Skill.
        skill: String,
        /// Path as given.
        path: String,
    },
    /// A resource over the size cap.
    #[error("skill '{skill}': resource {path:?} is {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// Skill.
        skill: String,
        /// Path as given.
        path: String,
        /// Its size, bytes (at least this).
        size: u64,
        /// The cap, bytes.
        limit: u64,
    },
    /// A file could not be read.
    #[error("{}: {reason}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// A skill that was valid when the catalog was built no longer is.
    #[error("{}: field `{field}`: {reason}", file.display())]
    Invalid {
        /// `SKILL.md`.
        file: PathBuf,
        /// Field, or empty.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A skill-loader plugin failed or refused.
    #[error("skill-loader '{plugin}': {reason}")]
    Loader {
        /// Loader plugin.
        plugin: String,
        /// What it said, or how it failed.
        reason: String,
    },
}

/// How a [`SkillError`] maps onto the guest-visible `host-error` variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillErrorKind {
    /// `denied`: not visible to this caller.
    Denied,
    /// `invalid-input`: a bad name or path.
    InvalidInput,
    /// `limit-exceeded`: over the size cap.
    LimitExceeded,
    /// `failed`: everything else.
    Failed,
}

impl SkillError {
    /// The guest-visible category of this error.
    pub fn kind(&self) -> SkillErrorKind {
        match self {
            Self::NotVisible { .. } | Self::UnknownSpecialist(_) => SkillErrorKind::Denied,
            Self::InvalidPath { .. } | Self::NotFound { .. } | Self::Source(_) => {
                SkillErrorKind::InvalidInput
            }
            Self::TooLarge { .. } => SkillErrorKind::LimitExceeded,
            Self::Io { .. } | Self::Invalid { .. } | Self::Loader { .. } => SkillErrorKind::Failed,
        }
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}

/// One catalog entry as a skill-loader plugin reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoaderSkill {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
}

/// Access to skill-loader plugins (`list`, `load`, `read` in a fresh instance per call).
/// Errors are the loader's own message or how its instance failed.
pub trait SkillLoaders: Send + Sync {
    /// The loader's catalog.
    fn list<'a>(&'a self, plugin: &'a str) -> BoxFuture<'a, Result<Vec<LoaderSkill>, String>>;
    /// The body of one skill.
    fn load<'a>(&'a self, plugin: &'a str, name: &'a str) -> BoxFuture<'a, Result<String, String>>;
    /// One resource of one skill.
    fn read<'a>(
        &'a self,
        plugin: &'a str,
        name: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, String>>;
}

/// No loader plugins: every loader source reports itself unavailable. For tools (like
/// `guild skills check`) and tests that work on folders only.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLoaders;

impl SkillLoaders for NoLoaders {
    fn list<'a>(&'a self, plugin: &'a str) -> BoxFuture<'a, Result<Vec<LoaderSkill>, String>> {
        Box::pin(async move { Err(format!("no skill-loader plugins here ('{plugin}')")) })
    }
    fn load<'a>(&'a self, plugin: &'a str, _: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move { Err(format!("no skill-loader plugins here ('{plugin}')")) })
    }
    fn read<'a>(
        &'a self,
        plugin: &'a str,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, String>> {
        Box::pin(async move { Err(format!("no skill-loader plugins here ('{plugin}')")) })
    }
}
