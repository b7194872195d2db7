//! Refusing a secret's value on its way to a host it is not granted for.
//!
//! The host attaches a secret only to the hosts the operator names, and the guest never reads
//! it through any API. But a host that echoes what it receives (an echo endpoint, an error page
//! quoting the `Authorization` header) hands the value to the guest, which could then send it
//! to another granted host. Before every hop, the URL (as sent and percent-decoded), the
//! guest's header names and values and the body (as sent and percent-decoded) are searched for the value
//! of every secret that does *not* apply to the hop's origin; a match refuses the request with
//! [`DenyReason::SecretReflected`], naming the secret and where it was found, never the value.
//!
//! What is searched: the secret's whole header value (`Bearer abc…`) and, when that value has
//! the `scheme credentials` shape, the credentials alone. Values shorter than
//! [`MIN_SEARCHED_BYTES`] are not searched: they would refuse ordinary traffic and are too short
//! to be a credential worth the name.
//!
//! What remains possible, by design of a substring check: a guest that has read the value can
//! still send it *transformed* — base64 or hex encoded, reversed, case-changed, split over
//! several requests or headers, compressed, encrypted, or leaked through timing or the choice of
//! URL paths one bit at a time. The real boundary is upstream: grant secrets only to hosts that
//! do not reflect them, and do not grant a plugin holding a secret a host that accepts
//! arbitrary data.

use std::borrow::Cow;

use url::Url;

use super::headers;
use super::policy::{DenyReason, EgressPolicy};

/// Secret values (or credentials parts) shorter than this are not searched for.
pub const MIN_SEARCHED_BYTES: usize = 8;

/// The byte strings that betray `value` (a secret's final header value): the value itself and,
/// for `scheme credentials` values (`Bearer abc`, `token abc`), the credentials alone.
pub(crate) fn needles(value: &str) -> Vec<Box<[u8]>> {
    let mut found: Vec<&str> = vec![value.trim()];
    if let Some((scheme, rest)) = value.trim().split_once(char::is_whitespace) {
        let is_token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if !scheme.is_empty() && scheme.chars().all(is_token) {
            found.push(rest.trim());
        }
    }
    found
        .into_iter()
        .filter(|n| n.len() >= MIN_SEARCHED_BYTES)
        .map(|n| n.as_bytes().into())
        .collect()
}

/// Where a secret's value was found, for the denial message.
fn place_in(
    needle: &[u8],
    url: &Url,
    headers: &[(String, String)],
    body: &[u8],
) -> Option<Cow<'static, str>> {
    if contains_either(url.as_str().as_bytes(), needle) {
        return Some("the URL".into());
    }
    // A name that carries the value is not repeated: denials end up in traces.
    if headers
        .iter()
        .any(|(name, _)| contains_either(name.as_bytes(), needle))
    {
        return Some("a header name".into());
    }
    if let Some((name, _)) = headers
        .iter()
        .find(|(_, value)| contains_either(value.as_bytes(), needle))
    {
        return Some(format!("header `{}`", headers::shorten(name)).into());
    }
    if contains_either(body, needle) {
        return Some("the body".into());
    }
    None
}

/// Refuses the hop when the URL, a guest header or the body carries the value of a secret that
/// is not attached to requests for `url`.
pub(crate) fn check(
    policy: &EgressPolicy,
    url: &Url,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<(), DenyReason> {
    for secret in policy.secrets.iter().filter(|s| !s.applies_to(url)) {
        for needle in secret.needles() {
            if let Some(place) = place_in(needle, url, headers, body) {
                return Err(DenyReason::SecretReflected {
                    secret: secret.name().to_owned(),
                    place: place.into_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Whether `haystack`, as it is or percent-decoded, contains `needle`.
fn contains_either(haystack: &[u8], needle: &[u8]) -> bool {
    contains(haystack, needle)
        || (haystack.contains(&b'%') && contains(&percent_decode(haystack), needle))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// `%XX` sequences decoded (and `+` read as a space); anything else is kept as it is.
fn percent_decode(text: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let decoded = match (text[i], text.get(i + 1), text.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) => hex(h).zip(hex(l)).map(|(h, l)| (h * 16 + l) as u8),
            _ => None,
        };
        match decoded {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(if text[i] == b'+' { b' ' } else { text[i] });
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AllowList, SecretHeader};

    fn policy() -> EgressPolicy {
        let mut p = EgressPolicy::deny_all("kb");
        let hosts = AllowList::parse(["https://api.example.com"]).expect("hosts");
        let secret = SecretHeader::new("TOKEN", "Authorization", "Bearer tok/en+12345", hosts);
        p.secrets.push(secret.expect("valid"));
        p
    }

    fn url(text: &str) -> Url {
        Url::parse(text).expect("test URL")
    }

    #[test]
    fn needles_are_the_value_and_its_credentials() {
        let got: Vec<Vec<u8>> = needles("Bearer abcdefgh1")
            .into_iter()
            .map(Into::into)
            .collect();
        assert_eq!(got, [b"Bearer abcdefgh1".to_vec(), b"abcdefgh1".to_vec()]);
        assert_eq!(needles("plain-api-key-1").len(), 1);
        assert!(needles("short").is_empty());
        assert_eq!(
            needles("Bearer x").len(),
            1,
            "the short credentials alone are not searched"
        );
    }

    #[test]
    fn the_value_is_refused_elsewhere_and_allowed_at_home() {
        let p = policy();
        let other = url("https://paste.example.net/");
        let none: &[(String, String)] = &[];
        let header = [("X-Note".to_owned(), "see tok/en+12345".to_owned())];
        // (URL, guest headers, body, where the value is reported)
        type Case<'a> = (Url, &'a [(String, String)], &'a [u8], &'a str);
        let cases: [Case<'_>; 5] = [
            (
                url("https://paste.example.net/?q=tok/en+12345"),
                none,
                b"",
                "the URL",
            ),
            (
                url("https://paste.example.net/?q=tok%2Fen%2B12345"),
                none,
                b"",
                "the URL",
            ),
            (other.clone(), &header, b"", "header `X-Note`"),
            (other.clone(), none, b"a=Bearer tok/en+12345", "the body"),
            (other.clone(), none, b"a=tok%2Fen%2B12345", "the body"),
        ];
        for (u, headers, body, place) in cases {
            let got = check(&p, &u, headers, body);
            let want = DenyReason::SecretReflected {
                secret: "TOKEN".into(),
                place: place.into(),
            };
            assert_eq!(got, Err(want), "{u} {place}");
        }
        let named = [("x-tok/en+12345".to_owned(), "1".to_owned())];
        let got = check(&p, &other, &named, b"").expect_err("in a name");
        assert!(!got.to_string().contains("12345"), "{got}");
        assert!(
            got.to_string().starts_with("a header name carries"),
            "{got}"
        );
        assert_eq!(check(&p, &other, &header[..0], b"tok/en+1234"), Ok(()));
        let home = url("https://api.example.com/echo?q=tok/en+12345");
        assert_eq!(check(&p, &home, &header, b"tok/en+12345"), Ok(()));
        let shown = check(&p, &other, &header, b"")
            .expect_err("found")
            .to_string();
        assert!(
            shown.contains("TOKEN") && !shown.contains("12345"),
            "{shown}"
        );
    }
}
