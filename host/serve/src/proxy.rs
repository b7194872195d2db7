//! A stdio `guild serve`: a thin proxy between its client's stdin/stdout and the data dir's
//! host, so that every client (an editor window, a session, a call) shares one host and its
//! background tasks outlive the client that started them.
//!
//! It opens an MCP session on the host's control socket ([`crate::sessions`]); when no host
//! runs it starts one ([`crate::launch`]) and connects to it. Then it passes lines both ways.
//! The client's lines go through the stdio guard ([`crate::stdio_guard`]): an oversize or
//! malformed line is answered here, as by a stdio server. When the host ends while the client
//! is attached (killed, stopped), each request still waiting gets a JSON-RPC error, the proxy
//! says so on stderr and exits with 1; the next `guild serve` starts a new host. When the
//! client closes stdin, the session ends (its foreground calls are cancelled) and the proxy
//! exits with 0; SIGTERM or ctrl-c end the proxy alone. See docs/operations.md (One host per
//! data dir).

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::io::{BufRead as _, Read as _, Write as _};

use serde_json::{Value, json};

use crate::control::{self, OpenSession};
use crate::launch::{LOG_FILE, Launch};
use crate::sessions::Identity;
use crate::stdio_guard;

/// How long the proxy waits for a host to open its session (a host answers at once, loading
/// its plugins behind it; this bounds a host that is stopped or stuck).
const OPEN_WAIT: Duration = Duration::from_secs(120);

/// JSON-RPC error code of a request the host ended before answering.
const HOST_ENDED: i64 = -32000;

/// Request ids sent to the host and not answered yet (as JSON text).
type Pending = Arc<Mutex<HashSet<String>>>;

/// Connects to (or starts) the host of `data_dir` and proxies this process's stdio to it until
/// one side ends; returns the exit code.
pub(crate) async fn run(
    data_dir: &Path,
    identity: &Identity,
    launch: Launch<'_>,
    max_line: usize,
) -> anyhow::Result<i32> {
    // Stop signals end the proxy alone (the host goes on); installed before anything waits.
    let stop = crate::shutdown_signal();
    let session = open(data_dir, identity, &launch).await?;
    eprintln!(
        "guild serve: MCP on stdio (the guild host, pid {}, on {})",
        session.pid,
        data_dir.display()
    );
    if !session.loading.is_empty() {
        eprintln!(
            "guild serve: the host is loading its plugins ({}); the first load compiles them \
             (progress in {}); they join the tool list when ready",
            session.loading.join(", "),
            data_dir.join(LOG_FILE).display()
        );
    }
    let pump = pump(session, max_line, data_dir);
    tokio::select! {
        code = pump => Ok(code),
        () = stop => {
            eprintln!("guild serve: stopped (the host on {} goes on)", data_dir.display());
            Ok(0)
        }
    }
}

/// Opens a session on the running host, starting one when none runs. A host that ended before
/// answering (it went idle at that moment, or lost a start race) is tried again.
async fn open(
    data_dir: &Path,
    identity: &Identity,
    launch: &Launch<'_>,
) -> anyhow::Result<OpenSession> {
    for _ in 0..3 {
        match control::open_session(data_dir, identity, OPEN_WAIT).await? {
            Some(session) => return Ok(session),
            None => {
                eprintln!(
                    "guild serve: starting the guild host for {} (log: {})",
                    identity.config.display(),
                    data_dir.join(LOG_FILE).display()
                );
                launch.start().await?;
            }
        }
    }
    anyhow::bail!(
        "the guild host on {} did not stay up: see {}",
        data_dir.display(),
        data_dir.join(LOG_FILE).display()
    )
}

