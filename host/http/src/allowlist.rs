//! Spin-style origin patterns (`scheme://host[:port]`) and the allow-lists built from them.
//!
//! Patterns are parsed and normalised once (lower case, IDNA, canonical IP form) when a manifest
//! or a grant is loaded; matching a URL is then a handful of comparisons. A bare `*` host is
//! rejected on purpose: example policies get copied, and one that allows every host must not
//! be one keystroke away.

use std::fmt;
use std::net::IpAddr;

use url::{Host, Url};

use super::hostname::without_root_dot as trim_dot;

/// URL scheme an [`HostPattern`] applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain-text `http`.
    Http,
    /// `https`.
    Https,
}

impl Scheme {
    /// Parses `http` or `https` (case-insensitively); anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        if text.eq_ignore_ascii_case("http") {
            Some(Self::Http)
        } else if text.eq_ignore_ascii_case("https") {
            Some(Self::Https)
        } else {
            None
        }
    }

    /// The scheme as written in a URL.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Https => "https",
        }
    }

    /// The port used when a URL or pattern names none.
    pub fn default_port(self) -> u16 {
        match self {
            Self::Http => 80,
            Self::Https => 443,
        }
    }
}

/// Host part of a [`HostPattern`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostMatch {
    /// Exactly this DNS name (lower case, ASCII, no trailing dot).
    Domain(String),
    /// Any strict subdomain of this suffix: `*.example.com` matches `api.example.com` but not
    /// `example.com` itself.
    Subdomains(String),
    /// Exactly this IP literal.
    Ip(IpAddr),
}

/// Port part of a [`HostPattern`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortMatch {
    /// Exactly this port (the scheme's default when the pattern names none).
    Exact(u16),
    /// Any port (`:*`).
    Any,
}

/// One compiled `scheme://host[:port]` pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPattern {
    scheme: Scheme,
    host: HostMatch,
    port: PortMatch,
}

/// A pattern that could not be parsed; names the pattern and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid http pattern `{pattern}`: {problem}")]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong and how to fix it.
    pub problem: String,
}

impl HostPattern {
    /// Parses `scheme://host[:port]`.
    ///
    /// * scheme: `http` or `https`;
    /// * host: an exact name (`api.example.com`), `*.suffix` (subdomains of `suffix` only),
    ///   an IPv4 literal or a bracketed IPv6 literal; a bare `*` is refused;
    /// * port: omitted (the scheme's default), a number, or `*`;
    /// * no userinfo, path, query or fragment.
    pub fn parse(pattern: &str) -> Result<Self, PatternError> {
        let fail = |problem: String| PatternError {
            pattern: pattern.to_owned(),
            problem,
        };
        if pattern.chars().any(char::is_whitespace) {
            return Err(fail("whitespace is not allowed".into()));
        }
        let (scheme, rest) = pattern.split_once("://").ok_or_else(|| {
            fail("expected `scheme://host[:port]`, e.g. `https://api.example.com`".into())
        })?;
        let scheme = Scheme::parse(scheme)
            .ok_or_else(|| fail(format!("scheme `{scheme}` is not `http` or `https`")))?;
        if rest.contains('@') {
            return Err(fail(
                "userinfo (`user@`) is not allowed in a pattern".into(),
            ));
        }
        if let Some(at) = rest.find(['/', '?', '#', '\\']) {
            return Err(fail(format!(
                "a pattern names an origin only; remove the path/query `{}`",
                &rest[at..]
            )));
        }
        let (host_text, port_text) = split_host_port(rest).map_err(|p| fail(p.into()))?;
        let port = parse_port(port_text, scheme).map_err(fail)?;
        let host = parse_host(host_text).map_err(fail)?;
        Ok(Self { scheme, host, port })
    }

    /// The pattern's scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The pattern's host part.
    pub fn host(&self) -> &HostMatch {
        &self.host
    }

    /// The pattern's port part.
    pub fn port(&self) -> PortMatch {
        self.port
    }

    /// Whether `url`'s scheme, host and (effective) port match this pattern.
    pub fn matches(&self, url: &Url) -> bool {
        if Scheme::parse(url.scheme()) != Some(self.scheme) {
            return false;
        }
        let port_ok = match (self.port, url.port_or_known_default()) {
            (PortMatch::Any, Some(_)) => true,
            (PortMatch::Exact(want), Some(got)) => want == got,
            (_, None) => false,
        };
        port_ok && url.host().is_some_and(|host| self.host_matches(&host))
    }

