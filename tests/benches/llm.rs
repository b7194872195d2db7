//! Model-call benchmark (docs/performance.md, "Model calls").
//!
//! Run: `cargo bench -p guild-tests --bench llm`. Reports medians; no timing is asserted.
//!
//! Two figures, each against the same stand-in endpoint on 127.0.0.1 called directly with a plain
//! keep-alive HTTP client posting the same body (the baseline, measured in the same run):
//! - the host's overhead per model call: the `asker` specialist makes `CALLS` calls in one task
//!   through the broker (grant check, budgets, the guarded client, accounting, the WIT crossing);
//! - the agent loop's overhead per step: a prompt-defined specialist (the `agent-loop`
//!   component) runs `STEPS` steps, each a completion that asks for one call of a read-only
//!   connector tool (`echo.echo`), then a final answer: per step, the loop builds the request
//!   (system prompt, tools with their schemas, the growing history), the host brokers the call,
//!   the loop parses the answer and the host dispatches the tool call to a fresh connector
//!   instance.

use std::path::Path;
use std::time::{Duration, Instant};

use guild_host::llm::standin::{StandIn, Step};
use guild_host::{Config, Host};
use serde_json::json;

/// Model calls per `asker` task.
const CALLS: usize = 50;
/// Tool-calling steps per agent-loop task (plus one final answer).
const STEPS: usize = 10;
const KEY: &str = "sk-bench-0123456789abcdef";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A prompt-defined specialist `looper` in `dir`: the agent-loop component, a prompt, and
/// `echo.echo` as its one tool.
fn looper(dir: &Path) -> std::path::PathBuf {
    let folder = dir.join("looper");
    std::fs::create_dir_all(&folder).expect("looper folder");
    let component = guild_tests::plugin_dir("agent-loop").join("agent-loop.wasm");
    std::fs::copy(&component, folder.join("agent-loop.wasm"))
        .expect("agent-loop.wasm (plugins/build.sh)");
    std::fs::write(
        folder.join("plugin.toml"),
        "[plugin]\nname = \"looper\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
         component = \"agent-loop.wasm\"\ndescription = \"Benchmark: echoes its brief.\"\n\
         [capabilities]\ntools = [\"echo.echo\"]\nllm = true\nreport = true\n\
         [agent]\nmax_steps = 50\n",
    )
    .expect("plugin.toml");
    std::fs::write(
        folder.join("prompt.md"),
        "# Echo\n\nEcho the brief back, one line at a time.\n",
    )
    .expect("prompt.md");
    folder
}

/// The stand-in's answers for one agent-loop task: `STEPS` tool calls, then the report.
fn loop_script() -> Vec<Step> {
    let mut steps: Vec<Step> = (0..STEPS)
        .map(|i| {
            Step::ToolCalls(vec![(
                format!("c{i}"),
                "echo__echo".to_owned(),
                json!({"line": i, "text": "one line of the brief"}).to_string(),
            )])
        })
        .collect();
    let report =
        json!({"summary": "Echoed the brief.", "outcome": "satisfied", "hard_passed": true});
    steps.push(Step::Text(report.to_string()));
    steps
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let rounds: usize = std::env::var("GUILD_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    runtime.block_on(async {
        let s = StandIn::start(vec![Step::Text("ok".into())])
            .await
            .expect("stand-in");
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        std::fs::write(dir.path().join("key"), KEY).expect("key");
        let looper = looper(dir.path());
        let plugins = [
            guild_tests::plugin_dir("testing/asker"),
            guild_tests::plugin_dir("testing/echo"),
            looper,
        ];
        let plugins: Vec<String> = plugins.iter().map(|p| format!("{:?}", p.display().to_string())).collect();
        let text = format!(
            "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\
             [llm.endpoints.local]\nbase_url = \"{}\"\napi_key_file = \"key\"\n\
             [llm.models]\nfast = {{ endpoint = \"local\", model = \"m\" }}\n\
             [grants.asker.llm]\nmodels = [\"fast\"]\nconcurrency = 1\n\
             [grants.looper]\ntools = [\"echo.echo\"]\nreport = true\n\
             [grants.looper.llm]\nmodels = [\"fast\"]\nconcurrency = 1\n",
            plugins.join(", "),
            s.base_url()
        );
        let config =
            Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("config");
        let h = Host::with_engine(config, guild_tests::engine())
            .await
            .expect("host");
        let brief =
            json!({"op": "complete", "model": "fast", "user": "hello", "times": CALLS}).to_string();

        let body = json!({"model": "m", "messages": [
            {"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}],
            "max_tokens": 64});
        let client = reqwest::Client::new();
        let url = format!("{}/chat/completions", s.base_url());
        let mut direct = Vec::new();
        let mut guild = Vec::new();
        let mut looped = Vec::new();
        for _ in 0..rounds {
            let t = Instant::now();
            for _ in 0..CALLS {
                let r = client
                    .post(&url)
                    .bearer_auth(KEY)
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await
                    .expect("direct call");
                r.bytes().await.expect("body");
            }
            direct.push(t.elapsed() / CALLS as u32);
            let t = Instant::now();
            let done = h.task("asker", &brief).await.expect("task");
            guild.push(t.elapsed() / CALLS as u32);
            assert_eq!(
                done.usage.models["fast"].calls as usize, CALLS,
                "{:?}",
                done.error
            );
            // The asker's script is one repeated answer; the loop's is set per task.
            s.set(loop_script());
            let t = Instant::now();
            let done = h.task("looper", "echo this").await.expect("loop task");
            looped.push(t.elapsed() / (STEPS as u32 + 1));
            assert_eq!(done.tool_calls.len(), STEPS, "{:?}", done.error);
            assert_eq!(
                done.usage.models["fast"].calls as usize,
                STEPS + 1,
                "{:?}",
                done.error
            );
            s.set([Step::Text("ok".into())]);
        }
        let (d, g, l) = (median(direct), median(guild), median(looped));
        println!("model call, median of {rounds} rounds ({CALLS} calls; {STEPS} loop steps + 1 answer)");
        println!(
            "  stand-in called directly (reqwest, keep-alive): {:>9.1} µs  1.00×",
            micros(d)
        );
        println!(
            "  through Guild (asker task, per call):          {:>9.1} µs  {:.2}×",
            micros(g),
            g.as_secs_f64() / d.as_secs_f64()
        );
        println!(
            "  host overhead per call:                        {:>9.1} µs  {:.2} % of a 50 ms answer",
            micros(g) - micros(d),
            (micros(g) - micros(d)) / 500.0
        );
        println!(
            "  agent loop, per step (completion + tool call): {:>9.1} µs  {:.2}×",
            micros(l),
            l.as_secs_f64() / d.as_secs_f64()
        );
        println!(
            "  loop overhead per step:                        {:>9.1} µs  {:.2} % of a 50 ms answer",
            micros(l) - micros(d),
            (micros(l) - micros(d)) / 500.0
        );
    });
}
