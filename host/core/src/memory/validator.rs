//! The validator every memory write passes before anything is stored (docs/memory.md, the
//! team-memory protocol's rules). An update is a full replacement; it is checked against the
//! stored version. Errors refuse the write; warnings come back with the accepted text; the
//! usage against the limits is always reported.
//!
//! What is changed on the way in (and only this): `\r\n` becomes `\n`; text before the first
//! `##` heading is stripped; legacy bullets `- (YYYY-MM-DD) [tag] text` become
//! `- YYYY-MM-DD: [tag] text`; trailing blank lines are trimmed and the text ends with one
//! newline. Every other line is kept as it was.

use serde::{Deserialize, Serialize};

use super::markdown::{
    h2_title, heading_key, is_dash_line, is_standard_bullet, normalize_legacy, sentinel,
};
use super::{Scope, Usage, thousands};

/// Above this many characters a write is refused (or rewritten, see [`super::LlmRewriter`]).
pub const HARD_LIMIT_CHARS: usize = 25_000;
/// Above this many characters an accepted write carries a warning to consolidate.
pub const SOFT_LIMIT_CHARS: usize = 18_000;
/// Content longer than this (trimmed) must have at least one `##` heading.
pub const HEADING_REQUIRED_ABOVE_CHARS: usize = 40;
/// A new text under this percentage of the stored one warns of possible data loss.
pub const DATA_LOSS_PERCENT: usize = 40;
/// Headings team memory may not introduce (compared case-insensitively, trailing `:` ignored).
pub const PERSONAL_HEADINGS: [&str; 4] = [
    "preferences",
    "instructions",
    "personal notes",
    "personal instructions",
];
/// Texts that mean "nothing to change". Compared case-insensitively after trimming, with `_`,
/// `-` and spaces alike, ignoring surrounding backticks or quotes and one trailing `.`. An
/// empty (or all-whitespace) text is a no-op too: it never wipes a document.
pub const SENTINELS: [&str; 6] = [
    "NO_UPDATE",
    "NO_UPDATES",
    "NO_CHANGE",
    "NO_CHANGES",
    "NO_UPDATE_NEEDED",
    "NOTHING_TO_UPDATE",
];

/// How many non-standard bullet lines are named one by one before the rest are counted.
const MAX_NAMED_LINES: usize = 10;
/// How much of a non-standard line a warning quotes, in characters.
const QUOTED_LINE_CHARS: usize = 80;

/// The error for content without a heading, word for word from the protocol.
pub(super) const NO_HEADING: &str = "Memory must be markdown with at least one ## heading.";

/// The outcome of validating one write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Validation {
    /// Store `text` (the normalized document); tell the writer the `warnings`.
    Accepted {
        /// The document to store.
        text: String,
        /// What the writer should know (possible data loss, soft limit, ...).
        warnings: Vec<String>,
        /// The stored size against the limits.
        usage: Usage,
    },
    /// Nothing to store: a sentinel, an empty text, or the stored text itself.
    NoOp {
        /// Why nothing changed.
        reason: String,
    },
    /// The write is refused; the stored version stays as it was.
    Refused {
        /// Every rule the text broke.
        errors: Vec<String>,
        /// The refused text's size against the limits.
        usage: Usage,
    },
}

/// The error for a text over [`HARD_LIMIT_CHARS`].
pub(super) fn over_limit_error(chars: usize) -> String {
    format!(
        "Memory is {} characters, over the limit of {} characters. Merge related entries, drop \
         stale ones and shorten descriptions, then send the full document again.",
        thousands(chars),
        thousands(HARD_LIMIT_CHARS)
    )
}

