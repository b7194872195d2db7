//! The MCP adapter: one [`Connection`] per client session (stdio has one, streamable HTTP one
//! per MCP session), all over one shared [`Server`] (the host, the reload entry point, the
//! drain flag and the clients to tell when the tool list changes). Every tool is a thin call
//! into `guild_host::Host`; results carry the text the CLI prints plus `structuredContent`, and
//! failures are `isError` results with the library's message. Skills and memory documents
//! are also resources ([`resources`]); with `wakeup` delivery, background reports are also log
//! notifications ([`wakeup`]); clients that declare the Tasks extension get a `task` call as a
//! background task, with `tasks/get`, `tasks/cancel`, `tasks/list` and `tasks/result`
//! ([`tasks_ext`]); clients on protocol 2025-11-25 get that protocol's Tasks (a
//! task-augmented `tools/call` of `task`, [`tasks_2025`]). Each specialist is also a prompt ([`prompts`]). A task result links each
//! artifact its report references as a resource ([`artifacts`]).

mod annotations;
mod approvals;
mod artifacts;
mod calls;
mod malformed;
mod memory;
mod prompts;
mod resources;
mod skills_ext;
mod tasks_2025;
mod tasks_ext;
mod tools;
mod wakeup;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use guild_host::skills::TaskSkills;
use guild_host::{Config, Host, ReloadReport, TaskInput};
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;

/// What every connection of one `guild serve` shares.
pub(crate) struct Server {
    host: Host,
    config_path: PathBuf,
    /// Set on shutdown: no new task is taken.
    draining: AtomicBool,
    /// `task` calls running now (background tasks are counted by the host).
    running: AtomicUsize,
    /// Clients to notify when the tool list or the resources change.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Open `subscriptions/listen` streams (protocol 2026-07-28): the same changes, sent on the
    /// stream each client opened.
    /// Each under a number of its own (request ids repeat across sessions).
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
    /// The next listener's number.
    next_listener: std::sync::atomic::AtomicU64,
    /// The supervisor's skill set as last seen ([`resources::signature`]): a reload that
    /// changes it sends `notifications/resources/list_changed`.
    skill_set: tokio::sync::Mutex<Option<String>>,
    /// The artifact links task results handed out, for `resources/read`.
    artifacts: artifacts::Artifacts,
    /// Clients whose tools or prompts were listed while the start-up load ran: told when it
    /// ends ([`Server::load_plugins`]).
    listed_while_loading: Mutex<Vec<Peer<RoleServer>>>,
    /// HTTP sessions whose tool calls are answered in their connection ([`crate::direct_call`]).
    direct: Arc<crate::direct_call::Sessions>,
}

