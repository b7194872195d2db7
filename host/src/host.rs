//! [`Host`]: the library entry point. Every operation exists once here and is called by every
//! adapter (CLI today; MCP and HTTP later).

use std::sync::{Arc, RwLock};

use anyhow::Context;
use wasmtime::component::Linker;

use crate::config::Config;
use crate::engine::{EngineOptions, GuildEngine};
use crate::error::DispatchError;
use crate::http::{GuardedClient, HttpLimits};
use crate::registry::{self, PluginInfo, Snapshot};
use crate::runtime::{self, state::StoreState};
use crate::session::Session;
use crate::types::{RosterEntry, TaskResult};

/// State shared by the host and every instance it creates.
pub(crate) struct Shared {
    pub(crate) engine: GuildEngine,
    pub(crate) config: Config,
    pub(crate) linker: Linker<StoreState>,
    pub(crate) http: GuardedClient,
    registry: RwLock<Arc<Snapshot>>,
}

impl Shared {
    /// The current plugin set; a task keeps the one it started with.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        // A poisoned lock means a panic while swapping an `Arc`: the old value is still whole.
        self.registry
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn swap(&self, snapshot: Snapshot) {
        *self.registry.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
    }
}

/// A running Guild host.
#[derive(Clone)]
pub struct Host {
    shared: Arc<Shared>,
    default_session: Session,
}

impl Host {
    /// Starts a host for `config` with its own engine (compile cache in `DATA_DIR/cache`) and
    /// loads every configured plugin.
    pub async fn new(config: Config) -> anyhow::Result<Self> {
        let cache_dir = config
            .host
            .compile_cache
            .then(|| config.data_dir().join("cache"));
        let engine = GuildEngine::new(EngineOptions {
            cache_dir,
            ..EngineOptions::default()
        })
        .context("failed to create the wasm engine")?;
        Self::with_engine(config, engine).await
    }

    /// Starts a host on an existing engine (several hosts may share one, and its caches).
    pub async fn with_engine(config: Config, engine: GuildEngine) -> anyhow::Result<Self> {
        let linker = runtime::linker(&engine).context("failed to link host interfaces")?;
        let shared = Arc::new(Shared {
            engine,
            config,
            linker,
            http: GuardedClient::new(HttpLimits::default()),
            registry: RwLock::new(Arc::new(Snapshot::default())),
        });
        let host = Self {
            default_session: Session::new(shared.clone()),
            shared,
        };
        host.reload().await;
        Ok(host)
    }

    /// Loads every configured plugin again and swaps the new set in atomically. Running tasks
    /// finish on the versions they started with. Returns the load errors (the plugins that
    /// failed are left out; the others serve).
    pub async fn reload(&self) -> Vec<String> {
        let snapshot = registry::load_all(&self.shared).await;
        let errors = snapshot.errors.clone();
        self.shared.swap(snapshot);
        errors
    }

    /// Errors of the last load, one line per plugin that failed.
    pub fn load_errors(&self) -> Vec<String> {
        self.shared.snapshot().errors.clone()
    }

    /// Every loaded plugin, sorted by name.
    pub fn plugins(&self) -> Vec<PluginInfo> {
        let snap = self.shared.snapshot();
        snap.plugins.values().map(|p| snap.info(p)).collect()
    }

    /// One plugin by name or alias.
    pub fn plugin(&self, name: &str) -> Option<PluginInfo> {
        let snap = self.shared.snapshot();
        snap.resolve(name).map(|p| snap.info(p))
    }

    /// The specialists that can be called now, sorted.
    pub fn roster(&self) -> Vec<RosterEntry> {
        self.shared.snapshot().roster()
    }

    /// Runs one task: one specialist, one self-contained brief, in a fresh instance.
    ///
    /// `Err` only when the task cannot start (unknown or unavailable specialist, bad
    /// description); everything that happens inside the task, including traps and timeouts,
    /// is reported in the [`TaskResult`].
    pub async fn task(
        &self,
        specialist: &str,
        description: &str,
    ) -> Result<TaskResult, DispatchError> {
        self.default_session.task(specialist, description).await
    }

    /// A new session (its own invocation count and approver).
    pub fn session(&self) -> Session {
        Session::new(self.shared.clone())
    }

    /// The engine (to share it with another host).
    pub fn engine(&self) -> &GuildEngine {
        &self.shared.engine
    }

    /// The configuration this host runs with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The state shared with every instance (for crate modules that extend `Host`, e.g. skills).
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}
