//! Building the header map for one hop from guest-supplied headers and the host's secrets.
//!
//! Headers that describe the connection or the framing are the host's business, so guests
//! cannot set them: they are dropped (and traced), not forwarded. The map is rebuilt from the
//! guest's list on every redirect hop, so a secret attached for one host never travels on to
//! the next.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

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

/// Whether a guest may set header `name` (lower-case).
pub(crate) fn guest_may_set(name: &HeaderName) -> bool {
    let name = name.as_str();
    !FORBIDDEN.contains(&name) && !name.starts_with("proxy-")
}

/// The headers for one hop: the guest's allowed headers, then each applicable secret replacing
/// any guest header of the same name.
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
    for secret in secrets {
        tracing::debug!(secret = secret.name(), header = %secret.header(), "attached a secret");
        map.insert(secret.header().clone(), secret.value().clone());
    }
    Ok(map)
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
    use crate::http::AllowList;

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
    fn content_type_is_dropped_when_the_body_is() {
        let list = guest(&[("Content-Type", "application/json"), ("Accept", "*/*")]);
        assert_eq!(without_body_headers(&list), guest(&[("Accept", "*/*")]));
    }
}