    fn host_matches(&self, host: &Host<&str>) -> bool {
        match (&self.host, host) {
            (HostMatch::Domain(want), Host::Domain(got)) => want == trim_dot(got),
            (HostMatch::Subdomains(suffix), Host::Domain(got)) => {
                let got = trim_dot(got);
                got.len() > suffix.len() + 1
                    && got.ends_with(suffix.as_str())
                    && got[..got.len() - suffix.len()].ends_with('.')
            }
            (HostMatch::Ip(IpAddr::V4(want)), Host::Ipv4(got)) => want == got,
            (HostMatch::Ip(IpAddr::V6(want)), Host::Ipv6(got)) => want == got,
            _ => false,
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.scheme.as_str())?;
        match &self.host {
            HostMatch::Domain(d) => write!(f, "{d}")?,
            HostMatch::Subdomains(s) => write!(f, "*.{s}")?,
            HostMatch::Ip(IpAddr::V4(ip)) => write!(f, "{ip}")?,
            HostMatch::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
        }
        match self.port {
            PortMatch::Any => write!(f, ":*"),
            PortMatch::Exact(p) if p == self.scheme.default_port() => Ok(()),
            PortMatch::Exact(p) => write!(f, ":{p}"),
        }
    }
}

impl std::str::FromStr for HostPattern {
    type Err = PatternError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn split_host_port(rest: &str) -> Result<(&str, Option<&str>), &'static str> {
    if rest.starts_with('[') {
        let end = rest.find(']').ok_or("unclosed `[` in an IPv6 host")?;
        let (host, after) = rest.split_at(end + 1);
        match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err("unexpected text after the IPv6 host"),
            },
        }
    } else if rest.contains(']') {
        Err("unexpected `]`; IPv6 hosts are written `[::1]`")
    } else {
        Ok(match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        })
    }
}

fn parse_port(text: Option<&str>, scheme: Scheme) -> Result<PortMatch, String> {
    match text {
        None => Ok(PortMatch::Exact(scheme.default_port())),
        Some("*") => Ok(PortMatch::Any),
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => match p.parse() {
            Ok(0) | Err(_) => Err(format!("port `{p}` is not in 1-65535")),
            Ok(port) => Ok(PortMatch::Exact(port)),
        },
        Some(p) => Err(format!("port `{p}` is not a number or `*`")),
    }
}

fn parse_host(text: &str) -> Result<HostMatch, String> {
    if text.is_empty() {
        return Err("missing host".into());
    }
    if text == "*" {
        return Err("a bare `*` host would allow every host; list the hosts, \
                    or use `*.example.com` for subdomains"
            .into());
    }
    if let Some(suffix) = text.strip_prefix("*.") {
        if suffix.contains('*') {
            return Err("`*` may appear only once, as the whole first label".into());
        }
        return match Host::parse(suffix) {
            Ok(Host::Domain(d)) if !trim_dot(&d).is_empty() => {
                Ok(HostMatch::Subdomains(trim_dot(&d).to_owned()))
            }
            Ok(Host::Domain(_)) => Err("missing domain after `*.`".into()),
            Ok(_) => Err("`*.` applies to DNS names, not IP addresses".into()),
            Err(e) => Err(format!("invalid domain `{suffix}`: {e}")),
        };
    }
    if text.contains('*') {
        return Err("`*` is allowed only as the whole first label, as in `*.example.com`".into());
    }
    match Host::parse(text) {
        Ok(Host::Domain(d)) if !trim_dot(&d).is_empty() => {
            Ok(HostMatch::Domain(trim_dot(&d).to_owned()))
        }
        Ok(Host::Domain(_)) => Err("missing host".into()),
        Ok(Host::Ipv4(ip)) => Ok(HostMatch::Ip(IpAddr::V4(ip))),
        Ok(Host::Ipv6(ip)) => Ok(HostMatch::Ip(IpAddr::V6(ip))),
        Err(e) => Err(format!("invalid host `{text}`: {e}")),
    }
}

/// An ordered list of compiled [`HostPattern`]s. The empty list (the default) allows nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    patterns: Vec<HostPattern>,
}

impl AllowList {
    /// An allow-list of already compiled patterns.
    pub fn new(patterns: Vec<HostPattern>) -> Self {
        Self { patterns }
    }

    /// Compiles every pattern; the first invalid one is the error.
    pub fn parse<I, S>(patterns: I) -> Result<Self, PatternError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let patterns = patterns
            .into_iter()
            .map(|p| HostPattern::parse(p.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Self { patterns })
    }

    /// Whether the list has no pattern (and so allows nothing).
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The compiled patterns, in order.
    pub fn patterns(&self) -> &[HostPattern] {
        &self.patterns
    }

    /// Whether any pattern matches `url`.
    pub fn allows(&self, url: &Url) -> bool {
        self.patterns.iter().any(|p| p.matches(url))
    }

    /// The patterns that match `url`.
    pub fn matching<'a>(&'a self, url: &'a Url) -> impl Iterator<Item = &'a HostPattern> + 'a {
        self.patterns.iter().filter(move |p| p.matches(url))
    }
}

#[cfg(test)]
#[path = "allowlist_tests.rs"]
mod tests;
