//! `guild serve`: one host per data dir that agents reach over MCP. Every stdio `guild serve`
//! (what MCP clients launch) is a thin proxy ([`proxy`]) to the data dir's host, which it
//! starts in the background when none runs ([`launch`]); `guild serve --host` is that host in
//! the foreground (headless, what systemd runs) and `guild serve --http 127.0.0.1:PORT` is a
//! host that also serves streamable HTTP. Background tasks live in the host, never in a
//! client's process: a client leaving ends its session, not the host.
//!
//! A host owns the data dir (one per data dir, see [`lock`]); proxies open MCP sessions on its
//! control socket ([`control`], [`sessions`]), and the CLI commands that change tasks, and
//! `guild reload`, reach it there too. It reloads the plugins when their folders, skill folders
//! or `guild.toml` change ([`watch`]), on SIGHUP, on `guild reload` and on the `reload` tool.
//! On SIGTERM or ctrl-c it stops taking new tasks, lets running ones finish within the grace
//! period, then exits; background tasks still running then are marked `interrupted` by the
//! task store, whose owner (this process) is gone. It also ends by itself when its data dir is
//! removed, and a headless host when it has been idle for `[serve] idle_exit_s` ([`idle`]).
//!
//! The crate also holds what the `guild` binary shares with the server: the MCP adapter
//! ([`mcp`]), the text renderings of results ([`render`]) and how a host is started and stopped
//! as the binary does it ([`start`]). `guild-cli` builds on it; it knows nothing of the CLI.

mod auth;
mod bounds;
pub mod control;
mod direct_call;
mod events;
mod idle;
mod launch;
mod line_transport;
mod lock;
mod proxy;
pub mod sessions;
mod stdio_guard;
mod tasks_wire;
mod watch;

pub mod mcp;
pub mod render;
pub mod start;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use guild_host::Config;
use guild_host::serve::ServeSettings;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::mcp::{Connection, Server};
use crate::sessions::{Identity, Sessions};

/// Arguments of `guild serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Be the data dir's host and also serve MCP over streamable HTTP on this address (path
    /// `/mcp`). Clients send the bearer token generated into DATA_DIR/serve.token (mode 0600).
    #[arg(long, value_name = "ADDR:PORT")]
    http: Option<SocketAddr>,
    /// Be the data dir's host in the foreground, headless (what systemd runs): stdio
    /// `guild serve` clients connect to it over its control socket.
    #[arg(long, conflicts_with = "http")]
    host: bool,
    /// Seconds a headless host stays up with no client and no task (overrides
    /// `[serve] idle_exit_s`; 0 = never).
    #[arg(long, value_name = "SECONDS")]
    idle_exit_s: Option<u64>,
    /// Require the bearer token (the default; kept for scripts that pass it).
    #[arg(long, conflicts_with = "no_token")]
    token: bool,
    /// Serve HTTP without a bearer token (loopback addresses only; also `[serve] no_token`):
    /// any local user or process can then drive the host. Warned about on every start.
    #[arg(long)]
    no_token: bool,
    /// Seconds running tasks get to finish after SIGTERM or ctrl-c.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    grace_s: u64,
    /// How changes to plugin folders, skill folders and guild.toml are noticed: file system
    /// events with polling as the fallback (auto), events only, polling only, or off.
    #[arg(long, value_enum, default_value = "auto", value_name = "MODE")]
    watch: watch::WatchMode,
    /// Quiet time before a change is reloaded (debounce), and the polling interval (0 turns
    /// watching off).
    #[arg(long, default_value_t = 500, value_name = "MS")]
    watch_ms: u64,
    /// Workspace whose team memory the memory tools serve (overrides `[memory] workspace`).
    #[arg(long)]
    workspace: Option<String>,
    /// User whose private memory the memory tools serve (overrides `[memory] user`).
    #[arg(long)]
    user: Option<String>,
}

impl ServeArgs {
    /// The arguments a proxy passes on to the host it starts.
    fn for_host(&self) -> Vec<String> {
        let watch = clap::ValueEnum::to_possible_value(&self.watch)
            .map_or_else(|| "auto".to_owned(), |v| v.get_name().to_owned());
        let mut args = vec![
            "--grace-s".to_owned(),
            self.grace_s.to_string(),
            "--watch".to_owned(),
            watch,
            "--watch-ms".to_owned(),
            self.watch_ms.to_string(),
        ];
        let named = [
            ("--workspace", self.workspace.clone()),
            ("--user", self.user.clone()),
            ("--idle-exit-s", self.idle_exit_s.map(|s| s.to_string())),
        ];
        for (flag, value) in named {
            if let Some(value) = value {
                args.extend([flag.to_owned(), value]);
            }
        }
        args
    }
}

