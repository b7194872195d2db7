//! [`HostError`]: why a [`crate::Host`] could not start, one variant per part it starts; and
//! [`ReceiptsError`]: why a receipts query on a running host failed.

use std::path::PathBuf;

use thiserror::Error;

use crate::background::StoreError;
use guild_receipts::LedgerError;
use guild_runtime::PrepareError;

/// Why [`crate::Host::new`] or [`crate::Host::with_engine`] failed. Each variant names the part
/// that did not start and, where there is one, the file or folder.
#[derive(Debug, Error)]
pub enum HostError {
    /// The wasm engine (compiler, pooling allocator, compile cache) could not be created.
    #[error("failed to create the wasm engine: {0}")]
    Engine(#[source] guild_runtime::EngineError),
    /// The host interfaces could not be linked into the engine.
    #[error("failed to link host interfaces: {0}")]
    Link(#[source] PrepareError),
    /// The data folder (`[host] data_dir`) could not be created.
    #[error(
        "failed to create the data folder {}: {source}; check `[host] data_dir` in guild.toml",
        path.display()
    )]
    DataDir {
        /// The folder.
        path: PathBuf,
        /// The filesystem error.
        source: std::io::Error,
    },
    /// The receipts ledger could not be opened (the error names the file, or the database of
    /// `[store] url`).
    #[error(transparent)]
    Ledger(#[from] crate::stores::StoreOpenError),
    /// The background task store could not be opened.
    #[error("failed to open the task store {}: {source}", path.display())]
    TaskStore {
        /// The `tasks.db` file.
        path: PathBuf,
        /// What went wrong.
        source: StoreError,
    },
    /// The delegation tree store could not be opened or read (the error names the file).
    #[error("failed to open the tree store: {0}")]
    TreeStore(#[source] crate::delegation::TreeStoreError),
    /// The memory store could not be opened (the error names the file).
    #[error("failed to open the memory store: {0}")]
    Memory(#[source] crate::memory::MemoryError),
    /// The model broker could not start (a key variable is not set, the budget store).
    #[error("failed to start model access (`[llm]`): {0}")]
    Llm(#[source] guild_llm::StartError),
    /// The skill folder watcher could not be started.
    #[error("failed to start the skill folder watcher: {0}")]
    Watcher(#[source] std::io::Error),
}

/// Why [`crate::Host::receipts`], [`crate::Host::verify_receipts`] or
/// [`crate::Host::verify_receipt`] failed (a receipt whose URL cannot be checked is not an
/// error: it is a check that says so).
#[derive(Debug, Error)]
pub enum ReceiptsError {
    /// The ledger could not be read (the error names the file).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// No receipt has this id.
    #[error("no receipt with id {0}")]
    NotFound(String),
    /// The receipt's URL is not one an origin pattern can name.
    #[error("receipt {id}: its URL has no origin to check: {source}")]
    Origin {
        /// The receipt.
        id: String,
        /// Why the origin is not a pattern.
        source: guild_http::PatternError,
    },
    /// The blocking read of the ledger did not finish (the runtime is shutting down).
    #[error("the ledger read did not finish: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
}
