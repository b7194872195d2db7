//! The host's receipts ledger, memory store, background task store and daily model budgets,
//! where `[store]` of guild.toml puts them: SQLite files in the data dir (the default), or one
//! PostgreSQL database that several hosts share (docs/postgres.md). Everything above this module
//! holds a [`LedgerBackend`], an `Arc<dyn MemoryStore>` and a broker over an
//! `Arc<dyn TokenBudgets>`, and does not know which it got.
//!

use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use guild_core::config::Config;
use guild_llm::{BudgetError, TokenBudgets};
use guild_memory::{MEMORY_FILE, MemoryStore, MemoryStoreError, SqliteMemoryStore};
use guild_pg::{PgConfig, PgDailyTokens, PgError, PgLedgerStore, PgMemoryStore, PgTaskStore};
use guild_receipts::{
    Completion, IntentId, LEDGER_FILE, Ledger, LedgerError, LedgerStore, QueuedWrite,
};
use thiserror::Error;

/// The receipts ledger a host writes.
#[derive(Clone)]
pub enum LedgerBackend {
    /// The embedded SQLite ledger in the data dir, with its group commit and head anchor file.
    Sqlite(Arc<Ledger>),
    /// A ledger other hosts share (PostgreSQL): one chain for all of them.
    Shared(Arc<dyn LedgerStore>),
}

impl LedgerBackend {
    /// [`LedgerStore::queue_outcome`] on whichever backend this is.
    pub fn queue_outcome(&self, intent: &IntentId, outcome: Completion) -> QueuedWrite {
        match self {
            LedgerBackend::Sqlite(ledger) => Arc::clone(ledger).queue_outcome(intent, outcome),
            LedgerBackend::Shared(store) => Arc::clone(store).queue_outcome(intent, outcome),
        }
    }
}

impl Deref for LedgerBackend {
    type Target = dyn LedgerStore;

    fn deref(&self) -> &Self::Target {
        match self {
            LedgerBackend::Sqlite(ledger) => ledger.as_ref(),
            LedgerBackend::Shared(store) => store.as_ref(),
        }
    }
}

/// Why a store named by guild.toml could not be opened.
#[derive(Debug, Error)]
pub enum StoreOpenError {
    /// The SQLite ledger (the error names the file).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The SQLite memory store (the error names the file).
    #[error(transparent)]
    Memory(#[from] MemoryStoreError),
    /// The PostgreSQL store of `[store] url` (the error names the server and database).
    #[error("`[store] url` in {}: {source}", file.display())]
    Postgres {
        /// The guild.toml that names it.
        file: std::path::PathBuf,
        /// What the server or the URL refused.
        source: PgError,
    },
}

/// The PostgreSQL connection settings of `[store] url`, if set (password from
/// [`guild_pg::PASSWORD_ENV`]).
pub fn postgres(config: &Config) -> Result<Option<PgConfig>, StoreOpenError> {
    config
        .store
        .postgres_url()
        .map(|url| PgConfig::from_url(url).map_err(|source| pg_error(config, source)))
        .transpose()
}

fn pg_error(config: &Config, source: PgError) -> StoreOpenError {
    StoreOpenError::Postgres {
        file: config.file.clone(),
        source,
    }
}

/// Opens the ledger `config` names: the PostgreSQL database of `[store] url`, else
/// `receipts.db` in `data_dir` (which must exist).
pub fn open_ledger(config: &Config, data_dir: &Path) -> Result<LedgerBackend, StoreOpenError> {
    Ok(match open_shared_ledger(config)? {
        Some(shared) => LedgerBackend::Shared(shared),
        None => LedgerBackend::Sqlite(Arc::new(Ledger::open(data_dir.join(LEDGER_FILE))?)),
    })
}

/// The shared ledger of `[store] url`, when guild.toml names one (migrating an empty or older
/// Guild database on the way; see docs/postgres.md).
pub fn open_shared_ledger(config: &Config) -> Result<Option<Arc<dyn LedgerStore>>, StoreOpenError> {
    let Some(pg) = postgres(config)? else {
        return Ok(None);
    };
    let store = PgLedgerStore::open(&pg).map_err(|e| pg_error(config, e))?;
    Ok(Some(Arc::new(store)))
}

/// The shared background task store of `[store] url`, when guild.toml names one: this host
/// registers itself there and holds its tasks under leases of `[store] lease_seconds`
/// (docs/postgres.md#background-tasks). Without it the host opens `tasks.db` in its data dir.
pub fn open_shared_tasks(config: &Config) -> Result<Option<Arc<PgTaskStore>>, StoreOpenError> {
    let Some(pg) = postgres(config)? else {
        return Ok(None);
    };
    let store = PgTaskStore::open(&pg, config.store.lease()).map_err(|e| pg_error(config, e))?;
    Ok(Some(Arc::new(store)))
}

/// Opens the memory store `config` names: the PostgreSQL database of `[store] url`, else
/// `memory.db` in `data_dir` (which must exist).
pub fn open_memory(
    config: &Config,
    data_dir: &Path,
) -> Result<Arc<dyn MemoryStore>, StoreOpenError> {
    Ok(match postgres(config)? {
        Some(pg) => Arc::new(PgMemoryStore::open(&pg).map_err(|e| pg_error(config, e))?),
        None => Arc::new(SqliteMemoryStore::open(data_dir.join(MEMORY_FILE))?),
    })
}

/// The shared daily model budgets of `[store] url`, when guild.toml names one and `[llm.models]`
/// defines a model (docs/postgres.md#model-budgets): tokens spent on any host on the database
/// count against `tokens_per_day` on every other. Without it the broker keeps them in `llm.db`
/// in the data dir.
pub fn open_shared_budgets(
    config: &Config,
) -> Result<Option<Arc<dyn TokenBudgets>>, StoreOpenError> {
    if config.llm.models.is_empty() {
        return Ok(None);
    }
    let Some(pg) = postgres(config)? else {
        return Ok(None);
    };
    let store = PgDailyTokens::open(&pg).map_err(|e| pg_error(config, e))?;
    Ok(Some(Arc::new(SharedBudgets(store))))
}

/// [`PgDailyTokens`] as the broker's budget store.
#[derive(Debug)]
struct SharedBudgets(PgDailyTokens);

impl SharedBudgets {
    fn error(&self, op: &'static str) -> impl FnOnce(PgError) -> BudgetError + '_ {
        move |e| BudgetError {
            store: format!("the PostgreSQL store {}", self.0.target()),
            op,
            reason: match e {
                PgError::Query { reason, .. } => reason,
                other => other.to_string(),
            },
        }
    }
}

impl TokenBudgets for SharedBudgets {
    fn used(&self, plugin: &str, day: i64) -> Result<u64, BudgetError> {
        self.0
            .used(plugin, day)
            .map_err(self.error("read a daily token count"))
    }

    fn add(&self, plugin: &str, day: i64, tokens: u64) -> Result<(), BudgetError> {
        self.0
            .add(plugin, day, tokens)
            .map_err(self.error("add to a daily token count"))
    }
}
