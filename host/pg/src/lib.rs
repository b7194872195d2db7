//! PostgreSQL backends for the receipts ledger ([`PgLedgerStore`], a
//! [`guild_receipts::LedgerStore`]), the memory store ([`PgMemoryStore`], a
//! [`guild_memory::MemoryStore`]), the background task store with leases
//! ([`PgTaskStore`], which guild-host adapts to its task trait) and the daily model token counts
//! ([`PgDailyTokens`], which guild-host adapts to the model broker's budget trait), so that
//! several Guild hosts can share one database (docs/postgres.md).
//!
//! # One chain across hosts
//! Every ledger write is one transaction that first locks the single row of `ledger_head`
//! (`SELECT … FOR UPDATE`): writers on every host queue on that row, each reads the head the
//! previous one committed and links after it, so the chain never forks and never skips a
//! sequence. The head row is the backend's anchor: `verify` checks the chain reaches it, and a
//! write refuses a ledger whose last entry is not the one it records. Commits wait for the WAL
//! flush (`synchronous_commit = on` is set on every connection): an intent is durable before
//! the call runs, an outcome before it is reported. Single writes of concurrent callers on one
//! store share such a transaction ([`group`]'s group commit).
//!
//! # Sync traits, async host
//! The store traits block. Each store owns one connection on a thread of its own
//! ([`worker`]); a method sends its work there and waits for the answer. The `postgres` client
//! runs a Tokio runtime of its own, which would panic if started on a runtime thread: on the
//! worker thread it never is, so calling a store from async code cannot panic or deadlock. It
//! does block the calling thread until the database answers, so async callers still use
//! `tokio::task::spawn_blocking`, as with the SQLite stores.
//!
//! # The database
//! [`schema`] keeps the versioned migrations and the `guild_schema` table; a database written
//! by a newer Guild, or one holding other tables, is refused ([`PgError`]).

mod approvals;
mod budgets;
mod config;
mod flight;
mod group;
#[cfg(test)]
mod group_tests;
mod join;
mod ledger;
mod memory;
mod orphans;
pub mod schema;
mod tasks;
pub mod testing;
mod tls;
mod worker;
mod writer;

use thiserror::Error;

pub use budgets::PgDailyTokens;
pub use config::{PASSWORD_ENV, PgConfig};
pub use join::{Mismatch, PluginDigest, PluginSet, mismatches};
pub use ledger::PgLedgerStore;
pub use memory::PgMemoryStore;
pub use tasks::{HostIdentity, HostRecord, PgTask, PgTaskStore};

/// Why a PostgreSQL store could not be opened.
#[derive(Debug, Error)]
pub enum PgError {
    /// The `[store] url` is not a PostgreSQL connection URL, or carries a password.
    #[error("invalid PostgreSQL store url: {0}")]
    Url(String),
    /// The server could not be reached or refused the login.
    #[error("failed to connect to PostgreSQL at {target}: {reason}")]
    Connect {
        /// Host and database, without credentials.
        target: String,
        /// The client's error.
        reason: String,
    },
    /// The database was written by a newer Guild.
    #[error(
        "the PostgreSQL database {target} has Guild schema version {found}, newer than the \
         {supported} this build knows: upgrade Guild on this host (it was written by a newer \
         one); nothing was changed"
    )]
    Newer {
        /// Host and database.
        target: String,
        /// The version recorded in `guild_schema`.
        found: i32,
        /// The newest version this build migrates to.
        supported: i32,
    },
    /// The database is not Guild's: it holds other tables, or a `guild_schema` that is not ours.
    #[error(
        "refusing the PostgreSQL database {target}: {why}. Guild only uses an empty database \
         or one it created; give it a database of its own (CREATE DATABASE guild)"
    )]
    Foreign {
        /// Host and database.
        target: String,
        /// What was found.
        why: String,
    },
    /// A query of the migration or the store setup failed.
    #[error("PostgreSQL store at {target}: failed to {op}: {reason}")]
    Query {
        /// Host and database.
        target: String,
        /// What was being done.
        op: &'static str,
        /// The server's error.
        reason: String,
    },
    /// Another live host runs a plugin of the same name with other digests (docs/postgres.md#joining).
    #[error(
        "refusing to join the hosts on the PostgreSQL database {target}: {}. Hosts on one \
         database must run the same code under one plugin name: install the same plugin \
         versions here, or set `[store] allow_plugin_mismatch = true` in guild.toml to join anyway",
        join::render(.mismatches)
    )]
    PluginMismatch {
        /// Host and database.
        target: String,
        /// Every plugin that differs, with the host it differs from.
        mismatches: Vec<Mismatch>,
    },
    /// The store's connection thread could not be started.
    #[error("failed to start the PostgreSQL connection thread: {0}")]
    Thread(std::io::Error),
}

/// A client error in full: the server's SQLSTATE and message when it sent one.
pub(crate) fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}
