//! [`Host`]: the library entry point. Every operation exists once here and is called by every
//! adapter (CLI today; MCP and HTTP later).

use std::sync::{Arc, RwLock};

use crate::types::{ProgressReport, RosterEntry, TaskResult};
use guild_core::config::Config;
use guild_core::error::DispatchError;
use guild_http::{GuardedClient, HttpLimits};
use guild_receipts::{Ledger, Receipt, VerifyReport};
use guild_runtime::{CompileHelper, EngineOptions, GuildEngine, IoBudget, Runtime};
use guild_skills::Skills;
use guild_validate::{Check, external};

use crate::HostError;
use crate::background::{Background, BackgroundError, TaskCheck, TaskEvent, TaskRecord, TaskStore};
use crate::memory::Memory;
use crate::registry::{PluginInfo, Snapshot};
use crate::session::Session;

/// State shared by the host, its sessions and the tasks it runs. Instances never see it: their
/// store state holds the [`Runtime`] and, for a specialist, the task's narrow `TaskHost` view.
pub(crate) struct Shared {
    pub(crate) runtime: Runtime,
    pub(crate) config: Config,
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) skills: Arc<Skills>,
    /// Team and private memory of the workspace and user `[memory]` names.
    pub(crate) memory: Memory,
    registry: RwLock<Arc<Snapshot>>,
    /// The configuration the current plugin set was loaded with (plugin folders and grants);
    /// a reload may bring a newer one. Every other setting keeps its value from the start.
    plugin_config: RwLock<Arc<Config>>,
    /// Serialises reloads: one loads and swaps at a time.
    pub(crate) reloading: tokio::sync::Mutex<()>,
    /// Bounds the specialists running at once, host-wide, and the queue in front of them.
    pub(crate) tasks: crate::dispatch::TaskGate,
    /// Mutating calls between their intent and their recorded outcome.
    pub(crate) calls: crate::dispatch::InFlight,
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

    pub(crate) fn swap(&self, snapshot: Snapshot) {
        *self.registry.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
    }

    /// The plugin folders and grants in force.
    pub(crate) fn plugin_config(&self) -> Arc<Config> {
        self.plugin_config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn set_plugin_config(&self, config: Arc<Config>) {
        *self
            .plugin_config
            .write()
            .unwrap_or_else(|p| p.into_inner()) = config;
    }
}

/// The engine options `config` asks for: the compile cache in `DATA_DIR/cache` and, with it,
/// the compile helper. A bundle install and `guild build` compile with the same options, so the
/// cache entry they leave is the one the host then loads (docs/plugin-authors.md).
pub fn engine_options(config: &Config) -> EngineOptions {
    let cache_dir = config
        .host
        .compile_cache
        .then(|| config.data_dir().join("cache"));
    // Compiling in a child needs the disk cache, where the child leaves its result.
    let compile_helper = match (&config.host.compile_helper, &cache_dir) {
        (Some(program), Some(_)) => Some(CompileHelper {
            program: program.clone(),
            timeout: std::time::Duration::from_secs(config.host.compile_timeout_s.into()),
            memory_mb: config.host.compile_memory_mb,
        }),
        _ => None,
    };
    EngineOptions {
        cache_dir,
        compile_helper,
        ..EngineOptions::default()
    }
}

/// A running Guild host.
#[derive(Clone)]
pub struct Host {
    shared: Arc<Shared>,
    default_session: Session,
    background: Arc<Background>,
    /// Re-scans skill folders so added, changed and removed skills show without a restart;
    /// stops when the last clone of the host is dropped.
    _skill_watcher: Arc<guild_skills::SkillWatcher>,
}

impl Host {
    /// Starts a host for `config` with its own engine (compile cache in `DATA_DIR/cache`) and
    /// loads every configured plugin.
    pub async fn new(config: Config) -> Result<Self, HostError> {
        let engine = GuildEngine::new(engine_options(&config)).map_err(HostError::Engine)?;
        Self::with_engine(config, engine).await
    }

