//! Model-call benchmark (docs/performance.md, "Model calls").
//!
//! Run: `cargo bench -p guild-tests --bench llm`. Reports medians; no timing is asserted.
//!
//! The host's overhead per model call: the `asker` specialist makes `CALLS` calls in one task
//! through the broker to the stand-in endpoint on 127.0.0.1 (grant check, budgets, the guarded
//! client, accounting, the WIT crossing), against the same stand-in called directly with a
//! plain keep-alive HTTP client posting the same body.

use std::time::{Duration, Instant};

use guild_host::llm::standin::{StandIn, Step};
use guild_host::{Config, Host};
use serde_json::json;

const CALLS: usize = 50;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
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
        std::fs::write(dir.path().join("key"), "sk-bench-0123456789abcdef").expect("key");
        let text = format!(
            "[host]\nplugins = [{:?}]\ndata_dir = \".guild\"\n\
             [llm.endpoints.local]\nbase_url = \"{}\"\napi_key_file = \"key\"\n\
             [llm.models]\nfast = {{ endpoint = \"local\", model = \"m\" }}\n\
             [grants.asker.llm]\nmodels = [\"fast\"]\nconcurrency = 1\n",
            guild_tests::plugin_dir("testing/asker")
                .display()
                .to_string(),
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
        for _ in 0..rounds {
            let t = Instant::now();
            for _ in 0..CALLS {
                let r = client
                    .post(&url)
                    .bearer_auth("sk-bench-0123456789abcdef")
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
        }
        let (d, g) = (median(direct), median(guild));
        println!("model call, median of {rounds} rounds of {CALLS} calls");
        println!(
            "  stand-in called directly (reqwest, keep-alive): {:>9.1} µs  1.00×",
            d.as_secs_f64() * 1e6
        );
        println!(
            "  through Guild (asker task, per call):          {:>9.1} µs  {:.2}×",
            g.as_secs_f64() * 1e6,
            g.as_secs_f64() / d.as_secs_f64()
        );
        println!(
            "  host overhead per call:                        {:>9.1} µs",
            (g.as_secs_f64() - d.as_secs_f64()) * 1e6
        );
    });
}
