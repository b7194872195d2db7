//! Finding one [`Form`] in a text whatever spelling each of its bytes takes there.
//!
//! A byte of the form matches the text's byte itself (either case for [`Fold::AnyCase`]) or
//! any escape that decodes to it: percent-encoding (`%2F`, `%2f`, `+` for a space), JSON and
//! JavaScript escapes (`\/`, `\"`, `\\`, `\n`…, `\u002F`, `\x2F`) and HTML character
//! references (`&#47;`, `&#x2F;`, `&amp;`…), and each of those escaped once more (`%252F`,
//! `\\u002F` — JSON inside JSON). Spellings may be mixed within one match, as a
//! partly-escaping serialiser mixes them. Because a byte can match both literally and as the
//! start of an escape (`\` in a text that is not JSON), matching follows every reading at once
//! (a small set of positions, not backtracking), so a hostile text cannot make it slow.

use super::forms::{Fold, Form};

/// Readings followed at once; more than a few never arise (each byte has at most three).
const MAX_READINGS: usize = 8;

/// Longest text one byte of a form can take (`\\\\\\\\u002F`, `&#x0002F;`; a longer
/// reference is not read); a wrapped form's line breaks count on top.
const MAX_SPELLING: usize = 10;
/// Backslashes read as one (an escape escaped again, up to three times: `\\\\u002F`).
const MAX_BACKSLASHES: usize = 4;
/// The most line-break bytes skipped before one byte of a wrapped form.
const MAX_BREAK: usize = 4;

/// The bytes an escape starts with.
pub(super) const ESCAPE_STARTS: &[u8] = b"%+\\&";

/// The bytes the text at `start` can stand for: itself and what an escape there decodes to.
pub(super) fn first_bytes(text: &[u8], start: usize) -> [Option<u8>; 3] {
    let byte = text[start];
    if !ESCAPE_STARTS.contains(&byte) {
        return [Some(byte), None, None];
    }
    let [a, b] = decode_escapes(&text[start..]);
    [Some(byte), a.map(|(b, _)| b), b.map(|(b, _)| b)]
}

/// Whether a match of `form` can start where the text stands for `first` ([`first_bytes`]):
/// the cheap test before [`match_at`].
pub(super) fn can_start(form: &Form, first: &[Option<u8>; 3]) -> bool {
    first
        .iter()
        .flatten()
        .any(|&b| same(b, form.bytes[0], form.fold))
}

/// The end of `form` matched at `start` (the longest reading), or `None`.
pub(super) fn match_at(text: &[u8], start: usize, form: &Form) -> Option<usize> {
    let mut current = Readings::one(start);
    for (k, &want) in form.bytes.iter().enumerate() {
        let mut next = Readings::default();
        for &at in current.as_slice() {
            let at = if k > 0 && form.wrapped {
                skip_breaks(text, at)
            } else {
                at
            };
            let Some(&byte) = text.get(at) else {
                continue;
            };
            if same(byte, want, form.fold) {
                next.push(at + 1);
            }
            for (decoded, len) in decode_escapes(&text[at..]).into_iter().flatten() {
                if same(decoded, want, form.fold) {
                    next.push(at + len);
                }
            }
        }
        if next.len == 0 {
            return None;
        }
        current = next;
    }
    current.as_slice().iter().copied().max()
}

/// The most bytes of text a match of a form of `len` bytes can cover.
pub(super) fn max_span(len: usize) -> usize {
    len * (MAX_SPELLING + MAX_BREAK)
}

fn same(byte: u8, want: u8, fold: Fold) -> bool {
    byte == want || (fold == Fold::AnyCase && byte.eq_ignore_ascii_case(&want))
}

/// Line breaks between the characters of a wrapped base64 or hex text, raw or JSON-escaped.
fn skip_breaks(text: &[u8], mut at: usize) -> usize {
    let limit = at + MAX_BREAK;
    while at < limit {
        match text.get(at..) {
            Some([b'\r' | b'\n', ..]) => at += 1,
            Some([b'\\', b'r' | b'n', ..]) => at += 2,
            _ => break,
        }
    }
    at
}

