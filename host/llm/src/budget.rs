//! Daily token budgets: tokens each plugin spent per UTC day. An answered call adds its tokens;
//! a call is refused once the day's count reaches the grant's `tokens_per_day`.
//!
//! Where the counts live is a [`TokenBudgets`] store. The default is [`DailyTokens`], one row per
//! plugin and day in `DATA_DIR/llm.db`, so a restart does not reset them; hosts sharing a
//! PostgreSQL database give the broker a store there instead (guild-host adapts it), so tokens
//! spent on one host count against the limit on every other.
//!
//! The SQLite file is in WAL mode with `synchronous = NORMAL`: a commit is not flushed to disk on
//! its own (an fsync per model call would cost more than the host's whole share of the call), so
//! a crash of the machine, not of Guild, may forget the last calls' tokens; the file stays whole.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use guild_store::{Access, DbFileError, DbSpec};
use rusqlite::{Connection, params};

const SCHEMA: &str = "
CREATE TABLE daily_tokens (
    plugin TEXT NOT NULL,
    day INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (plugin, day)
) STRICT;
";

/// `GLLM`.
const APPLICATION_ID: i32 = 0x474C_4C4D;

const SPEC: DbSpec = DbSpec {
    what: "model budget store",
    application_id: APPLICATION_ID,
    version: 1,
    schema: SCHEMA,
    // No build wrote unstamped budget stores.
    legacy_schema: SCHEMA,
    upgrade_legacy: "",
    upgrades: &[],
};

/// The file under the data folder.
pub const FILE: &str = "llm.db";

/// Why a budget store could not read or record a count.
#[derive(Debug, thiserror::Error)]
#[error("{store}: failed to {op}: {reason}")]
pub struct BudgetError {
    /// Which store (the SQLite file, or the database without credentials).
    pub store: String,
    /// What was being done.
    pub op: &'static str,
    /// The store's own error.
    pub reason: String,
}

/// Tokens spent per plugin and UTC day, wherever they are kept. The methods block until the
/// store answers: the broker calls them off its async tasks (`spawn_blocking`).
pub trait TokenBudgets: Send + Sync + std::fmt::Debug {
    /// Tokens `plugin` spent on `day` (days since 1970-01-01, UTC; see [`today`]).
    fn used(&self, plugin: &str, day: i64) -> Result<u64, BudgetError>;

    /// Adds `tokens` to `plugin`'s count for `day`, atomically with other writers of the store.
    fn add(&self, plugin: &str, day: i64, tokens: u64) -> Result<(), BudgetError>;
}

/// Tokens spent per plugin and UTC day, in SQLite (`DATA_DIR/llm.db`, or in memory).
#[derive(Debug)]
pub struct DailyTokens {
    conn: Mutex<Connection>,
    /// The file, for errors (`None`: in memory).
    path: Option<PathBuf>,
}

/// Days since 1970-01-01, UTC.
pub fn today() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (secs / 86_400) as i64
}

impl DailyTokens {
    /// Opens (or creates) `dir/llm.db`.
    pub fn open(dir: &Path) -> Result<Self, DbFileError> {
        let opened = guild_store::open(&dir.join(FILE), &SPEC, Access::ReadWrite)?;
        let path = dir.join(FILE);
        let pragma =
            |e: rusqlite::Error| DbFileError::from_sqlite(SPEC.what, path.clone(), "configure", e);
        opened
            .conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(pragma)?;
        opened
            .conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(pragma)?;
        Ok(Self {
            conn: Mutex::new(opened.conn),
            path: Some(path),
        })
    }

    /// An in-memory store (nothing survives the process).
    pub fn in_memory() -> Result<Self, DbFileError> {
        Ok(Self {
            conn: Mutex::new(guild_store::open_in_memory(&SPEC)?),
            path: None,
        })
    }

    fn error(&self, op: &'static str) -> impl FnOnce(rusqlite::Error) -> BudgetError + '_ {
        move |e| BudgetError {
            store: match &self.path {
                Some(path) => format!("the {} {}", SPEC.what, path.display()),
                None => format!("the in-memory {}", SPEC.what),
            },
            op,
            reason: e.to_string(),
        }
    }
}

impl TokenBudgets for DailyTokens {
    fn used(&self, plugin: &str, day: i64) -> Result<u64, BudgetError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tokens: Option<i64> = conn
            .query_row(
                "SELECT tokens FROM daily_tokens WHERE plugin = ?1 AND day = ?2",
                params![plugin, day],
                |r| r.get(0),
            )
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
            .map_err(self.error("read a daily count"))?;
        Ok(tokens.map_or(0, |t| t.max(0) as u64))
    }

    fn add(&self, plugin: &str, day: i64, tokens: u64) -> Result<(), BudgetError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute(
            "INSERT INTO daily_tokens (plugin, day, tokens) VALUES (?1, ?2, ?3)
             ON CONFLICT (plugin, day) DO UPDATE SET tokens = tokens + excluded.tokens",
            params![plugin, day, i64::try_from(tokens).unwrap_or(i64::MAX)],
        )
        .map_err(self.error("add to a daily count"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spent_tokens_survive_reopening() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = DailyTokens::open(dir.path()).expect("opens");
        store.add("p", 10, 5).expect("adds");
        store.add("p", 10, 7).expect("adds");
        store.add("q", 10, 1).expect("adds");
        drop(store);
        let store = DailyTokens::open(dir.path()).expect("reopens");
        assert_eq!(store.used("p", 10).expect("reads"), 12);
        assert_eq!(store.used("p", 11).expect("reads"), 0);
        assert_eq!(store.used("q", 10).expect("reads"), 1);
    }
}
