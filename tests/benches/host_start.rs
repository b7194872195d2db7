//! Host start. Part `warm`: a first start on an empty compile cache with the baseline tier
//! (every plugin compiled with Winch, usable once the start returns) and without it (Cranelift
//! compiles everything), then the median start with a warm disk compile cache (the cost of
//! authenticating cache entries). Part `first`: a first start (empty cache) with the demo's
//! plugins, for each demo specialist the time from the start until a first task on it can run,
//! with every plugin loaded before the host is ready (eager, `Host::with_engine`) and with the
//! lazy start (`Host::load_plugins_lazily`: the task moves its plugins to the front of the
//! compile queue).
//!
//! Run: `cargo bench -p guild-tests --bench host_start` (after `plugins/build.sh`);
//! `GUILD_BENCH_ITERS` sets the number of warm starts (default 15); `GUILD_BENCH_PARTS=first`
//! (or `warm`) runs one part. Prints medians and one cold start per row and mode; no timing is
//! asserted anywhere. The warm part loads every example plugin, the 18 MB Python component
//! included, on a fresh engine each time so the in-memory cache never answers. The baseline
//! tier's background (Cranelift) compiles are held back until the bench ends, so they do not
//! overlap the other starts.

use std::path::Path;
use std::time::{Duration, Instant};

use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::plugin_dir;

fn main() {
    let parts = std::env::var("GUILD_BENCH_PARTS").unwrap_or_default();
    let wants = |part: &str| parts.is_empty() || parts.split(',').any(|p| p == part);
    if wants("warm") {
        warm();
    }
    if wants("first") {
        first();
    }
}

/// The demo's plugins (`guild demo`).
const DEMO: &[&str] = &["kb", "tracker", "triage", "digest", "optimist", "textstats"];

/// A demo specialist and the brief of its first task.
const FIRST_TASKS: &[(&str, &str)] = &[
    ("textstats", "one two three"),
    ("optimist", "- Newsletter signup button does nothing\n"),
    ("triage", "- [bug] Checkout times out\n"),
    ("kb", "search checkout"),
    ("digest", "is:open"),
];

fn demo_config(dir: &Path) -> Config {
    let list: Vec<String> = DEMO
        .iter()
        .map(|p| format!("{:?}", plugin_dir(p).display().to_string()))
        .collect();
    // The tools the demo grants, so that a task waits for the tracker connector too; the
    // tracker is granted no address, so its calls are refused: a task runs, whatever it finds.
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \"data\"\n\n\
         [grants.triage]\ntools = [\"tracker.create_issue\", \"tracker.search_issues\"]\n\
         [grants.optimist]\ntools = [\"tracker.create_issue\"]\n\
         [grants.digest]\ntools = [\"tracker.search_issues\"]\n",
        list.join(", ")
    );
    Config::parse(&text, &dir.join("guild.toml"), dir).expect("config")
}

/// One cold start of the demo's plugins in its own folder, cache and async runtime, then a
/// task on `specialist`: the time from the start until the task could run (its end less its
/// own wall time), and, lazily, until every plugin was loaded. Cranelift's background compile
/// is held back for the whole run (it would share the two cores with what is measured) and
/// dropped with the runtime, so no compile outlives its row.
fn cold_start((specialist, brief): (&str, &str), lazy: bool) -> (Duration, Option<Duration>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = demo_config(dir.path());
    let engine = GuildEngine::new(EngineOptions {
        cache_dir: Some(dir.path().join("cache")),
        baseline_tier: true,
        ..EngineOptions::default()
    })
    .expect("engine");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let held = rt.block_on(engine.optimizer().lock_owned());
    let measured = rt.block_on(async {
        let t = Instant::now();
        let h = match lazy {
            true => {
                let h = Host::open(config, engine).await.expect("host opens");
                h.load_plugins_lazily().await;
                h
            }
            false => Host::with_engine(config, engine).await.expect("host"),
        };
        let result = h.task(specialist, brief).await.expect("the task starts");
        let can_run = t
            .elapsed()
            .saturating_sub(Duration::from_millis(result.usage.wall_ms));
        let errors = h.all_loaded().await;
        assert!(errors.is_empty(), "{errors:?}");
        (can_run, lazy.then(|| t.elapsed()))
    });
    // The optimized compiles still waiting for the lock end with the runtime's tasks.
    rt.shutdown_background();
    drop(held);
    measured
}

fn first() {
    println!(
        "| first task on (cold cache, demo plugins) | eager: every plugin first | lazy: asked for first | eager / lazy | lazy: every plugin loaded |"
    );
    println!("|---|---|---|---|---|");
    for &(specialist, brief) in FIRST_TASKS {
        let (eager, _) = cold_start((specialist, brief), false);
        let (lazy, all) = cold_start((specialist, brief), true);
        let all = all.unwrap_or_default();
        println!(
            "| {specialist} | {:.2} s | {:.2} s | {:.1}× | {:.2} s |",
            eager.as_secs_f64(),
            lazy.as_secs_f64(),
            eager.as_secs_f64() / lazy.as_secs_f64().max(1e-9),
            all.as_secs_f64()
        );
    }
}

fn warm() {
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