/// The bytes an escape at the start of `text` may stand for, with the escape's length: once
/// escaped, and escaped twice (`%252F` is `%2F` read once and `/` read twice).
fn decode_escapes(text: &[u8]) -> [Option<(u8, usize)>; 2] {
    match text {
        [b'%', rest @ ..] => {
            let twice = match rest {
                [b'2', b'5', h, l, ..] => hex2(*h, *l).map(|b| (b, 5)),
                _ => None,
            };
            let once = match rest {
                [h, l, ..] => hex2(*h, *l).map(|b| (b, 3)),
                _ => None,
            };
            [once, twice]
        }
        [b'+', ..] => [Some((b' ', 1)), None],
        [b'\\', rest @ ..] => {
            let once = backslash(rest).map(|(b, len)| (b, len + 1));
            let slashes = text
                .iter()
                .take(MAX_BACKSLASHES)
                .take_while(|&&b| b == b'\\')
                .count();
            let more = (slashes > 1)
                .then(|| backslash(&text[slashes..]).map(|(b, len)| (b, len + slashes)))
                .flatten();
            [once, more]
        }
        [b'&', rest @ ..] => [reference(rest).map(|(b, len)| (b, len + 1)), None],
        _ => [None, None],
    }
}

/// JSON and JavaScript escapes after the backslash.
fn backslash(rest: &[u8]) -> Option<(u8, usize)> {
    match rest {
        [b'u', a, b, c, d, ..] => {
            let code = u16::from(hex2(*a, *b)?) << 8 | u16::from(hex2(*c, *d)?);
            // A `\u` escape names a character, not a byte: only ASCII is one byte of UTF-8.
            u8::try_from(code).ok().filter(u8::is_ascii).map(|b| (b, 5))
        }
        [b'x', h, l, ..] => Some((hex2(*h, *l)?, 3)),
        [c, ..] => {
            let byte = match c {
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'/' | b'"' | b'\\' | b'\'' => *c,
                _ => return None,
            };
            Some((byte, 1))
        }
        [] => None,
    }
}

/// HTML character references after the ampersand: `#47;`, `#x2F;`, and the five XML names.
fn reference(rest: &[u8]) -> Option<(u8, usize)> {
    const NAMED: [(&[u8], u8); 5] = [
        (b"amp;", b'&'),
        (b"lt;", b'<'),
        (b"gt;", b'>'),
        (b"quot;", b'"'),
        (b"apos;", b'\''),
    ];
    if let Some((name, byte)) = NAMED.iter().find(|(name, _)| rest.starts_with(name)) {
        return Some((*byte, name.len()));
    }
    let (radix, digits_from) = match rest {
        [b'#', b'x' | b'X', ..] => (16, 2),
        [b'#', ..] => (10, 1),
        _ => return None,
    };
    let end = rest
        .iter()
        .take(MAX_SPELLING - 2)
        .position(|&b| b == b';')
        .filter(|&end| end > digits_from)?;
    let digits = std::str::from_utf8(&rest[digits_from..end]).ok()?;
    let code = u32::from_str_radix(digits, radix).ok()?;
    u8::try_from(code)
        .ok()
        .filter(u8::is_ascii)
        .map(|b| (b, end + 1))
}

fn hex2(high: u8, low: u8) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16);
    Some((digit(high)? * 16 + digit(low)?) as u8)
}

/// A small set of text positions.
#[derive(Default)]
struct Readings {
    at: [usize; MAX_READINGS],
    len: usize,
}

impl Readings {
    fn one(at: usize) -> Self {
        let mut r = Self::default();
        r.push(at);
        r
    }

    fn push(&mut self, at: usize) {
        if !self.as_slice().contains(&at) && self.len < MAX_READINGS {
            self.at[self.len] = at;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[usize] {
        &self.at[..self.len]
    }
}
