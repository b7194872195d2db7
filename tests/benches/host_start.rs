//! Host start with a warm disk compile cache: the cost of authenticating cache entries.
//!
//! Run: `cargo bench -p guild-tests --bench host_start` (after `plugins/build.sh`);
//! `GUILD_BENCH_ITERS` sets the number of starts (default 15). Prints the median; no timing is
//! asserted anywhere. Loads every example plugin, the 18 MB Python component included, on a
//! fresh engine each time so the in-memory cache never answers.

use std::time::Instant;

use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::plugin_dir;

fn main() {
    let iters: usize = std::env::var("GUILD_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let dir = tempfile::tempdir().expect("tempdir");
    let plugins = [
        "kb",
        "tracker",
        "triage",
        "digest",
        "testing/probe",
        "testing/echo",
    ];
    let list: Vec<String> = plugins
        .iter()
        .map(|p| format!("{:?}", plugin_dir(p).display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \"data\"\ncompile_cache = true\n",
        list.join(", ")
    );
    let config = Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("config");
    let cache_dir = dir.path().join("bench-cache");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let start = || {
        let engine = GuildEngine::new(EngineOptions {
            cache_dir: Some(cache_dir.clone()),
            ..EngineOptions::default()
        })
        .expect("engine");
        let t = Instant::now();
        let h = runtime
            .block_on(Host::with_engine(config.clone(), engine))
            .expect("host");
        let took = t.elapsed();
        assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
        took
    };
    start(); // fills the cache
    let samples: Vec<_> = (0..iters).map(|_| start()).collect();
    println!(
        "host start, warm disk cache, {} plugins (median of {iters}): {:.1} ms",
        plugins.len(),
        guild_tests::median(samples).as_secs_f64() * 1e3
    );
}