/// Passes lines both ways until one side ends; the exit code. Each direction is a thread of
/// its own with blocking reads and writes: a line costs one read and one write, with no hop
/// through the async runtime.
async fn pump(session: OpenSession, max_line: usize, data_dir: &Path) -> i32 {
    let pid = session.pid;
    let (socket, buffered) = match session.into_blocking() {
        Ok(parts) => parts,
        Err(e) => {
            eprintln!("guild serve: failed to use the host's socket: {e}");
            return 1;
        }
    };
    let stdout = Arc::new(Mutex::new(std::io::stdout()));
    let pending: Pending = Arc::default();
    let client_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let upstream = {
        let (socket, stdout, pending, client_done) = (
            socket.try_clone(),
            stdout.clone(),
            pending.clone(),
            client_done.clone(),
        );
        move || {
            let Ok(mut to_host) = socket else { return };
            let mut stdin = std::io::stdin().lock();
            let _ = stdio_guard::guard_blocking(
                &mut stdin,
                max_line,
                |line| {
                    track(&line, &pending, true);
                    to_host.write_all(&line)
                },
                |refusal| write_line(&stdout, refusal),
            );
            // The client is gone: the host ends the session (and cancels its calls).
            client_done.store(true, std::sync::atomic::Ordering::SeqCst);
            let _ = to_host.shutdown(std::net::Shutdown::Write);
        }
    };
    std::thread::spawn(upstream);
    let (ended, host_ended) = tokio::sync::oneshot::channel();
    let downstream = {
        let (stdout, pending) = (stdout.clone(), pending.clone());
        move || {
            let mut from_host = std::io::BufReader::new(buffered.chain(socket));
            loop {
                let mut line = Vec::new();
                match from_host.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        track(&line, &pending, false);
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        if write_line(&stdout, line).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = ended.send(());
        }
    };
    std::thread::spawn(downstream);
    let _ = host_ended.await;
    if client_done.load(std::sync::atomic::Ordering::SeqCst) {
        return 0;
    }
    let message = format!(
        "the guild host (pid {pid}) on {} ended while this client was attached; run the \
         client again to start a new host (background tasks it ran are `interrupted`; see {})",
        data_dir.display(),
        data_dir.join(LOG_FILE).display()
    );
    let ids: Vec<String> = pending
        .lock()
        .map(|mut p| p.drain().collect())
        .unwrap_or_default();
    for id in ids {
        let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
        let error = json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": HOST_ENDED, "message": message}});
        let _ = write_line(&stdout, error.to_string().into_bytes());
    }
    eprintln!("guild serve: {message}");
    1
}

/// Writes one whole line (no newline in `line`) to the client and flushes it; one writer at a
/// time, so lines never interleave.
fn write_line(stdout: &Mutex<std::io::Stdout>, mut line: Vec<u8>) -> std::io::Result<()> {
    line.push(b'\n');
    let stdout = stdout
        .lock()
        .map_err(|_| std::io::Error::other("stdout lock poisoned"))?;
    let mut out = stdout.lock();
    out.write_all(&line)?;
    out.flush()
}

/// What [`track`] reads of a message: its id, and whether it is a request (has a method); the
/// rest is skipped by the parser, never built (an answer can be large).
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

/// Records the requests in a client's `line` (`outgoing`), or forgets those a host's line
/// answers.
fn track(line: &[u8], pending: &Pending, outgoing: bool) {
    let batch = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    let heads = match batch {
        true => serde_json::from_slice::<Vec<Head>>(line),
        false => serde_json::from_slice::<Head>(line).map(|head| vec![head]),
    };
    let Ok(heads) = heads else {
        return;
    };
    let Ok(mut pending) = pending.lock() else {
        return;
    };
    for head in heads {
        let Some(id) = head.id.filter(|id| !id.is_null()) else {
            continue;
        };
        match (outgoing, head.method.is_some()) {
            (true, true) => {
                pending.insert(id.to_string());
            }
            (false, false) => {
                pending.remove(&id.to_string());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_pending_until_the_host_answers_them() {
        let pending: Pending = Arc::default();
        track(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            &pending,
            true,
        );
        track(
            br#"[{"jsonrpc":"2.0","id":"a","method":"ping"}]"#,
            &pending,
            true,
        );
        // A notification, and the client's answer to a host's request, are not pending.
        track(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &pending,
            true,
        );
        track(br#"{"jsonrpc":"2.0","id":9,"result":{}}"#, &pending, true);
        // The host's own request is not an answer.
        track(
            br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}"#,
            &pending,
            false,
        );
        assert_eq!(pending.lock().expect("lock").len(), 2);
        track(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &pending, false);
        let left: Vec<String> = pending.lock().expect("lock").iter().cloned().collect();
        assert_eq!(left, [r#""a""#]);
    }
}
