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
