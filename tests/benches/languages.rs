//! The same specialist written with each language SDK (plugins/recap-py, plugins/recap-js):
//! component size, cold compile, cached start and task latency, measured in one run. The C row
//! is the C example specialist (plugins/textstats: measures its brief, no tool call), loaded
//! next to the same tracker and triage plugins.
//!
//! Run: `cargo bench -p guild-tests --bench languages`, or without building the host in release
//! `cargo test -p guild-tests --bench languages` (dev profile; wasmtime and cranelift are
//! optimised there too). `GUILD_BENCH_ITERS` sets the number of cached starts and tasks (default
//! 10). `GUILD_BENCH_PLUGINS=textstats` (a comma-separated list) measures only those rows. Prints
//! medians; no timing is asserted anywhere. Each recap task searches the tracker stand-in on
//! 127.0.0.1 through the tracker connector and updates team memory.

use std::path::Path;
use std::time::{Duration, Instant};

use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::{bench_tracker, median, plugin_dir};

/// (plugin, its grant, the brief of one task).
const PLUGINS: &[(&str, &str, &str)] = &[
    ("recap-py", RECAP_GRANT, "crash"),
    ("recap-js", RECAP_GRANT, "crash"),
    ("textstats", "", "Crash on start\nCrash on exit\n"),
];
const RECAP_GRANT: &str =
    "tools = [\"tracker.search_issues\"]\nmemory = [\"team:read\", \"team:write\"]";

fn start(rt: &tokio::runtime::Runtime, config: &Config, cache: Option<&Path>) -> (Host, Duration) {
    let engine = GuildEngine::new(EngineOptions {
        cache_dir: cache.map(Path::to_path_buf),
        ..EngineOptions::default()
    })
    .expect("engine");
    let t = Instant::now();
    let h = rt
        .block_on(Host::with_engine(config.clone(), engine))
        .expect("host");
    let took = t.elapsed();
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    (h, took)
}

fn size_text(bytes: u64) -> String {
    if bytes < 1_000_000 {
        format!("{:.0} KB", bytes as f64 / 1e3)
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let setting = bench_tracker::Setting::start();
    let (rt, dir, iters) = (&setting.rt, setting.dir.path(), setting.iters);
    println!(
        "| plugin | component | cold compile (host start, no cache) | cached start (median of {iters}) | task (median of {iters}) |"
    );
    println!("|---|---|---|---|---|");
    for (plugin, grant, brief) in PLUGINS {
        if !setting.wants(plugin) {
            continue;
        }
        let config = setting.config(plugin, grant);
        let wasm = plugin_dir(plugin).join(format!("{plugin}.wasm"));
        let size = std::fs::metadata(&wasm).expect("component").len();
        let (_, cold) = start(rt, &config, None);
        let cache = dir.join(format!("cache-{plugin}"));
        start(rt, &config, Some(&cache)); // fills the disk cache
        let cached: Vec<_> = (0..iters)
            .map(|_| start(rt, &config, Some(&cache)).1)
            .collect();
        let (h, _) = start(rt, &config, Some(&cache));
        let tasks = bench_tracker::timed_tasks(rt, &h, (plugin, brief), iters);
        println!(
            "| {plugin} | {} | {} | {} | {} |",
            size_text(size),
            ms(cold),
            ms(median(cached)),
            ms(median(tasks))
        );
    }
}
