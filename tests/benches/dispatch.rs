//! Dispatch benchmarks, each against a baseline measured in the same run (docs/performance.md).
//!
//! Run: `cargo bench -p guild-tests --bench dispatch` (after `plugins/build.sh`).
//! Reports medians and ratios; no timing is asserted anywhere.
//!
//! 1. fresh-instance task dispatch (probe specialist → one echo tool call → report), read-only
//!    and mutating (intent + outcome receipt appended durably, read against one durable ledger
//!    commit timed alone in the same run), vs a plain Rust function doing
//!    the same JSON work, vs spawning a process per call, vs one long-lived child process
//!    answering JSON lines (how MCP stdio servers actually run);
//!    The floor beside it: the runtime alone running the same two guests (fresh specialist
//!    store + instantiate + `run`, whose one tool call instantiates the connector fresh and
//!    calls it) with a task host that forwards the call and nothing else — no dispatch,
//!    grants, receipts, validation or tracing of tasks;
//!    And under both, bare wasmtime ([`bare`]): the same two guests on the same engine
//!    settings with bindings generated in the bench and nothing else, so dispatch reads as a
//!    multiple of it;
//! 2. batch throughput (1,000 tasks, concurrency 4) vs one after another and vs bare wasmtime
//!    running 1,000 such fresh instance pairs four at a time;
//! 3. the same task with and without the pooling allocator;
//! 4. host start (load + compile or cache) with and without the on-disk compile cache.

mod bare;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::plugin_dir;
use serde_json::{Value, json};

fn time<F: FnMut()>(iters: usize, f: F) -> Duration {
    guild_tests::time_median(iters, iters.min(20), f)
}

async fn time_async<F, Fut>(iters: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..iters.min(20) {
        f().await;
    }
    let mut samples = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        f().await;
        samples.push(t.elapsed());
    }
    guild_tests::median(samples)
}

fn config(dir: &std::path::Path, plugins: &[&str], cache: bool) -> Config {
    let list: Vec<String> = plugins
        .iter()
        .map(|p| format!("{:?}", plugin_dir(p).display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \"data\"\ncompile_cache = {cache}\n\n[dispatch]\nbatch_max_size = 1000\nbatch_concurrency = 4\nbillable_threshold = 0\n\n[grants.probe]\ntools = [\"echo.echo\", \"echo.create\"]\n",
        list.join(", ")
    );
    Config::parse(&text, &dir.join("guild.toml"), dir).expect("bench config")
}

fn plain_call(brief: &str) -> String {
    // What the specialist and connector do, minus the sandbox: parse, call, wrap.
    let op: Value = serde_json::from_str(brief).unwrap_or(Value::Null);
    let echoed = std::hint::black_box(op["input"].to_string());
    json!({"ok": true, "value": serde_json::from_str::<Value>(&echoed).unwrap_or(Value::Null)})
        .to_string()
}

fn process_per_call(line: &str) -> String {
    // Spawn a native process, send one JSON line, read one line back: the floor of the
    // "one process per call" model.
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn cat");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{line}").expect("write");
    drop(stdin);
    let mut out = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut out)
        .expect("read");
    let _ = child.wait();
    out
}

/// One long-lived child process (`cat`) answering one JSON line per request: the floor of the
/// way MCP stdio servers run (spawned once, then a line round trip per call).
struct LineChild {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl LineChild {
    fn spawn() -> Self {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn cat");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn round_trip(&mut self, line: &str, out: &mut String) {
        out.clear();
        writeln!(self.stdin, "{line}").expect("write");
        self.stdin.flush().expect("flush");
        self.stdout.read_line(out).expect("read");
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The least a task host can do: forward every tool call straight to the connector, refuse
/// everything else. What dispatch adds on top of it is the difference the bench reports.
struct ForwardOnly {
    runtime: guild_runtime::Runtime,
    connector: Arc<guild_runtime::Plugin>,
}

impl guild_runtime::TaskHost for ForwardOnly {
    fn granted_tools(&self) -> Vec<(String, guild_core::types::ToolSpec)> {
        Vec::new()
    }

    fn call_tool(
        &self,
        tool: String,
        input: String,
        _key: Option<String>,
    ) -> BoxFuture<'_, Result<guild_core::types::ToolOutcome, guild_core::types::ToolError>> {
        Box::pin(async move {
            let short = tool.rsplit('.').next().unwrap_or(&tool).to_owned();
            self.runtime
                .connector_call(&self.connector, &short, input)
                .await
                .map_err(|f| guild_core::types::ToolError::Failed(f.to_string()))
        })
    }

    fn send_report(&self, _output: String) -> Result<String, guild_runtime::ReportError> {
        Err(guild_runtime::ReportError::ParentGone)
    }

    fn skill_catalog(&self) -> BoxFuture<'_, Vec<guild_runtime::SkillSummary>> {
        Box::pin(async { Vec::new() })
    }

