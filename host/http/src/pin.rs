//! DNS resolved once by the host, and a reqwest client that can only connect to the addresses
//! that were validated.
//!
//! Each hop gets its own client whose resolver answers for exactly one name with exactly the
//! checked addresses and fails for every other name, so reqwest cannot re-resolve (no DNS
//! rebinding between check and connect). IP-literal URLs never reach a resolver; their address
//! is the literal, which was checked. The client has no proxy, no cookie store and no redirect
//! following; its keep-alive connections are reused only through [`super::pool`], for the
//! same plugin and exactly the same validated name and addresses ([`PinKey`]).

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::error::HttpError;

/// The addresses a hop may connect to.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The name reqwest will ask the resolver for (`None` for IP-literal URLs).
    name: Option<String>,
    addrs: Vec<SocketAddr>,
}

/// What a pinned client is pinned to: the name and the validated addresses, sorted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PinKey {
    name: Option<String>,
    addrs: Vec<SocketAddr>,
}

impl Resolved {
    /// The key of a client pinned to these addresses (the order DNS gave does not matter).
    pub(crate) fn key(&self) -> PinKey {
        let mut addrs = self.addrs.clone();
        addrs.sort();
        PinKey {
            name: self.name.clone(),
            addrs,
        }
    }

    /// The distinct IP addresses, for checking.
    pub(crate) fn ips(&self) -> Vec<IpAddr> {
        let set: BTreeSet<IpAddr> = self.addrs.iter().map(SocketAddr::ip).collect();
        set.into_iter().collect()
    }
}

/// Resolves `url`'s host once (IP literals are taken as they are).
pub(crate) async fn resolve(url: &Url) -> Result<Resolved, HttpError> {
    let port = url
        .port_or_known_default()
        .ok_or_else(|| HttpError::InvalidRequest("URL has no port".into()))?;
    let host = url
        .host()
        .ok_or_else(|| HttpError::InvalidRequest("URL has no host".into()))?;
    let (name, addrs) = match host {
        Host::Ipv4(ip) => (None, vec![SocketAddr::new(ip.into(), port)]),
        Host::Ipv6(ip) => (None, vec![SocketAddr::new(ip.into(), port)]),
        Host::Domain(domain) => {
            let found = tokio::net::lookup_host((domain, port))
                .await
                .map_err(|e| HttpError::Transport(format!("failed to resolve `{domain}`: {e}")))?;
            let mut addrs: Vec<SocketAddr> = Vec::new();
            for addr in found {
                if !addrs.contains(&addr) {
                    addrs.push(addr);
                }
            }
            (Some(domain.to_owned()), addrs)
        }
    };
    if addrs.is_empty() {
        return Err(HttpError::Transport(format!(
            "`{}` resolved to no address",
            url.host_str().unwrap_or_default()
        )));
    }
    Ok(Resolved { name, addrs })
}

/// Answers for one name with the validated addresses and refuses everything else.
struct PinnedResolver {
    name: Option<String>,
    addrs: Vec<SocketAddr>,
}

impl Resolve for PinnedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let pinned = self
            .name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_str()));
        let result: Result<Addrs, _> = if pinned {
            Ok(Box::new(self.addrs.clone().into_iter()))
        } else {
            Err(format!(
                "`{}` is not the validated host of this request",
                name.as_str()
            )
            .into())
        };
        Box::pin(std::future::ready(result))
    }
}

/// A client that can reach only `resolved`, keeping at most `idle` idle connections for
/// `idle_timeout`.
pub(crate) fn client(
    resolved: &Resolved,
    timeout: Duration,
    idle: usize,
    idle_timeout: Duration,
) -> Result<reqwest::Client, HttpError> {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .dns_resolver(Arc::new(PinnedResolver {
            name: resolved.name.clone(),
            addrs: resolved.addrs.clone(),
        }))
        .pool_max_idle_per_host(idle)
        .pool_idle_timeout(idle_timeout)
        .connect_timeout(timeout)
        .timeout(timeout)
        .build()
        .map_err(|e| HttpError::Transport(format!("failed to build the HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ip_literals_are_not_resolved_and_ports_default() {
        let r = resolve(&Url::parse("http://127.0.0.1/").expect("url"))
            .await
            .expect("literal");
        assert_eq!(r.name, None);
        assert_eq!(
            r.addrs,
            ["127.0.0.1:80".parse::<SocketAddr>().expect("addr")]
        );
        let r = resolve(&Url::parse("https://[::1]:8443/").expect("url"))
            .await
            .expect("literal");
        assert_eq!(r.ips(), ["::1".parse::<IpAddr>().expect("ip")]);
    }

    #[tokio::test]
    async fn the_resolver_answers_only_for_the_pinned_name() {
        let addr: SocketAddr = "127.0.0.1:9".parse().expect("addr");
        let resolver = PinnedResolver {
            name: Some("api.example.com".into()),
            addrs: vec![addr],
        };
        let name = |s: &str| s.parse::<Name>().expect("name");
        let got: Vec<_> = resolver
            .resolve(name("API.example.com"))
            .await
            .expect("pinned")
            .collect();
        assert_eq!(got, [addr]);
        assert!(resolver.resolve(name("evil.example.com")).await.is_err());
        let literal_only = PinnedResolver {
            name: None,
            addrs: vec![addr],
        };
        assert!(literal_only.resolve(name("api.example.com")).await.is_err());
    }
}
