//! The few markdown shapes memory rules look at, recognised line by line: `##` headings, the
//! standard bullet `- YYYY-MM-DD: text`, the legacy bullet `- (YYYY-MM-DD) [tag] text`, and
//! the no-op sentinels. Everything else is an unknown line, kept as it was.

/// The title of a level-2 heading (`## Title`), or `None` for any other line (`###` is not
/// one: sub-headings live inside a section).
pub(super) fn h2_title(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("##")?;
    if rest.is_empty() {
        return Some("");
    }
    rest.strip_prefix([' ', '\t']).map(str::trim)
}

/// A heading title as compared across versions and against the personal headings:
/// lowercase, inner whitespace collapsed, a trailing `:` dropped.
pub(super) fn heading_key(title: &str) -> String {
    title
        .trim()
        .trim_end_matches(':')
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Whether `s` is a `YYYY-MM-DD` date (digits in place, month 01–12, day 01–31).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let month = (b[5] - b'0') * 10 + (b[6] - b'0');
    let day = (b[8] - b'0') * 10 + (b[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// A line the bullet rules apply to: it starts with `-` at the first column and is not a
/// thematic break (`---`). Indented lines are continuations and are left alone.
pub(super) fn is_dash_line(line: &str) -> bool {
    let t = line.trim_end();
    t.starts_with('-') && !(t.len() >= 3 && t.chars().all(|c| c == '-'))
}

/// `- YYYY-MM-DD: text` with non-empty text.
pub(super) fn is_standard_bullet(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("- ") else {
        return false;
    };
    let (Some(date), Some(text)) = (rest.get(..10), rest.get(10..)) else {
        return false;
    };
    is_date(date)
        && text
            .strip_prefix(": ")
            .is_some_and(|t| !t.trim().is_empty())
}

/// The standard form of a legacy bullet `- (YYYY-MM-DD) [tag] text` (the tag is optional):
/// `- YYYY-MM-DD: [tag] text`. The tag stays in the text, in brackets, so nothing is lost.
pub(super) fn normalize_legacy(line: &str) -> Option<String> {
    let rest = line.strip_prefix("- (")?;
    let date = rest.get(..10)?;
    let rest = rest.get(10..)?.strip_prefix(')')?;
    if !is_date(date) {
        return None;
    }
    let text = rest.trim_start();
    if text.trim().is_empty() {
        return None;
    }
    if let Some(tagged) = text.strip_prefix('[') {
        let (tag, after) = tagged.split_once(']')?;
        if tag.trim().is_empty() || after.trim().is_empty() {
            return None;
        }
    }
    Some(format!("- {date}: {}", text.trim_end()))
}

/// The sentinels a writer sends to say "nothing to change", compared after trimming,
/// case-insensitively, with `_`, `-` and spaces treated alike, surrounding backticks or
/// quotes and one trailing `.` ignored.
pub(super) fn sentinel(text: &str) -> Option<&'static str> {
    let t = text
        .trim()
        .trim_matches(|c| matches!(c, '`' | '"' | '\''))
        .trim();
    let t = t.strip_suffix('.').unwrap_or(t);
    let key: String = t
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    super::SENTINELS
        .iter()
        .find(|s| s.replace(' ', "_") == key)
        .copied()
}
