//! Team and private memory (docs/memory.md): host-owned markdown documents that specialists and the
//! supervisor update, and the rules every write must pass.
//!
//! It owns:
//! - the vocabulary: [`Scope`] (team or private), [`MemoryAccess`] (what a plugin may request
//!   and an operator grant), [`DocId`] (which document), [`Usage`] (characters vs limits);
//! - the validator ([`validate()`]): every update is a full replacement, checked against the
//!   stored version before anything is stored; errors refuse the write, warnings come back
//!   with the accepted text;
//! - the over-limit rewrite hook ([`LlmRewriter`], [`validate_with_rewrite`]);
//! - the storage contract ([`MemoryStore`]) and its [`conformance`] checks, and the default
//!   store, a SQLite file opened through `guild-store` ([`SqliteMemoryStore`]); `guild-host`
//!   decides where it lives (the data dir).

#[cfg(test)]
mod bypass_tests;
mod markdown;
mod rewrite;
mod sqlite;
mod store;
#[cfg(test)]
mod tests;
mod validator;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use guild_core::memory_access::{DocId, MemoryAccess, Scope, validate_owner_name};
pub use rewrite::{LlmRewriter, REWRITE_NOTICE, RewriteFuture, validate_with_rewrite};
pub use sqlite::{APPLICATION_ID, MEMORY_FILE, SqliteMemoryStore};
pub use store::{
    MemoryStore, MemoryStoreError, NewVersion, StoredVersion, VersionInfo, conformance,
};
pub use validator::{
    DATA_LOSS_PERCENT, HARD_LIMIT_CHARS, HEADING_REQUIRED_ABOVE_CHARS, PERSONAL_HEADINGS,
    SENTINELS, SOFT_LIMIT_CHARS, Validation, validate,
};

/// A document's size against the limits, always reported with a validation result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Characters (Unicode scalar values) of the text, not counting its final newline (the
    /// one the host ends every stored document with).
    pub chars: usize,
    /// The soft limit: above it, a warning to consolidate.
    pub soft_limit: usize,
    /// The hard limit: above it, the write is refused.
    pub limit: usize,
}

impl Usage {
    /// The usage of `text`: its characters, the final newline left out, so that a document
    /// of exactly the limit fits whether or not its writer ended it with a newline.
    pub fn of(text: &str) -> Self {
        let text = text.strip_suffix('\n').unwrap_or(text);
        Self {
            chars: text.chars().count(),
            soft_limit: SOFT_LIMIT_CHARS,
            limit: HARD_LIMIT_CHARS,
        }
    }
}

impl fmt::Display for Usage {
    /// `12,345 / 25,000 characters (49 %)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} / {} characters ({} %)",
            thousands(self.chars),
            thousands(self.limit),
            self.chars * 100 / self.limit.max(1)
        )
    }
}

/// `25000` → `25,000`, as usage lines and the limits in messages print counts.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
