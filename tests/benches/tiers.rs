//! The two compile tiers of a first start side by side, measured in one run: compile time with
//! Winch (the baseline tier) and with Cranelift (the optimized tier) of the probe specialist and
//! of the 18 MB Python component (plugins/recap-py), and task time on each tier's code (probe:
//! one `log` task; recap-py: its recap task through the tracker connector, as in the languages
//! bench). Prints one compile per component and compiler, medians of the tasks, and the ratio
//! Winch / Cranelift; no timing is asserted anywhere.
//!
//! Run: `cargo test -p guild-tests --bench tiers` (dev profile; wasmtime and cranelift are
//! optimised there too) or `cargo bench -p guild-tests --bench tiers`. `GUILD_BENCH_ITERS` sets
//! the number of tasks (default 10); `GUILD_BENCH_PLUGINS=probe` measures only those rows.

use std::path::Path;
use std::time::{Duration, Instant};

use guild_host::{Compiler, Config, EngineOptions, GuildEngine, Host};
use guild_tests::{bench_tracker, median, plugin_dir};

/// (plugin folder under plugins/, its grant, the brief of one task).
const PLUGINS: &[(&str, &str, &str)] = &[
    ("testing/probe", "", r#"{"op": "log", "text": "tiers"}"#),
    (
        "recap-py",
        "tools = [\"tracker.search_issues\"]\nmemory = [\"team:read\", \"team:write\"]",
        "crash",
    ),
];

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// One compile of `wasm` with `compiler` (no disk cache), then a host on that engine (the
/// component comes from its memory cache) and the median of `iters` tasks.
fn measure(
    rt: &tokio::runtime::Runtime,
    config: &Config,
    wasm: &Path,
    (name, brief): (&str, &str),
    compiler: Compiler,
    iters: usize,
) -> (Duration, Duration) {
    let engine = GuildEngine::new(EngineOptions {
        compiler,
        ..EngineOptions::default()
    })
    .expect("engine");
    let t = Instant::now();
    engine.warm(wasm).expect("compiles");
    let compile = t.elapsed();
    let h = rt
        .block_on(Host::with_engine(config.clone(), engine))
        .expect("host");
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    let tasks = bench_tracker::timed_tasks(rt, &h, (name, brief), iters);
    (compile, median(tasks))
}

fn main() {
    let setting = bench_tracker::Setting::start();
    let (rt, iters) = (&setting.rt, setting.iters);
    println!(
        "| plugin | compile: Winch | compile: Cranelift | Winch / Cranelift | task on Winch code (median of {iters}) | task on Cranelift code | Winch / Cranelift |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (plugin, grant, brief) in PLUGINS {
        let name = plugin.rsplit('/').next().unwrap_or(plugin);
        if !setting.wants(name) {
            continue;
        }
        let config = setting.config(plugin, grant);
        let wasm = plugin_dir(plugin).join(format!("{name}.wasm"));
        let task = (name, *brief);
        let (winch, winch_task) = measure(rt, &config, &wasm, task, Compiler::Baseline, iters);
        let (cranelift, cranelift_task) =
            measure(rt, &config, &wasm, task, Compiler::Optimizing, iters);
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
        println!(
            "| {name} | {} | {} | {:.2} | {} | {} | {:.2} |",
            secs(winch),
            secs(cranelift),
            ratio(winch, cranelift),
            ms(winch_task),
            ms(cranelift_task),
            ratio(winch_task, cranelift_task)
        );
    }
}
