//! [`PgDailyTokens`]: the model tokens each plugin spent per UTC day, in the `daily_tokens`
//! table, so that hosts sharing the database share the daily budgets of `[grants.X.llm]
//! tokens_per_day` (docs/postgres.md#model-budgets): tokens spent on one host count against the
//! limit on every other.
//!
//! One row per plugin and day. Adding is a single upsert (`tokens = daily_tokens.tokens +
//! excluded.tokens`), atomic on the server, so concurrent adds from any number of hosts sum
//! exactly. A call is checked against the count before it is sent, so hosts calling at the same
//! moment may together pass the limit by their calls in flight, as calls on one host may.

use crate::worker::Worker;
use crate::{PgConfig, PgError, describe, schema};

/// The daily token counts on PostgreSQL. `Send + Sync`; every method blocks (crate docs).
pub struct PgDailyTokens {
    worker: Worker,
    target: String,
}

impl std::fmt::Debug for PgDailyTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgDailyTokens")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl PgDailyTokens {
    /// Connects and migrates the database to this build's schema (or refuses it).
    pub fn open(config: &PgConfig) -> Result<PgDailyTokens, PgError> {
        let target = config.target().to_owned();
        let t = target.clone();
        let worker = Worker::start(config, "budgets", move |c| schema::migrate(c, &t))?;
        Ok(PgDailyTokens { worker, target })
    }

    /// The database, without credentials (for errors).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Tokens `plugin` spent on `day` (days since 1970-01-01, UTC), on every host.
    pub fn used(&self, plugin: &str, day: i64) -> Result<u64, PgError> {
        let plugin = plugin.to_owned();
        let tokens: Option<i64> = self.call("read a daily token count", move |c| {
            c.query_opt(
                "SELECT tokens FROM daily_tokens WHERE plugin = $1 AND day = $2",
                &[&plugin, &day],
            )?
            .map(|r| r.try_get(0))
            .transpose()
        })?;
        Ok(tokens.map_or(0, |t| u64::try_from(t).unwrap_or(0)))
    }

    /// Adds `tokens` to `plugin`'s count for `day`, in one statement. A count past the bigint
    /// range (only an endpoint reporting absurd usage gets there) is refused by the server and
    /// stays at its value, which is past any limit.
    pub fn add(&self, plugin: &str, day: i64, tokens: u64) -> Result<(), PgError> {
        let plugin = plugin.to_owned();
        let tokens = i64::try_from(tokens).unwrap_or(i64::MAX);
        self.call("add to a daily token count", move |c| {
            c.execute(
                "INSERT INTO daily_tokens (plugin, day, tokens) VALUES ($1, $2, $3) \
                 ON CONFLICT (plugin, day) \
                 DO UPDATE SET tokens = daily_tokens.tokens + excluded.tokens",
                &[&plugin, &day, &tokens],
            )
            .map(drop)
        })
    }

    fn call<R: Send + 'static>(
        &self,
        op: &'static str,
        f: impl FnOnce(&mut postgres::Client) -> Result<R, postgres::Error> + Send + 'static,
    ) -> Result<R, PgError> {
        let err = |reason: String| PgError::Query {
            target: self.target.clone(),
            op,
            reason,
        };
        match self.worker.run(f) {
            Some(answer) => answer.map_err(|e| err(describe(&e))),
            None => Err(err(
                "the connection thread stopped or the call panicked".into()
            )),
        }
    }
}
