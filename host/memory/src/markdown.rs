//! The few markdown shapes memory rules look at: headings as Markdown renders them, the
//! standard bullet `- YYYY-MM-DD: text`, the legacy bullet `- (YYYY-MM-DD) [tag] text`, and the
//! no-op sentinels. Everything else is an unknown line, kept as it was.
//!
//! Rules keyed on words (personal headings, sentinels) compare what a reader sees, not the bytes:
//! a writer could otherwise dodge them with look-alikes. So headings are found by a CommonMark
//! parser (ATX or setext, any level, inside quotes and lists, and `<h1>`–`<h6>` in raw HTML), their
//! text is the rendered text (emphasis, entities, links and HTML comments resolved), and words
//! are compared after NFKC, with invisible characters removed, punctuation folded to spaces
//! and, for personal headings, Unicode confusables mapped to one skeleton (UTS #39).

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization as _;
use unicode_security::confusable_detection::skeleton;

/// The text with its line endings as Markdown reads them: `\r\n` and a lone `\r` both end a
/// line, so both become `\n`.
pub(super) fn unix_lines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// One heading as Markdown renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// Index of the line it starts on (0-based).
    pub line: usize,
    /// Its rendered text.
    pub title: String,
    /// Whether it is an `<hN>` element in raw HTML rather than Markdown syntax.
    pub html: bool,
}

fn level(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Every heading Markdown would render in `text` (which has `\n` line endings), in order.
pub(super) fn headings(text: &str) -> Vec<Heading> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |offset: usize| line_starts.partition_point(|&s| s <= offset) - 1;
    let mut out = Vec::new();
    let mut open: Option<Heading> = None;
    let mut html: Option<(usize, String)> = None;
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level: l, .. }) => {
                open = Some(Heading {
                    level: level(l),
                    line: line_of(range.start),
                    title: String::new(),
                    html: false,
                });
            }
            Event::End(TagEnd::Heading(_)) => out.extend(open.take()),
            Event::Start(Tag::HtmlBlock) => html = Some((line_of(range.start), String::new())),
            Event::End(TagEnd::HtmlBlock) => {
                if let Some((line, block)) = html.take() {
                    out.extend(html_headings(&block, line));
                }
            }
            Event::Html(s) => {
                if let Some((_, block)) = html.as_mut() {
                    block.push_str(&s);
                }
            }
            Event::Text(s) | Event::Code(s) => {
                if let Some(h) = open.as_mut() {
                    h.title.push_str(&s);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(h) = open.as_mut() {
                    h.title.push(' ');
                }
            }
            // Inline HTML in a heading (a comment, a tag) renders as nothing.
            _ => {}
        }
    }
    for h in &mut out {
        h.title = h.title.trim().to_owned();
    }
    out
}

/// The `<h1>`–`<h6>` elements of a raw HTML block, with their text (tags dropped).
fn html_headings(block: &str, line: usize) -> Vec<Heading> {
    let lower = block.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut rest = 0;
    while let Some(found) = lower[rest..].find("<h") {
        let at = rest + found;
        rest = at + 2;
        let b = lower.as_bytes();
        let Some(&digit) = b.get(at + 2) else { break };
        let delimited = b
            .get(at + 3)
            .is_some_and(|c| *c == b'>' || c.is_ascii_whitespace() || *c == b'/');
        if !(b'1'..=b'6').contains(&digit) || !delimited {
            continue;
        }
        let Some(open_end) = lower[at..].find('>').map(|i| at + i + 1) else {
            break;
        };
        let close = format!("</h{}", digit as char);
        let end = lower[open_end..]
            .find(&close)
            .map_or(block.len(), |i| open_end + i);
        out.push(Heading {
            level: digit - b'0',
            line,
            title: strip_tags(&block[open_end..end]).trim().to_owned(),
            html: true,
        });
        rest = end;
    }
    out
}

/// Text with `<...>` tags removed.
fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Characters that render as nothing: every format character (zero-width spaces and joiners,
/// bidi controls, the byte-order mark, soft hyphen, ...) and the other default-ignorable code
/// points (variation selectors, the combining grapheme joiner, Hangul fillers, ...).
fn is_invisible(c: char) -> bool {
    get_general_category(c) == GeneralCategory::Format
        || matches!(c,
            '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The words of `s` as a reader sees them: NFKC (fullwidth and styled letters become plain
/// ones, a non-breaking space a space), invisible characters removed, everything that is not a
/// letter or digit folded to a space, lowercase.
fn words(s: &str) -> Vec<String> {
    let folded: String = s
        .nfkc()
        .filter(|c| !is_invisible(*c))
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    folded.split_whitespace().map(str::to_lowercase).collect()
}

/// A heading title as compared across versions: its [`words`], one space apart
/// (`**Personal-Notes:**` is `personal notes`).
pub(super) fn heading_key(title: &str) -> String {
    words(title).join(" ")
}

/// The UTS #39 skeleton of `s` without spaces: two strings with the same skeleton look alike.
fn look(s: &str) -> String {
    skeleton(&s.replace(' ', "")).collect()
}

/// The personal heading (one of `personal`) that `title` is, or looks like: same words, even
/// split or joined differently (`Pre*ferences*` renders as one word), even in look-alike
/// letters from other scripts (Cyrillic `е` for Latin `e`).
pub(super) fn personal_heading(title: &str, personal: &[&'static str]) -> Option<&'static str> {
    let seen = look(&heading_key(title));
    personal.iter().copied().find(|p| look(p) == seen)
}

/// Whether `year-month-day` is a day of the (proleptic Gregorian) calendar.
fn is_calendar_day(year: u32, month: u32, day: u32) -> bool {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Whether `s` is a `YYYY-MM-DD` date that exists (2025-02-30 does not).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    match (number(0..4), number(5..7), number(8..10)) {
        (Some(y), Some(m), Some(d)) => is_calendar_day(y, m, d),
        _ => false,
    }
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

/// The sentinel a writer sent to say "nothing to change", if the whole text is one: its
/// [`words`] joined by `_` are one of the sentinels. So case, `_`, `-` and spaces, and any
/// punctuation around it (backticks, quotes, `**`, a final `.`) do not matter.
pub(super) fn sentinel(text: &str) -> Option<&'static str> {
    let key = words(text).join("_").to_uppercase();
    super::SENTINELS.iter().find(|s| **s == key).copied()
}

/// Whether `text` has nothing a reader would see as words: empty, blank, or only punctuation
/// and invisible characters (such a text never replaces a document).
pub(super) fn is_blank(text: &str) -> bool {
    words(text).is_empty()
}
