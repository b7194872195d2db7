//! `guild serve` figures, each against its baseline in the same run:
//!
//! 1. MCP round trip of one task (`tools/call task` on the probe) over stdio and over
//!    streamable HTTP, against the same task through the library (`Host::task`), each beside
//!    its transport's floor: the same client and bytes against a server that does nothing
//!    (`serve/floor.rs`), and beside a `ping` on the same session (every layer of the
//!    transport and of rmcp's session, no tool). Every host of this part serves Cranelift code from its start
//!    (`baseline_tier = false`), so no background compile shares the machine with the samples;
//!    `taskset -c 0` in front of the run puts the client and every server on one CPU, which
//!    shows what the wake-ups between CPUs cost;
//! 2. reload latency (a plugin's files changed → the new version serving) for the Rust probe
//!    and the Python digest plugin, cold (component bytes never compiled) and with the compile
//!    cache (bytes compiled before);
//! 3. (`reload-unchanged`) a reload with nothing changed, with and without the 18 MB Python
//!    component loaded, beside hashing that component once;
//! 4. task throughput (4 clients, tool-calling tasks) during a reload storm vs without, and
//!    how many tasks failed or lacked their success receipt in each: calm and stormy rounds
//!    alternate (`GUILD_BENCH_STORM_ROUNDS`, default 5) and the medians are compared. Each new
//!    version is renamed in over the served files, prepared once
//!    (`GUILD_BENCH_STORM_WRITE=rewrite`: written out whole each time).
//!
//! Run (release, after `plugins/build.sh`): `cargo build --release --workspace && cargo bench
//! -p guild-tests --bench serve`. The MCP part drives the built `target/release/guild` with raw
//! JSON-RPC over the child's stdio and plain HTTP POSTs. `GUILD_BENCH_ITERS` sets the round
//! trips (default 200); `GUILD_BENCH_PARTS=round-trip,reload,reload-unchanged,storm` picks parts
//! (default all).
//! Prints medians and ratios; no timing is asserted anywhere.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::{median, plugin_dir};
use serde_json::{Value, json};

#[path = "serve/floor.rs"]
mod floor;

