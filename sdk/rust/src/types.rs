//! Plain Rust mirrors of the WIT records every world shares (briefs, errors, artifacts, claims,
//! skill metadata) and their conversions to and from the raw bindings.

use std::fmt;

use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use crate::bindings::specialist::guild::plugin::types as raw;

/// The work handed to a specialist. It carries all context: the specialist sees nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brief {
    /// Host-assigned task id.
    pub task_id: String,
    /// The self-contained task description.
    pub description: String,
}

impl Brief {
    /// Parses the description as a JSON document; a parse error becomes
    /// [`RunError::InvalidBrief`] naming what was wrong.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, RunError> {
        serde_json::from_str(&self.description)
            .map_err(|err| RunError::InvalidBrief(format!("brief is not the expected JSON: {err}")))
    }

    pub(crate) fn from_raw(brief: raw::Brief) -> Self {
        Self {
            task_id: brief.task_id,
            description: brief.description,
        }
    }
}

/// What a specialist says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecialistInfo {
    /// One-line description shown in the roster.
    pub description: String,
}

impl SpecialistInfo {
    /// A specialist described by one line.
    pub fn new(description: impl Into<String>) -> Self {
        Self {
            description: description.into(),
        }
    }

    pub(crate) fn into_raw(self) -> raw::SpecialistInfo {
        raw::SpecialistInfo {
            description: self.description,
        }
    }
}

/// Why a run failed as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The brief cannot be acted on; the text says what is missing.
    InvalidBrief(String),
    /// The work failed.
    Failed(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidBrief(msg) => write!(f, "invalid brief: {msg}"),
            Self::Failed(msg) => write!(f, "failed: {msg}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<HostError> for RunError {
    fn from(err: HostError) -> Self {
        Self::Failed(err.to_string())
    }
}

impl From<serde_json::Error> for RunError {
    fn from(err: serde_json::Error) -> Self {
        Self::Failed(format!("JSON error: {err}"))
    }
}

impl RunError {
    pub(crate) fn into_raw(self) -> raw::RunError {
        match self {
            Self::InvalidBrief(msg) => raw::RunError::InvalidBrief(msg),
            Self::Failed(msg) => raw::RunError::Failed(msg),
        }
    }
}

/// Why a host call was refused or failed. A plugin can act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    /// The capability was not requested or not granted. The text names plugin, capability and target.
    Denied(String),
    /// The input was malformed (bad URL, bad JSON, unknown tool, ...).
    InvalidInput(String),
    /// A size or time limit was hit.
    LimitExceeded(String),
    /// The operation was allowed but failed (network error, the tool's plugin trapped, ...).
    Failed(String),
}

impl HostError {
    /// The host's text without the kind prefix (the host may start its text with the kind,
    /// `denied: plugin 'p' ...`; that prefix is left out here so it is never printed twice).
    pub fn message(&self) -> &str {
        let text = match self {
            Self::Denied(m) | Self::InvalidInput(m) | Self::LimitExceeded(m) | Self::Failed(m) => m,
        };
        without_kind(self.kind(), text)
    }

    /// The kind as a stable lowercase word: `denied`, `invalid-input`, `limit-exceeded`, `failed`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Denied(_) => "denied",
            Self::InvalidInput(_) => "invalid-input",
            Self::LimitExceeded(_) => "limit-exceeded",
            Self::Failed(_) => "failed",
        }
    }

    pub(crate) fn from_raw(err: raw::HostError) -> Self {
        match err {
            raw::HostError::Denied(m) => Self::Denied(m),
            raw::HostError::InvalidInput(m) => Self::InvalidInput(m),
            raw::HostError::LimitExceeded(m) => Self::LimitExceeded(m),
            raw::HostError::Failed(m) => Self::Failed(m),
        }
    }

    pub(crate) fn into_raw(self) -> raw::HostError {
        match self {
            Self::Denied(m) => raw::HostError::Denied(m),
            Self::InvalidInput(m) => raw::HostError::InvalidInput(m),
            Self::LimitExceeded(m) => raw::HostError::LimitExceeded(m),
            Self::Failed(m) => raw::HostError::Failed(m),
        }
    }
}

