//! `[store]` of `guild.toml`: where the host keeps its receipts ledger and memory. Without it
//! (the default) both are SQLite files in the data dir; with `url = "postgres://…"` every host
//! naming the same database shares one ledger chain and one memory (docs/postgres.md).
//!
//! Only the shape of the URL is checked here (guild-core knows no database client): the scheme,
//! a host or socket and a database name, and no password. `guild.toml` is shared and committed,
//! so the password comes from the environment ([`PASSWORD_ENV`]), never from the file.

use serde::Deserialize;

/// Environment variable holding the database password.
pub const PASSWORD_ENV: &str = "GUILD_STORE_PASSWORD";

/// `[store]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StoreSettings {
    /// `postgres://user@host:port/database` (or `postgresql://`): the shared PostgreSQL store.
    /// Unset: SQLite files in the data dir.
    #[serde(default)]
    pub url: Option<String>,
    /// How long a host holds a background task without renewing it (PostgreSQL only): a host
    /// that stops renewing (it died) loses its tasks to `interrupted` after this long. Renewed
    /// every third of it. Default [`DEFAULT_LEASE_SECONDS`].
    #[serde(default)]
    pub lease_seconds: Option<u64>,
    /// Join the other hosts on the database even when one of them runs a plugin of the same
    /// name with another component or definition (PostgreSQL only; a warning is logged per
    /// plugin). Default false: such a host refuses to start (docs/postgres.md#joining).
    #[serde(default)]
    pub allow_plugin_mismatch: bool,
}

/// `[store] lease_seconds` when unset.
pub const DEFAULT_LEASE_SECONDS: u64 = 15;

/// The largest `[store] lease_seconds`.
const MAX_LEASE_SECONDS: u64 = 3600;

impl StoreSettings {
    /// The PostgreSQL URL when one is configured.
    pub fn postgres_url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The task lease ([`StoreSettings::lease_seconds`]).
    pub fn lease(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.lease_seconds.unwrap_or(DEFAULT_LEASE_SECONDS))
    }

    /// Checks the URL's shape and the lease; the error names the key (`(key, message)`).
    pub fn validate(&self) -> Result<(), (String, String)> {
        if let Some(s) = self.lease_seconds
            && !(1..=MAX_LEASE_SECONDS).contains(&s)
        {
            return Err((
                "store.lease_seconds".to_owned(),
                format!("{s} is out of range: give 1 to {MAX_LEASE_SECONDS} seconds"),
            ));
        }
        match &self.url {
            None if self.allow_plugin_mismatch => Err((
                "store.allow_plugin_mismatch".to_owned(),
                "it only applies to hosts sharing a PostgreSQL database: set `store.url` too, \
                 or remove it"
                    .to_owned(),
            )),
            None => Ok(()),
            Some(url) => check_url(url).map_err(|m| ("store.url".to_owned(), m)),
        }
    }
}

fn check_url(url: &str) -> Result<(), String> {
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        // The value is not echoed: it may hold a password.
        return Err(
            "it is not a PostgreSQL URL: expected postgres://user@host:port/database".into(),
        );
    };
    let (authority, path_and_query) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, q),
        None => (path_and_query, ""),
    };
    let userinfo = authority.rsplit_once('@').map(|(u, _)| u);
    let password_param = query
        .split('&')
        .any(|kv| kv.split('=').next() == Some("password"));
    if userinfo.is_some_and(|u| u.contains(':')) || password_param {
        return Err(format!(
            "the URL contains a password; remove it (guild.toml is shared) and set \
             {PASSWORD_ENV} in the environment of every host instead"
        ));
    }
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let socket = query.split('&').any(|kv| kv.starts_with("host="));
    if host.is_empty() && !socket {
        return Err("the URL names no host: expected postgres://user@host:port/database".into());
    }
    if path.trim_start_matches('/').is_empty()
        && !query.split('&').any(|kv| kv.starts_with("dbname="))
    {
        return Err(
            "the URL names no database: Guild wants a database of its own \
             (postgres://user@host:port/guild)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(url: &str) -> Result<(), (String, String)> {
        StoreSettings {
            url: Some(url.to_owned()),
            ..StoreSettings::default()
        }
        .validate()
    }

    #[test]
    fn postgres_urls_are_accepted() {
        for url in [
            "postgres://guild@db.internal:5432/guild",
            "postgresql://guild@db/guild",
            "postgres://db/guild?sslmode=disable",
            "postgres:///guild?host=/run/postgresql",
        ] {
            assert_eq!(check(url), Ok(()), "{url}");
        }
        assert_eq!(
            StoreSettings::default().validate(),
            Ok(()),
            "unset is SQLite"
        );
    }

    #[test]
    fn bad_urls_are_refused_naming_the_key() {
        for (url, why) in [
            ("postgres://guild:secret@db/guild", "password"),
            ("postgres://guild@db/guild?password=secret", "password"),
            ("mysql://guild@db/guild", "not a PostgreSQL URL"),
            ("db.internal/guild", "not a PostgreSQL URL"),
            ("postgres://guild@db", "no database"),
            ("postgres://guild@db/", "no database"),
            ("postgres:///guild", "no host"),
        ] {
            let (key, message) = check(url).expect_err(url);
            assert_eq!(key, "store.url");
            assert!(message.contains(why), "{url}: {message}");
        }
    }

    #[test]
    fn allowing_a_plugin_mismatch_needs_a_shared_database() {
        let settings = |url: Option<&str>| StoreSettings {
            url: url.map(str::to_owned),
            allow_plugin_mismatch: true,
            ..StoreSettings::default()
        };
        assert_eq!(
            settings(Some("postgres://guild@db/guild")).validate(),
            Ok(())
        );
        let (key, why) = settings(None).validate().expect_err("without url");
        assert_eq!(key, "store.allow_plugin_mismatch");
        assert!(why.contains("store.url"), "{why}");
        assert!(
            !StoreSettings::default().allow_plugin_mismatch,
            "refused by default"
        );
    }

    #[test]
    fn the_lease_has_a_default_and_a_range() {
        let lease = |s: Option<u64>| StoreSettings {
            lease_seconds: s,
            ..StoreSettings::default()
        };
        assert_eq!(lease(None).lease().as_secs(), DEFAULT_LEASE_SECONDS);
        assert_eq!(lease(Some(2)).lease().as_secs(), 2);
        assert_eq!(lease(Some(2)).validate(), Ok(()));
        for bad in [0, MAX_LEASE_SECONDS + 1] {
            let (key, why) = lease(Some(bad)).validate().expect_err("out of range");
            assert_eq!(key, "store.lease_seconds");
            assert!(why.contains("out of range"), "{why}");
        }
    }
}