fn main() {
    let iters: usize = std::env::var("GUILD_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let parts = std::env::var("GUILD_BENCH_PARTS").unwrap_or_default();
    let part = |name: &str| parts.is_empty() || parts.split(',').any(|p| p == name);
    if part("round-trip") {
        round_trips(&runtime, dir.path(), iters);
    }
    if part("reload") {
        reload_latency(&runtime, dir.path());
    }
    if part("reload-unchanged") {
        unchanged_reload(&runtime, dir.path());
    }
    if part("storm") {
        storm(&runtime, dir.path());
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The built `guild` next to this bench's executable (target/release/deps/serve-… → ../guild).
fn guild_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("bench path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("guild"))
        .expect("target dir");
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo build --release --workspace` first",
        bin.display()
    );
    bin
}

/// A config of its own data dir; `host` adds lines to its `[host]` table.
fn write_config(dir: &Path, name: &str, plugins: &[PathBuf], host: &str, extra: &str) -> PathBuf {
    let list: Vec<String> = plugins
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = {:?}\n{host}\n\n[dispatch]\nbillable_threshold = 0\n\n\
         [grants.probe]\ntools = [\"echo.create\"]\n{extra}",
        list.join(", "),
        format!("data-{name}")
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).expect("config");
    path
}

fn task_call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "task",
        "arguments": {"subagent_type": "probe", "description": json!({"op": "brief"}).to_string()}
    }})
}

/// A `ping`: the same transport and session, no task.
fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
}

/// The round trips' hosts serve their plugins only once Cranelift compiled them: with the
/// baseline tier, the first seconds of a part would run Winch code beside the background
/// compile of the optimized code, and part of the samples would measure that.
const STEADY: &str = "baseline_tier = false";

fn round_trips(runtime: &tokio::runtime::Runtime, dir: &Path, iters: usize) {
    let plugins = [plugin_dir("testing/probe"), plugin_dir("testing/echo")];
    let brief = json!({"op": "brief"}).to_string();

    // Library: the same task, in process.
    let config = write_config(dir, "lib", &plugins, STEADY, "");
    let host = runtime
        .block_on(Host::new(Config::load(&config).expect("config")))
        .expect("host");
    let library: Vec<Duration> = (0..iters + 20)
        .map(|_| {
            let t = Instant::now();
            runtime
                .block_on(host.task("probe", &brief))
                .expect("task runs");
            t.elapsed()
        })
        .skip(20)
        .collect();
    drop(host);

    // stdio: one long-lived child, JSON lines.
    let config = write_config(dir, "stdio", &plugins, STEADY, "");
    let mut child = Command::new(guild_binary())
        .args(["--config", &config.display().to_string(), "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("guild serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut call = |request: &Value| -> Value {
        guild_tests::write_line(&mut stdin, request).expect("send");
        if request.get("id").is_none() {
            return Value::Null;
        }
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).expect("read") > 0,
                "server ended"
            );
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if message.get("id") == request.get("id") {
                return message;
            }
        }
    };
    call(&initialize());
    call(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut answer_line = String::new();
    let stdio: Vec<Duration> = (0..iters as u64 + 20)
        .map(|i| {
            let t = Instant::now();
            let answer = call(&task_call(i + 1));
            let took = t.elapsed();
            assert!(answer["result"]["isError"] != true, "{answer}");
            if answer_line.is_empty() {
                answer_line = answer.to_string();
            }
            took
        })
        .skip(20)
        .collect();
    let stdio_ping: Vec<Duration> = (0..iters as u64 + 20)
        .map(|i| {
            let t = Instant::now();
            let answer = call(&ping(i + 1));
            let took = t.elapsed();
            assert!(answer.get("result").is_some(), "{answer}");
            took
        })
        .skip(20)
        .collect();
    drop(stdin);
    let _ = child.wait();
    let stdio_floor = floor::stdio(&answer_line, iters, 20);

    // Streamable HTTP: one session, one POST per call. The client runs on a runtime of its
    // own thread, so that its hand-offs are not counted as the server's.
    let config = write_config(dir, "http", &plugins, STEADY, "");
    let (mut child, url) = http_server(&config);
    let client_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (http, body) = client_runtime.block_on(http_round_trips(&url, true, iters, task_call));
    let (http_ping, _) = client_runtime.block_on(http_round_trips(&url, true, iters, ping));
    let _ = child.kill();
    let _ = child.wait();
    // The answer as Guild sent it: one JSON body, or its event in an event stream.
    let event = body
        .lines()
        .find_map(|l| l.strip_prefix("data:").filter(|d| d.contains("\"result\"")));
    let floor_url = match event {
        Some(event) => floor::http_server(event.trim().to_owned(), true),
        None => floor::http_server(body.trim().to_owned(), false),
    };
    let (http_floor, _) =
        client_runtime.block_on(http_round_trips(&floor_url, false, iters, task_call));

    let library = median(library);
    let row = |name: &str, d: Duration| {
        println!(
            "  {name:<34} {:>8.3} ms  {:.1}x",
            ms(d),
            d.as_secs_f64() / library.as_secs_f64()
        );
    };
    println!("task round trip (probe, median of {iters}):");
    row("library Host::task", library);
    row("stdio floor (a `cat` child)", median(stdio_floor));
    row("MCP ping over stdio", median(stdio_ping));
    row("MCP over stdio", median(stdio));
    row("HTTP floor (a do-nothing server)", median(http_floor));
    row("MCP ping over HTTP", median(http_ping));
    row("MCP over HTTP", median(http));
}

/// `iters` round trips of `request` (a `tools/call task` or a `ping`) on one streamable HTTP session at `url` (after 20
/// unmeasured ones), opened with `initialize` when `handshake`; the samples and the last answer.
async fn http_round_trips(
    url: &str,
    handshake: bool,
    iters: usize,
    request: fn(u64) -> Value,
) -> (Vec<Duration>, String) {
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(s) = session {
            request = request.header("mcp-session-id", s);
        }
        request.send()
    };
    let mut session = None;
    if handshake {
        let init = post(initialize(), None).await.expect("initialize");
        session = init
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let _ = init.text().await;
        post(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            session.clone(),
        )
        .await
        .expect("initialized");
    }
    let mut samples = Vec::new();
    let mut last = String::new();
    for i in 0..iters as u64 + 20 {
        let t = Instant::now();
        let body = post(request(i + 1), session.clone())
            .await
            .expect("call")
            .text()
            .await
            .expect("body");
        let took = t.elapsed();
        assert!(body.contains("\"result\""), "{body}");
        if i >= 20 {
            samples.push(took);
        }
        last = body;
    }
    (samples, last)
}

fn http_server(config: &Path) -> (Child, String) {
    let mut child = Command::new(guild_binary())
        .args(["--config", &config.display().to_string()])
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--watch",
            "off",
            "--no-token",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("guild serve --http");
    let url = child.stderr.take().and_then(|stderr| {
        let mut stderr = BufReader::new(stderr);
        let mut line = String::new();
        while stderr.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(url) = line.trim().strip_prefix("guild serve: MCP on ") {
                let url = url.to_owned();
                // Keep draining stderr so the server never blocks on a full pipe.
                std::thread::spawn(move || for _ in stderr.lines() {});
                return Some(url);
            }
            line.clear();
        }
        None
    });
    match url {
        Some(url) => (child, url),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("guild serve --http ended before serving");
        }
    }
}

/// `bytes` with a custom section appended: the same component, other bytes (a cache miss).
fn with_custom_section(bytes: &[u8], tag: u64) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let name = b"guild-bench";
    let payload = tag.to_le_bytes();
    let mut body = Vec::new();
    leb(name.len(), &mut body);
    body.extend_from_slice(name);
    body.extend_from_slice(&payload);
    let mut out = bytes.to_vec();
    out.push(0);
    leb(body.len(), &mut out);
    out.extend_from_slice(&body);
    out
}

/// A copy of a plugin folder whose manifest version and component bytes the bench changes.
struct Copy {
    dir: PathBuf,
    component: String,
    bytes: Vec<u8>,
    manifest: String,
}

impl Copy {
    fn new(rel: &str, into: &Path) -> Self {
        let from = plugin_dir(rel);
        let name = from
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let dir = into.join(name);
        std::fs::create_dir_all(&dir).expect("copy dir");
        let component = format!("{name}.wasm");
        let bytes = std::fs::read(from.join(&component)).expect("component");
        let manifest = std::fs::read_to_string(from.join("plugin.toml")).expect("manifest");
        let copy = Self {
            dir,
            component,
            bytes,
            manifest,
        };
        copy.write(1, 0);
        copy
    }

    /// Version `0.0.version`, component bytes tagged `tag`.
    fn write(&self, version: u64, tag: u64) {
        std::fs::write(
            self.dir.join(&self.component),
            with_custom_section(&self.bytes, tag),
        )
        .expect("component");
        let manifest = self
            .manifest
            .lines()
            .map(|l| match l.starts_with("version") {
                true => format!("version = \"0.0.{version}\""),
                false => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(self.dir.join("plugin.toml"), manifest).expect("manifest");
    }

    /// Writes version `0.0.version` (component tagged `tag`) once, into a folder of its own
    /// beside the plugin's, for [`Copy::swap_in`].
    fn prepare(&self, version: u64, tag: u64) -> PathBuf {
        let staged = Self {
            dir: self.dir.with_file_name(format!("staged-{version}-{tag}")),
            component: self.component.clone(),
            bytes: self.bytes.clone(),
            manifest: self.manifest.clone(),
        };
        std::fs::create_dir_all(&staged.dir).expect("staging dir");
        staged.write(version, tag);
        staged.dir
    }

    /// Puts the files of a prepared version in place the way deploy tools replace a file
    /// atomically: a new name for the prepared file (a hard link), renamed over the old one.
    /// Neither file is written again, so the storm's cost is the host's reloads, not an
    /// editor writing 119 KB each time.
    fn swap_in(&self, staged: &Path) {
        for file in [self.component.as_str(), "plugin.toml"] {
            let next = self.dir.join(format!(".{file}.next"));
            let _ = std::fs::remove_file(&next);
            std::fs::hard_link(staged.join(file), &next).expect("link the prepared file");
            std::fs::rename(&next, self.dir.join(file)).expect("rename it into place");
        }
    }
}

/// A reload with nothing changed (what the file watcher triggers when a file it does not act
/// on changes), with and without the 18 MB Python component among the plugins, each read
/// from its built folder (settled: written long before); beside it, hashing those 18 MB once.
fn unchanged_reload(runtime: &tokio::runtime::Runtime, dir: &Path) {
    use sha2::{Digest as _, Sha256};
    let small = [plugin_dir("testing/probe"), plugin_dir("testing/echo")];
    let mut large = small.to_vec();
    large.push(plugin_dir("digest"));
    let mut rows = Vec::new();
    for (name, plugins) in [
        ("probe, echo", &small[..]),
        ("probe, echo, digest", &large[..]),
    ] {
        let config = write_config(dir, &format!("kept-{}", plugins.len()), plugins, "", "");
        let host = runtime
            .block_on(Host::new(Config::load(&config).expect("config")))
            .expect("host");
        let samples: Vec<Duration> = (0..25)
            .map(|_| {
                let t = Instant::now();
                let report = runtime.block_on(host.reload_with(None));
                let took = t.elapsed();
                assert!(report.errors.is_empty() && !report.changed(), "{report:?}");
                took
            })
            .skip(5)
            .collect();
        rows.push((name, median(samples)));
    }
    let bytes = std::fs::read(plugin_dir("digest").join("digest.wasm")).expect("digest.wasm");
    let hashing: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(Sha256::digest(&bytes));
            t.elapsed()
        })
        .collect();
    let hashing = median(hashing);
    println!("reload with nothing changed (median of 20):");
    for (name, took) in rows {
        println!("  {name:<22} {:>8.2} ms", ms(took));
    }
    println!(
        "  sha256 of digest.wasm ({:.1} MB) once: {:.2} ms",
        bytes.len() as f64 / 1e6,
        ms(hashing)
    );
}

fn reload_latency(runtime: &tokio::runtime::Runtime, dir: &Path) {
    println!("reload latency (files changed → new version serving, Host::reload_with):");
    for (rel, name, samples) in [("testing/probe", "probe", 10), ("digest", "digest", 2)] {
        let base = dir.join(format!("reload-{name}"));
        let copy = Copy::new(rel, &base);
        let mut plugins = vec![copy.dir.clone()];
        if name == "digest" {
            plugins.push(plugin_dir("tracker"));
        }
        let config = write_config(&base, "guild", &plugins, "", "");
        let engine = GuildEngine::new(EngineOptions {
            cache_dir: Some(base.join("cache")),
            ..EngineOptions::default()
        })
        .expect("engine");
        let host = runtime
            .block_on(Host::with_engine(
                Config::load(&config).expect("config"),
                engine,
            ))
            .expect("host");
        let mut version = 1;
        let mut measure = |tag: u64| {
            version += 1;
            copy.write(version, tag);
            let t = Instant::now();
            let report = runtime.block_on(host.reload_with(None));
            let took = t.elapsed();
            assert!(report.errors.is_empty(), "{:?}", report.errors);
            assert!(
                report
                    .loaded
                    .iter()
                    .any(|l| l.starts_with(&format!("{name}@0.0.{version}"))),
                "{report:?}"
            );
            took
        };
        // Cold: bytes never seen. Cached: the bytes of an earlier cold round.
        let cold: Vec<Duration> = (0..samples).map(|i| measure(1000 + i)).collect();
        let cached: Vec<Duration> = (0..samples).map(|i| measure(1000 + i)).collect();
        let (cold, cached) = (median(cold), median(cached));
        println!(
            "  {name:<7} cold {:>9.1} ms   cached {:>7.1} ms   ({:.0}x faster)",
            ms(cold),
            ms(cached),
            cold.as_secs_f64() / cached.as_secs_f64()
        );
    }
}

fn storm(runtime: &tokio::runtime::Runtime, dir: &Path) {
    let base = dir.join("storm");
    let echo = Copy::new("testing/echo", &base);
    let config = write_config(
        &base,
        "guild",
        &[plugin_dir("testing/probe"), echo.dir.clone()],
        "",
        "",
    );
    let host = runtime
        .block_on(Host::new(Config::load(&config).expect("config")))
        .expect("host");
    // Both versions compiled once, so the storm swaps from the cache.
    let staged: Vec<PathBuf> = [2, 3].iter().map(|&v| echo.prepare(v, v)).collect();
    for version in &staged {
        echo.swap_in(version);
        runtime.block_on(host.reload_with(None));
    }
    let staged = Arc::new(staged);
    // `GUILD_BENCH_STORM_WRITE=rewrite`: each new version written out whole (119 KB of
    // component), as an editor saving in place does, instead of renamed in.
    let rewrite = std::env::var("GUILD_BENCH_STORM_WRITE").is_ok_and(|w| w == "rewrite");
    // (tasks/s, reloads meanwhile, tasks that did not succeed or lack their receipt)
    let run = |reloading: bool| -> (f64, usize, usize) {
        let stop = Arc::new(AtomicBool::new(false));
        let reloads = Arc::new(AtomicUsize::new(0));
        let storm = reloading.then(|| {
            let (host, stop, reloads) = (host.clone(), stop.clone(), reloads.clone());
            let staged = staged.clone();
            let echo_dir = echo.dir.clone();
            let (bytes, manifest, component) = (
                echo.bytes.clone(),
                echo.manifest.clone(),
                echo.component.clone(),
            );
            runtime.spawn(async move {
                let copy = Arc::new(Copy {
                    dir: echo_dir,
                    component,
                    bytes,
                    manifest,
                });
                let mut v = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    v += 1;
                    // The new version is put in place off the host's workers, as another
                    // process would: renamed in, or written out whole when asked.
                    let (copy, staged) = (copy.clone(), staged.clone());
                    tokio::task::spawn_blocking(move || match rewrite {
                        true => copy.write(2 + v % 2, 2 + v % 2),
                        false => copy.swap_in(&staged[(v % 2) as usize]),
                    })
                    .await
                    .expect("put the new version in place");
                    host.reload_with(None).await;
                    reloads.fetch_add(1, Ordering::SeqCst);
                }
            })
        });
        let tasks = 2000;
        let t = Instant::now();
        let failed = runtime.block_on(async {
            let mut clients = Vec::new();
            for c in 0..4 {
                let host = host.clone();
                clients.push(tokio::spawn(async move {
                    let mut failed = 0;
                    for n in 0..tasks / 4 {
                        let brief = json!({"op": "tool", "name": "echo.create",
                                           "input": {"c": c, "n": n}});
                        let r = host
                            .task("probe", &brief.to_string())
                            .await
                            .expect("task runs");
                        let receipted = r.receipts.len() == 1
                            && r.receipts[0].status == guild_host::receipts::ReceiptStatus::Success;
                        if r.status != guild_host::types::TaskStatus::Succeeded || !receipted {
                            failed += 1;
                        }
                    }
                    failed
                }));
            }
            let mut failed = 0;
            for c in clients {
                failed += c.await.expect("client");
            }
            failed
        });
        let rate = tasks as f64 / t.elapsed().as_secs_f64();
        stop.store(true, Ordering::SeqCst);
        if let Some(s) = storm {
            let _ = runtime.block_on(s);
        }
        (rate, reloads.load(Ordering::SeqCst), failed)
    };
    // Calm and stormy rounds alternate, so that drift of the machine between them (the
    // baseline alone moves by ±10 % from one round to the next) falls on both alike.
    let rounds: usize = std::env::var("GUILD_BENCH_STORM_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(5);
    let (mut calm, mut stormy, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut reloads, mut calm_failed, mut stormy_failed) = (0, 0, 0);
    for _ in 0..rounds {
        let (rate, _, failed) = run(false);
        calm.push(rate);
        calm_failed += failed;
        let (storm_rate, storm_reloads, failed) = run(true);
        stormy.push(storm_rate);
        ratios.push(storm_rate / rate);
        reloads += storm_reloads;
        stormy_failed += failed;
    }
    let mid = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ratio_range = (
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max),
    );
    println!(
        "task throughput (probe calling echo.create, 4 clients, 2000 tasks a round, \
         {rounds} rounds each, alternating; medians; new versions {}):",
        match rewrite {
            true => "written out whole",
            false => "renamed in",
        }
    );
    println!(
        "  no reloads          {:>8.0} tasks/s  1.00x  ({calm_failed} failed)",
        mid(&mut calm)
    );
    println!(
        "  reload storm        {:>8.0} tasks/s  {:.2}x  (ratio per round {:.2}-{:.2}x; \
         {reloads} reloads meanwhile, {stormy_failed} failed)",
        mid(&mut stormy),
        mid(&mut ratios),
        ratio_range.0,
        ratio_range.1
    );
}
