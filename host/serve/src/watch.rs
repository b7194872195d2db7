//! Watches `guild.toml`, every plugin folder (and the `plugins_dir` that holds them) and the
//! skill folders it names, and reloads when they change.
//!
//! Two ways to notice a change ([`WatchMode`]): file system events (inotify on Linux, through
//! the layer the skills watcher reads too, see [`super::events`]), and polling a fingerprint
//! (path, size and modification time of every file, two levels deep) at a fixed interval.
//! `auto` uses events and falls back to polling when a watch cannot be set (a folder that does
//! not exist yet, the inotify watch limit) or events are unavailable (elsewhere than Linux):
//! polling works on every file system, including network and container mounts where events are
//! not delivered. Either way a change is debounced: the reload waits until nothing has changed
//! for one more interval, so a plugin being copied in piece by piece loads once, not half-written.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use guild_host::Config;

use super::events::Events;
use crate::mcp::Server;

/// How `guild serve` notices changed plugins, skills and configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WatchMode {
    /// File system events, falling back to polling when a watch cannot be set.
    Auto,
    /// File system events only; the server refuses to start when a watch cannot be set.
    Events,
    /// Poll every `--watch-ms` milliseconds.
    Poll,
    /// No watching: reload with `guild reload`, the `reload` tool or SIGHUP.
    Off,
}

/// The running watcher; it stops when dropped.
pub(super) struct Watcher(tokio::task::JoinHandle<()>);

impl Drop for Watcher {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts watching in `mode`; `every` is the polling interval and the debounce quiet time.
/// `None` for [`WatchMode::Off`].
pub(super) fn spawn(
    server: Arc<Server>,
    config_path: PathBuf,
    mode: WatchMode,
    every: Duration,
) -> anyhow::Result<Option<Watcher>> {
    let handle = match mode {
        WatchMode::Off => return Ok(None),
        WatchMode::Poll => tokio::spawn(poll(server, config_path, every)),
        WatchMode::Events | WatchMode::Auto => match Events::new(&config_path) {
            Ok(events) => {
                tracing::info!("watching {} path(s) for changes", events.paths());
                tokio::spawn(events.run(server, config_path, every))
            }
            Err(e) if mode == WatchMode::Auto => {
                eprintln!(
                    "guild serve: not watching with file system events ({e:#}); polling every {} ms",
                    every.as_millis()
                );
                tokio::spawn(poll(server, config_path, every))
            }
            Err(e) => {
                return Err(e.context(
                    "failed to watch for changes (use `--watch poll` where file system events \
                     are not delivered)",
                ));
            }
        },
    };
    Ok(Some(Watcher(handle)))
}

/// Reloads and says so on stderr (the operator's log); `why` is e.g. "after a change".
pub(super) async fn reload(server: &Server, why: &str) {
    match server.reload().await {
        Ok(report) => eprintln!(
            "guild serve: reloaded {why}: {}",
            guild_host::text::one_line(report.render().trim_end()).replace("\\n", "; ")
        ),
        Err(e) => eprintln!("guild serve: reload {why} failed: {e:#}"),
    }
}

/// Every path a server watches: `guild.toml`, the plugins dir, each plugin folder and each
/// skill folder it names. Read again after every reload, since `guild.toml` may name others.
pub(super) fn watched(config_path: &Path) -> Vec<PathBuf> {
    let mut paths = vec![config_path.to_path_buf()];
    if let Ok(config) = Config::load(config_path) {
        if let Some(dir) = &config.host.plugins_dir {
            paths.push(config.resolve(dir));
        }
        if let Ok(folders) = config.plugin_folders() {
            paths.extend(folders);
        }
        // Folder sources only: `shared:NAME` is listed below, `loader:NAME` is a plugin.
        for source in &config.skills.supervisor {
            if !source.starts_with("shared:") && !source.starts_with("loader:") {
                paths.push(config.resolve(Path::new(source)));
            }
        }
        paths.extend(config.skills.shared.values().map(|p| config.resolve(p)));
    }
    // Events name paths as watched; canonical paths make `guild.toml` and `./guild.toml` one.
    let mut paths: Vec<PathBuf> = paths
        .into_iter()
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// Polls every `every` until dropped, reloading after a change that held still for one more look.
pub(super) async fn poll(server: Arc<Server>, config_path: PathBuf, every: Duration) {
    let mut seen = fingerprint(&config_path).await;
    let mut pending: Option<Fingerprint> = None;
    loop {
        tokio::time::sleep(every).await;
        let now = fingerprint(&config_path).await;
        match pending.take() {
            // Held still since the last look: reload.
            Some(changed) if changed == now => {
                reload(&server, "after a change").await;
                seen = now;
            }
            _ if now != seen => pending = Some(now),
            _ => {}
        }
    }
}

async fn fingerprint(config_path: &Path) -> Fingerprint {
    let config_path = config_path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        for path in watched(&config_path) {
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
