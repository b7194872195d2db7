//! Plain Rust mirrors of the WIT records only plugins handle (briefs, errors, skill metadata) and
//! their conversions to and from the raw bindings. The records the host reads too (reports,
//! artifacts, claims, tool specs) are defined once, with the host, in `guild-types`.

use std::fmt;

use serde::de::DeserializeOwned;

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

    /// The part of the description that holds the task's own input. A child task's description
    /// is its parent's brief as the host renders it (docs/delegation.md): a `# A task from …`
    /// title, the objective, criteria and other sections, and `## Context` last and verbatim;
    /// for it this is what follows that heading, so a specialist reading lines of input does not
    /// take the criteria or constraints for them. Any other description is returned whole.
    pub fn task_input(&self) -> &str {
        task_input(&self.description)
    }

    pub(crate) fn from_raw(brief: raw::Brief) -> Self {
        Self {
            task_id: brief.task_id,
            description: brief.description,
        }
    }
}

/// What follows the `## Context` heading of a description the host rendered from a brief; the
/// whole description otherwise.
fn task_input(description: &str) -> &str {
    if !description.starts_with("# A task from ") {
        return description;
    }
    description
        .rsplit_once("\n## Context\n")
        .map_or(description, |(_, context)| context)
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

/// `kind: message`, the kind once even for a host error carried over by `?`:
///
/// ```
/// use guild_sdk::{HostError, RunError};
///
/// let e = RunError::from(HostError::Failed("tool 'notes.save' failed: disk full".into()));
/// assert_eq!(e.to_string(), "failed: tool 'notes.save' failed: disk full");
/// ```
impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidBrief(msg) => write!(f, "invalid brief: {msg}"),
            Self::Failed(msg) => write!(f, "failed: {}", without_kind("failed", msg)),
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

    /// This error with ` (at FILE:LINE)` after its text: where the author's code made the call.
    pub(crate) fn at(self, caller: &std::panic::Location<'_>) -> Self {
        let placed = |m: String| format!("{m} (at {}:{})", caller.file(), caller.line());
        match self {
            Self::Denied(m) => Self::Denied(placed(m)),
            Self::InvalidInput(m) => Self::InvalidInput(placed(m)),
            Self::LimitExceeded(m) => Self::LimitExceeded(placed(m)),
            Self::Failed(m) => Self::Failed(placed(m)),
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

#[cfg(test)]
mod tests {
    use super::{HostError, task_input};

    #[test]
    fn a_placed_error_ends_with_the_callers_file_and_line_and_keeps_its_kind() {
        let here = std::panic::Location::caller();
        let e = HostError::Denied("denied: plugin 'p' capability tools target 'a.b': no".into());
        let placed = e.at(here);
        assert_eq!(placed.kind(), "denied");
        assert_eq!(
            placed.to_string(),
            format!(
                "denied: plugin 'p' capability tools target 'a.b': no (at {}:{})",
                here.file(),
                here.line()
            )
        );
        assert!(here.file().ends_with("types.rs"), "{}", here.file());
    }

    #[test]
    fn a_child_tasks_input_is_its_context_and_a_plain_description_is_whole() {
        let child = "# A task from lead\n\n## Objective\nFile the bugs\n\n## Why\nQA found them\n\n\
                     ## Completion criteria\n- every bug is filed\n\n## Context\n- [bug] Save is hidden\n";
        assert_eq!(task_input(child), "- [bug] Save is hidden\n");
        let plain = "- [bug] Save is hidden\n## Context\n- [bug] Search ignores accents\n";
        assert_eq!(task_input(plain), plain);
        // A rendered brief with no context section (not one the host writes) is kept whole.
        let bare = "# A task from lead\n\n## Objective\nFile the bugs\n";
        assert_eq!(task_input(bare), bare);
    }
}
