//! Host start: a first start on an empty compile cache, with the baseline tier (every plugin
//! compiled with Winch, usable once the start returns) and without it (Cranelift compiles
//! everything), then the median start with a warm disk compile cache (the cost of
//! authenticating cache entries).
//!
//! Run: `cargo bench -p guild-tests --bench host_start` (after `plugins/build.sh`);
//! `GUILD_BENCH_ITERS` sets the number of warm starts (default 15); each first start runs once.
//! No timing is asserted anywhere. Loads every example plugin, the 18 MB Python component
//! included, on a fresh engine each time so the in-memory cache never answers. The baseline
//! tier's background (Cranelift) compiles are held back until the bench ends, so they do not
//! overlap the other starts.

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

    // First start with the baseline tier, on its own empty cache: until it returns, no task can
    // run; once it has, every plugin serves (on Winch code).
    let tiered = GuildEngine::new(EngineOptions {
        cache_dir: Some(dir.path().join("bench-cache-tiered")),
        baseline_tier: true,
        ..EngineOptions::default()
    })
    .expect("engine");
    let _optimizer_held = tiered.optimizer().try_lock_owned().expect("no compile yet");
    let t = Instant::now();
    let h = runtime
        .block_on(Host::with_engine(config.clone(), tiered))
        .expect("host");
    let first_tiered = t.elapsed();
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    drop(h);

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
    let first_optimized = start(); // fills the cache
    let samples: Vec<_> = (0..iters).map(|_| start()).collect();
    let n = plugins.len();
    println!(
        "first start, empty cache, {n} plugins, Cranelift only: {:.2} s (1×)",
        first_optimized.as_secs_f64()
    );
    println!(
        "first start, empty cache, {n} plugins, baseline tier (Winch): {:.2} s ({:.2}×)",
        first_tiered.as_secs_f64(),
        first_tiered.as_secs_f64() / first_optimized.as_secs_f64()
    );
    println!(
        "host start, warm disk cache, {n} plugins (median of {iters}): {:.1} ms",
        guild_tests::median(samples).as_secs_f64() * 1e3
    );
}