/// `guild serve`: a proxy to the data dir's host (stdio), or the host itself (`--host`,
/// `--http`), compiling in `compile_helper` (see [`start::start_host_with`]); the exit code is
/// the process's.
pub async fn run(
    config_path: &Path,
    args: ServeArgs,
    compile_helper: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let mut config = Config::load(config_path).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config_path.display()
        )
    })?;
    crate::start::name_owners(&mut config, args.workspace.clone(), args.user.clone())?;
    if args.http.is_none() && !args.host {
        let exe = match compile_helper {
            Some(exe) => exe,
            None => std::env::current_exe().context("failed to find the guild binary")?,
        };
        let data_dir = config.data_dir();
        let launch = launch::Launch {
            exe,
            config: config_path,
            data_dir: &data_dir,
            args: args.for_host(),
        };
        let identity = Identity::of(config_path, &config);
        let max_line = config.serve.max_body_bytes();
        let code = proxy::run(&data_dir, &identity, launch, max_line).await?;
        exit_now(code);
    }
    run_host(config_path, config, args, compile_helper).await
}

/// `guild serve --host` or `--http`: the data dir's host, until a shutdown signal, the idle
/// policy or the data dir's removal.
async fn run_host(
    config_path: &Path,
    config: Config,
    args: ServeArgs,
    compile_helper: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let data_dir = config.data_dir();
    let address = match args.http {
        Some(addr) => format!("http://{addr}/mcp"),
        None => "its control socket (headless host)".to_owned(),
    };
    // Before anything opens the stores: a second server must not touch them.
    let serve_lock = lock::ServeLock::acquire(&data_dir, &address)?;
    // Bound before the host starts, so a CLI command or proxy connecting meanwhile waits for
    // this host instead of opening the stores itself.
    let mut control = control::ControlSocket::bind(&data_dir)?;
    let no_token = !args.token && (args.no_token || config.serve.no_token);
    let token = match args.http {
        Some(addr) => auth::token_for(&data_dir, addr, no_token)?,
        None => None,
    };
    let limits = config.serve;
    let idle = match (args.http, args.idle_exit_s.unwrap_or(limits.idle_exit_s)) {
        (None, secs) if secs > 0 => Some(Duration::from_secs(secs)),
        _ => None,
    };
    let identity = Identity::of(config_path, &config);
    // Opened without its plugins: clients are served at once, the plugins load behind them
    // (the first load compiles each one) and join the tool list when ready.
    let host = crate::start::open_host_with(config, compile_helper).await?;
    let server = Server::new(host, config_path.to_path_buf());
    let sessions = Sessions::new(identity, limits.max_body_bytes());
    control.serve(server.clone(), sessions.clone());
    tokio::spawn({
        let server = server.clone();
        async move { server.load_plugins().await }
    });
    let mode = match args.watch_ms {
        0 => watch::WatchMode::Off,
        _ => args.watch,
    };
    let watcher = watch::spawn(
        server.clone(),
        config_path.to_path_buf(),
        mode,
        Duration::from_millis(args.watch_ms),
    )?;
    // Installed here, before the server says it serves: a SIGHUP sent right after that line
    // must reload, not meet the default action (which ends the process).
    tokio::spawn(reload_on_sighup(server.clone()));
    let ends = idle::watch(
        server.clone(),
        sessions,
        data_dir.join(lock::LOCK_FILE),
        data_dir.join(control::SOCKET_FILE),
        idle,
    );
    let grace = Duration::from_secs(args.grace_s);
    let ended = match args.http {
        None => serve_headless(&server, &data_dir, ends, grace).await,
        Some(addr) => serve_http(server, addr, token, limits, (ends, grace)).await?,
    };
    if let Ended::ByItself(idle::Reason::DataDirGone) = ended {
        eprintln!(
            "guild serve: the data dir {} was removed; exiting",
            data_dir.display()
        );
        exit_now(0);
    }
    // The data dir is let go first (watcher, socket, lock), then the process ends: sessions
    // still open must not keep it.
    drop(watcher);
    drop(control);
    drop(serve_lock);
    exit_now(0);
}

/// How a host ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// SIGTERM or ctrl-c, after the drain.
    Signal,
    /// The idle policy, or its data dir went away.
    ByItself(idle::Reason),
}

/// Ends the process with `code`, after flushing what it printed. tokio reads stdin with a
/// blocking read on a thread of its own that nothing can interrupt, and the runtime waits for
/// that thread when it is dropped: a proxy whose client keeps stdin open would never end
/// otherwise.
fn exit_now(code: i32) -> ! {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::process::exit(code)
}

/// A headless host: serves its control socket until a shutdown signal or it ends by itself.
async fn serve_headless(
    server: &Server,
    data_dir: &Path,
    ends: impl std::future::Future<Output = idle::Reason>,
    grace: Duration,
) -> Ended {
    let shutdown = shutdown_signal();
    eprintln!(
        "guild serve: host for {} on {} (pid {})",
        data_dir.display(),
        data_dir.join(control::SOCKET_FILE).display(),
        std::process::id()
    );
    tokio::select! {
        () = shutdown => {
            drain(server, grace).await;
            Ended::Signal
        }
        reason = ends => {
            if let idle::Reason::Idle(idle) = reason {
                eprintln!(
                    "guild serve: no client and no task for {} s ([serve] idle_exit_s); stopping",
                    idle.as_secs()
                );
                drain(server, grace).await;
            }
            Ended::ByItself(reason)
        }
    }
}

