//! The control socket: how `guild reload`, the CLI commands that change tasks or memory and
//! the stdio proxies reach the host that owns the data dir.
//!
//! A running server listens on `DATA_DIR/serve.sock` (a unix socket, mode 0600, removed on
//! shutdown). A socket file left by a server that crashed is stale: the next server, holding
//! the data dir's lock ([`super::lock`]), knows nobody else can be serving and replaces it; a
//! client that finds nobody listening treats it as "no server".
//!
//! Protocol: JSON lines. The client sends one [`Request`] per line (`{"op": "reload"}`,
//! `{"op": "start_task", "specialist": …, "description": …}`, …) and reads one [`Response`]
//! line back (`{"ok": true, "text": …, "result": …}` or `{"ok": false, "error": …}`). Each op
//! calls the same library function as the MCP tool of the same name. `mcp_session` turns the
//! connection into an MCP session ([`crate::sessions`]; [`open_session`] is the client side a
//! stdio `guild serve` uses).
//!
//! A client waits at most [`client_timeout`] (default [`DEFAULT_TIMEOUT`], set with
//! `GUILD_CONTROL_TIMEOUT_S`) for the connection and the answer together, so a server that is
//! stopped (SIGSTOP) or stuck fails the command with an error naming the socket instead of
//! hanging it; see docs/operations.md (Control socket).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::mcp::Server;
use crate::sessions::{Identity, Refusal, Sessions};

/// The socket's name inside the data dir.
pub const SOCKET_FILE: &str = "serve.sock";
/// Longest request line accepted.
const MAX_LINE: u64 = 256 * 1024;
/// How long a client waits for the server by default: long enough for a reload that
/// recompiles plugins, short enough that a stopped server does not hang a command.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Environment variable that sets the client's wait, in seconds.
pub const TIMEOUT_ENV: &str = "GUILD_CONTROL_TIMEOUT_S";

/// How long a client waits for the server: `GUILD_CONTROL_TIMEOUT_S` seconds when set to a
/// positive number, else [`DEFAULT_TIMEOUT`].
pub fn client_timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
}

/// One operation on the running server.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Reload the plugins (as the `reload` tool).
    Reload,
    /// Start a background task (as `start_task`).
    StartTask {
        /// Specialist name or alias.
        specialist: String,
        /// The self-contained brief.
        description: String,
    },
    /// Restart a task with an update appended (as `update_task`).
    UpdateTask {
        /// Task id.
        id: String,
        /// The update.
        text: String,
    },
    /// Cancel a task (as `cancel_task`).
    CancelTask {
        /// Task id.
        id: String,
    },
    /// Answer a task's pending approval (as `approve_task`).
    ApproveTask {
        /// Task id.
        id: String,
        /// Whether the call may go ahead.
        approved: bool,
    },
    /// Store a new version of a memory document (as `update_memory`; `guild memory update`):
    /// through the host, so that every write to the data dir's memory is the host's.
    UpdateMemory {
        /// `team` or `private`.
        scope: guild_host::memory::Scope,
        /// The whole new document.
        text: String,
        /// The version it was written from; `None` replaces the newest whatever it is.
        base: Option<u64>,
        /// The workspace whose team memory (the command's `[memory]` / `--workspace`).
        workspace: Option<String>,
        /// The user whose private memory (the command's `[memory]` / `--user`).
        user: Option<String>,
    },
    /// Open an MCP session on this connection ([`crate::sessions`]): after the answer, the
    /// connection carries JSON-lines MCP.
    McpSession(Identity),
}

/// The server's answer to one [`Request`].
#[derive(Debug, Serialize, Deserialize)]
pub struct Response {
    /// Whether the operation succeeded.
    pub ok: bool,
    /// What the CLI prints (on success).
    #[serde(default)]
    pub text: String,
    /// The JSON form (on success).
    #[serde(default)]
    pub result: Value,
    /// What went wrong (on failure).
    #[serde(default)]
    pub error: String,
}

impl Response {
    fn success(text: String, result: Value) -> Self {
        Self {
            ok: true,
            text,
            result,
            error: String::new(),
        }
    }