/// `kind: message`, with the kind once however the host worded it:
///
/// ```
/// use guild_sdk::HostError;
///
/// let e = HostError::Denied("denied: plugin 'kb' capability config target 'x': not granted".into());
/// assert_eq!(e.to_string(), "denied: plugin 'kb' capability config target 'x': not granted");
/// let e = HostError::InvalidInput("bad JSON".into());
/// assert_eq!(e.to_string(), "invalid-input: bad JSON");
/// ```
impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::error::Error for HostError {}

/// `text` without a leading `kind:` (or `kind with spaces:`), so a kind is never printed twice.
pub(crate) fn without_kind<'t>(kind: &str, text: &'t str) -> &'t str {
    let spaced = kind.replace('-', " ");
    [kind, spaced.as_str()]
        .iter()
        .find_map(|k| {
            text.strip_prefix(k)
                .and_then(|rest| rest.strip_prefix(':'))
                .map(str::trim_start)
        })
        .unwrap_or(text)
}

/// How the specialist judges its own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything the brief asked for was done.
    Satisfied,
    /// Some of it was done.
    Partial,
    /// None of it was done.
    Failed,
}

impl Outcome {
    pub(crate) fn into_raw(self) -> raw::Outcome {
        match self {
            Self::Satisfied => raw::Outcome::Satisfied,
            Self::Partial => raw::Outcome::Partial,
            Self::Failed => raw::Outcome::Failed,
        }
    }
}

/// A file or document the specialist produced, resolvable by the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactRef {
    /// Path or id within the task's workspace.
    pub id: String,
    /// Kind: file, document, page, ...
    pub kind: String,
    /// MIME type.
    pub mime_type: String,
    /// Hex sha256 of the content.
    pub sha256: String,
    /// Version in the system that holds it (page revision, commit), when it has one.
    pub version: Option<String>,
}

impl ArtifactRef {
    /// An artifact whose hash is already known.
    pub fn new(
        id: impl Into<String>,
        kind: impl Into<String>,
        mime_type: impl Into<String>,
        sha256: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: kind.into(),
            mime_type: mime_type.into(),
            sha256: sha256.into(),
            version: None,
        }
    }

    /// A `file` artifact; the sha256 is computed from `content`, the bytes that were written.
    pub fn file(id: impl Into<String>, mime_type: impl Into<String>, content: &[u8]) -> Self {
        Self::new(id, "file", mime_type, sha256_hex(content))
    }

    /// Sets the version the artifact has in the system that holds it (a page revision, a commit).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    pub(crate) fn into_raw(self) -> raw::ArtifactRef {
        raw::ArtifactRef {
            id: self.id,
            kind: self.kind,
            mime_type: self.mime_type,
            sha256: self.sha256,
            version: self.version,
        }
    }
}

/// Lowercase hex sha256 of `bytes`, as artifacts carry it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// An external effect the specialist claims to have caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The tool that caused it, `connector.tool`.
    pub tool: String,
    /// The external id the tool returned.
    pub external_id: Option<String>,
    /// Free text of what was claimed.
    pub text: String,
}

impl Claim {
    pub(crate) fn into_raw(self) -> raw::Claim {
        raw::Claim {
            tool: self.tool,
            external_id: self.external_id,
            text: self.text,
        }
    }
}

/// One entry of a skill loader's catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillMeta {
    /// Skill name, equal to its folder name.
    pub name: String,
    /// What the skill is for and when to use it.
    pub description: String,
}

impl SkillMeta {
    /// A catalog entry.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
        }
    }

    pub(crate) fn from_raw(raw: raw::SkillMeta) -> Self {
        Self {
            name: raw.name,
            description: raw.description,
        }
    }

    pub(crate) fn into_raw(self) -> raw::SkillMeta {
        raw::SkillMeta {
            name: self.name,
            description: self.description,
        }
    }
}
