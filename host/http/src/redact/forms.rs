//! The forms in which a secret's value is searched: the value itself (read through every
//! spelling the [matcher](super::matcher) accepts) and the fragments of it that survive inside
//! a longer base64 or hex text.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;

/// How a needle is compared with the text it is searched in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fold {
    /// ASCII letters match in either case: an upstream that upper-cases an echo still hands
    /// the value over (hex digits, too, come in both cases).
    AnyCase,
    /// Bytes match exactly: base64 is case-sensitive, and a case-folded base64 fragment would
    /// match unrelated text.
    Exact,
}

/// One byte string to search for, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Form {
    pub(super) bytes: Box<[u8]>,
    pub(super) fold: Fold,
    /// Line breaks between its characters are skipped (base64 and hex are often wrapped).
    pub(super) wrapped: bool,
}

/// Every form of `value`: itself, the base64 fragments (standard and URL-safe alphabets, at
/// each of the three byte offsets it can start at inside a longer encoded text) and lower-case
/// hex.
pub(super) fn forms_of(value: &[u8]) -> Vec<Form> {
    let mut forms = vec![Form {
        bytes: value.into(),
        fold: Fold::AnyCase,
        wrapped: false,
    }];
    for fragment in base64_fragments(value) {
        let url_safe: Vec<u8> = fragment
            .iter()
            .map(|&b| match b {
                b'+' => b'-',
                b'/' => b'_',
                b => b,
            })
            .collect();
        for bytes in [fragment, url_safe] {
            if !forms.iter().any(|f| *f.bytes == *bytes) {
                forms.push(Form {
                    bytes: bytes.into(),
                    fold: Fold::Exact,
                    wrapped: true,
                });
            }
        }
    }
    forms.push(Form {
        bytes: hex::encode(value).into_bytes().into(),
        fold: Fold::AnyCase,
        wrapped: true,
    });
    forms
}

/// The base64 characters that depend on `value` alone when it starts 0, 1 or 2 bytes into the
/// encoded text: a 6-bit character is kept only if all its bits are the value's. Whatever
/// surrounds the value (`user:` before a password in a Basic header, a JSON document around a
/// token), one of the three fragments appears in the encoding.
fn base64_fragments(value: &[u8]) -> Vec<Vec<u8>> {
    let n = value.len();
    (0..3)
        .filter_map(|k| {
            let mut padded = vec![0u8; k];
            padded.extend_from_slice(value);
            let encoded = STANDARD_NO_PAD.encode(&padded).into_bytes();
            let first = (8 * k).div_ceil(6);
            let end = (8 * (k + n)) / 6;
            encoded.get(first..end).map(<[u8]>::to_vec)
        })
        .filter(|f| !f.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offset_fragment_appears_in_an_encoding_around_the_value() {
        let value = b"s3cret-token-value";
        let fragments = base64_fragments(value);
        assert_eq!(fragments.len(), 3);
        for prefix in ["", "u:", "us:", "user:", "{\"token\":\""] {
            let text = [prefix.as_bytes(), value, b"\"}"].concat();
            let encoded = base64::engine::general_purpose::STANDARD.encode(&text);
            assert!(
                fragments
                    .iter()
                    .any(|f| encoded.contains(std::str::from_utf8(f).expect("ascii"))),
                "{prefix}: {encoded}"
            );
        }
    }
}