impl Server {
    pub(crate) fn new(host: Host, config_path: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            host,
            config_path,
            draining: AtomicBool::new(false),
            running: AtomicUsize::new(0),
            peers: Mutex::new(Vec::new()),
            listeners: Mutex::new(Vec::new()),
            next_listener: std::sync::atomic::AtomicU64::new(0),
            skill_set: tokio::sync::Mutex::new(None),
            artifacts: artifacts::Artifacts::default(),
            listed_while_loading: Mutex::new(Vec::new()),
            direct: Arc::default(),
        })
    }

    /// The HTTP sessions whose tool calls the HTTP layer may answer itself.
    pub(crate) fn direct_calls(&self) -> Arc<crate::direct_call::Sessions> {
        self.direct.clone()
    }

    pub(crate) fn host(&self) -> &Host {
        &self.host
    }

    /// Stops taking new tasks (running ones go on).
    pub(crate) fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Tasks still running: synchronous `task` calls and live background tasks.
    pub(crate) fn busy(&self) -> usize {
        let background = self
            .host
            .list_tasks(1000)
            .map(|ts| ts.iter().filter(|t| t.status.is_live()).count())
            .unwrap_or(0);
        self.running.load(Ordering::SeqCst) + background
    }

    /// The host's first load of its plugins, run behind a server that already answers: the
    /// roster is empty and the plugins are listed as loading until it ends. It is lazy
    /// ([`Host::load_plugins_lazily`]): plugins whose code is cached load now, the others
    /// compile in the background and stay listed as loading until each is ready. When the
    /// first load ends, and again when the last deferred plugin is ready, the clients that
    /// listed meanwhile get `notifications/tools/list_changed` and `prompts/list_changed`,
    /// every client `resources/list_changed` when the skills changed. Progress goes to stderr
    /// (the host's log).
    pub(crate) async fn load_plugins(&self) -> ReloadReport {
        let loading = self.host.loading();
        let started = std::time::Instant::now();
        eprintln!(
            "guild serve: loading the plugins ({} specialist(s): {}); clients are served \
             meanwhile, tasks wait for the plugins they use",
            loading.len(),
            loading.join(", ")
        );
        let report = self.host.load_plugins_lazily().await;
        crate::start::warn_load_problems(&self.host);
        let queued = match report.queued.is_empty() {
            true => String::new(),
            false => format!(
                "; compiling {} in the background (listed as loading until ready)",
                report.queued.join(", ")
            ),
        };
        eprintln!(
            "guild serve: plugins ready in {:.1} s: {} specialist(s) on the roster, {} plugin(s) \
             failed to load{queued}",
            started.elapsed().as_secs_f64(),
            self.host.roster().len(),
            report.errors.len()
        );
        self.notify_listed_while_loading().await;
        if self.skill_set_changed().await {
            self.notify_all(Changed::Resources).await;
        }
        if !report.queued.is_empty() {
            self.follow_the_queue(started).await;
        }
        report
    }

    /// Follows the background loader until its queue is empty: each time a plugin joins the
    /// set, the clients that listed while it loaded get `notifications/tools/list_changed`
    /// and `prompts/list_changed`; at the end the deferred load errors and the warnings that
    /// need every connector go to stderr, and every client `resources/list_changed` when the
    /// skills changed.
    async fn follow_the_queue(&self, started: std::time::Instant) {
        let errors_before = self.host.load_errors().len();
        let mut changes = self.host.queue_changes();
        let mut left = self.host.queued();
        while !left.is_empty() {
            if changes.changed().await.is_err() {
                break;
            }
            let now = self.host.queued();
            let done: Vec<&String> = left.iter().filter(|n| !now.contains(n)).collect();
            for name in &done {
                eprintln!(
                    "guild serve: {name} done loading after {:.1} s; {} still loading",
                    started.elapsed().as_secs_f64(),
                    now.len()
                );
            }
            if !done.is_empty() {
                self.notify_listed_while_loading().await;
            }
            left = now;
        }
        let errors = self.host.all_loaded().await;
        for line in errors
            .iter()
            .skip(errors_before)
            .chain(&self.host.load_warnings())
        {
            eprintln!("warning: {}", guild_host::text::for_terminal(line));
        }
        eprintln!(
            "guild serve: every plugin loaded in {:.1} s: {} specialist(s) on the roster",
            started.elapsed().as_secs_f64(),
            self.host.roster().len()
        );
        self.notify_listed_while_loading().await;
        if self.skill_set_changed().await {
            self.notify_all(Changed::Resources).await;
        }
    }

    /// Waits until the host's plugins are loaded: a task sent while they load runs once they
    /// are (see docs/operations.md, Start-up).
    pub(crate) async fn ready(&self) {
        self.host.loaded().await;
    }

    /// Waits for the host's plugins, those compiling in the background included, for at most
    /// `[serve] load_wait_ms`: a list answered after it has the whole roster when the load is
    /// quick, and names the specialists still loading when it is not. (A task waits for its
    /// own plugins only.)
    async fn ready_for_a_list(&self) {
        let wait = std::time::Duration::from_millis(self.host.config().serve.load_wait_ms);
        let _ = tokio::time::timeout(wait, self.host.all_loaded()).await;
    }

    /// Reads `guild.toml` again and reloads the plugins with its folders and grants; tells
    /// every client when the tool list (the roster) changed.
    pub(crate) async fn reload(&self) -> anyhow::Result<ReloadReport> {
        let path = self.config_path.clone();
        let config = tokio::task::spawn_blocking(move || Config::load(&path))
            .await?
            .with_context(|| {
                format!(
                    "failed to load {}: the plugins in force keep serving",
                    self.config_path.display()
                )
            })?;
        let report = self.host.reload_with(Some(config)).await;
        for e in &report.errors {
            tracing::warn!("reload: {e}");
        }
        if report.changed() {
            tracing::info!("reload: {}", report.render().trim_end().replace('\n', "; "));
        }
        if report.roster_changed {
            self.notify_all(Changed::Tools).await;
            self.notify_all(Changed::Prompts).await;
        }
        if self.skill_set_changed().await {
            self.notify_all(Changed::Resources).await;
        }
        Ok(report)
    }

    /// Records the supervisor's current skill set; true when it differs from the one seen
    /// before (never on the first look).
    async fn skill_set_changed(&self) -> bool {
        let skills = self.host.skills();
        // The skills watcher re-scans on its own interval; a reload sees the folders as they
        // are now.
        let service = skills.service().clone();
        if let Err(e) = tokio::task::spawn_blocking(move || service.refresh()).await {
            tracing::warn!("failed to re-scan the skill folders: {e}");
        }
        let now = match skills.catalog(None).await {
            Ok(catalog) => resources::signature(&catalog),
            Err(e) => {
                tracing::warn!("cannot list the supervisor's skills: {e}");
                return false;
            }
        };
        let mut seen = self.skill_set.lock().await;
        let changed = seen.as_ref().is_some_and(|before| *before != now);
        *seen = Some(now);
        changed
    }

    /// Sends `notifications/tools/list_changed` or `notifications/resources/list_changed` to
    /// every connected client.
    async fn notify_all(&self, what: Changed) {
        let peers: Vec<Peer<RoleServer>> =
            self.peers.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut gone = false;
        for peer in &peers {
            let sent = match what {
                Changed::Tools => peer.notify_tool_list_changed().await,
                Changed::Resources => peer.notify_resource_list_changed().await,
                Changed::Prompts => peer.notify_prompt_list_changed().await,
            };
            gone |= sent.is_err();
        }
        if gone {
            let mut list = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            list.retain(|p| !p.is_transport_closed());
        }
        let listeners: Vec<(u64, SubscriptionSink)> = self
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for (_, sink) in &listeners {
            // A stream that did not ask for this kind refuses it; that is its choice.
            let _ = match what {
                Changed::Tools => sink.notify_tool_list_changed().await,
                Changed::Resources => sink.notify_resource_list_changed().await,
                Changed::Prompts => sink.notify_prompt_list_changed().await,
            };
        }
    }

    /// Tells the clients whose tools or prompts were listed while the start-up load ran, and
    /// the 2026-07-28 listeners, that both lists changed. Other clients have not listed yet:
    /// their first list has the loaded set, and a notification would only race the end of a
    /// session that lists and leaves (a per-call client).
    async fn notify_listed_while_loading(&self) {
        let peers = std::mem::take(
            &mut *self
                .listed_while_loading
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for peer in peers.iter().filter(|p| !p.is_transport_closed()) {
            let _ = peer.notify_tool_list_changed().await;
            let _ = peer.notify_prompt_list_changed().await;
        }
        let listeners: Vec<(u64, SubscriptionSink)> = self
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for (_, sink) in &listeners {
            let _ = sink.notify_tool_list_changed().await;
            let _ = sink.notify_prompt_list_changed().await;
        }
    }

    /// Notes that `peer` is being sent a list while the start-up load runs (before the list is
    /// made, so that a load ending meanwhile still tells it).
    fn note_list_while_loading(&self, peer: &Peer<RoleServer>) {
        if self.host.is_loading() {
            self.listed_while_loading
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(peer.clone());
        }
    }

    /// Refuses new tasks while the server shuts down.
    pub(crate) fn check_open(&self) -> Result<(), String> {
        match self.draining.load(Ordering::SeqCst) {
            true => Err("the server is shutting down and takes no new tasks; try again once it has restarted".to_owned()),
            false => Ok(()),
        }
    }
}