    fn load_skill(&self, name: String) -> BoxFuture<'_, Result<String, guild_skills::SkillError>> {
        Box::pin(async move {
            Err(guild_skills::SkillError::NotVisible {
                skill: name,
                visible: Vec::new(),
            })
        })
    }

    fn read_skill_resource(
        &self,
        name: String,
        _path: String,
    ) -> BoxFuture<'_, Result<Vec<u8>, guild_skills::SkillError>> {
        Box::pin(async move {
            Err(guild_skills::SkillError::NotVisible {
                skill: name,
                visible: Vec::new(),
            })
        })
    }

    fn memory_read(
        &self,
        _scope: guild_memory::Scope,
    ) -> BoxFuture<'_, Result<guild_runtime::MemoryText, guild_runtime::MemoryCallError>> {
        Box::pin(async { Err(guild_runtime::MemoryCallError::Denied("no memory".into())) })
    }

    fn memory_update(
        &self,
        _scope: guild_memory::Scope,
        _base: Option<u64>,
        _text: String,
    ) -> BoxFuture<'_, Result<guild_runtime::MemoryWrite, guild_runtime::MemoryCallError>> {
        Box::pin(async { Err(guild_runtime::MemoryCallError::Denied("no memory".into())) })
    }

    fn llm_complete(
        &self,
        _request: guild_core::llm::ChatRequest,
    ) -> BoxFuture<'_, Result<guild_core::llm::ChatAnswer, guild_core::llm::LlmError>> {
        Box::pin(async { Err(guild_core::llm::LlmError::Denied("no models".into())) })
    }

    fn delegate_run(
        &self,
        _brief: guild_delegate::TaskBrief,
    ) -> BoxFuture<'_, Result<guild_runtime::ChildReport, guild_runtime::DelegateError>> {
        Box::pin(async { Err(guild_runtime::DelegateError::Denied("no children".into())) })
    }

    fn delegate_review(
        &self,
        _child_id: String,
        _review: guild_delegate::TaskReview,
    ) -> BoxFuture<'_, Result<guild_delegate::ReviewEffect, guild_runtime::DelegateError>> {
        Box::pin(async { Err(guild_runtime::DelegateError::Denied("no children".into())) })
    }
}

/// The runtime floor: the probe and echo components prepared on `engine`, run with
/// [`ForwardOnly`].
async fn runtime_floor(
    engine: GuildEngine,
    cfg: &Config,
) -> (
    guild_runtime::Runtime,
    Arc<guild_runtime::Plugin>,
    Arc<ForwardOnly>,
) {
    use guild_core::capability::Effective;
    use guild_core::manifest::{Limits, PluginKind};
    let runtime = guild_runtime::Runtime::new(
        engine,
        guild_http::GuardedClient::new(guild_http::HttpLimits::default()),
        guild_runtime::IoBudget {
            stdio_kb: cfg.host.stdio_kb,
            hostcall_kb: cfg.host.hostcall_kb,
            max_handles: cfg.host.max_handles,
            max_refused_calls: cfg.dispatch.max_tool_calls,
        },
    )
    .expect("runtime");
    let prepare = |name: &'static str, kind: PluginKind| {
        let runtime = runtime.clone();
        async move {
            let file = plugin_dir(&format!("testing/{name}")).join(format!("{name}.wasm"));
            let caps = Arc::new(Effective::none(name, Limits::default()));
            Arc::new(
                runtime
                    .prepare(
                        name,
                        &format!("{name}@0.1.0"),
                        kind,
                        &file,
                        caps,
                        Default::default(),
                    )
                    .await
                    .expect("prepare"),
            )
        }
    };
    let probe = prepare("probe", PluginKind::Specialist).await;
    let echo = prepare("echo", PluginKind::Connector).await;
    let host = Arc::new(ForwardOnly {
        runtime: runtime.clone(),
        connector: echo,
    });
    (runtime, probe, host)
}

