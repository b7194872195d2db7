//! The MCP adapter: one [`Connection`] per client session (stdio has one, streamable HTTP one
//! per MCP session), all over one shared [`Server`] (the host, the reload entry point, the
//! drain flag and the clients to tell when the tool list changes). Every tool is a thin call
//! into `guild_host::Host`; results carry the text the CLI prints plus `structuredContent`, and
//! failures are `isError` results with the library's message.

mod calls;
mod tools;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use guild_host::skills::TaskSkills;
use guild_host::{Config, Host, ReloadReport};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
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
    /// Clients to notify when the tool list changes.
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

impl Server {
    pub(crate) fn new(host: Host, config_path: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            host,
            config_path,
            draining: AtomicBool::new(false),
            running: AtomicUsize::new(0),
            peers: Mutex::new(Vec::new()),
        })
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
            self.tools_changed().await;
        }
        Ok(report)
    }

    /// Sends `notifications/tools/list_changed` to every connected client.
    async fn tools_changed(&self) {
        let peers: Vec<Peer<RoleServer>> =
            self.peers.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut gone = Vec::new();
        for (i, peer) in peers.iter().enumerate() {
            if peer.notify_tool_list_changed().await.is_err() {
                gone.push(i);
            }
        }
        if !gone.is_empty() {
            let mut list = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            list.retain(|p| !p.is_transport_closed());
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
    approvals: Arc<calls::Approvals>,
    skills: Arc<TaskSkills>,
}

impl Connection {
    pub(crate) fn new(server: Arc<Server>) -> Self {
        let approvals = Arc::new(calls::Approvals::default());
        let session = server.host.session().with_approver(approvals.clone());
        Self {
            server,
            session,
            approvals,
            skills: Arc::new(TaskSkills::new()),
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
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("guild", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Guild runs specialists in sandboxes. Use `task` to delegate (its description \
                 lists the specialists), `start_task`/`check_task` for long work, and the skills \
                 tools to read the skills you may use.",
            )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.server
            .peers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let batch_max = self.server.host.config().dispatch.batch_max_size;
        Ok(ListToolsResult::with_all_items(tools::all(
            &self.server.host.roster(),
            batch_max,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let result = match self.call(&request.name, &args, context).await {
            Ok(r) => r,
            Err(message) => failure(message),
        };
        Ok(result.into())
    }
}
