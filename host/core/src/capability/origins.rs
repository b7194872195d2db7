//! Origin patterns as sets: the intersection of two patterns and whether one covers another.
//!
//! The effective HTTP allow-list of a plugin is built here, once, as the pairwise intersection
//! of what its manifest requests and what the operator grants; the guarded client enforces that
//! list and `guild plugins show` prints it, so the report cannot drift from the enforcement.
//! A secret's requested hosts must be covered by the operator's hosts.

use std::net::IpAddr;

use guild_http::{AllowList, HostMatch, HostPattern, PortMatch};

/// The pattern matching exactly the URLs both `a` and `b` match, if any.
pub(crate) fn intersect(a: &HostPattern, b: &HostPattern) -> Option<HostPattern> {
    if a.scheme() != b.scheme() {
        return None;
    }
    let port = match (a.port(), b.port()) {
        (PortMatch::Any, p) | (p, PortMatch::Any) => p,
        (PortMatch::Exact(x), PortMatch::Exact(y)) if x == y => PortMatch::Exact(x),
        _ => return None,
    };
    let host = match (a.host(), b.host()) {
        (HostMatch::Domain(x), HostMatch::Domain(y)) if x == y => a.host().clone(),
        (HostMatch::Domain(x), HostMatch::Subdomains(s)) if strictly_under(x, s) => {
            a.host().clone()
        }
        (HostMatch::Subdomains(s), HostMatch::Domain(x)) if strictly_under(x, s) => {
            b.host().clone()
        }
        (HostMatch::Subdomains(s), HostMatch::Subdomains(t)) if s == t || strictly_under(s, t) => {
            a.host().clone()
        }
        (HostMatch::Subdomains(s), HostMatch::Subdomains(t)) if strictly_under(t, s) => {
            b.host().clone()
        }
        (HostMatch::Ip(x), HostMatch::Ip(y)) if x == y => a.host().clone(),
        _ => return None,
    };
    HostPattern::parse(&render(a.scheme().as_str(), &host, port)).ok()
}

/// Whether every URL `inner` matches is also matched by `outer`.
pub(crate) fn covers(outer: &HostPattern, inner: &HostPattern) -> bool {
    intersect(outer, inner).as_ref() == Some(inner)
}

/// The patterns a URL must match to pass both lists: every non-empty pairwise intersection,
/// grouped by the `requested` pattern it came from.
pub(crate) fn effective(
    requested: &AllowList,
    granted: &AllowList,
) -> Vec<(HostPattern, Vec<HostPattern>)> {
    requested
        .patterns()
        .iter()
        .map(|r| {
            let mut both: Vec<HostPattern> = Vec::new();
            for g in granted.patterns() {
                if let Some(p) = intersect(r, g)
                    && !both.contains(&p)
                {
                    both.push(p);
                }
            }
            (r.clone(), both)
        })
        .collect()
}

fn strictly_under(name: &str, suffix: &str) -> bool {
    name.len() > suffix.len() + 1
        && name.ends_with(suffix)
        && name[..name.len() - suffix.len()].ends_with('.')
}

fn render(scheme: &str, host: &HostMatch, port: PortMatch) -> String {
    let host = match host {
        HostMatch::Domain(d) => d.clone(),
        HostMatch::Subdomains(s) => format!("*.{s}"),
        HostMatch::Ip(IpAddr::V4(ip)) => ip.to_string(),
        HostMatch::Ip(IpAddr::V6(ip)) => format!("[{ip}]"),
    };
    match port {
        PortMatch::Any => format!("{scheme}://{host}:*"),
        PortMatch::Exact(p) => format!("{scheme}://{host}:{p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> HostPattern {
        HostPattern::parse(s).expect("fixture pattern")
    }

    #[test]
    fn intersections() {
        let cases = [
            (
                "http://127.0.0.1:*",
                "http://127.0.0.1:8080",
                Some("http://127.0.0.1:8080"),
            ),
            ("http://127.0.0.1:8080", "http://127.0.0.1:9090", None),
            ("http://127.0.0.1:*", "https://127.0.0.1:*", None),
            (
                "https://*.example.com",
                "https://api.example.com",
                Some("https://api.example.com"),
            ),
            ("https://*.example.com", "https://example.com", None),
            (
                "https://*.example.com",
                "https://*.a.example.com",
                Some("https://*.a.example.com"),
            ),
            ("https://*.example.com", "https://*.example.org", None),
            ("https://a.example.com", "https://b.example.com", None),
            ("http://[::1]:*", "http://[::1]:80", Some("http://[::1]")),
            ("http://localhost:*", "http://127.0.0.1:*", None),
        ];
        for (a, b, want) in cases {
            let got = intersect(&p(a), &p(b));
            assert_eq!(got, want.map(p), "{a} ∩ {b}");
            assert_eq!(intersect(&p(b), &p(a)), got, "{b} ∩ {a} is not symmetric");
        }
    }

    #[test]
    fn coverage() {
        assert!(covers(
            &p("http://127.0.0.1:*"),
            &p("http://127.0.0.1:8080")
        ));
        assert!(!covers(
            &p("http://127.0.0.1:8080"),
            &p("http://127.0.0.1:*")
        ));
        assert!(covers(
            &p("https://*.example.com"),
            &p("https://api.example.com")
        ));
        assert!(!covers(
            &p("https://api.example.com"),
            &p("https://*.example.com")
        ));
        assert!(!covers(
            &p("https://api.example.com"),
            &p("https://evil.example.org")
        ));
        assert!(covers(
            &p("https://api.example.com"),
            &p("https://api.example.com:443")
        ));
    }
}