/// Runs `n` bare task-equivalents with at most `concurrency` at once, each on its own tokio
/// task (as a batch's children run), and checks every one succeeded.
async fn bare_concurrent(floor: &Arc<bare::Floor>, brief: &str, n: usize, concurrency: usize) {
    use futures::StreamExt;
    let results: Vec<_> = futures::stream::iter(0..n)
        .map(|_| {
            let floor = floor.clone();
            let brief = brief.to_owned();
            tokio::spawn(async move { floor.run(&brief).await.map(|_| ()) })
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    assert!(
        results.iter().all(|r| matches!(r, Ok(Ok(())))),
        "a bare run failed"
    );
}

fn row(name: &str, d: Duration, base: Duration) {
    println!(
        "{name:<58} {:>12.1} µs {:>10.2}x",
        d.as_secs_f64() * 1e6,
        d.as_secs_f64() / base.as_secs_f64()
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let iters: usize = std::env::var("GUILD_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir().expect("tempdir");
    let brief = json!({"op": "tool", "name": "echo.echo", "input": {"say": "hello"}}).to_string();
    let log_brief = json!({"op": "log", "text": "x"}).to_string();

    rt.block_on(async {
        let pooled = GuildEngine::new(EngineOptions::default()).expect("engine");
        let unpooled = GuildEngine::new(EngineOptions {
            pooling: false,
            ..EngineOptions::default()
        })
        .expect("engine");
        let plugins = ["testing/probe", "testing/echo"];
        let host = Host::with_engine(config(dir.path(), &plugins, false), pooled.clone())
            .await
            .expect("host");
        let host_unpooled = Host::with_engine(config(dir.path(), &plugins, false), unpooled)
            .await
            .expect("host");
        // The same host with every outcome committed at once (`outcome_linger_ms = 0`, as
        // before outcomes waited for the next intent's commit), on a ledger of its own.
        let at_once_dir = dir.path().join("at-once");
        std::fs::create_dir_all(&at_once_dir).expect("at-once dir");
        let mut at_once = config(&at_once_dir, &plugins, false);
        at_once.dispatch.outcome_linger_ms = 0;
        let host_at_once = Host::with_engine(at_once, pooled.clone())
            .await
            .expect("host");
        let check = host.task("probe", &brief).await.expect("task");
        assert!(
            check.report.is_some(),
            "bench task failed: {:?}",
            check.error
        );

        println!("== dispatch (median of {iters}; ratio vs the first row)");
        let plain = time(iters * 10, || {
            std::hint::black_box(plain_call(std::hint::black_box(&brief)));
        });
        // Read-only task, mutating task, one durable commit alone and one bare fsync, timed in
        // turn in each round, so that the disk's moods (its fsync time moves by several times
        // with other writers) fall on all four rows alike.
        let ledger = guild_host::receipts::Ledger::open(dir.path().join("one-commit.db"))
            .expect("ledger");
        let mut bare = guild_tests::BareFsync::new(dir.path());
        let mut samples: [Vec<Duration>; 8] = Default::default();
        for _ in 0..iters.min(20) {
            std::hint::black_box(host.task("probe", &brief).await.expect("warm-up task"));
        }
        for n in 0..iters as u64 {
            let t = Instant::now();
            let r = host.task("probe", &brief).await.expect("task");
            samples[0].push(t.elapsed());
            std::hint::black_box(r);
            let mutating_brief = json!({"op": "tool", "name": "echo.create",
                "input": {"title": format!("bench {n}")}})
            .to_string();
            let t = Instant::now();
            let r = host.task("probe", &mutating_brief).await.expect("task");
            samples[1].push(t.elapsed());
            assert_eq!(r.receipts.len(), 1, "mutating bench task wrote no receipt");
            // Four mutating calls in a row in one task: each outcome shares the next call's
            // intent commit, so each call after the first adds one commit, not two.
            // The same four calls read-only: the difference is the commits alone.
            let four = |tool: &str| {
                let ops = (0..4)
                    .map(|k| json!({"op": "tool", "name": tool,
                        "input": {"title": format!("bench {n}.{k}")}}))
                    .collect::<Vec<_>>();
                json!({"op": "seq", "ops": ops}).to_string()
            };
            let t = Instant::now();
            let r = host.task("probe", &four("echo.create")).await.expect("task");
            samples[4].push(t.elapsed());
            assert_eq!(r.receipts.len(), 4, "four-call bench task: {:?}", r.error);
            let t = Instant::now();
            let r = host.task("probe", &four("echo.echo")).await.expect("task");
            samples[5].push(t.elapsed());
            assert_eq!(r.tool_calls.len(), 4, "four-call bench task: {:?}", r.error);
            let t = Instant::now();
            let r = host_at_once.task("probe", &four("echo.create")).await.expect("task");
            samples[6].push(t.elapsed());
            assert_eq!(r.receipts.len(), 4, "four-call bench task: {:?}", r.error);
            let t = Instant::now();
            let r = host_at_once.task("probe", &mutating_brief).await.expect("task");
            samples[7].push(t.elapsed());
            assert_eq!(r.receipts.len(), 1, "mutating bench task wrote no receipt");
            // One durable commit on its own, on the same disk: what the mutating row is read in.
            let intent = guild_host::receipts::Intent {
                task_id: "bench".into(),
                route: "bench".into(),
                plugin: "echo@0.1.0".into(),
                tool: "echo.create".into(),
                receipt_type: String::new(),
                operation: String::new(),
                input_sha256: format!("{n:064x}"),
                idempotency_key: None,
                chain: Vec::new(),
            };
            let t = Instant::now();
            std::hint::black_box(ledger.begin(intent).expect("one commit"));
            samples[2].push(t.elapsed());
            // The floor under that commit: a bare 4 KiB append + fsync.
            samples[3].push(bare.once());
        }
        let [task, mutating, one_commit, fsync, four, four_read, four_at_once, one_at_once] =
            samples.map(guild_tests::median);
        let process = time(iters.min(500), || {
            std::hint::black_box(process_per_call(&brief));
        });
        let mut child = LineChild::spawn();
        let mut line = String::new();
        let long_lived = time(iters * 10, || {
            child.round_trip(std::hint::black_box(&brief), &mut line);
            std::hint::black_box(&line);
        });
        let (floor_rt, floor_probe, forward) = runtime_floor(pooled.clone(), &config(dir.path(), &plugins, false)).await;
        let floor = time_async(iters, || async {
            let (answer, _) = floor_rt
                .run_specialist(&floor_probe, forward.clone(), "bench", &brief)
                .await;
            assert!(
                matches!(answer, Ok(Ok(_))),
                "floor run failed: {answer:?}"
            );
            std::hint::black_box(answer.ok());
        })
        .await;
        let bare_floor = bare::Floor::new(
            &plugin_dir("testing/probe").join("probe.wasm"),
            &plugin_dir("testing/echo").join("echo.wasm"),
        )
        .expect("bare floor");
        let details = bare_floor.run(&brief).await.expect("bare run");
        assert!(details.contains("\"ok\":true"), "bare run failed: {details}");
        let bare_one = time_async(iters, || async {
            std::hint::black_box(bare_floor.run(&brief).await.expect("bare run"));
        })
        .await;
        row("plain Rust function call (same JSON work)", plain, plain);
        row(
            "bare wasmtime: same two guests, fresh instances + calls",
            bare_one,
            plain,
        );
        row(
            "runtime floor: same two fresh instances + calls, no dispatch",
            floor,
            plain,
        );
        row(
            "guild task: fresh specialist + fresh connector instance",
            task,
            plain,
        );
        row(
            "  same, mutating tool (intent + outcome receipt, fsync)",
            mutating,
            plain,
        );
        row(
            "  same, mutating, its outcome committed at once (linger 0)",
            one_at_once,
            plain,
        );
        row("  same, four read-only tools in a row", four_read, plain);
        row(
            "  same, four mutating tools in a row (4 receipts)",
            four,
            plain,
        );
        row(
            "  same, each outcome committed at once (linger 0)",
            four_at_once,
            plain,
        );
        row(
            "long-lived child, one JSON line round trip (MCP stdio)",
            long_lived,
            plain,
        );
        row(
            "process per call (spawn + one JSON line round trip)",
            process,
            plain,
        );
        println!(
            "   guild task vs process per call: {:.1}x faster; guild task / bare wasmtime: {:.2}x; \
             guild task / runtime floor: {:.2}x; runtime floor / bare wasmtime: {:.2}x; \
             mutating - read-only task: {:.1} µs = {:.2} durable commits (one commit alone: {:.1} µs) \
             = {:.2} bare fsyncs (one bare 4 KiB append + fsync: {:.1} µs)",
            process.as_secs_f64() / task.as_secs_f64(),
            task.as_secs_f64() / bare_one.as_secs_f64(),
            task.as_secs_f64() / floor.as_secs_f64(),
            floor.as_secs_f64() / bare_one.as_secs_f64(),
            (mutating.as_secs_f64() - task.as_secs_f64()) * 1e6,
            (mutating.as_secs_f64() - task.as_secs_f64()) / one_commit.as_secs_f64(),
            one_commit.as_secs_f64() * 1e6,
            (mutating.as_secs_f64() - task.as_secs_f64()) / fsync.as_secs_f64(),
            fsync.as_secs_f64() * 1e6
        );
        let commits = |d: Duration| (d.as_secs_f64() - four_read.as_secs_f64()) / one_commit.as_secs_f64();
        println!(
            "   four mutating calls - four read-only calls: {:.1} µs = {:.2} durable commits \
             ({:.2} per call); outcomes committed at once: {:.2} commits; ratio {:.2}x",
            (four.as_secs_f64() - four_read.as_secs_f64()) * 1e6,
            commits(four),
            commits(four) / 4.0,
            commits(four_at_once),
            four.as_secs_f64() / four_at_once.as_secs_f64()
        );

        println!("\n== batch throughput: 1,000 tool-calling tasks (best of 3)");
        let requests: Vec<guild_host::TaskRequest> = (0..1000)
            .map(|_| guild_host::TaskRequest::new("probe", brief.clone()))
            .collect();
        let session = host.session();
        let mut batch_best = Duration::MAX;
        let mut seq_best = Duration::MAX;
        let mut bare_best = Duration::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            bare_concurrent(&bare_floor, &brief, 1000, 4).await;
            bare_best = bare_best.min(t.elapsed());
            let t = Instant::now();
            let items = session.batch(&requests).await.expect("batch");
            batch_best = batch_best.min(t.elapsed());
            assert!(items.iter().all(|i| i.result.is_ok()));
            let t = Instant::now();
            for r in &requests {
                std::hint::black_box(
                    session
                        .task(&r.subagent_type, &r.description)
                        .await
                        .expect("task"),
                );
            }
            seq_best = seq_best.min(t.elapsed());
        }
        let rate = |d: Duration| 1000.0 / d.as_secs_f64();
        println!(
            "{:<58} {:>12.0} tasks/s {:>6.2}x",
            "one after another (single-task floor)",
            rate(seq_best),
            1.0
        );
        println!(
            "{:<58} {:>12.0} tasks/s {:>6.2}x",
            "one batch, batch_concurrency = 4",
            rate(batch_best),
            seq_best.as_secs_f64() / batch_best.as_secs_f64()
        );
        println!(
            "{:<58} {:>12.0} tasks/s {:>6.2}x",
            "bare wasmtime: 1,000 fresh instance pairs, 4 at a time",
            rate(bare_best),
            seq_best.as_secs_f64() / bare_best.as_secs_f64()
        );
        println!(
            "   batch throughput is {:.0}% of bare wasmtime's at the same concurrency",
            100.0 * bare_best.as_secs_f64() / batch_best.as_secs_f64()
        );

        println!("\n== instantiation: task with one host call, no tool (median of {iters})");
        let with_pool = time_async(iters, || async {
            std::hint::black_box(host.task("probe", &log_brief).await.expect("task"));
        })
        .await;
        let without_pool = time_async(iters, || async {
            std::hint::black_box(host_unpooled.task("probe", &log_brief).await.expect("task"));
        })
        .await;
        row("pooling allocator", with_pool, with_pool);
        row("on-demand allocator", without_pool, with_pool);

        println!("\n== host start: load + compile every example plugin (median of 3)");
        let all = [
            "kb",
            "tracker",
            "triage",
            "digest",
            "testing/probe",
            "testing/echo",
        ];
        let cache_dir = dir.path().join("bench-cache");
        let start = |cache: bool| {
            let cache_dir = cache_dir.clone();
            let cfg = config(dir.path(), &all, cache);
            async move {
                let engine = GuildEngine::new(EngineOptions {
                    cache_dir: cache.then_some(cache_dir),
                    ..EngineOptions::default()
                })
                .expect("engine");
                let t = Instant::now();
                let h = Host::with_engine(cfg, engine).await.expect("host");
                let took = t.elapsed();
                assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
                took
            }
        };
        let mut cold = Vec::new();
        for _ in 0..3 {
            cold.push(start(false).await);
        }
        let _fill = start(true).await;
        let mut warm = Vec::new();
        for _ in 0..3 {
            warm.push(start(true).await);
        }
        let (cold, warm) = (guild_tests::median(cold), guild_tests::median(warm));
        row("with the disk compile cache (deserialise)", warm, warm);
        row(
            "without it (Cranelift compiles every component)",
            cold,
            warm,
        );
    });
}
