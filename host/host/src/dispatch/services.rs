//! [`Services`]: what dispatch needs from the host to run a task, handed down as plain data.
//! The host builds it once and shares it with sessions, background tasks and reloads; every
//! task's [`super::TaskScope`] holds it. Instances never see it: their store state holds the
//! runtime and, for a specialist, the task's narrow `TaskHost` view.

use std::sync::Arc;

use guild_core::config::Config;
use guild_runtime::Runtime;
use guild_skills::Skills;

use super::{InFlight, TaskGate};
use crate::memory::Memory;
use crate::registry::{Registry, Snapshot};
use crate::stores::LedgerBackend;

/// The host services a task uses: engine and linkers, settings, receipts, skills, memory, the
/// current plugin set, and the bounds on running tasks and open mutating calls.
pub(crate) struct Services {
    /// Runs specialists, connectors and skill loaders, each call in a fresh instance.
    pub(crate) runtime: Runtime,
    /// The settings the host started with (dispatch limits, skills, delivery).
    pub(crate) config: Config,
    /// The receipts ledger: tool-call and memory receipts, reload audits (SQLite or shared).
    pub(crate) ledger: LedgerBackend,
    /// The skills service (settings, folder cache, watcher).
    pub(crate) skills: Arc<Skills>,
    /// Team and private memory of the workspace and user `[memory]` names.
    pub(crate) memory: Memory,
    /// The current plugin set; a task keeps the one it started with.
    pub(crate) registry: Arc<Registry>,
    /// The plugins a lazy start left to the background loader; a task waits for its own.
    pub(crate) deferred: Arc<crate::deferred::Deferred>,
    /// Bounds the specialists running at once, host-wide, and the queue in front of them.
    pub(crate) tasks: TaskGate,
    /// Mutating calls between their intent and their recorded outcome.
    pub(crate) calls: InFlight,
    /// Model calls on the operator's `[llm]` endpoints (docs/models.md).
    pub(crate) llm: guild_llm::Broker,
    /// Every delegation tree: nodes, budgets, pending reviews (docs/delegation.md).
    pub(crate) forest: crate::delegation::Forest,
}

impl Services {
    /// The current plugin set.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.registry.snapshot()
    }
}
