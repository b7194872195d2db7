//! [`Host`]: the library entry point. Every operation exists once here and is called by every
//! adapter (CLI today; MCP and HTTP later).
//!
//! The host is the top of the crate: it builds the pieces and hands each the part it uses —
//! dispatch's [`Services`] to sessions, background tasks and reloads, the registry and the
//! runtime to the skills service. Nothing below imports this module.

use std::sync::Arc;

use crate::types::{ProgressReport, RosterEntry, TaskResult};
use guild_core::config::Config;
use guild_core::error::DispatchError;
use guild_http::{GuardedClient, HttpLimits};
use guild_receipts::{Receipt, VerifyReport};
use guild_runtime::{GuildEngine, IoBudget, Runtime};
use guild_skills::Skills;
use guild_validate::{Check, external};

use crate::HostError;
use crate::background::{
    Background, BackgroundError, TaskBackend, TaskCheck, TaskEvent, TaskRecord, TaskStore,
};
use crate::dispatch::{InFlight, Services, TaskGate};
use crate::engine::engine_options;
use crate::host_error::ReceiptsError;
use crate::memory::Memory;
use crate::registry::{PluginInfo, Registry};
use crate::reload::{ReloadReport, Reloader};
use crate::session::{Session, TaskRequest};
use crate::skills_host::HostSkills;