/// Which list changed.
#[derive(Clone, Copy)]
enum Changed {
    Tools,
    Resources,
    /// The roster changed: prompts are one per specialist.
    Prompts,
}

/// Counts one running `task` call for the graceful shutdown.
struct Running<'a>(&'a AtomicUsize);

impl<'a> Running<'a> {
    fn start(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        Self(counter)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One client's MCP session: its own task session (invocation count, approvals) and its own
/// skill disclosure accounting.
#[derive(Clone)]
pub(crate) struct Connection {
    server: Arc<Server>,
    session: guild_host::Session,
    approvals: Arc<approvals::Approvals>,
    skills: Arc<TaskSkills>,
    log_level: Arc<wakeup::LogLevel>,
}

impl Connection {
    pub(crate) fn new(server: Arc<Server>) -> Self {
        let approvals = Arc::new(approvals::Approvals::default());
        let session = server.host.session().with_approver(approvals.clone());
        Self {
            server,
            session,
            approvals,
            skills: Arc::new(TaskSkills::new()),
            log_level: Arc::default(),
        }
    }
}

/// A successful result: the CLI's text plus the JSON form.
fn success(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

/// A failed result the model reads.
fn failure(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

impl ServerHandler for Connection {
    // `enable_logging`: MCP logging carries `wakeup` report delivery (see `wakeup`).
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_logging()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_tasks()
            .enable_skills()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("guild", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Guild runs specialists in sandboxes. Use `task` to delegate (its description \
                 lists the specialists), `start_task`/`check_task` for long work, the skills \
                 tools (or the skill:// resources) to read the skills you may use, and \
                 `read_memory`/`update_memory` for the team's and your own memory.",
            )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        wakeup::spawn(&self.server, context.peer.clone(), self.log_level.clone());
        // An HTTP session's tool calls may now be answered where they are read, by this
        // connection through rmcp's dispatch.
        let connection = self.clone();
        let handler: crate::direct_call::Handler = Arc::new(move |request, context| {
            let connection = connection.clone();
            Box::pin(async move {
                rmcp::service::Service::handle_request(&connection, request, context).await
            })
        });
        self.server.direct.register(
            context.extensions.get::<axum::http::request::Parts>(),
            handler,
            context.peer.clone(),
        );
        {
            // Sessions come and go (HTTP clients, idle expiry): the list keeps live ones only.
            let mut peers = self.server.peers.lock().unwrap_or_else(|p| p.into_inner());
            peers.retain(|p| !p.is_transport_closed());
            peers.push(context.peer);
        }
        // The first look records the skill set a later reload compares with; a change seen
        // here (the folders changed since the last look) is not swallowed.
        if self.server.skill_set_changed().await {
            self.server.notify_all(Changed::Resources).await;
        }
    }

    // MCP logging carries `wakeup` report delivery (see `wakeup`).
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }

    /// `subscriptions/listen` (2026-07-28): the list changes this server announces.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let offered = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resources_list_changed()
            .build();
        Some(requested.intersection(&offered))
    }

    /// Keeps the stream's sink among the listeners until the client cancels it or leaves.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let number = self.server.next_listener.fetch_add(1, Ordering::Relaxed);
        self.server
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((number, context.sink().clone()));
        context.cancelled().await;
        self.server
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(n, _)| *n != number);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.server.ready_for_a_list().await;
        self.server.note_list_while_loading(&context.peer);
        Ok(ListPromptsResult::with_all_items(prompts::list(
            &self.server.host.roster(),
        )))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(
            &self.server.host.roster(),
            &request.name,
            request.arguments.as_ref(),
        )
        .map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.resource_list().await?,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = self.resource_contents(&request.uri).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.get_task_state(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel_task_run(&request.task_id)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.skills_list(request.and_then(|r| r.cursor)).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.skills_get(&request.uri).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.tasks_request(request, context).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.server.ready_for_a_list().await;
        self.server.note_list_while_loading(&context.peer);
        let batch_max = self.server.host.config().dispatch.batch_max_size;
        let (roster, loading) = (self.server.host.roster(), self.server.host.loading());
        let mut all = tools::all(&roster, &loading, batch_max);
        all.extend(memory::tools(self.server.host.memory()).await);
        let all = annotations::annotate(all, &self.server.host.plugins());
        Ok(ListToolsResult::with_all_items(all))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        // HTTP bodies are checked before parsing; this holds for stdio too.
        let depth = self.server.host.config().serve.max_json_depth;
        if guild_host::serve::value_depth_exceeds(&args, depth) {
            return Ok(failure(format!(
                "the arguments of '{}' nest deeper than {depth} levels (`[serve] max_json_depth` in guild.toml)",
                request.name
            ))
            .into());
        }
        // A client that declared the Tasks extension gets a single `task` as a task handle.
        if request.name == "task"
            && tasks_ext::client_declared(&context)
            && let Ok(TaskInput::Single(t)) = TaskInput::from_json(&args)
        {
            return Ok(match self.start_as_task(&t).await {
                Ok(task) => CallToolResponse::Task(task),
                Err(message) => failure(message).into(),
            });
        }
        let result = match self.call(&request.name, &args, context).await {
            Ok(r) => r,
            Err(message) => failure(message),
        };
        Ok(result.into())
    }
}
