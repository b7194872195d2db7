//! The validator every memory write passes before anything is stored (docs/memory.md, the
//! team-memory protocol's rules). An update is a full replacement; it is checked against the
//! stored version. Errors refuse the write; warnings come back with the accepted text; the
//! usage against the limits is always reported.
//!
//! What is changed on the way in (and only this): `\r\n` and a lone `\r` become `\n`; text
//! before the first `##` heading is stripped; legacy bullets `- (YYYY-MM-DD) [tag] text` become
//! `- YYYY-MM-DD: [tag] text`; trailing blank lines are trimmed and the text ends with one
//! newline (which the limits do not count: see [`Usage::of`]). Every other line is kept as it
//! was.
//!
//! Headings are what Markdown renders as one (see [`super::markdown`]): the sections are the
//! level-2 headings, ATX (`## Title`) or setext (`Title` over `---`); the personal-heading rule
//! looks at headings of every level, compared as a reader sees them.

use serde::{Deserialize, Serialize};

use super::markdown::heading_key;
use super::markdown::{
    headings, is_blank, is_dash_line, is_standard_bullet, normalize_legacy, personal_heading,
    sentinel, unix_lines,
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
/// Headings team memory may not introduce, at any level. Compared as a reader sees them:
/// case, punctuation (`**Personal-Notes:**`), invisible characters, fullwidth or styled letters
/// and look-alike letters from other scripts do not make a different heading.
pub const PERSONAL_HEADINGS: [&str; 4] = [
    "preferences",
    "instructions",
    "personal notes",
    "personal instructions",
];
/// Texts that mean "nothing to change". Compared on their words: case-insensitively, with `_`,
/// `-` and spaces alike, ignoring any punctuation around them (backticks, quotes, a final
/// `.`). An empty text, or one of only punctuation and whitespace, is a no-op too: it never
/// wipes a document.
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
    if is_blank(new) {
        return Validation::NoOp {
            reason: "empty text: nothing was changed (to replace the document, send all of it)"
                .to_owned(),
        };
    }
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let unix = unix_lines(new);
    let lines: Vec<&str> = unix.split('\n').collect();

    let start = preamble_end(&unix, &lines, &mut errors, &mut warnings);

    let out = normalize_bullets(&lines[start..], &mut warnings);
    let mut text = out.join("\n").trim_end().to_owned();
    text.push('\n');

    if stored == Some(text.as_str()) {
        return Validation::NoOp {
            reason: "the text is identical to the stored version: nothing was changed".to_owned(),
        };
    }

    if scope == Scope::Team {
        check_personal_headings(&text, stored, &mut errors, &mut warnings);
    }

    let usage = Usage::of(&text);
    warn_of_data_loss(&text, stored, usage.chars, &mut warnings);
    check_size(usage.chars, &mut errors, &mut warnings);

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

/// Where the document starts: its first `##` heading (the text before it is stripped, with a
/// warning); without any heading, the start, and only a short note is acceptable.
fn preamble_end(
    unix: &str,
    lines: &[&str],
    errors: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> usize {
    let first_section = headings(unix)
        .into_iter()
        .find(|h| h.level == 2 && !h.html)
        .map(|h| h.line);
    match first_section {
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
    }
}

/// The lines with legacy bullets normalized; other non-standard `-` lines are named in
/// warnings (the first few, then a count).
fn normalize_bullets(lines: &[&str], warnings: &mut Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let (mut legacy, mut odd) = (0usize, Vec::new());
    for (i, line) in lines.iter().enumerate() {
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
    out
}

/// Team memory: no new personal headings, at any level; stored ones are grandfathered with a
/// warning.
fn check_personal_headings(
    text: &str,
    stored: Option<&str>,
    errors: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    let old_personal: Vec<&str> = stored
        .map(personal_headings)
        .unwrap_or_default()
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    for (personal, title) in personal_headings(text) {
        if old_personal.contains(&personal) {
            warnings.push(format!(
                "Team memory keeps the personal heading {} from the stored \
                 version: move its entries under team-safe headings (e.g. ## Decisions, \
                 ## Conventions).",
                shown(&title, personal)
            ));
        } else {
            errors.push(format!(
                "Team memory may not introduce the personal heading {}: team \
                 memory is shared by the whole workspace. Keep preferences and instructions \
                 in private memory, or file the entries under a team-safe heading (e.g. \
                 ## Decisions, ## Conventions).",
                shown(&title, personal)
            ));
        }
    }
}

/// Possible data loss: a stored section missing, or the new text under
/// [`DATA_LOSS_PERCENT`] % of the stored one.
fn warn_of_data_loss(
    text: &str,
    stored: Option<&str>,
    new_chars: usize,
    warnings: &mut Vec<String>,
) {
    let new_headings = sections(text);
    let old_headings = stored.map(sections).unwrap_or_default();
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
    if let Some(old) = stored {
        let old_chars = Usage::of(old).chars;
        if new_chars * 100 < old_chars * DATA_LOSS_PERCENT {
            warnings.push(format!(
                "Possible data loss: the new text is {} characters, under {DATA_LOSS_PERCENT} % \
                 of the stored {}. Every update replaces the whole document: include everything \
                 you want to keep.",
                thousands(new_chars),
                thousands(old_chars)
            ));
        }
    }
}

/// Size: over the hard limit is an error, over the soft limit a warning.
fn check_size(chars: usize, errors: &mut Vec<String>, warnings: &mut Vec<String>) {
    if chars > HARD_LIMIT_CHARS {
        errors.push(over_limit_error(chars));
    } else if chars > SOFT_LIMIT_CHARS {
        warnings.push(format!(
            "Memory is {} characters, over the soft limit of {} (the limit is {}): consolidate \
             it — merge related entries and drop stale ones.",
            thousands(chars),
            thousands(SOFT_LIMIT_CHARS),
            thousands(HARD_LIMIT_CHARS)
        ));
    }
}

/// A personal heading as a message quotes it: `"## Title"`, and for a look-alike the title
/// with its invisible characters escaped and what it reads as.
fn shown(title: &str, personal: &str) -> String {
    let plain = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if plain.trim_end_matches(':').to_lowercase() == personal {
        format!("\"## {title}\"")
    } else {
        format!(
            "\"## {}\" (it reads as \"## {personal}\")",
            title.escape_debug()
        )
    }
}

/// The sections of a document (its Markdown level-2 headings) as (comparison key, title as
/// rendered), first of each key.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for h in headings(&unix_lines(text)) {
        if h.level != 2 || h.html {
            continue;
        }
        let key = heading_key(&h.title);
        if !out.iter().any(|(k, _)| *k == key) {
            out.push((key, h.title));
        }
    }
    out
}

/// The headings of a document, at any level, that are (or look like) a personal heading, as
/// (which one, title as rendered).
fn personal_headings(text: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for h in headings(&unix_lines(text)) {
        if let Some(p) = personal_heading(&h.title, &PERSONAL_HEADINGS)
            && !out.iter().any(|(seen, _)| *seen == p)
        {
            out.push((p, h.title));
        }
    }
    out
}
