//! Host names normalised once, before any decision is taken on them.
//!
//! The `url` crate already lower-cases names, maps them through IDNA (so `ＬＯＣＡＬＨＯＳＴ`
//! and `bücher.example` arrive as `localhost` and `xn--bcher-kva.example`) and reads every IPv4
//! spelling (`0x7f.1`, `2130706433`, `127.0.0.1.`) as an address. What it keeps is the DNS root
//! dot: `localhost.` and `example.com.` name the same hosts as `localhost` and `example.com`, but
//! compare unequal as text. [`normalize`] removes it, so the allow-lists, the special-address
//! rule, the secrets' host lists, the DNS pin and the denial messages all see one spelling.
//! A name with an empty label (`localhost..`, `.example.com`) is refused rather than guessed at.

use url::{Host, Url};

use super::address::classify;

/// Why a host name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("host `{host}` has an empty label; write it without extra dots")]
pub struct HostNameError {
    /// The host as it appeared in the URL.
    pub host: String,
}

/// `url` with its host in the one spelling every decision uses: no trailing root dot (the rest
/// was normalised by the URL parser). IP-literal hosts are returned unchanged.
pub fn normalize(mut url: Url) -> Result<Url, HostNameError> {
    let Some(Host::Domain(domain)) = url.host() else {
        return Ok(url);
    };
    let domain = domain.to_owned();
    let trimmed = without_root_dot(&domain);
    if trimmed.is_empty() || trimmed.split('.').any(str::is_empty) {
        return Err(HostNameError { host: domain });
    }
    if trimmed.len() != domain.len() {
        // Re-parsing may read the name as an address; the parser already read `1.2.3.4.` as
        // one, so this is the same reading without the dot.
        if url.set_host(Some(trimmed)).is_err() {
            return Err(HostNameError { host: domain });
        }
    }
    Ok(url)
}

/// `host` without one trailing root dot.
pub(crate) fn without_root_dot(host: &str) -> &str {
    host.strip_suffix('.').unwrap_or(host)
}

/// Whether the (normalised) host of `url` names a special address by itself: an IP literal
/// that is not public, or `localhost` and its subdomains (RFC 6761 reserves them for loopback).
/// A host with no name counts as special.
pub fn names_special_host(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => classify(ip.into()).is_special(),
        Some(Host::Ipv6(ip)) => classify(ip.into()).is_special(),
        Some(Host::Domain(d)) => {
            let d = without_root_dot(d);
            d == "localhost" || d.ends_with(".localhost")
        }
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> Result<String, HostNameError> {
        let url = Url::parse(text).expect("test URL parses");
        normalize(url).map(String::from)
    }

    #[test]
    fn one_spelling_per_host() {
        let table = [
            ("http://localhost.:8080/x", "http://localhost:8080/x"),
            ("http://LOCALHOST./", "http://localhost/"),
            ("http://ＬＯＣＡＬＨＯＳＴ./", "http://localhost/"),
            ("https://Example.COM./a?b", "https://example.com/a?b"),
            ("https://bücher.example./", "https://xn--bcher-kva.example/"),
            ("http://127.0.0.1./", "http://127.0.0.1/"),
            ("http://0x7f.1/", "http://127.0.0.1/"),
            ("http://[::1]:9/", "http://[::1]:9/"),
            ("https://api.example.com/", "https://api.example.com/"),
        ];
        for (given, want) in table {
            assert_eq!(norm(given).as_deref(), Ok(want), "{given}");
        }
    }

    #[test]
    fn empty_labels_are_refused() {
        for given in ["http://localhost../", "http://a..b.example/"] {
            let err = norm(given).expect_err(given);
            assert!(err.to_string().contains("empty label"), "{err}");
        }
    }

    #[test]
    fn special_hosts_are_named_in_any_spelling() {
        for (given, special) in [
            ("http://localhost./", true),
            ("http://LocalHost/", true),
            ("http://api.localhost./", true),
            ("http://127.0.0.1./", true),
            ("http://[::ffff:127.0.0.1]/", true),
            ("http://10.1.2.3/", true),
            ("http://example.com./", false),
            ("http://8.8.8.8/", false),
            ("http://notlocalhost/", false),
        ] {
            let url = Url::parse(given).expect("test URL parses");
            assert_eq!(names_special_host(&url), special, "{given}");
            let url = normalize(url).expect("normalises");
            assert_eq!(names_special_host(&url), special, "{given} normalised");
        }
    }
}