    /// Starts a host on an existing engine (several hosts may share one, and its caches).
    pub async fn with_engine(config: Config, engine: GuildEngine) -> Result<Self, HostError> {
        let runtime = Runtime::new(
            engine,
            GuardedClient::new(HttpLimits::default()),
            IoBudget {
                stdio_kb: config.host.stdio_kb,
                hostcall_kb: config.host.hostcall_kb,
                max_handles: config.host.max_handles,
                max_refused_calls: config.dispatch.max_tool_calls,
            },
        )
        .map_err(HostError::Link)?;
        let data_dir = config.data_dir();
        std::fs::create_dir_all(&data_dir).map_err(|source| HostError::DataDir {
            path: data_dir.clone(),
            source,
        })?;
        crate::bundle_install::clean_staging(&config);
        let ledger = Arc::new(Ledger::open(data_dir.join(crate::receipts::LEDGER_FILE))?);
        let memory = Memory::open(&config).map_err(HostError::Memory)?;
        let (config_skills, base_dir) = (config.skills.clone(), config.base_dir.clone());
        let shared = Arc::new(Shared {
            runtime,
            plugin_config: RwLock::new(Arc::new(config.clone())),
            reloading: tokio::sync::Mutex::new(()),
            tasks: crate::dispatch::TaskGate::new(
                config.dispatch.max_running_tasks,
                config.dispatch.max_queued_tasks,
            ),
            calls: crate::dispatch::InFlight::default(),
            config,
            ledger,
            skills: Arc::new(Skills::new(config_skills, base_dir)),
            memory,
            registry: RwLock::new(Arc::new(Snapshot::default())),
        });
        let tasks_db = data_dir.join(crate::background::TASKS_FILE);
        let store = TaskStore::open(&tasks_db).map_err(|source| HostError::TaskStore {
            path: tasks_db.clone(),
            source,
        })?;
        let background = Arc::new(Background::new(
            store,
            shared.config.dispatch.batch_concurrency,
        ));
        let watcher = shared
            .skills
            .watch(|change| {
                tracing::info!(folder = %change.dir.display(), diff = %change.diff, "skill catalog changed");
            })
            .map_err(HostError::Watcher)?;
        let host = Self {
            _skill_watcher: Arc::new(watcher),
            default_session: Session::new(shared.clone()),
            background,
            shared,
        };
        host.reload().await;
        host.prime_skill_folders();
        Ok(host)
    }

    /// Scans every skill folder a specialist or the supervisor may see, on the blocking pool and
    /// without delaying start: the first task that asks for its catalog then finds it cached
    /// instead of waiting for a cold scan.
    fn prime_skill_folders(&self) {
        let snapshot = self.shared.snapshot();
        let supervisor = self.shared.skills.supervisor_sources().unwrap_or_default();
        let folders: Vec<(std::path::PathBuf, String)> = snapshot
            .plugins
            .values()
            .flat_map(|p| p.skill_sources.iter())
            .chain(supervisor.iter())
            .filter_map(|source| match source {
                crate::skills::SkillSource::Folder { path, label, .. } => {
                    Some((path.clone(), label.clone()))
                }
                crate::skills::SkillSource::Loader { .. } => None,
            })
            .collect();
        if folders.is_empty() {
            return;
        }
        let skills = self.shared.skills.clone();
        tokio::task::spawn_blocking(move || {
            for (path, label) in folders {
                skills.folder(&path, &label);
            }
        });
    }

    /// Loads every configured plugin again and swaps the new set in atomically. Running tasks
    /// finish on the versions they started with. Returns the load errors (a plugin whose new
    /// version failed keeps its old version serving; one that never loaded is left out).
    pub async fn reload(&self) -> Vec<String> {
        self.reload_with(None).await.errors
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

    /// Specialist tasks running now and waiting for a slot now, host-wide (bounded by
    /// `[dispatch] max_running_tasks` and `max_queued_tasks`).
    pub fn task_load(&self) -> (usize, usize) {
        (self.shared.tasks.running(), self.shared.tasks.queued())
    }

    /// Waits until every mutating call this host started has recorded its outcome, and
    /// returns how many were still running. A call outlives the task that made it (a timeout
    /// or cancel ends the task, not the call), so whoever is about to stop the host calls this
    /// first, or the calls would end with the process and their receipts stay `unknown`. Each
    /// call is bounded by its own timeout (`[limits] timeout_s`).
    pub async fn finish_calls(&self) -> usize {
        let running = self.calls_running();
        if running > 0 {
            tracing::info!(
                running,
                "waiting for mutating calls to record their outcome"
            );
            self.shared.calls.settled().await;
        }
        running
    }

    /// Mutating calls between their intent and their recorded outcome now.
    pub fn calls_running(&self) -> usize {
        self.shared.calls.running()
    }

    /// A new session (its own invocation count and approver).
    pub fn session(&self) -> Session {
        Session::new(self.shared.clone())
    }

    /// Starts a background task; returns its id at once.
    pub fn start_task(
        &self,
        specialist: &str,
        description: &str,
    ) -> Result<String, BackgroundError> {
        self.background.start(&self.shared, specialist, description)
    }

    /// Status, reports since the last check, and the result when done.
    pub fn check_task(&self, id: &str) -> Result<TaskCheck, BackgroundError> {
        self.background.check(id)
    }

    /// Every report a background task sent, those a check already returned included: the
    /// reports of a finished or interrupted task can be shown again.
    pub fn task_reports(&self, id: &str) -> Result<Vec<ProgressReport>, BackgroundError> {
        self.background.reports(id)
    }

    /// Cancels the running attempt and restarts it with the original brief plus every update
    /// appended (same id). Returns the new attempt number.
    pub fn update_task(&self, id: &str, update: &str) -> Result<u32, BackgroundError> {
        self.background.update(&self.shared, id, update)
    }

    /// Answers the approval request a background task is waiting on (see
    /// [`TaskCheck::pending_approval`]).
    pub fn approve_task(&self, id: &str, approved: bool) -> Result<(), BackgroundError> {
        self.background.approve(id, approved)
    }

    /// Cancels a live background task.
    pub fn cancel_task(&self, id: &str) -> Result<(), BackgroundError> {
        self.background.cancel(id)
    }

    /// The parent of a background task went away (session closed): it runs on, but its
    /// reports fail with [`crate::PARENT_GONE`].
    pub fn detach_task(&self, id: &str) -> Result<(), BackgroundError> {
        self.background.detach(id)
    }

    /// Background tasks, newest first.
    pub fn list_tasks(&self, limit: usize) -> Result<Vec<TaskRecord>, BackgroundError> {
        self.background.list(limit)
    }

    /// Waits for a background task to finish (or be cancelled) and returns its record.
    pub async fn wait_task(&self, id: &str) -> Result<TaskRecord, BackgroundError> {
        self.background.wait(id).await
    }

    /// Waits until a background task has ended (succeeded, failed, timed out, cancelled or
    /// interrupted) and returns its record. Unlike [`Host::wait_task`] it leaves the task to
    /// the host: several callers may wait, the task stays cancellable, and dropping the
    /// future changes nothing.
    pub async fn until_task_ended(&self, id: &str) -> Result<TaskRecord, BackgroundError> {
        self.background.until_ended(id).await
    }

    /// Reports of background tasks as they arrive (`wakeup` delivery only).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<TaskEvent> {
        self.background.subscribe()
    }

