//! A plugin's outbound HTTP policy: requested ∩ granted origins, the address rule, and the
//! secret headers the host attaches.
//!
//! Everything here is pure (no I/O), so `guild plugins check` and table tests can use it. The
//! client asks two questions per hop: [`EgressPolicy::check_url`] before resolving, and
//! [`EgressPolicy::check_address`] for every resolved address before connecting.

use std::fmt;
use std::net::IpAddr;

use reqwest::header::{HeaderName, HeaderValue};
use url::Url;

use super::address::{AddressClass, classify};
use super::allowlist::{AllowList, HostMatch, HostPattern};
use super::reflection;

/// Why a request was denied. Never contains a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyReason {
    /// No pattern in the plugin's manifest (`[capabilities] http`) matches the origin.
    NotRequested,
    /// The plugin requests the origin but the operator has not granted it.
    NotGranted,
    /// The origin resolves to a special address that no matching grant names explicitly.
    SpecialAddress {
        /// The offending address.
        addr: IpAddr,
        /// Its class.
        class: AddressClass,
    },
    /// The origin resolves to an address that no grant can make reachable.
    Unreachable {
        /// The offending address.
        addr: IpAddr,
        /// Its class.
        class: AddressClass,
    },
    /// The request carries the value of a secret that is not sent to this origin (see
    /// [`reflection`](super::reflection) for what is searched and what is not).
    SecretReflected {
        /// The secret's name (never its value).
        secret: String,
        /// Where it was found: `the URL`, ``header `X` ``, `a header name`, `the body`.
        place: String,
    },
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotRequested => f.write_str("not requested in the plugin's manifest"),
            Self::NotGranted => f.write_str("not granted by the operator"),
            Self::SpecialAddress { addr, class } => write!(
                f,
                "address {addr} is {class}; only a grant naming it exactly \
                 (the IP literal, or `localhost` for loopback) allows it"
            ),
            Self::Unreachable { addr, class } => {
                write!(f, "address {addr} is {class} and never reachable")
            }
            Self::SecretReflected { secret, place } => write!(
                f,
                "{place} carries the value of secret `{secret}`, which the operator grants \
                 only to its own hosts; a secret may not be sent anywhere else"
            ),
        }
    }
}

/// A secret the host attaches as a header to requests for some origins. The plugin never sees
/// the value; `Debug` redacts it and no accessor returns it outside this module tree.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretHeader {
    name: String,
    header: HeaderName,
    value: HeaderValue,
    hosts: AllowList,
    /// What betrays the value in a request elsewhere ([`reflection::needles`]).
    needles: Vec<Box<[u8]>>,
}

/// A secret header that cannot be built. The message never contains the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretHeaderError {
    /// The header name is not a valid HTTP field name.
    #[error("secret `{secret}`: `{header}` is not a valid HTTP header name")]
    InvalidName {
        /// The secret's name.
        secret: String,
        /// The header name as given.
        header: String,
    },
    /// The value contains bytes a header value may not (e.g. a newline).
    #[error("secret `{secret}`: the value is not a valid HTTP header value")]
    InvalidValue {
        /// The secret's name.
        secret: String,
    },
}

impl SecretHeader {
    /// A secret called `name` (e.g. `TRACKER_TOKEN`) sent as `header: value` to URLs matching
    /// `hosts`. `value` is the final header value (any `Bearer {}` formatting already applied).
    pub fn new(
        name: impl Into<String>,
        header: &str,
        value: &str,
        hosts: AllowList,
    ) -> Result<Self, SecretHeaderError> {
        let name = name.into();
        let header_name = HeaderName::from_bytes(header.as_bytes()).map_err(|_| {
            SecretHeaderError::InvalidName {
                secret: name.clone(),
                header: header.to_owned(),
            }
        })?;
        let value_text = value;
        let mut value =
            HeaderValue::from_str(value).map_err(|_| SecretHeaderError::InvalidValue {
                secret: name.clone(),
            })?;
        value.set_sensitive(true);
        let needles = reflection::needles(value_text);
        Ok(Self {
            name,
            header: header_name,
            value,
            hosts,
            needles,
        })
    }

