//! Building the header map for one hop from guest-supplied headers and the host's secrets.
//!
//! Headers that describe the connection or the framing are the host's business, so guests
//! cannot set them: they are dropped (and traced), not forwarded. The map is rebuilt from the
//! guest's list on every redirect hop, so a secret attached for one host never travels on to
//! the next; and when a redirect changes origin, the guest's own credentials (and any header
//! named like a secret's) are dropped from the list for good, as browsers and curl do.

use reqwest::header::{ACCEPT_ENCODING, HeaderMap, HeaderName, HeaderValue};

use super::client::HttpLimits;
use super::error::HttpError;
use super::policy::SecretHeader;

/// Hop-by-hop and framing headers a guest may not set (besides any `proxy-*`).
const FORBIDDEN: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "expect",
];

/// Headers that carry credentials or session state (besides any secret's header).
const CREDENTIALS: &[&str] = &["authorization", "proxy-authorization", "cookie", "cookie2"];

/// Checks `count` headers (name, value) against the header caps of `limits`; `side` says whose
/// headers they are (`request`, `response`). Called before any header map is built, so a huge
/// list costs one pass and no allocation.
pub(crate) fn check_caps<'a>(
    count: usize,
    headers: impl Iterator<Item = (&'a str, &'a [u8])>,
    limits: &HttpLimits,
    side: &str,
) -> Result<(), HttpError> {
    if count > limits.max_headers {
        return Err(HttpError::Limit(format!(
            "{side} has {count} headers; at most {} are allowed",
            limits.max_headers
        )));
    }
    let mut total = 0usize;
    for (name, value) in headers {
        if value.len() > limits.max_header_value {
            return Err(HttpError::Limit(format!(
                "{side} header `{}` is {} bytes; at most {} bytes per header value",
                shorten(name),
                value.len(),
                limits.max_header_value
            )));
        }
        total = total.saturating_add(name.len()).saturating_add(value.len());
    }
    if total > limits.max_header_bytes {
        return Err(HttpError::Limit(format!(
            "{side} headers total {total} bytes; at most {} bytes of names and values",
            limits.max_header_bytes
        )));
    }
    Ok(())
}

/// A header name cut for an error message (names are guest-controlled, values never shown).
pub(crate) fn shorten(name: &str) -> String {
    match name.char_indices().nth(64) {
        Some((end, _)) => format!("{}...", &name[..end]),
        None => name.to_owned(),
    }
}

/// Whether a guest may set header `name` (lower-case).
pub(crate) fn guest_may_set(name: &HeaderName) -> bool {
    let name = name.as_str();
    !FORBIDDEN.contains(&name) && !name.starts_with("proxy-")
}

/// Headers a guest may not set on a hop that carries a secret: an answer the host cannot search
/// whole (compressed, or one slice of it per request) would carry an echoed secret past the
/// redactor ([`crate::redact`]). Such a hop asks for `Accept-Encoding: identity` instead.
const UNSEARCHABLE: &[&str] = &["accept-encoding", "range", "if-range"];

/// The headers for one hop: the guest's allowed headers, then each applicable secret replacing
/// any guest header of the same name; with a secret, the body is asked for whole and plain.
pub(crate) fn build<'a>(
    guest: &[(String, String)],
    secrets: impl Iterator<Item = &'a SecretHeader>,
) -> Result<HeaderMap, HttpError> {
    let mut map = HeaderMap::new();
    for (name, value) in guest {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HttpError::InvalidRequest(format!("invalid header name `{name}`")))?;
        if !guest_may_set(&header) {
            tracing::debug!(header = %header, "dropped a header the host controls");
            continue;
        }
        let value = HeaderValue::from_str(value)
            .map_err(|_| HttpError::InvalidRequest(format!("invalid value for header `{name}`")))?;
        map.append(header, value);
    }
    let mut attached = false;
    for secret in secrets {
        tracing::debug!(secret = secret.name(), header = %secret.header(), "attached a secret");
        map.insert(secret.header().clone(), secret.value().clone());
        attached = true;
    }
    if attached {
        for name in UNSEARCHABLE {
            map.remove(*name);
        }
        map.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    }
    Ok(map)
}

/// The guest's headers without credentials, for a redirect that leaves the origin: the
/// [`CREDENTIALS`] and every header named like one of `secret_headers`.
pub(crate) fn without_credentials<'a>(
    guest: &[(String, String)],
    secret_headers: impl Iterator<Item = &'a HeaderName>,
) -> Vec<(String, String)> {
    let secret_headers: Vec<&HeaderName> = secret_headers.collect();
    let carries_credentials = |name: &str| {
        CREDENTIALS.iter().any(|c| name.eq_ignore_ascii_case(c))
            || secret_headers
                .iter()
                .any(|h| name.eq_ignore_ascii_case(h.as_str()))
    };
    guest
        .iter()
        .filter(|(name, _)| {
            let drop = carries_credentials(name);
            if drop {
                tracing::debug!(header = %name, "dropped a credential on an origin change");
            }
            !drop
        })
        .cloned()
        .collect()
}

