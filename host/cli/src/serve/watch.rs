//! Watches `guild.toml` and every plugin folder it names by polling a fingerprint (path, size
//! and modification time of every file, two levels deep) at a fixed interval. A change reloads
//! once the fingerprint has held still for one more interval (debounce: a plugin being copied
//! in is not loaded half-written). Polling works on every file system, including network and
//! container mounts where change events are not delivered.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::mcp::Server;

type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// Starts the watcher; it stops when the returned handle is dropped.
pub(super) fn spawn(server: Arc<Server>, config_path: PathBuf, every: Duration) -> Watcher {
    let handle = tokio::spawn(async move {
        let mut seen = fingerprint(&config_path).await;
        let mut pending: Option<Fingerprint> = None;
        loop {
            tokio::time::sleep(every).await;
            let now = fingerprint(&config_path).await;
            match pending.take() {
                // Held still since the last look: reload.
                Some(changed) if changed == now => {
                    if let Err(e) = server.reload().await {
                        tracing::error!("reload after a change failed: {e:#}");
                    }
                    seen = now;
                }
                _ if now != seen => pending = Some(now),
                _ => {}
            }
        }
    });
    Watcher(handle)
}

/// The running watcher.
pub(super) struct Watcher(tokio::task::JoinHandle<()>);

impl Drop for Watcher {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn fingerprint(config_path: &Path) -> Fingerprint {
    let config_path = config_path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        for path in super::watched(&config_path) {
            scan(&path, 2, &mut out);
        }
        out.sort();
        out
    })
    .await
    .unwrap_or_default()
}

fn scan(path: &Path, depth: u32, out: &mut Fingerprint) {
    let Ok(meta) = std::fs::metadata(path) else {
        out.push((path.to_path_buf(), 0, None));
        return;
    };
    if meta.is_file() {
        out.push((path.to_path_buf(), meta.len(), meta.modified().ok()));
        return;
    }
    if depth == 0 {
        return;
    }
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            scan(&entry.path(), depth - 1, out);
        }
    }
}