/// Validates `new` as the replacement of `stored` (the current version, if any) in `scope`.
pub fn validate(scope: Scope, new: &str, stored: Option<&str>) -> Validation {
    if let Some(s) = sentinel(new) {
        return Validation::NoOp {
            reason: format!("{s}: nothing was changed"),
        };
    }
    if new.trim().is_empty() {
        return Validation::NoOp {
            reason: "empty text: nothing was changed (to replace the document, send all of it)"
                .to_owned(),
        };
    }
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let unix = new.replace("\r\n", "\n");
    let lines: Vec<&str> = unix.split('\n').collect();

    // Text before the first `##` heading is stripped; without any heading only a short note
    // is acceptable.
    let start = match lines.iter().position(|l| h2_title(l).is_some()) {
        Some(first) => {
            let preamble: usize = lines[..first].iter().map(|l| l.chars().count() + 1).sum();
            if lines[..first].iter().any(|l| !l.trim().is_empty()) {
                warnings.push(format!(
                    "Removed the {preamble} characters before the first ## heading: a memory \
                     document starts at a ## heading."
                ));
            }
            first
        }
        None => {
            if unix.trim().chars().count() > HEADING_REQUIRED_ABOVE_CHARS {
                errors.push(NO_HEADING.to_owned());
            }
            0
        }
    };

    // Bullets: legacy ones normalized, other non-standard `-` lines named.
    let mut out: Vec<String> = Vec::with_capacity(lines.len() - start);
    let (mut legacy, mut odd) = (0usize, Vec::new());
    for (i, line) in lines[start..].iter().enumerate() {
        if is_dash_line(line) && !is_standard_bullet(line) {
            if let Some(normal) = normalize_legacy(line) {
                legacy += 1;
                out.push(normal);
                continue;
            }
            odd.push((i + 1, *line));
        }
        out.push((*line).to_owned());
    }
    if legacy > 0 {
        warnings.push(format!(
            "Normalized {legacy} legacy bullet(s) `- (YYYY-MM-DD) [tag] text` to the standard \
             form `- YYYY-MM-DD: [tag] text`."
        ));
    }
    for (n, line) in odd.iter().take(MAX_NAMED_LINES) {
        let quoted: String = line.chars().take(QUOTED_LINE_CHARS).collect();
        let cut = if line.chars().count() > QUOTED_LINE_CHARS {
            "…"
        } else {
            ""
        };
        warnings.push(format!(
            "Line {n} is not a standard bullet `- YYYY-MM-DD: text`: \"{quoted}{cut}\""
        ));
    }
    if odd.len() > MAX_NAMED_LINES {
        warnings.push(format!(
            "…and {} more lines that are not standard bullets `- YYYY-MM-DD: text`.",
            odd.len() - MAX_NAMED_LINES
        ));
    }
    let mut text = out.join("\n").trim_end().to_owned();
    text.push('\n');

    if stored == Some(text.as_str()) {
        return Validation::NoOp {
            reason: "the text is identical to the stored version: nothing was changed".to_owned(),
        };
    }

    let new_headings = headings(&text);
    let old_headings = stored.map(headings).unwrap_or_default();

    // Team memory: no new personal headings; stored ones are grandfathered.
    if scope == Scope::Team {
        for (key, title) in &new_headings {
            if !PERSONAL_HEADINGS.contains(&key.as_str()) {
                continue;
            }
            if old_headings.iter().any(|(k, _)| k == key) {
                warnings.push(format!(
                    "Team memory keeps the personal heading \"## {title}\" from the stored \
                     version: move its entries under team-safe headings (e.g. ## Decisions, \
                     ## Conventions)."
                ));
            } else {
                errors.push(format!(
                    "Team memory may not introduce the personal heading \"## {title}\": team \
                     memory is shared by the whole workspace. Keep preferences and instructions \
                     in private memory, or file the entries under a team-safe heading (e.g. \
                     ## Decisions, ## Conventions)."
                ));
            }
        }
    }

    // Possible data loss: a section dropped, or the text shrunk under 40 %.
    let dropped: Vec<String> = old_headings
        .iter()
        .filter(|(k, _)| !new_headings.iter().any(|(n, _)| n == k))
        .map(|(_, title)| format!("\"## {title}\""))
        .collect();
    if !dropped.is_empty() {
        warnings.push(format!(
            "Possible data loss: section(s) {} of the stored version are missing. Every update \
             replaces the whole document: include every section you want to keep.",
            dropped.join(", ")
        ));
    }
    let usage = Usage::of(&text);
    if let Some(old) = stored {
        let old_chars = old.chars().count();
        if usage.chars * 100 < old_chars * DATA_LOSS_PERCENT {
            warnings.push(format!(
                "Possible data loss: the new text is {} characters, under {DATA_LOSS_PERCENT} % \
                 of the stored {}. Every update replaces the whole document: include everything \
                 you want to keep.",
                thousands(usage.chars),
                thousands(old_chars)
            ));
        }
    }

    // Size.
    if usage.chars > HARD_LIMIT_CHARS {
        errors.push(over_limit_error(usage.chars));
    } else if usage.chars > SOFT_LIMIT_CHARS {
        warnings.push(format!(
            "Memory is {} characters, over the soft limit of {} (the limit is {}): consolidate \
             it — merge related entries and drop stale ones.",
            thousands(usage.chars),
            thousands(SOFT_LIMIT_CHARS),
            thousands(HARD_LIMIT_CHARS)
        ));
    }

    if errors.is_empty() {
        Validation::Accepted {
            text,
            warnings,
            usage,
        }
    } else {
        Validation::Refused { errors, usage }
    }
}

/// The `##` headings of a document as (comparison key, title as written), first of each key.
fn headings(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for title in text.lines().filter_map(h2_title) {
        let key = heading_key(title);
        if !out.iter().any(|(k, _)| *k == key) {
            out.push((key, title.to_owned()));
        }
    }
    out
}
