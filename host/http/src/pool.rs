//! Pinned clients kept for reuse, so that requests to one origin share keep-alive connections
//! instead of opening (and leaving in TIME-WAIT) one socket each.
//!
//! A client is kept per (plugin, host name, validated address set). Pinning is unchanged: the
//! client's resolver answers only that name with exactly those addresses, so any connection
//! in its pool goes to an address that was checked. A request reuses a client only when its
//! own fresh resolution produced the same address set (DNS that changes gets a new client),
//! every hop is still authorised before a client is looked up, and a plugin never shares
//! connections with another plugin. The pool holds at most [`HttpLimits::max_pooled_clients`]
//! clients (the least recently used is dropped, closing its idle connections), each with at
//! most [`IDLE_PER_CLIENT`] idle connections, closed after [`IDLE_TIMEOUT`].

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::client::HttpLimits;
use super::error::HttpError;
use super::pin::{self, PinKey, Resolved};

/// Idle keep-alive connections one pooled client keeps.
pub const IDLE_PER_CLIENT: usize = 4;

/// How long an idle connection is kept.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    plugin: String,
    pin: PinKey,
}

#[derive(Debug)]
struct Entry {
    client: reqwest::Client,
    used: u64,
}

/// The pinned clients of one guarded client.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    clients: HashMap<Key, Entry>,
    clock: u64,
}

impl Pool {
    /// The client pinned to `resolved` for `plugin`, built (and kept) on first use.
    pub(crate) fn client(
        &self,
        plugin: &str,
        resolved: &Resolved,
        limits: &HttpLimits,
    ) -> Result<reqwest::Client, HttpError> {
        let key = Key {
            plugin: plugin.to_owned(),
            pin: resolved.key(),
        };
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.clock += 1;
        let now = inner.clock;
        if let Some(entry) = inner.clients.get_mut(&key) {
            entry.used = now;
            return Ok(entry.client.clone());
        }
        let client = pin::client(resolved, limits.timeout, IDLE_PER_CLIENT, IDLE_TIMEOUT)?;
        if limits.max_pooled_clients == 0 {
            return Ok(client);
        }
        while inner.clients.len() >= limits.max_pooled_clients {
            let oldest = inner
                .clients
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => inner.clients.remove(&k),
                None => break,
            };
        }
        inner.clients.insert(
            key,
            Entry {
                client: client.clone(),
                used: now,
            },
        );
        Ok(client)
    }

    /// How many clients are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.clients.len()
    }
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;

    async fn resolved(text: &str) -> Resolved {
        pin::resolve(&Url::parse(text).expect("url"))
            .await
            .expect("IP literals resolve without DNS")
    }

    #[tokio::test]
    async fn clients_are_kept_per_plugin_and_address_set_and_bounded() {
        let limits = HttpLimits {
            max_pooled_clients: 2,
            ..HttpLimits::default()
        };
        let pool = Pool::default();
        let a = resolved("http://127.0.0.1:9/").await;
        let b = resolved("http://127.0.0.1:10/").await;
        pool.client("kb", &a, &limits).expect("client");
        pool.client("kb", &a, &limits).expect("same client");
        assert_eq!(pool.len(), 1);
        pool.client("tracker", &a, &limits).expect("another plugin");
        assert_eq!(pool.len(), 2);
        pool.client("kb", &b, &limits).expect("another address");
        assert_eq!(pool.len(), 2, "bounded");
        let none = HttpLimits {
            max_pooled_clients: 0,
            ..HttpLimits::default()
        };
        Pool::default().client("kb", &a, &none).expect("unpooled");
    }
}
