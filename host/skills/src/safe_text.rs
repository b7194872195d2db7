//! Skill text made safe to hand to a model or a terminal: what a skill's author writes in a
//! name, a description or a body must not be able to drive a terminal, reorder what a reader
//! sees, or hide characters that make one text look like another.
//!
//! The characters neutralized ([`disguising`]) are those [`guild_core::text`] escapes for
//! terminals (C0 controls, DEL, C1 controls, the bidirectional marks, embeddings, overrides
//! and isolates, line separators, zero-width space, word joiner and the invisible operators,
//! the byte-order mark, tag characters) plus the Mongolian vowel separator and a zero-width
//! (non-)joiner where it joins nothing (after an ASCII character or at the start; after an
//! emoji or a letter of a script that shapes, it is legitimate). They
//! are escaped visibly (`\x1b`, `\u{202e}`) rather than dropped, so a reader sees that something
//! was there. Strict `guild skills check` refuses them ([`first_disguising`]).
//!
//! [`catalog_line`] is what one catalog entry's description becomes: one line, neutralized and
//! cut to a number of characters, so that one skill cannot crowd the others out of the
//! catalog's byte budget.

use std::borrow::Cow;

/// True when `c` (following `prev`) must not reach a model or a terminal raw. Newline and tab
/// are included: callers that keep lines decide about them.
pub(crate) fn disguising(c: char, prev: Option<char>) -> bool {
    match c {
        _ if guild_core::text::is_unsafe(c) => true,
        '\u{180e}' => true,
        // Zero-width non-joiner and joiner: shaping in Persian or Indic text and joining emoji
        // sequences come after a non-ASCII character; anywhere else they only hide.
        '\u{200c}' | '\u{200d}' => prev.is_none_or(|p| p.is_ascii()),
        _ => false,
    }
}

/// The first character of `s` that [`disguising`] refuses (newline and tab allowed when
/// `keep_lines`), as a phrase naming it and its position, for a problem's reason.
pub(crate) fn first_disguising(s: &str, keep_lines: bool) -> Option<String> {
    let mut prev = None;
    let mut chars = s.chars().enumerate().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if disguising(c, prev) && !(keep_lines && line_break(c, next)) {
            return Some(format!(
                "contains the control or invisible format character U+{:04X} at character {}",
                c as u32,
                at + 1
            ));
        }
        prev = Some(c);
    }
    None
}

/// Newline, tab, and a carriage return that ends a line (CRLF): the line structure of
/// multi-line text. A lone carriage return overwrites the line on a terminal.
fn line_break(c: char, next: Option<char>) -> bool {
    matches!(c, '\n' | '\t') || (c == '\r' && next == Some('\n'))
}