    fn failure(error: impl std::fmt::Display) -> Self {
        Self {
            ok: false,
            text: String::new(),
            result: Value::Null,
            error: error.to_string(),
        }
    }
}

/// The folder (inside the data dir, mode 0700) where the socket is bound and made private
/// before it is renamed to [`SOCKET_FILE`]. Only the lock holder uses it.
const STAGING_DIR: &str = ".sock";

/// Binds a socket at `dir/SOCKET_FILE` in a fresh folder `dir` only this user can enter, with
/// mode 0600.
fn bind_private(dir: &Path) -> anyhow::Result<UnixListener> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    // A crashed server's leftovers (the caller holds the data dir's lock).
    let _ = std::fs::remove_dir_all(dir);
    std::fs::DirBuilder::new().mode(0o700).create(dir)?;
    let staged = dir.join(SOCKET_FILE);
    let listener = UnixListener::bind(&staged)?;
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// The bound socket; the file is removed when this is dropped (on shutdown).
pub(super) struct ControlSocket {
    path: PathBuf,
    listener: Option<UnixListener>,
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl ControlSocket {
    /// Binds `DATA_DIR/serve.sock`. Call only while holding the data dir's lock: a socket file
    /// already there is then a crashed server's, and is replaced.
    pub(super) fn bind(data_dir: &Path) -> anyhow::Result<Self> {
        let path = data_dir.join(SOCKET_FILE);
        match std::fs::remove_file(&path) {
            Ok(()) => tracing::info!("replaced the stale control socket {}", path.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "failed to remove the stale control socket {}",
                        path.display()
                    )
                });
            }
        }
        // Only this user may drive the server (the data dir may be readable by others). The
        // socket is bound inside a folder only this user can enter, made private there, and
        // only then renamed into place: nobody can connect while it still has the umask's mode.
        let staging = data_dir.join(STAGING_DIR);
        let listener = bind_private(&staging).with_context(|| {
            format!(
                "failed to bind the control socket in {} (a private folder)",
                staging.display()
            )
        });
        let listener = listener.and_then(|listener| {
            std::fs::rename(staging.join(SOCKET_FILE), &path)
                .with_context(|| format!("failed to move the control socket to {}", path.display()))
                .map(|()| listener)
        });
        // Empty after the rename; a failed bind leaves nothing worth keeping either.
        let _ = std::fs::remove_dir_all(&staging);
        Ok(Self {
            path,
            listener: Some(listener?),
        })
    }

    /// Answers requests until the server ends. Connections made before this (while the host
    /// was starting) wait in the socket's backlog.
    pub(super) fn serve(&mut self, server: Arc<Server>, sessions: Arc<Sessions>) {
        let Some(listener) = self.listener.take() else {
            return;
        };
        tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        tokio::spawn(connection(stream, server.clone(), sessions.clone()));
                    }
                    Err(e) => {
                        tracing::warn!("control socket: failed to accept: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            }
        });
    }
}

/// Answers one client's requests, one line each, until it hangs up or opens an MCP session.
async fn connection(stream: UnixStream, server: Arc<Server>, sessions: Arc<Sessions>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut line = String::new();
        match (&mut reader).take(MAX_LINE).read_line(&mut line).await {
            Ok(0) => return,
            Ok(_) if !line.ends_with('\n') => {
                let _ = send(&mut write, &Response::failure("request line too long")).await;
                return;
            }
            Ok(_) => {}
            Err(e) => {
                tracing::debug!("control socket: read failed: {e}");
                return;
            }
        }
        let response = match serde_json::from_str::<Request>(&line) {
            Ok(Request::McpSession(asked)) => match sessions.admit(&asked) {
                Ok(attached) => {
                    let answer = json!({ "pid": std::process::id(),
                        "loading": server.host().loading() });
                    if send(&mut write, &Response::success(String::new(), answer))
                        .await
                        .is_ok()
                    {
                        sessions.serve(attached, server, reader, write).await;
                    }
                    return;
                }
                // Ending idle: no answer, so the proxy starts a new host.
                Err(Refusal::Closing) => return,
                Err(Refusal::Mismatch(refused)) => Response::failure(refused),
            },
            Ok(request) => handle(&server, request).await,
            Err(e) => Response::failure(format!(
                "not a control request ({e}); send one JSON object per line with an `op` of \
                 reload, start_task, update_task, cancel_task, approve_task, update_memory or \
                 mcp_session"
            )),
        };
        if send(&mut write, &response).await.is_err() {
            return;
        }
    }
}