    /// Receipts, newest first, or those of one task.
    pub async fn receipts(
        &self,
        task_id: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<Receipt>> {
        let ledger = self.shared.ledger.clone();
        let task_id = task_id.map(str::to_owned);
        Ok(tokio::task::spawn_blocking(move || match task_id {
            Some(t) => ledger.for_task(&t),
            None => ledger.list(limit),
        })
        .await??)
    }

    /// Checks the whole receipts chain; reports the first bad entry.
    pub async fn verify_receipts(&self) -> anyhow::Result<VerifyReport> {
        let ledger = self.shared.ledger.clone();
        Ok(tokio::task::spawn_blocking(move || ledger.verify()).await??)
    }

    /// Fetches a receipt's verifiable URL through the guarded client — no credentials, public
    /// addresses only unless `[host] verify_origins` names the origin — and says what it found.
    pub async fn verify_receipt(&self, id: &str) -> anyhow::Result<Check> {
        use guild_http::{AllowList, EgressPolicy, HostPattern, OutboundRequest};
        let ledger = self.shared.ledger.clone();
        let wanted = id.to_owned();
        let receipt = tokio::task::spawn_blocking(move || ledger.get(&wanted))
            .await??
            .ok_or_else(|| anyhow::anyhow!("no receipt with id {id}"))?;
        let url = match external::target(&receipt) {
            Ok(url) => url,
            Err(check) => return Ok(check),
        };
        let url = match crate::http::normalize_url(url.clone()) {
            Ok(normal) => normal,
            Err(e) => return Ok(external::fetch_failed(&receipt, &url, &e.to_string())),
        };
        let origin = match url.port() {
            Some(p) => format!(
                "{}://{}:{p}",
                url.scheme(),
                url.host_str().unwrap_or_default()
            ),
            None => format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default()),
        };
        let listed = self
            .shared
            .config
            .host
            .verify_origins
            .iter()
            .any(|o| o == &origin);
        // An exact origin pattern names an IP literal or `localhost`, which the guarded client
        // would then reach; such hosts are allowed only when the operator listed them.
        let names_special = crate::http::names_special_host(&url);
        if names_special && !listed {
            return Ok(external::fetch_failed(
                &receipt,
                &url,
                &format!(
                    "{origin} is not a public address; list it in [host] verify_origins to allow it"
                ),
            ));
        }
        let pattern = HostPattern::parse(&origin)?;
        let policy = EgressPolicy {
            plugin: "host:verify_receipt".to_owned(),
            requested: AllowList::new(vec![pattern.clone()]),
            granted: AllowList::new(vec![pattern]),
            secrets: Vec::new(),
        };
        Ok(
            match self
                .shared
                .runtime
                .http()
                .send(&policy, OutboundRequest::get(url.as_str()))
                .await
            {
                Ok(resp) => external::interpret(&receipt, &resp.url, resp.status, &resp.body),
                Err(e) => external::fetch_failed(&receipt, &url, &e.to_string()),
            },
        )
    }

    /// The engine (to share it with another host).
    pub fn engine(&self) -> &GuildEngine {
        self.shared.runtime.engine()
    }

    /// Team and private memory of the workspace and user `[memory]` names (supervisor access:
    /// no grant check, updates recorded as `supervisor`).
    pub fn memory(&self) -> &Memory {
        &self.shared.memory
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
