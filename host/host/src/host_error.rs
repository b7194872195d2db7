//! [`HostError`]: why a [`crate::Host`] could not start, one variant per part it starts.

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
    /// The receipts ledger could not be opened (the error names the file).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The background task store could not be opened.
    #[error("failed to open the task store {}: {source}", path.display())]
    TaskStore {
        /// The `tasks.db` file.
        path: PathBuf,
        /// What went wrong.
        source: StoreError,
    },
    /// The memory store could not be opened (the error names the file).
    #[error("failed to open the memory store: {0}")]
    Memory(#[source] crate::memory::MemoryError),
    /// The skill folder watcher could not be started.
    #[error("failed to start the skill folder watcher: {0}")]
    Watcher(#[source] std::io::Error),
}