async fn send(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    response: &Response,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(response).map_err(std::io::Error::other)?;
    line.push(b'\n');
    write.write_all(&line).await
}

/// Runs one operation with the library function the MCP tool of the same name calls.
async fn handle(server: &Server, request: Request) -> Response {
    let host = server.host();
    let outcome: Result<Response, String> = async {
        Ok(match request {
            Request::Reload => {
                let report = server.reload().await.map_err(|e| format!("{e:#}"))?;
                let result = serde_json::to_value(&report).map_err(|e| e.to_string())?;
                Response::success(report.render(), result)
            }
            Request::StartTask {
                specialist,
                description,
            } => {
                server.check_open()?;
                server.ready().await;
                let id = host
                    .start_task(&specialist, &description)
                    .map_err(|e| e.to_string())?;
                Response::success(
                    format!("started task {id} on the server\n"),
                    json!({ "task_id": id }),
                )
            }
            Request::UpdateTask { id, text } => {
                server.check_open()?;
                let attempt = host.update_task(&id, &text).map_err(|e| e.to_string())?;
                Response::success(
                    format!("task {id}: attempt {attempt} started on the server\n"),
                    json!({ "task_id": id, "attempt": attempt }),
                )
            }
            Request::CancelTask { id } => {
                host.cancel_task(&id).map_err(|e| e.to_string())?;
                Response::success(
                    format!("task {id} cancelled\n"),
                    json!({ "task_id": id, "cancelled": true }),
                )
            }
            Request::UpdateMemory {
                scope,
                text,
                base,
                workspace,
                user,
            } => update_memory(host, scope, &text, base, (workspace, user)).await?,
            Request::McpSession(_) => return Err("a session is opened by itself".to_owned()),
            Request::ApproveTask { id, approved } => {
                host.approve_task(&id, approved)
                    .map_err(|e| e.to_string())?;
                let word = if approved { "approved" } else { "denied" };
                Response::success(
                    format!("task {id}: call {word}\n"),
                    json!({ "task_id": id, "approved": approved }),
                )
            }
        })
    }
    .await;
    outcome.unwrap_or_else(Response::failure)
}

/// Key of a [`Request::UpdateMemory`] answer's `result` that is true when the document changed
/// after the update's base (nothing was stored; `message` says what happened).
pub const CONFLICT: &str = "conflict";