    /// Also searches for `value`, the secret as granted before the manifest's `format` was
    /// applied (`token={}` makes a header value that does not split into scheme and
    /// credentials): refused in requests elsewhere ([`reflection`]) and redacted from what
    /// crosses the guest boundary ([`crate::redact`]).
    pub fn with_granted_value(mut self, value: &str) -> Self {
        let value = value.trim().as_bytes();
        if value.len() >= reflection::MIN_SEARCHED_BYTES
            && !self.needles.iter().any(|n| **n == *value)
        {
            self.needles.push(value.into());
        }
        self
    }

    /// The secret's name (not its value).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The header it is sent as.
    pub fn header(&self) -> &HeaderName {
        &self.header
    }

    /// The origins it is sent to.
    pub fn hosts(&self) -> &AllowList {
        &self.hosts
    }

    /// Whether the secret is attached to a request for `url`.
    pub fn applies_to(&self, url: &Url) -> bool {
        self.hosts.allows(url)
    }

    pub(crate) fn value(&self) -> &HeaderValue {
        &self.value
    }

    pub(crate) fn needles(&self) -> impl Iterator<Item = &[u8]> {
        self.needles.iter().map(|n| &n[..])
    }
}

impl fmt::Debug for SecretHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretHeader")
            .field("name", &self.name)
            .field("header", &self.header)
            .field("value", &"<redacted>")
            .field("hosts", &self.hosts)
            .finish()
    }
}

/// Everything the guarded client needs to decide a plugin's request.
///
/// A URL is allowed iff it matches a `requested` pattern *and* a `granted` pattern. Empty lists
/// (the [`EgressPolicy::deny_all`] default) deny everything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressPolicy {
    /// The plugin's name, used in denials and traces.
    pub plugin: String,
    /// Origins the plugin's manifest asks for.
    pub requested: AllowList,
    /// Origins the operator grants this plugin.
    pub granted: AllowList,
    /// Secrets the host attaches to requests for their hosts.
    pub secrets: Vec<SecretHeader>,
}

impl EgressPolicy {
    /// A policy for `plugin` that denies everything.
    pub fn deny_all(plugin: impl Into<String>) -> Self {
        Self {
            plugin: plugin.into(),
            requested: AllowList::default(),
            granted: AllowList::default(),
            secrets: Vec::new(),
        }
    }

    /// Whether the origin of `url` is both requested and granted.
    pub fn check_url(&self, url: &Url) -> Result<(), DenyReason> {
        if !self.requested.allows(url) {
            Err(DenyReason::NotRequested)
        } else if !self.granted.allows(url) {
            Err(DenyReason::NotGranted)
        } else {
            Ok(())
        }
    }

    /// Whether `url` (already allowed by [`check_url`](Self::check_url)) may connect to `addr`.
    ///
    /// Public addresses are fine. A special address is allowed only when a granted pattern that
    /// matches `url` names it: the pattern's host is that exact IP literal, or it is exactly
    /// `localhost` and the address is loopback. Wildcards never authorise a special address;
    /// unspecified, broadcast and multicast addresses are never allowed.
    pub fn check_address(&self, url: &Url, addr: IpAddr) -> Result<(), DenyReason> {
        let class = classify(addr);
        if !class.is_special() {
            return Ok(());
        }
        if class.is_never_reachable() {
            return Err(DenyReason::Unreachable { addr, class });
        }
        if self
            .granted
            .matching(url)
            .any(|p| names_address(p, addr, class))
        {
            Ok(())
        } else {
            Err(DenyReason::SpecialAddress { addr, class })
        }
    }

    /// [`check_url`](Self::check_url), then [`check_address`](Self::check_address) for each
    /// of `addrs`: the whole decision for one hop, given what DNS returned.
    pub fn check(&self, url: &Url, addrs: &[IpAddr]) -> Result<(), DenyReason> {
        self.check_url(url)?;
        addrs.iter().try_for_each(|a| self.check_address(url, *a))
    }

    /// The secrets attached to a request for `url`.
    pub fn secrets_for<'a>(&'a self, url: &'a Url) -> impl Iterator<Item = &'a SecretHeader> + 'a {
        self.secrets.iter().filter(move |s| s.applies_to(url))
    }
}

fn names_address(pattern: &HostPattern, addr: IpAddr, class: AddressClass) -> bool {
    match pattern.host() {
        HostMatch::Ip(ip) => *ip == addr,
        HostMatch::Domain(d) => d == "localhost" && class == AddressClass::Loopback,
        HostMatch::Subdomains(_) => false,
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
