//! The frontmatter most skills write, read without a YAML parser: `key: value` lines and one
//! level of `key:` blocks of the same, whose values are plain, `'single'` or `"double"`
//! quoted strings.
//!
//! A cold scan of 10,000 skills spent about a third of its CPU time in libyaml's scanner and
//! in the allocations of serde_yaml_ng's event and value trees. This reader accepts only text
//! whose YAML meaning it is sure of, and then builds exactly the mapping serde_yaml_ng builds.
//! Everything else returns `None` and goes to serde_yaml_ng: comments, blank lines, tabs,
//! carriage returns, block scalars (`|`, `>`), lists, flow collections, anchors, aliases, tags,
//! escapes, continuation lines, plain values YAML reads as something other than a string
//! (numbers, booleans, null), duplicate keys, characters YAML does not allow or reads as line
//! breaks, and every error (so error messages and their line numbers are serde_yaml_ng's). A
//! differential test over the public skills corpus and generated frontmatter holds the two to
//! the same result.

use serde_yaml_ng::{Mapping, Value};

/// Longest key read here (libyaml limits implicit keys to 1,024 characters).
const MAX_KEY: usize = 128;

/// The frontmatter's mapping, or `None` when serde_yaml_ng must read it.
pub(crate) fn mapping(yaml: &str) -> Option<Mapping> {
    if yaml.bytes().any(|b| b == b'\t' || b == b'\r') {
        return None;
    }
    let mut lines = yaml.trim_end_matches('\n').split('\n').peekable();
    let mut entries = Vec::with_capacity(8);
    while let Some(line) = lines.next() {
        let (key, value) = entry(line)?;
        let value = match value {
            Some(text) => {
                if lines.peek().is_some_and(|next| next.starts_with(' ')) {
                    return None; // a continuation line or a nested block under a value
                }
                Value::String(text)
            }
            None => block(&mut lines)?,
        };
        entries.push((key, value));
    }
    to_mapping(entries)
}

/// The indented `key: value` lines under a `key:` line: a mapping of strings, or null when
/// none follows.
fn block<'a>(lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) -> Option<Value> {
    let Some(first) = lines.peek() else {
        return Some(Value::Null);
    };
    let indent = first.bytes().take_while(|&b| b == b' ').count();
    if indent == 0 {
        return Some(Value::Null);
    }
    let mut entries = Vec::new();
    while let Some(line) = lines.next_if(|l| l.starts_with(' ')) {
        let inner = line.get(indent..)?;
        if line[..indent].bytes().any(|b| b != b' ') || inner.starts_with(' ') {
            return None; // a different indentation
        }
        let (key, value) = entry(inner)?;
        entries.push((key, Value::String(value?)));
    }
    to_mapping(entries).map(Value::Mapping)
}

/// The mapping of `entries` in their order; `None` when empty or when a key repeats
/// (serde_yaml_ng reports those). One hash per key: a hostile `SKILL.md` may hold many keys.
fn to_mapping(entries: Vec<(&str, Value)>) -> Option<Mapping> {
    if entries.is_empty() {
        return None;
    }
    let mut map = Mapping::with_capacity(entries.len());
    for (key, value) in entries {
        if map.insert(Value::String(key.to_owned()), value).is_some() {
            return None;
        }
    }
    Some(map)
}

/// One `key: value` or `key:` line: the key, and the value when there is one.
fn entry(line: &str) -> Option<(&str, Option<String>)> {
    let colon = line.find(':')?;
    let (key, rest) = (&line[..colon], &line[colon + 1..]);
    let plain_key = key.len() <= MAX_KEY
        && key.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !reserved(key);
    if !plain_key {
        return None;
    }
    if rest.is_empty() {
        return Some((key, None));
    }
    let text = rest.strip_prefix(' ')?.trim_matches(' ');
    if text.is_empty() {
        return Some((key, None));
    }
    Some((key, Some(scalar(text)?)))
}

/// A value that is a string whatever YAML schema reads it, or `None`.
fn scalar(text: &str) -> Option<String> {
    if !text.chars().all(printable) {
        return None;
    }
    for quote in ['"', '\''] {
        if text.starts_with(quote) {
            let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
            // No escapes (`\` in double quotes, `''` in single): the text is the value.
            let escapes = inner.contains(quote) || (quote == '"' && inner.contains('\\'));
            return (!escapes).then(|| inner.to_owned());
        }
    }
    let first = text.chars().next()?;
    // YAML indicators, and what starts a number, `.inf`/`.nan` or `~` (null).
    let special = "-?:,[]{}#&*!|>'\"%@`+.~";
    if special.contains(first)
        || first.is_ascii_digit()
        || text.ends_with(':')
        || text.contains(": ")
        || text.contains(" #")
        || reserved(text)
    {
        return None;
    }
    Some(text.to_owned())
}

/// Plain words YAML reads as null or a boolean in any schema (1.1's `yes`, `off`… included).
fn reserved(text: &str) -> bool {
    const WORDS: [&str; 11] = [
        "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf",
    ];
    WORDS.iter().any(|w| w.eq_ignore_ascii_case(text))
}

/// Characters YAML allows in a document and does not read as a line break (libyaml also
/// breaks lines at NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR).
fn printable(c: char) -> bool {
    matches!(c, ' '..='~')
        || (c >= '\u{a0}'
            && !matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            ))
}

#[cfg(test)]
#[path = "plain_yaml_tests.rs"]
mod tests;