/// [`Request::UpdateMemory`]: the outcome as JSON ([`guild_host::memory::UpdateOutcome`]), or
/// [`CONFLICT`] set with the conflict's message.
async fn update_memory(
    host: &guild_host::Host,
    scope: guild_host::memory::Scope,
    text: &str,
    base: Option<u64>,
    (workspace, user): (Option<String>, Option<String>),
) -> Result<Response, String> {
    use guild_host::memory::{Actor, MemoryError};
    let memory = host.memory().with_owners(workspace, user);
    let base = match base {
        Some(base) => base,
        None => memory
            .read(scope)
            .await
            .map_err(|e| e.to_string())?
            .version
            .map_or(0, |v| v.version),
    };
    match memory.update(scope, text, base, &Actor::Supervisor).await {
        Ok(outcome) => {
            let result = serde_json::to_value(&outcome).map_err(|e| e.to_string())?;
            Ok(Response::success(String::new(), result))
        }
        // Answered, not refused: the client tells a conflict (exit 4) from a failure.
        Err(e @ MemoryError::Conflict { .. }) => Ok(Response::success(
            String::new(),
            json!({ CONFLICT: true, "message": e.to_string() }),
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Sends `request` to the server running on `data_dir`, waiting at most [`client_timeout`].
/// `Ok(None)` when none runs (no socket, or a stale one nobody listens on); an error when the
/// server refused the operation or did not answer in time.
pub async fn call(data_dir: &Path, request: &Request) -> anyhow::Result<Option<Response>> {
    call_within(data_dir, request, client_timeout()).await
}

/// [`call`], waiting at most `timeout` for the connection and the answer together.
pub async fn call_within(
    data_dir: &Path,
    request: &Request,
    timeout: Duration,
) -> anyhow::Result<Option<Response>> {
    let path = data_dir.join(SOCKET_FILE);
    match tokio::time::timeout(timeout, exchange(&path, data_dir, request)).await {
        Ok(answer) => answer,
        Err(_) => anyhow::bail!(
            "the server on {} did not answer on its control socket {} within {} s: it may be \
             stopped (SIGSTOP: resume it with `kill -CONT PID`, the pid is in {}) or stuck \
             (stop it, then run the command again); wait longer with {TIMEOUT_ENV}=SECONDS. \
             The server may still carry the request out when it resumes.",
            data_dir.display(),
            path.display(),
            timeout.as_secs_f64(),
            data_dir.join(super::lock::LOCK_FILE).display(),
        ),
    }
}

/// An MCP session opened on the host ([`open_session`]): the connection, which now carries
/// JSON-lines MCP, the host's pid and the plugins it was still loading.
pub struct OpenSession {
    /// The host's output (what it read past the answer stays buffered here).
    pub read: BufReader<tokio::net::unix::OwnedReadHalf>,
    /// Where the client's messages go.
    pub write: tokio::net::unix::OwnedWriteHalf,
    /// The host process.
    pub pid: u32,
    /// The plugins the host was still loading when it opened the session (at its start-up).
    pub loading: Vec<String>,
}

impl OpenSession {
    /// The connection as a blocking socket, and what was read past the answer (empty, as a
    /// host writes nothing before the client's first message).
    pub fn into_blocking(self) -> std::io::Result<(std::os::unix::net::UnixStream, Vec<u8>)> {
        let buffered = self.read.buffer().to_vec();
        let stream = self
            .read
            .into_inner()
            .reunite(self.write)
            .map_err(std::io::Error::other)?
            .into_std()?;
        stream.set_nonblocking(false)?;
        Ok((stream, buffered))
    }
}

/// Opens an MCP session for `identity` on the host of `data_dir`, waiting at most `timeout`
/// for its answer (a host answers at once, its plugins loading behind it). `Ok(None)` when
/// no host runs (or it ended before answering); an error when it refused (another
/// configuration) or did not answer in time.
pub async fn open_session(
    data_dir: &Path,
    identity: &Identity,
    timeout: Duration,
) -> anyhow::Result<Option<OpenSession>> {
    let path = data_dir.join(SOCKET_FILE);
    let Some(stream) = connect(&path).await? else {
        return Ok(None);
    };
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let request = Request::McpSession(identity.clone());
    let exchanged = tokio::time::timeout(timeout, async {
        let mut line = serde_json::to_vec(&request)?;
        line.push(b'\n');
        let mut answer = String::new();
        let talked = match write.write_all(&line).await {
            Ok(()) => read.read_line(&mut answer).await.map(|_| ()),
            Err(e) => Err(e),
        };
        match talked {
            Ok(()) => anyhow::Ok(answer),
            // A host killed a moment ago can still take a connection while its threads end
            // (its socket closes with them): as if it had ended before answering.
            Err(e) if ended_meanwhile(&e) => anyhow::Ok(String::new()),
            Err(e) => Err(e.into()),
        }
    })
    .await;
    let answer = match exchanged {
        Ok(answer) => answer.with_context(|| format!("failed to talk to {}", path.display()))?,
        Err(_) => anyhow::bail!(
            "the guild host on {} did not open a session within {} s (pid in {})",
            data_dir.display(),
            timeout.as_secs(),
            data_dir.join(super::lock::LOCK_FILE).display()
        ),
    };
    if answer.is_empty() {
        // It ended meanwhile (it went idle, or failed while starting): as if none ran.
        tracing::info!(
            "the host on {} ended before opening the session",
            data_dir.display()
        );
        return Ok(None);
    }
    let response: Response = serde_json::from_str(&answer)
        .with_context(|| format!("the host's answer on {} is not JSON", path.display()))?;
    if !response.ok {
        anyhow::bail!("{}", response.error);
    }
    let pid = response.result["pid"].as_u64().unwrap_or(0) as u32;
    let loading = serde_json::from_value(response.result["loading"].clone()).unwrap_or_default();
    Ok(Some(OpenSession {
        read,
        write,
        pid,
        loading,
    }))
}

/// Whether `error`, talking on a fresh connection, says the host went away meanwhile.
fn ended_meanwhile(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::BrokenPipe
            | std::io::ErrorKind::UnexpectedEof
    )
}

/// Connects to the socket at `path`; `None` when nobody listens there.
async fn connect(path: &Path) -> anyhow::Result<Option<UnixStream>> {
    match UnixStream::connect(path).await {
        Ok(s) => Ok(Some(s)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| {
            format!(
                "failed to reach the server's control socket {}",
                path.display()
            )
        }),
    }
}

/// Connects to the socket at `path`, sends `request` and reads the answer.
async fn exchange(
    path: &Path,
    data_dir: &Path,
    request: &Request,
) -> anyhow::Result<Option<Response>> {
    let Some(stream) = connect(path).await? else {
        return Ok(None);
    };
    let (read, mut write) = stream.into_split();
    let mut line = serde_json::to_vec(request)?;
    line.push(b'\n');
    write
        .write_all(&line)
        .await
        .with_context(|| format!("failed to send to {}", path.display()))?;
    let mut answer = String::new();
    BufReader::new(read)
        .read_line(&mut answer)
        .await
        .with_context(|| format!("failed to read the answer from {}", path.display()))?;
    if answer.is_empty() {
        anyhow::bail!(
            "the server on {} closed the control socket without answering (is it shutting down?)",
            data_dir.display()
        );
    }
    let response: Response = serde_json::from_str(&answer)
        .with_context(|| format!("the server's answer on {} is not JSON", path.display()))?;
    if !response.ok {
        anyhow::bail!("{}", response.error);
    }
    Ok(Some(response))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_socket_or_a_stale_one_means_no_server() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(
            call(dir.path(), &Request::Reload)
                .await
                .expect("no error")
                .is_none()
        );
        // A socket file nobody listens on (a crashed server's).
        let stale =
            std::os::unix::net::UnixListener::bind(dir.path().join(SOCKET_FILE)).expect("bind");
        drop(stale);
        assert!(
            call(dir.path(), &Request::Reload)
                .await
                .expect("no error")
                .is_none()
        );
        // The next server replaces it, privately, and removes it when it ends.
        let socket = ControlSocket::bind(dir.path()).expect("rebind over the stale socket");
        let mode = {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::metadata(dir.path().join(SOCKET_FILE))
                .expect("socket")
                .permissions()
                .mode()
        };
        assert_eq!(mode & 0o777, 0o600);
        drop(socket);
        assert!(!dir.path().join(SOCKET_FILE).exists());
    }

    #[tokio::test]
    async fn a_server_that_accepts_and_never_answers_is_an_error_naming_the_socket() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Accepts (the kernel does, into the backlog) and never reads or answers, as a stopped
        // server does.
        let silent = UnixListener::bind(dir.path().join(SOCKET_FILE)).expect("bind");
        let err = call_within(dir.path(), &Request::Reload, Duration::from_millis(300))
            .await
            .expect_err("no answer is an error, not a hang");
        let err = format!("{err:#}");
        assert!(
            err.contains("did not answer")
                && err.contains(&dir.path().join(SOCKET_FILE).display().to_string())
                && err.contains("kill -CONT")
                && err.contains(TIMEOUT_ENV),
            "{err}"
        );
        drop(silent);
    }

    #[test]
    fn requests_are_json_lines_with_an_op() {
        let line = serde_json::to_string(&Request::StartTask {
            specialist: "kb".into(),
            description: "find x".into(),
        })
        .expect("serialise");
        assert_eq!(
            line,
            r#"{"op":"start_task","specialist":"kb","description":"find x"}"#
        );
        let parsed: Request =
            serde_json::from_str(r#"{"op":"approve_task","id":"t1","approved":false}"#)
                .expect("parse");
        assert!(matches!(
            parsed,
            Request::ApproveTask {
                approved: false,
                ..
            }
        ));
        assert!(serde_json::from_str::<Request>(r#"{"op":"format_disk"}"#).is_err());
    }
}
