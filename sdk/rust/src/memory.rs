//! Team and private memory: the workspace's shared document and the user's own, both markdown
//! with `##` headings and `- YYYY-MM-DD: text` bullets. Which workspace and which user is the
//! operator's choice, never the plugin's.
//!
//! Every [`update`] replaces the whole document (merge and curate what [`read`] returned; never
//! append blindly). The host validates it before anything is stored and receipts it (type
//! `memory`, operation `update`), so a report may claim the tool `memory.update`. Each scope is
//! read and written under its own right (`memory = ["team:read", "team:write", ...]` in
//! `plugin.toml`, granted by the operator); without it the call fails with
//! [`HostError::Denied`].
//!
//! ```no_run
//! use guild_sdk::memory::{self, Scope};
//!
//! # fn run() -> Result<(), guild_sdk::memory::MemoryError> {
//! let current = memory::read(Scope::Team)?;
//! let text = format!("{}\n- 2026-03-01: releases go out on Tuesdays\n", current.text.trim_end());
//! let update = memory::update(Scope::Team, &text)?;
//! for warning in &update.warnings {
//!     guild_sdk::log::warn(warning);
//! }
//! # Ok(())
//! # }
//! ```

use std::fmt;

use crate::bindings::specialist::guild::plugin::memory as raw;
use crate::types::HostError;

/// Which document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The workspace's document, shared by every member and every plugin granted `team:*`.
    Team,
    /// The user's own document.
    Private,
}

impl Scope {
    fn into_raw(self) -> raw::Scope {
        match self {
            Self::Team => raw::Scope::Team,
            Self::Private => raw::Scope::Private,
        }
    }
}

/// A document's size against the limits, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Characters of the text.
    pub chars: u32,
    /// Above it, the host warns to consolidate.
    pub soft_limit: u32,
    /// Above it, the host refuses the write.
    pub limit: u32,
}

impl Usage {
    fn from_raw(u: raw::Usage) -> Self {
        Self {
            chars: u.chars,
            soft_limit: u.soft_limit,
            limit: u.limit,
        }
    }
}

impl fmt::Display for Usage {
    /// `12345 / 25000 characters`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {} characters", self.chars, self.limit)
    }
}

/// A document as read: its newest version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The markdown text (empty when nothing was stored yet).
    pub text: String,
    /// The newest version number; 0 when nothing was stored yet.
    pub version: u64,
    /// Its size against the limits.
    pub usage: Usage,
}

/// An accepted update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryUpdate {
    /// The version stored by this update; `None` when nothing changed.
    pub stored: Option<u64>,
    /// Why nothing changed (a sentinel such as `NO_UPDATE`, an empty text, the stored text
    /// itself); `None` when a version was stored.
    pub no_op: Option<String>,
    /// Accepted, but worth acting on: consolidate, possible data loss, odd bullets, ...
    pub warnings: Vec<String>,
    /// The stored document's size against the limits.
    pub usage: Usage,
}

/// Why an update did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryError {
    /// The text broke the memory rules; the stored version is unchanged.
    Refused {
        /// Every rule the text broke, as the host words it.
        errors: Vec<String>,
        /// The refused text's size against the limits.
        usage: Usage,
    },
    /// The call could not run: denied (no right for the scope), a limit, or a failure.
    Host(HostError),
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused { errors, usage } => {
                write!(f, "memory update refused ({usage}): {}", errors.join(" "))
            }
            Self::Host(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MemoryError {}

impl From<HostError> for MemoryError {
    fn from(err: HostError) -> Self {
        Self::Host(err)
    }
}

impl From<MemoryError> for crate::RunError {
    fn from(err: MemoryError) -> Self {
        Self::Failed(err.to_string())
    }
}

/// Reads `scope`'s document; [`HostError::Denied`] without the `SCOPE:read` right.
pub fn read(scope: Scope) -> Result<Document, HostError> {
    let doc = raw::read(scope.into_raw()).map_err(HostError::from_raw)?;
    Ok(Document {
        text: doc.text,
        version: doc.version,
        usage: Usage::from_raw(doc.usage),
    })
}

/// Replaces `scope`'s document with `text`, validated by the host first. Needs the
/// `SCOPE:write` right.
pub fn update(scope: Scope, text: &str) -> Result<MemoryUpdate, MemoryError> {
    match raw::update(scope.into_raw(), text) {
        Ok(r) => {
            let (stored, no_op) = match r.outcome {
                raw::UpdateOutcome::Stored(version) => (Some(version), None),
                raw::UpdateOutcome::NoOp(reason) => (None, Some(reason)),
            };
            Ok(MemoryUpdate {
                stored,
                no_op,
                warnings: r.warnings,
                usage: Usage::from_raw(r.usage),
            })
        }
        Err(raw::UpdateError::Refused(r)) => Err(MemoryError::Refused {
            errors: r.errors,
            usage: Usage::from_raw(r.usage),
        }),
        Err(raw::UpdateError::Host(e)) => Err(MemoryError::Host(HostError::from_raw(e))),
    }
}