/// `s` with every [`disguising`] character escaped except newline, tab and the carriage
/// return of a CRLF line end: for multi-line text (a body, a description in the frontmatter).
/// Clean text comes back without a copy.
pub fn neutralize(s: &str) -> Cow<'_, str> {
    let unsafe_at = |i: usize, c: char, prev: Option<char>| {
        disguising(c, prev)
            && !(c == '\n' || c == '\t' || (c == '\r' && s[i + 1..].starts_with('\n')))
    };
    let mut prev = None;
    let clean = s.char_indices().all(|(i, c)| {
        let ok = !unsafe_at(i, c, prev);
        prev = Some(c);
        ok
    });
    if clean {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut prev = None;
    for (i, c) in s.char_indices() {
        if unsafe_at(i, c, prev) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    Cow::Owned(out)
}

/// The catalog form of a description: whitespace runs (newlines included) collapsed to one
/// space, [`disguising`] characters escaped, and cut to at most `max_chars` characters (an
/// escape is never cut in two; a cut text ends in `…`). Also returns whether it was cut.
pub fn catalog_line(s: &str, max_chars: usize) -> (String, bool) {
    if already_a_line(s, max_chars) {
        return (s.to_owned(), false); // the usual case: one pass, one copy
    }
    let mut out = String::with_capacity(s.len().min(max_chars * 4) + 8);
    // After each piece (a character or one escape): where it ends, and characters so far.
    let mut ends: Vec<(usize, usize)> = Vec::new();
    let mut chars = 0;
    let mut prev = None;
    for (n, word) in s.split_whitespace().enumerate() {
        let space = (n > 0).then_some(' ');
        for c in space.into_iter().chain(word.chars()) {
            let before = out.len();
            if c != ' ' && disguising(c, prev) {
                push_escape(&mut out, c);
            } else {
                out.push(c);
            }
            chars += out[before..].chars().count();
            ends.push((out.len(), chars));
            prev = Some(c);
        }
        if chars > max_chars {
            break; // the rest would be cut anyway
        }
    }
    if chars <= max_chars {
        return (out, false);
    }
    // Whole pieces up to one character short of the cap, then the ellipsis.
    let keep = ends
        .iter()
        .take_while(|(_, n)| *n < max_chars)
        .last()
        .map_or(0, |(end, _)| *end);
    out.truncate(keep);
    out.push('…');
    (out, true)
}

/// True when `s` is its own catalog line: single spaces between words, nothing to escape, at
/// most `max_chars` characters.
fn already_a_line(s: &str, max_chars: usize) -> bool {
    let mut prev: Option<char> = None;
    let mut chars = 0;
    for c in s.chars() {
        let spaced = c.is_whitespace() && (c != ' ' || prev.is_none_or(char::is_whitespace));
        if spaced || disguising(c, prev) {
            return false;
        }
        chars += 1;
        prev = Some(c);
    }
    chars <= max_chars && !prev.is_some_and(char::is_whitespace)
}

/// The visible escape of `c`, in the form [`guild_core::text`] uses.
fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    // Writing to a String cannot fail.
    let _ = match c {
        '\n' => write!(out, "\\n"),
        '\r' => write!(out, "\\r"),
        '\t' => write!(out, "\\t"),
        c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_bidi_and_invisible_format_characters() {
        let cases: &[(&str, &str)] = &[
            ("plain — 技能\n\ttext", "plain — 技能\n\ttext"),
            ("a\x1b[31mb\x07c\0d", "a\\x1b[31mb\\x07c\\x00d"),
            ("admin\u{202e}txt.exe", "admin\\u{202e}txt.exe"),
            ("x\u{2066}y\u{2069}", "x\\u{2066}y\\u{2069}"),
            ("my\u{200b}skill", "my\\u{200b}skill"),
            ("a\u{200d}b", "a\\u{200d}b"),
            ("\u{feff}start", "\\u{feff}start"),
            ("a\u{9b}b\u{7f}", "a\\u{9b}b\\x7f"),
            ("line\r\nnext\rover", "line\r\nnext\\rover"),
            // A joiner after an emoji or in Persian text joins something: kept.
            ("👩\u{200d}💻", "👩\u{200d}💻"),
            ("می\u{200c}خواهم", "می\u{200c}خواهم"),
        ];
        for (input, want) in cases {
            assert_eq!(neutralize(input), *want, "neutralize({input:?})");
        }
        assert!(matches!(neutralize("clean\ntext"), Cow::Borrowed(_)));
    }

    /// Everything the terminal escaper escapes, this escapes too.
    #[test]
    fn covers_every_character_the_terminal_escaper_does() {
        for c in (0..0x3000u32).filter_map(char::from_u32) {
            let s = format!("a{c}");
            if guild_core::text::one_line(&s) != s {
                assert!(
                    disguising(c, Some('a')),
                    "U+{:04X} is not neutralized",
                    c as u32
                );
            }
        }
    }

    #[test]
    fn strict_finds_the_first_disguising_character() {
        assert_eq!(first_disguising("fine — 技能 👩\u{200d}💻", false), None);
        assert_eq!(first_disguising("two\nlines", true), None);
        assert!(first_disguising("two\nlines", false).is_some());
        assert_eq!(first_disguising("crlf\r\nend", true), None);
        assert!(first_disguising("done\rFAKE", true).is_some());
        let found = first_disguising("ab\u{202e}c", true).expect("found");
        assert!(found.contains("U+202E at character 3"), "{found}");
    }

    #[test]
    fn a_catalog_line_is_one_line_neutral_and_capped() {
        assert_eq!(
            catalog_line("  Use it\n when\tneeded. ", 1024),
            ("Use it when needed.".to_owned(), false)
        );
        assert_eq!(
            catalog_line("bell\u{7} here", 1024),
            ("bell\\x07 here".to_owned(), false)
        );
        let long = "x".repeat(16_000);
        let (line, cut) = catalog_line(&long, 1024);
        assert!(cut);
        assert_eq!(line.chars().count(), 1024);
        assert!(line.ends_with('…'));
        // Exactly at the cap: not cut.
        let (line, cut) = catalog_line(&"y".repeat(1024), 1024);
        assert!(!cut);
        assert_eq!(line.chars().count(), 1024);
        // An escape near the cap is kept whole or left out, never cut in two.
        let tricky = format!("{}\u{202e}{}", "z".repeat(1020), "z".repeat(10));
        let (line, cut) = catalog_line(&tricky, 1024);
        assert!(cut);
        assert!(line.chars().count() <= 1024);
        assert!(!line.contains("\\u{20"), "{line}");
    }
}