async fn serve_http(
    server: Arc<Server>,
    addr: SocketAddr,
    token: Option<String>,
    limits: ServeSettings,
    (ends, grace): (impl std::future::Future<Output = idle::Reason>, Duration),
) -> anyhow::Result<Ended> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("failed to bind {addr}"))?;
    let local = listener.local_addr()?;
    let port = local.port();
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let mut origins = vec![
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
    ];
    if !local.ip().is_loopback() {
        hosts.push(local.ip().to_string());
        origins.push(format!("http://{local}"));
    }
    // Browsers send `Origin`: only this server's own origins pass, so a page on another site
    // (DNS rebinding) cannot drive it. Clients that send no `Origin` are not browsers.
    let transport = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    let factory = {
        let server = server.clone();
        move || Ok(Connection::new(server.clone()))
    };
    // The bounds layer owns the sessions' idle expiry (`[serve] session_idle_s`): it sees every
    // request, those answered by `direct_call` included, which rmcp's own idle timer would not.
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = None;
    let sessions = Arc::new(manager);
    let direct = Arc::new(direct_call::Direct {
        sessions: server.direct_calls(),
        live: sessions.clone(),
        hosts: hosts.clone(),
    });
    let mcp = StreamableHttpService::new(factory, sessions.clone(), transport);
    let bounds = bounds::Bounds::new(limits, sessions);
    bounds.spawn_expiry();
    // Layers run outside in: the token first, then the bounds, then the 2025-11-25 Tasks
    // (which rmcp does not speak), then the tool calls answered in the connection
    // (`direct_call`), then the transport.
    let mut router = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(
            direct,
            direct_call::http,
        ))
        .layer(axum::middleware::from_fn(tasks_wire::http))
        .layer(axum::middleware::from_fn_with_state(bounds, bounds::bound));
    if let Some(token) = token {
        router = router.layer(axum::middleware::from_fn_with_state(
            Arc::new(token),
            auth::require_token,
        ));
    }
    let shutdown = shutdown_signal();
    eprintln!("guild serve: MCP on http://{local}/mcp");
    // Answers are written in pieces (SSE): without TCP_NODELAY, Nagle's algorithm holds the
    // last piece until the client's delayed ACK, ~40 ms per call.
    let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("failed to set TCP_NODELAY: {e}");
        }
    });
    Ok(tokio::select! {
        served = axum::serve(listener, router) => {
            served.context("the HTTP server failed")?;
            Ended::Signal
        }
        () = shutdown => {
            drain(&server, grace).await;
            Ended::Signal
        }
        reason = ends => Ended::ByItself(reason),
    })
}

/// Stops taking new tasks and waits up to `grace` for the running ones.
async fn drain(server: &Server, grace: Duration) {
    server.drain();
    let deadline = tokio::time::Instant::now() + grace;
    let mut busy = server.busy();
    if busy > 0 {
        eprintln!(
            "guild serve: stopping; waiting up to {}s for {busy} running task(s)",
            grace.as_secs()
        );
    }
    while busy > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        busy = server.busy();
    }
    if busy > 0 {
        eprintln!("guild serve: {busy} task(s) still running are left interrupted");
    }
    // Mutating calls outlive their task: each records its outcome before the process ends,
    // as after `guild task` (bounded by the call's own timeout, not by the grace).
    crate::start::finish_calls(server.host()).await;
    if busy == 0 {
        eprintln!("guild serve: stopped");
    }
}

/// SIGTERM or ctrl-c (SIGINT). Both handlers are installed when this is called, not when the
/// future is first polled: a SIGTERM sent right after the server said it serves must not meet
/// the default action (which would kill the process without draining).
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::SignalKind;
    let mut term = watch_signal(SignalKind::terminate(), "SIGTERM");
    let mut int = watch_signal(SignalKind::interrupt(), "SIGINT");
    async move {
        tokio::select! {
            _ = next(&mut int) => {}
            _ = next(&mut term) => {}
        }
    }
}

/// A handler for `kind`, installed now; `None` (logged) when it cannot be.
fn watch_signal(
    kind: tokio::signal::unix::SignalKind,
    name: &str,
) -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(kind)
        .inspect_err(|e| tracing::warn!("cannot watch {name}: {e}"))
        .ok()
}

/// The next delivery of `signal`; never, when there is no handler.
async fn next(signal: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match signal {
        Some(s) => s.recv().await,
        None => std::future::pending().await,
    }
}

/// Reloads on every SIGHUP. Like [`shutdown_signal`], the handler is installed when this is
/// called, not when the returned future is first polled by the task it is spawned on.
fn reload_on_sighup(server: Arc<Server>) -> impl std::future::Future<Output = ()> {
    let mut hup = watch_signal(tokio::signal::unix::SignalKind::hangup(), "SIGHUP");
    async move {
        while hup.is_some() && next(&mut hup).await.is_some() {
            watch::reload(&server, "on SIGHUP").await;
        }
    }
}
