//! What the per-grant disk quota costs a task: the same one-tool-call task with no folder
//! granted, with a read-only folder, and with a read-write folder under a quota (the quota's
//! per-instance state), plus a task that writes 4 KiB through the quota's accounted paths.
//!
//! Run: `cargo bench -p guild-tests --bench disk_quota` (after `plugins/build.sh`);
//! `GUILD_BENCH_ITERS` sets the samples per row (default 2000). Prints medians and the ratio
//! to the first row, measured in one run; no timing is asserted anywhere.

use std::time::{Duration, Instant};

use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::plugin_dir;
use serde_json::json;

fn host(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    engine: &GuildEngine,
    fs: &str,
) -> Host {
    let list: Vec<String> = ["testing/probe", "testing/echo"]
        .iter()
        .map(|p| format!("{:?}", plugin_dir(p).display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \"data\"\ncompile_cache = false\n\n\
         [dispatch]\nbillable_threshold = 0\n\n[grants.probe]\ntools = [\"echo.echo\"]\n{fs}\n",
        list.join(", ")
    );
    let config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("bench config");
    let h = rt
        .block_on(Host::with_engine(config, engine.clone()))
        .expect("host");
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    h
}

fn time(rt: &tokio::runtime::Runtime, iters: usize, h: &Host, brief: &str) -> Duration {
    let run = || {
        let r = rt.block_on(h.task("probe", brief)).expect("task");
        assert!(r.report.is_some(), "bench task failed: {:?}", r.error);
        let details = r.report.map(|r| r.details).unwrap_or_default();
        assert!(details.contains("\"ok\":true"), "{details}");
        assert!(!details.contains("insufficient"), "{details}");
    };
    for _ in 0..iters / 10 {
        run();
    }
    let samples = (0..iters)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed()
        })
        .collect();
    guild_tests::median(samples)
}

fn main() {
    let iters: usize = std::env::var("GUILD_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("work")).expect("mkdir");
    let engine = GuildEngine::new(EngineOptions::default()).expect("engine");
    let none = host(&rt, dir.path(), &engine, "");
    let ro = host(
        &rt,
        dir.path(),
        &engine,
        "fs = [{ guest = \"/ro\", host = \"work\", mode = \"ro\" }]",
    );
    let rw = host(
        &rt,
        dir.path(),
        &engine,
        "fs = [{ guest = \"/data\", host = \"work\", mode = \"rw\", quota_mb = 64 }]",
    );
    let tool = json!({"op": "tool", "name": "echo.echo", "input": {"say": "hello"}}).to_string();
    let write = json!({"op": "disk", "how": "write", "path": "/data/f", "bytes": 4096}).to_string();
    let stream =
        json!({"op": "disk", "how": "stream", "path": "/data/g", "bytes": 4096}).to_string();
    let rows = [
        (
            "task with one tool call, no folder granted",
            time(&rt, iters, &none, &tool),
        ),
        (
            "  same, a read-only folder granted (no quota)",
            time(&rt, iters, &ro, &tool),
        ),
        (
            "  same, a read-write folder under a quota",
            time(&rt, iters, &rw, &tool),
        ),
        (
            "task writing 4 KiB with descriptor.write (accounted)",
            time(&rt, iters, &rw, &write),
        ),
        (
            "task writing 4 KiB through a write stream (accounted)",
            time(&rt, iters, &rw, &stream),
        ),
    ];
    println!("== disk quota (median of {iters}; ratio vs the first row)");
    let base = rows[0].1.as_secs_f64();
    for (name, median) in rows {
        println!(
            "{name:<58} {:>9.1} µs  {:>5.2}x",
            median.as_secs_f64() * 1e6,
            median.as_secs_f64() / base
        );
    }
}
