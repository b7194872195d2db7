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

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use crate::control::{self, OpenSession};
use crate::launch::{LOG_FILE, Launch};
use crate::sessions::Identity;
use crate::stdio_guard;

/// How long the proxy waits for a host to open its session: a host just started loads (and
/// on its first start compiles) every plugin first.
const OPEN_WAIT: Duration = Duration::from_secs(600);

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

/// Passes lines both ways until one side ends; the exit code.
async fn pump(session: OpenSession, max_line: usize, data_dir: &Path) -> i32 {
    let OpenSession {
        read: mut from_host,
        write: mut to_host,
        pid,
    } = session;
    let client = stdio_guard::stdio(max_line);
    let pending: Pending = Arc::default();
    let sent = pending.clone();
    let mut client_in = BufReader::new(client.input);
    let upstream = tokio::spawn(async move {
        loop {
            let mut line = Vec::new();
            match client_in.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    track(&line, &sent, true);
                    if to_host.write_all(&line).await.is_err() {
                        break;
                    }
                }
            }
        }
        // The client is gone: the host ends the session (and cancels its calls).
        let _ = to_host.shutdown().await;
    });
    let mut to_client = client.output;
    loop {
        let mut line = Vec::new();
        match from_host.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                track(&line, &pending, false);
                if to_client.write_all(&line).await.is_err() {
                    break;
                }
            }
        }
    }
    let code = if upstream.is_finished() {
        0
    } else {
        let message = format!(
            "the guild host (pid {pid}) on {} ended while this client was attached; run \
             the client again to start a new host (background tasks it ran are `interrupted`; \
             see {})",
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
            let _ = to_client.write_all(format!("{error}\n").as_bytes()).await;
        }
        eprintln!("guild serve: {message}");
        1
    };
    let _ = to_client.shutdown().await;
    drop(to_client);
    let _ = tokio::time::timeout(Duration::from_secs(5), client.written).await;
    code
}

/// Records the requests in a client's `line` (`outgoing`), or forgets those a host's line
/// answers.
fn track(line: &[u8], pending: &Pending, outgoing: bool) {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let messages = match &value {
        Value::Array(items) => items.iter().collect(),
        _ => vec![&value],
    };
    let Ok(mut pending) = pending.lock() else {
        return;
    };
    for message in messages {
        let (Some(id), is_request) = (message.get("id"), message.get("method").is_some()) else {
            continue;
        };
        match (outgoing, is_request) {
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
