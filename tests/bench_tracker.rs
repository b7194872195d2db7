//! The setting the language and tier benches share: a specialist beside the tracker connector
//! (granted the local tracker server's URL and token) and the triage specialist that seeds the
//! tracker, and timed tasks on a host built from it.

use std::path::Path;
use std::time::{Duration, Instant};

use guild_host::types::{Outcome, TaskStatus};
use guild_host::{Config, Host};

use crate::plugin_dir;

/// `guild.toml` for `plugin` (a folder under `plugins/`) granted `grant`, beside the tracker
/// (on `url`, its token in `dir/token`) and triage; the data dir is `dir/data-NAME`.
pub fn config(dir: &Path, plugin: &str, grant: &str, url: &str) -> Config {
    let name = plugin.rsplit('/').next().unwrap_or(plugin);
    let list: Vec<String> = ["tracker", "triage", plugin]
        .iter()
        .map(|p| format!("{:?}", plugin_dir(p).display().to_string()))
        .collect();
    let text = format!(
        r#"[host]
plugins = [{}]
data_dir = "data-{name}"
[memory]
workspace = "bench"
[grants.tracker]
http = ["{url}"]
config = {{ base_url = "{url}", repo = "acme/shop" }}
secrets = {{ TRACKER_TOKEN = {{ file = "token", hosts = ["{url}"] }} }}
[grants.triage]
tools = ["tracker.create_issue", "tracker.search_issues"]
[grants.{name}]
{grant}
"#,
        list.join(", ")
    );
    Config::parse(&text, &dir.join("guild.toml"), dir).expect("config")
}

/// Files two issues through triage, then times `iters` tasks of `name` with `brief`, each of
/// which must be satisfied.
pub fn timed_tasks(
    rt: &tokio::runtime::Runtime,
    host: &Host,
    (name, brief): (&str, &str),
    iters: usize,
) -> Vec<Duration> {
    let seeded = rt
        .block_on(host.task("triage", "- [bug] Crash on start\n- [bug] Crash on exit\n"))
        .expect("triage");
    assert_eq!(seeded.status, TaskStatus::Succeeded, "{:?}", seeded.error);
    (0..iters)
        .map(|_| {
            let t = Instant::now();
            let r = rt.block_on(host.task(name, brief)).expect("task");
            let took = t.elapsed();
            let outcome = r.report.map(|p| p.outcome);
            assert_eq!(outcome, Some(Outcome::Satisfied), "{:?}", r.error);
            took
        })
        .collect()
}

/// What one run of such a bench holds: its runtime, a folder with the tracker's token, the
/// local tracker server, `GUILD_BENCH_ITERS` (default 10) and `GUILD_BENCH_PLUGINS` (the rows
/// to measure, comma-separated; empty: all).
pub struct Setting {
    /// The runtime the hosts run on.
    pub rt: tokio::runtime::Runtime,
    /// The run's folder: the tracker's token, the data dirs.
    pub dir: tempfile::TempDir,
    /// The local tracker server.
    pub tracker: guild_cli::demo::tracker::TrackerServer,
    /// Tasks (and starts) measured per row.
    pub iters: usize,
    /// `GUILD_BENCH_PLUGINS`.
    only: String,
}

impl Setting {
    /// Starts the runtime and the tracker (token `tok-1`) and reads the environment.
    pub fn start() -> Self {
        let iters = std::env::var("GUILD_BENCH_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(10);
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("token"), "tok-1\n").expect("token");
        let tracker = rt
            .block_on(guild_cli::demo::tracker::TrackerServer::start("tok-1"))
            .expect("tracker");
        let only = std::env::var("GUILD_BENCH_PLUGINS").unwrap_or_default();
        Self {
            rt,
            dir,
            tracker,
            iters,
            only,
        }
    }

    /// Whether the row of plugin `name` is measured.
    pub fn wants(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.split(',').any(|p| p == name)
    }

    /// [`config`] for `plugin` granted `grant`, in this run's folder and tracker.
    pub fn config(&self, plugin: &str, grant: &str) -> Config {
        config(self.dir.path(), plugin, grant, self.tracker.base_url())
    }
}