/// Drops the guest's body-describing headers when a redirect turns a request into a `GET`.
pub(crate) fn without_body_headers(guest: &[(String, String)]) -> Vec<(String, String)> {
    guest
        .iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case("content-type"))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AllowList;

    fn guest(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn forbidden_headers_are_dropped_and_others_kept() {
        let list = guest(&[
            ("Host", "evil.example"),
            ("Content-Length", "5"),
            ("Transfer-Encoding", "chunked"),
            ("Connection", "close"),
            ("Keep-Alive", "1"),
            ("Proxy-Authorization", "Basic x"),
            ("Proxy-Connection", "keep-alive"),
            ("TE", "trailers"),
            ("Upgrade", "h2c"),
            ("Accept", "application/json"),
            ("X-Custom", "a"),
            ("x-custom", "b"),
        ]);
        let map = build(&list, std::iter::empty()).expect("valid");
        assert_eq!(map.len(), 3, "{map:?}");
        assert_eq!(map.get_all("x-custom").iter().count(), 2);
        assert!(map.get("accept").is_some());
        assert!(map.get("host").is_none());
    }

    #[test]
    fn invalid_names_and_values_are_refused_without_echoing_values() {
        let err = build(&guest(&[("bad name", "v")]), std::iter::empty()).expect_err("name");
        assert!(matches!(err, HttpError::InvalidRequest(m) if m.contains("bad name")));
        let err = build(&guest(&[("x", "a\r\nb: secret")]), std::iter::empty()).expect_err("v");
        assert!(matches!(err, HttpError::InvalidRequest(m) if !m.contains("secret")));
    }

    #[test]
    fn a_secret_replaces_the_guest_header() {
        let secret = SecretHeader::new(
            "TOKEN",
            "authorization",
            "Bearer host",
            AllowList::default(),
        )
        .expect("valid");
        let list = guest(&[("Authorization", "Bearer guest"), ("authorization", "x")]);
        let map = build(&list, std::iter::once(&secret)).expect("valid");
        let values: Vec<_> = map.get_all("authorization").iter().collect();
        assert_eq!(values, ["Bearer host"]);
        assert!(values[0].is_sensitive());
    }

    #[test]
    fn credentials_and_secret_named_headers_are_dropped_on_origin_change() {
        let list = guest(&[
            ("Authorization", "Bearer g"),
            ("COOKIE", "a=1"),
            ("Cookie2", "b"),
            ("X-Api-Key", "k"),
            ("Accept", "*/*"),
        ]);
        let secret = HeaderName::from_static("x-api-key");
        let kept = without_credentials(&list, std::iter::once(&secret));
        assert_eq!(kept, guest(&[("Accept", "*/*")]));
        let kept = without_credentials(&list, std::iter::empty());
        assert_eq!(kept, guest(&[("X-Api-Key", "k"), ("Accept", "*/*")]));
    }

    #[test]
    fn header_caps_hold_at_the_boundary() {
        let limits = HttpLimits {
            max_headers: 3,
            max_header_value: 8,
            max_header_bytes: 20,
            ..HttpLimits::default()
        };
        let check = |pairs: &[(&str, &str)]| {
            let it = pairs.iter().map(|(n, v)| (*n, v.as_bytes()));
            check_caps(pairs.len(), it, &limits, "request")
        };
        assert_eq!(check(&[("a", "1"), ("b", "2"), ("c", "3")]), Ok(()));
        let err = check(&[("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")]).expect_err("count");
        assert!(err.to_string().contains("4 headers; at most 3"), "{err}");
        assert_eq!(check(&[("a", "12345678")]), Ok(()));
        let err = check(&[("a", "123456789")]).expect_err("value");
        assert!(err.to_string().contains("`a` is 9 bytes"), "{err}");
        assert!(!err.to_string().contains("123456789"), "{err}");
        assert_eq!(check(&[("ab", "12345678"), ("cd", "12345678")]), Ok(()));
        let err = check(&[("ab", "12345678"), ("cde", "12345678")]).expect_err("total");
        assert!(err.to_string().contains("total 21 bytes"), "{err}");
        assert!(matches!(err, HttpError::Limit(_)));
    }

    #[test]
    fn content_type_is_dropped_when_the_body_is() {
        let list = guest(&[("Content-Type", "application/json"), ("Accept", "*/*")]);
        assert_eq!(without_body_headers(&list), guest(&[("Accept", "*/*")]));
    }
}
