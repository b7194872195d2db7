//! Guest-supplied text made safe to show: the one place control characters are escaped.
//!
//! Reports, tool outputs, skill text, plugin descriptions and guest log lines are written by
//! plugins, and a plugin must not be able to drive the operator's terminal (ANSI CSI/OSC
//! sequences can recolour, retitle, hide text or, on some terminals, write files or the
//! clipboard), overwrite what is already shown (CR, backspace), ring the bell, reorder what is
//! read (Unicode bidirectional overrides), or forge a log line of its own (a newline). Every
//! adapter that prints guest text calls [`for_terminal`] (multi-line output) or [`one_line`]
//! (a log line, a table cell); [`json_safe`] does the same for JSON text.
//!
//! Escapes are visible and unambiguous to a reader: `\n`, `\r`, `\t`, `\x1b` for C0 controls
//! and DEL, `\u{9b}` for C1 controls, bidi controls and invisible characters. Text without anything to escape is
//! returned as it was, without copying. [`truncate`] cuts text to a byte budget on a character
//! boundary, for every plugin-supplied value the host stores or prints.

use std::borrow::Cow;

/// `s` with every control character escaped except newline and tab: for output a person reads
/// line by line (a report's details, a skill body).
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// `s` with every control character escaped, newlines and carriage returns included: for one
/// line of a log or a table, which guest text must not be able to end or rewrite.
pub fn one_line(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// A serialised JSON document with the characters JSON allows raw inside strings but a
/// terminal would act on (DEL, C1 controls, bidi controls) written as `\uXXXX` escapes. The
/// result parses to the same value. C0 controls are escaped by every JSON serialiser already.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c != '\n' && c != '\t' && is_unsafe(c) {
            // Outside strings a pretty printer writes only newlines and spaces, so every
            // character found here sits inside a string, where `\uXXXX` means the same.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn escape(s: &str, keep_lines: bool) -> Cow<'_, str> {
    let keep = |c: char| keep_lines && (c == '\n' || c == '\t');
    if !s.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !is_unsafe(c) || keep(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is escaped by this module: C0 controls (newline and tab included; callers
/// decide whether to keep them), DEL, C1 controls, the Unicode bidirectional controls that reorder how a line reads, the line and
/// paragraph separators (a line break to many viewers), and the invisible characters that hide
/// text from a reader while a model still reads it: zero-width space, word joiner and the
/// invisible operators, the byte-order mark, interlinear annotations, and the tag characters
/// (U+E0000–E007F, used to smuggle instructions past a reader). Zero-width (non-)joiners stay:
/// scripts such as Persian and Devanagari, and emoji sequences, need them.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200b}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
}

/// The longest prefix of `s` that is at most `max` bytes and ends on a character boundary.
pub fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hostile inputs and what each function makes of them.
    #[test]
    fn escapes_what_a_terminal_would_act_on() {
        let cases: &[(&str, &str, &str)] = &[
            // (input, for_terminal, one_line)
            ("plain text", "plain text", "plain text"),
            ("a\nb\tc", "a\nb\tc", "a\\nb\\tc"),
            (
                "\x1b[31mred\x1b[0m",
                "\\x1b[31mred\\x1b[0m",
                "\\x1b[31mred\\x1b[0m",
            ),
            (
                "\x1b]0;title\x07",
                "\\x1b]0;title\\x07",
                "\\x1b]0;title\\x07",
            ),
            ("done\rFAKE", "done\\rFAKE", "done\\rFAKE"),
            ("x\u{8}y\u{7f}", "x\\x08y\\x7f", "x\\x08y\\x7f"),
            ("\u{9b}31m", "\\u{9b}31m", "\\u{9b}31m"),
            ("abc\u{202e}fed", "abc\\u{202e}fed", "abc\\u{202e}fed"),
            (
                "ok\n2026-01-01 ERROR forged",
                "ok\n2026-01-01 ERROR forged",
                "ok\\n2026-01-01 ERROR forged",
            ),
            ("héllo — 技能", "héllo — 技能", "héllo — 技能"),
            // Hidden from a reader, read by a model: escaped so both see the same thing.
            (
                "a\u{200b}b\u{feff}",
                "a\\u{200b}b\\u{feff}",
                "a\\u{200b}b\\u{feff}",
            ),
            ("ok\u{2028}forged", "ok\\u{2028}forged", "ok\\u{2028}forged"),
            (
                "hi\u{e0069}\u{e0067}\u{e006e}",
                "hi\\u{e0069}\\u{e0067}\\u{e006e}",
                "hi\\u{e0069}\\u{e0067}\\u{e006e}",
            ),
            // Joiners that scripts and emoji need are text, not tricks.
            (
                "می\u{200c}خواهم 👩\u{200d}💻",
                "می\u{200c}خواهم 👩\u{200d}💻",
                "می\u{200c}خواهم 👩\u{200d}💻",
            ),
        ];
        for (input, terminal, line) in cases {
            assert_eq!(for_terminal(input), *terminal, "for_terminal({input:?})");
            assert_eq!(one_line(input), *line, "one_line({input:?})");
        }
    }

    #[test]
    fn clean_text_is_not_copied() {
        assert!(matches!(for_terminal("fine\n"), Cow::Borrowed(_)));
        assert!(matches!(one_line("fine"), Cow::Borrowed(_)));
        assert!(matches!(json_safe("{\n  \"a\": 1\n}"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_safe_keeps_the_value() {
        let value = serde_json::json!({ "summary": "a\u{9b}31m\u{202e}b\u{7f}", "n": 1 });
        let text = serde_json::to_string_pretty(&value).expect("serialises");
        let safe = json_safe(&text);
        assert!(!safe.chars().any(|c| c != '\n' && is_unsafe(c)), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, value);
    }

    #[test]
    fn truncate_cuts_on_char_boundaries() {
        assert_eq!(super::truncate("héllo", 2), "h");
        assert_eq!(super::truncate("héllo", 3), "hé");
        assert_eq!(super::truncate("ab", 5), "ab");
    }
}
