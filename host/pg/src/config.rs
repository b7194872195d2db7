//! [`PgConfig`]: where the database is, how to log in and whether to use TLS. The URL never
//! carries the password (guild.toml is shared and committed); it comes from the environment
//! ([`PASSWORD_ENV`]). TLS follows the URL's `sslmode` ([`crate::tls`]).

use std::str::FromStr;
use std::sync::Arc;

use postgres::config::SslMode;

use crate::tls::{self, Mode, Rustls};
use crate::{PgError, describe};

/// Environment variable holding the database password.
pub const PASSWORD_ENV: &str = "GUILD_STORE_PASSWORD";

/// A parsed `postgres://user@host:port/database` URL (or key=value string) and its password.
#[derive(Clone)]
pub struct PgConfig {
    config: postgres::Config,
    /// The TLS settings of `sslmode=require` or `verify-full`; `None` for plain connections.
    tls: Option<Arc<rustls::ClientConfig>>,
    target: String,
}

impl std::fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConfig")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl PgConfig {
    /// Parses `url`; a password in it is refused. The password, if any, is read from
    /// [`PASSWORD_ENV`].
    pub fn from_url(url: &str) -> Result<PgConfig, PgError> {
        PgConfig::with_password(url, std::env::var(PASSWORD_ENV).ok())
    }

    /// Parses `url` (which must not carry a password) and uses `password` to log in. A CA file
    /// named by `sslrootcert` is read now.
    pub fn with_password(url: &str, password: Option<String>) -> Result<PgConfig, PgError> {
        let (url, mode) = tls::split(url)?;
        let mut config =
            postgres::Config::from_str(&url).map_err(|e| PgError::Url(describe(&e)))?;
        config.ssl_mode(match mode {
            Mode::Disable => SslMode::Disable,
            Mode::Require | Mode::VerifyFull { .. } => SslMode::Require,
        });
        let tls = tls::client_config(&mode)?;
        if config.get_password().is_some() {
            return Err(PgError::Url(format!(
                "it contains a password; remove it and set {PASSWORD_ENV} in the environment \
                 instead"
            )));
        }
        if let Some(password) = password.filter(|p| !p.is_empty()) {
            config.password(password);
        }
        config.application_name("guild");
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|h| match h {
                postgres::config::Host::Tcp(name) => name.clone(),
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let target = format!(
            "{}/{}",
            hosts.join(","),
            config.get_dbname().unwrap_or("(default database)")
        );
        Ok(PgConfig {
            config,
            tls,
            target,
        })
    }

    /// Host and database, for messages (no credentials).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// A new connection with Guild's session settings.
    pub(crate) fn connect(&self) -> Result<postgres::Client, PgError> {
        let connected = match &self.tls {
            None => self.config.connect(postgres::NoTls),
            Some(tls) => self.config.connect(Rustls(tls.clone())),
        };
        let mut client = connected.map_err(|e| PgError::Connect {
            target: self.target.clone(),
            reason: describe(&e),
        })?;
        // Durability must not depend on the server's default: a commit returns once the WAL
        // is flushed. READ COMMITTED: every statement after the head lock sees what the writer
        // before committed.
        client
            .batch_execute(
                "SET synchronous_commit = on; \
                 SET default_transaction_isolation = 'read committed'",
            )
            .map_err(|e| PgError::Query {
                target: self.target.clone(),
                op: "set the session's durability",
                reason: describe(&e),
            })?;
        Ok(client)
    }
}
