//! When a host ends by itself: when its data dir is removed (always: nothing it keeps is left
//! to serve), and, for a headless host (`guild serve --host`) whose `[serve] idle_exit_s` is
//! not 0, when no client has been attached and no task has run for that long. See
//! docs/operations.md (One host per data dir).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::mcp::Server;
use crate::sessions::Sessions;

/// How often the host looks.
const TICK: Duration = Duration::from_millis(500);

/// Why the host ends by itself.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// Its data dir (its lock file) is gone.
    DataDirGone,
    /// Nobody attached and nothing running for the idle time.
    Idle(Duration),
}

/// Resolves when the host should end by itself; `idle` is `None` when it never goes idle.
/// Before it resolves for the idle time it closes `sessions` and removes `socket`.
pub(crate) async fn watch(
    server: Arc<Server>,
    sessions: Arc<Sessions>,
    lock_file: PathBuf,
    socket: PathBuf,
    idle: Option<Duration>,
) -> Reason {
    let mut quiet_since: Option<tokio::time::Instant> = None;
    let mut tick = tokio::time::interval(TICK);
    loop {
        tick.tick().await;
        if !lock_file.exists() {
            return Reason::DataDirGone;
        }
        let Some(idle) = idle else { continue };
        // A start-up load that runs keeps the host up too (a shutdown does not wait for it).
        if sessions.attached() > 0 || server.busy() > 0 || server.host().is_loading() {
            quiet_since = None;
            continue;
        }
        let since = *quiet_since.get_or_insert_with(tokio::time::Instant::now);
        // Closing and admitting exclude each other: a client that connected just now keeps
        // the host up; one connecting after this gets no session and starts a new host, and
        // the socket goes at once so that no one else connects to this one.
        if since.elapsed() >= idle {
            if sessions.close_if_unattached() {
                let _ = std::fs::remove_file(&socket);
                return Reason::Idle(idle);
            }
            quiet_since = None;
        }
    }
}