/// A running Guild host.
#[derive(Clone)]
pub struct Host {
    /// What every task uses; shared with sessions, background tasks and reloads.
    services: Arc<Services>,
    /// The plugin configuration in force and the lock that serialises reloads.
    reloader: Arc<Reloader>,
    default_session: Session,
    background: Arc<Background>,
    /// Re-scans skill folders so added, changed and removed skills show without a restart;
    /// stops when the last clone of the host is dropped.
    _skill_watcher: Arc<guild_skills::SkillWatcher>,
    /// While the first load runs ([`Host::open`]): the configured specialists it will bring;
    /// `None` once it published the set.
    loading: Arc<tokio::sync::watch::Sender<Option<Vec<String>>>>,
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
        let host = Self::open(config, engine).await?;
        host.load_plugins().await;
        Ok(host)
    }

    /// Opens a host on `engine` without loading its plugins yet: stores, memory, ledger and
    /// background tasks are ready, the plugin set is empty and [`Host::loading`] names every
    /// configured specialist until [`Host::load_plugins`] publishes the set. A server answers its
    /// clients meanwhile instead of waiting for the first compile.
    pub async fn open(config: Config, engine: GuildEngine) -> Result<Self, HostError> {
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
        let ledger = crate::stores::open_ledger(&config, &data_dir)?;
        let memory = Memory::open(&config).map_err(HostError::Memory)?;
        let (config_skills, base_dir) = (config.skills.clone(), config.base_dir.clone());
        let forest = crate::delegation::Forest::open(
            &config.delegate,
            &data_dir.join(crate::delegation::TREES_FILE),
        )
        .map_err(HostError::TreeStore)?;
        // Daily model budgets: on a shared database, shared with the other hosts; else llm.db.
        let env = |v: &str| std::env::var(v).ok();
        let llm = match crate::stores::open_shared_budgets(&config)? {
            Some(budgets) => {
                guild_llm::Broker::start_with_budgets(&config.llm, &config.base_dir, budgets, env)
            }
            None => guild_llm::Broker::start(&config.llm, &config.base_dir, Some(&data_dir), env),
        }
        .map_err(HostError::Llm)?;
        // On a shared database: join the other hosts (comparing plugin sets) before anything
        // of this host is written there (docs/postgres.md#joining).
        let shared_tasks = crate::stores::open_shared_tasks(&config)?;
        if let Some(shared) = &shared_tasks {
            crate::plugin_set::join_at_start(shared.clone(), &config).await?;
        }
        let reloader = Arc::new(Reloader::new(
            Arc::new(config.clone()),
            shared_tasks.clone(),
        ));
        let services = Arc::new(Services {
            runtime,
            tasks: TaskGate::new(
                config.dispatch.max_running_tasks,
                config.dispatch.max_queued_tasks,
            ),
            calls: InFlight::default(),
            config,
            ledger,
            skills: Arc::new(Skills::new(config_skills, base_dir)),
            memory,
            registry: Arc::new(Registry::default()),
            deferred: Arc::default(),
            llm,
            forest,
        });
        let store: Arc<dyn TaskBackend> = match shared_tasks {
            Some(shared) => shared,
            None => {
                let tasks_db = data_dir.join(crate::background::TASKS_FILE);
                Arc::new(
                    TaskStore::open(&tasks_db).map_err(|source| HostError::TaskStore {
                        path: tasks_db.clone(),
                        source,
                    })?,
                )
            }
        };
        let background = Arc::new(Background::new(services.clone(), store));
        crate::background::take_up_in_background(&background);
        let watcher = services
            .skills
            .watch(|change| {
                tracing::info!(folder = %change.dir.display(), diff = %change.diff, "skill catalog changed");
            })
            .map_err(HostError::Watcher)?;
        let configured = configured_specialists(&services.config);
        let host = Self {
            _skill_watcher: Arc::new(watcher),
            default_session: Session::new(services.clone()),
            background,
            reloader,
            services,
            loading: Arc::new(tokio::sync::watch::Sender::new(Some(configured))),
        };
        Ok(host)
    }

    /// The first load of a host [`Host::open`]ed: loads (compiling when the cache has no
    /// artifact) every configured plugin, publishes the set and ends [`Host::loading`]. Every
    /// plugin is loaded when it returns ([`Host::with_engine`] loads this way).
    pub async fn load_plugins(&self) -> ReloadReport {
        let report = self.reload_with(None).await;
        self.loading.send_replace(None);
        self.prime_skill_folders();
        report
    }

    /// The first load of a host [`Host::open`]ed, lazily: plugins whose code is cached (or
    /// that failed a check before any compile) are loaded and published as
    /// [`Host::load_plugins`] does, and the set is published without waiting for the others.
    /// Those are compiled by a background loader, one at a time, smallest first, each added to
    /// the set when ready ([`ReloadReport::queued`] names them; [`Host::loading`] lists them
    /// until then). A task naming one of them, or a connector or skill loader its specialist
    /// uses, moves it to the front and waits for it within the task's time; a failed load is
    /// the task's error. A later reload compiles the plugins new to it itself (its report says
    /// `loaded`), and leaves those still queued to the loader.
    /// [`Host::all_loaded`] waits for the queue. On a shared database (`[store] url`) hosts
    /// compare whole plugin sets, so nothing is deferred there.
    pub async fn load_plugins_lazily(&self) -> ReloadReport {
        self.services.deferred.set_lazy();
        self.load_plugins().await
    }

    /// Waits until the first load and every deferred load have ended, and returns the load
    /// errors then ([`Host::load_errors`]): an eager view of a lazy start.
    pub async fn all_loaded(&self) -> Vec<String> {
        self.loaded().await;
        self.services.deferred.all_loaded().await;
        self.load_errors()
    }

    /// Waits until the plugins a task on `specialist` (name or alias) uses are loaded: those of
    /// a lazy start still queued — the specialist, its granted tools' and `[requires]`
    /// connectors, its skill loaders — move to the front and are waited for, bounded only by
    /// each plugin's compile limits; the others keep compiling behind. A one-shot command calls
    /// it before its task, so that the task's own time (`[dispatch] task_timeout_s`) is spent
    /// on the task, as on an eager start. Returns at once when nothing is queued.
    pub async fn load_for(&self, specialist: &str) {
        let current = self.services.snapshot();
        // Without a deadline the wait ends only when the plugins left the queue.
        let _ = self
            .services
            .deferred
            .ready_for(&current, specialist, None)
            .await;
    }

    /// The configured specialists (by the names in their manifests) while the first load
    /// runs; then the specialists the background loader has not added yet, in its order.
    pub fn loading(&self) -> Vec<String> {
        if let Some(configured) = self.loading.borrow().clone() {
            return configured;
        }
        self.services
            .deferred
            .queued()
            .into_iter()
            .filter(|q| q.kind == guild_core::manifest::PluginKind::Specialist)
            .map(|q| q.name)
            .collect()
    }

    /// Every plugin (of any kind) the background loader has not added yet: the one compiling
    /// first, then the queue in order.
    pub fn queued(&self) -> Vec<String> {
        self.services
            .deferred
            .queued()
            .into_iter()
            .map(|q| q.name)
            .collect()
    }

    /// Marked changed whenever the background loader's queue changes: a plugin queued, taken,
    /// added to the set or failed ([`Host::queued`] then tells what is left).
    pub fn queue_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.services.deferred.subscribe()
    }

    /// Whether the first load, or a deferred load, is still running.
    pub fn is_loading(&self) -> bool {
        self.loading.borrow().is_some() || !self.services.deferred.is_empty()
    }

    /// Resolves once the first load has published the plugin set (at once if it has); plugins
    /// it deferred may still be loading ([`Host::all_loaded`]).
    pub async fn loaded(&self) {
        let mut published = self.loading.subscribe();
        // The sender lives as long as this host: the wait ends only by the set's publication.
        let _ = published.wait_for(Option::is_none).await;
    }

    /// The names of the deferred plugins in the order their compile started (for tests).
    #[doc(hidden)]
    pub fn deferred_order(&self) -> Vec<String> {
        self.services.deferred.started()
    }

    /// The lock the background loader takes before each plugin: a test holds it to see the
    /// order tasks make, never by timing.
    #[doc(hidden)]
    pub fn deferred_gate(&self) -> Arc<tokio::sync::Mutex<()>> {
        self.services.deferred.gate()
    }

    /// Scans every skill folder a specialist or the supervisor may see, on the blocking pool and
    /// without delaying start: the first task that asks for its catalog then finds it cached
    /// instead of waiting for a cold scan.
    fn prime_skill_folders(&self) {
        let snapshot = self.services.snapshot();
        let supervisor = self
            .services
            .skills
            .supervisor_sources()
            .unwrap_or_default();
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
        let skills = self.services.skills.clone();
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

    /// Reloads the plugin set: with `config`'s plugin folders and grants when given (a changed
    /// `guild.toml`), else with those in force. Other settings keep their values from the start.
    pub async fn reload_with(&self, config: Option<Config>) -> ReloadReport {
        let report = self.reloader.reload(&self.services, config).await;
        crate::background_load::start(&self.services, &self.reloader);
        crate::tiering::optimize_in_background(&self.services, &self.reloader);
        report
    }

    /// Errors of the last load, one line per plugin that failed.
    pub fn load_errors(&self) -> Vec<String> {
        self.services.snapshot().errors.clone()
    }

    /// Problems of the last load that did not stop a plugin loading, one line each: a tool a
    /// plugin requests or is granted that no loaded connector offers (with the nearest one).
    pub fn load_warnings(&self) -> Vec<String> {
        self.services.snapshot().warnings.clone()
    }

    /// The bytes of artifact `id` that `specialist` (name or alias) reported: read from its
    /// first granted folder, where validation resolves a report's artifacts, confined there
    /// (no `..`, no absolute path, no symlink out) and capped like validation's reads.
    /// `Ok(None)` when it is not there; an error names the specialist or the folder.
    pub fn artifact(&self, specialist: &str, id: &str) -> Result<Option<Vec<u8>>, String> {
        use guild_validate::ArtifactResolver as _;
        let snapshot = self.services.snapshot();
        let plugin = snapshot
            .resolve(specialist)
            .ok_or_else(|| format!("specialist '{specialist}' is no longer loaded"))?;
        let mount = plugin.runtime.effective().fs.first().ok_or_else(|| {
            format!("specialist '{specialist}' has no granted folder to hold artifacts")
        })?;
        let dir = guild_validate::DirResolver::open(&mount.host)
            .map_err(|e| format!("cannot open {}: {e}", mount.host.display()))?;
        dir.resolve(id).map_err(|e| e.to_string())
    }

    /// Every loaded plugin, sorted by name.
    pub fn plugins(&self) -> Vec<PluginInfo> {
        let snap = self.services.snapshot();
        snap.plugins.values().map(|p| snap.info(p)).collect()
    }

    /// One plugin by name or alias.
    pub fn plugin(&self, name: &str) -> Option<PluginInfo> {
        let snap = self.services.snapshot();
        snap.resolve(name).map(|p| snap.info(p))
    }

    /// The specialists that can be called now, sorted.
    pub fn roster(&self) -> Vec<RosterEntry> {
        self.services.snapshot().roster()
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

    /// Runs one task as [`Host::task`] does, anchored as `request` says: its
    /// `completion_criteria` and `constraints` are the root anchor of the tree it starts if it
    /// delegates (docs/delegation.md#the-root-anchor), and every brief in that tree must keep the
    /// constraints. `Err` also when the anchor breaks a rule (the error names the field).
    pub async fn task_request(&self, request: &TaskRequest) -> Result<TaskResult, DispatchError> {
        self.default_session.task_request(request).await
    }

    /// Specialist tasks running now and waiting for a slot now, host-wide (bounded by
    /// `[dispatch] max_running_tasks` and `max_queued_tasks`).
    pub fn task_load(&self) -> (usize, usize) {
        (self.services.tasks.running(), self.services.tasks.queued())
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
            self.services.calls.settled().await;
        }
        running
    }

    /// Mutating calls between their intent and their recorded outcome now.
    pub fn calls_running(&self) -> usize {
        self.services.calls.running()
    }

    /// A new session (its own invocation count and approver).
    pub fn session(&self) -> Session {
        Session::new(self.services.clone())
    }

    /// Starts a background task; returns its id at once.
    pub fn start_task(
        &self,
        specialist: &str,
        description: &str,
    ) -> Result<String, BackgroundError> {
        self.background.start(specialist, description, None)
    }

    /// Starts a background task anchored as `request` says (see [`Host::task_request`]); every
    /// attempt of it keeps the anchor.
    pub fn start_task_request(&self, request: &TaskRequest) -> Result<String, BackgroundError> {
        let anchor = request.anchor();
        self.background.start(
            &request.subagent_type,
            &request.description,
            anchor.as_ref(),
        )
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
        self.background.update(id, update)
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
    ) -> Result<Vec<Receipt>, ReceiptsError> {
        let ledger = self.services.ledger.clone();
        let task_id = task_id.map(str::to_owned);
        Ok(tokio::task::spawn_blocking(move || match task_id {
            Some(t) => ledger.for_task(&t),
            None => ledger.list(limit),
        })
        .await??)
    }

    /// Write transactions (each one fsync) the host's receipts ledger has committed since it
    /// opened; `None` on a shared PostgreSQL store, whose commits are the database's.
    /// Grouping shows here: a task's outcomes share the commits of its next intents.
    pub fn ledger_commits(&self) -> Option<u64> {
        match &self.services.ledger {
            crate::stores::LedgerBackend::Sqlite(ledger) => Some(ledger.commits()),
            crate::stores::LedgerBackend::Shared(_) => None,
        }
    }

    /// Checks the whole receipts chain; reports the first bad entry.
    pub async fn verify_receipts(&self) -> Result<VerifyReport, ReceiptsError> {
        let ledger = self.services.ledger.clone();
        Ok(tokio::task::spawn_blocking(move || ledger.verify()).await??)
    }

    /// Fetches a receipt's verifiable URL through the guarded client — no credentials, public
    /// addresses only unless `[host] verify_origins` names the origin — and says what it found.
    pub async fn verify_receipt(&self, id: &str) -> Result<Check, ReceiptsError> {
        use guild_http::{AllowList, EgressPolicy, HostPattern, OutboundRequest};
        let ledger = self.services.ledger.clone();
        let wanted = id.to_owned();
        let receipt = tokio::task::spawn_blocking(move || ledger.get(&wanted))
            .await??
            .ok_or_else(|| ReceiptsError::NotFound(id.to_owned()))?;
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
            .services
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
        let pattern = HostPattern::parse(&origin).map_err(|source| ReceiptsError::Origin {
            id: id.to_owned(),
            source,
        })?;
        let policy = EgressPolicy {
            plugin: "host:verify_receipt".to_owned(),
            requested: AllowList::new(vec![pattern.clone()]),
            granted: AllowList::new(vec![pattern]),
            secrets: Vec::new(),
        };
        Ok(
            match self
                .services
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
        self.services.runtime.engine()
    }

    /// Team and private memory of the workspace and user `[memory]` names (supervisor access:
    /// no grant check, updates recorded as `supervisor`).
    pub fn memory(&self) -> &Memory {
        &self.services.memory
    }

    /// The delegation tree `task_id` belongs to (as root or as any node), root first
    /// (docs/delegation.md); `None` when the task started no child and is no child.
    pub fn task_tree(&self, task_id: &str) -> Option<crate::delegation::TreeView> {
        self.services.forest.view(task_id)
    }

    /// The configuration this host runs with.
    pub fn config(&self) -> &Config {
        &self.services.config
    }

    /// The skills of this host: catalogs per caller, disclosure, loaders.
    ///
    /// The service is the host's own, shared with the specialists' `skills` import, so its
    /// folder cache and watcher serve both.
    pub fn skills(&self) -> HostSkills {
        HostSkills::new(
            self.services.runtime.clone(),
            self.services.registry.clone(),
            self.services.skills.clone(),
        )
    }

    /// What every task uses (for the crate's tests that drive a task scope directly).
    #[cfg(test)]
    pub(crate) fn services(&self) -> &Arc<Services> {
        &self.services
    }
}

/// The specialists `config` names (from their manifests; a folder whose manifest does not
/// parse is left to the load to report), as [`Host::loading`] lists them before they load.
fn configured_specialists(config: &Config) -> Vec<String> {
    let folders = config.plugin_folders().unwrap_or_default();
    let mut names: Vec<String> = folders
        .iter()
        .filter_map(|dir| guild_core::manifest::Manifest::load(dir).ok())
        .filter(|m| m.plugin.kind == guild_core::manifest::PluginKind::Specialist)
        .map(|m| m.name().to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}
