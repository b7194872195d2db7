//! Delegation benchmark (docs/performance.md, "Delegation").
//!
//! Run: `cargo bench -p guild-tests --bench delegation`. Reports medians; no timing is asserted.
//!
//! The host's cost per delegation level: the same three small tasks (each one `echo.echo` call
//! by the `delegator` test guest, copied as `boss`, `worker` and `leaf`) run as a tree of depth
//! 3 (boss delegates to worker, worker to leaf, each reviews its child with `ascend`) and
//! started flat, one top task after another, in the same run (rounds alternate the two). The
//! difference, over the two delegations, is what one level costs: checking the brief, admitting
//! the child and charging the budget up the chain, writing the tree to `trees.db` after each
//! change, rendering the brief as the child's description, validating the child's report for
//! its parent, and the review. `GUILD_BENCH_DIR=/dev/shm` puts the host's data dir (and so
//! `trees.db`) on tmpfs, where a commit's fsync costs nothing: the difference from a run on
//! disk is what the tree store's durable writes cost.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use guild_host::{Config, Host};
use serde_json::{Value, json};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A copy of the `delegator` component as plugin `name`, with `capabilities`.
fn specialist(dir: &Path, name: &str, capabilities: &str) -> PathBuf {
    let from = guild_tests::plugin_dir("testing/delegator");
    let to = dir.join(name);
    std::fs::create_dir_all(&to).expect("mkdir");
    std::fs::copy(from.join("delegator.wasm"), to.join("delegator.wasm"))
        .expect("delegator.wasm (plugins/build.sh)");
    std::fs::write(
        to.join("plugin.toml"),
        format!(
            "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
             component = \"delegator.wasm\"\ndescription = \"bench delegator\"\n\n\
             [capabilities]\n{capabilities}\n\n[limits]\nmemory_mb = 64\ntimeout_s = 60\n\
             max_output_kb = 256\n"
        ),
    )
    .expect("plugin.toml");
    to
}

/// The one small task every node does.
fn echo() -> Value {
    json!({"op": "tool", "tool": "echo.echo", "input": {"text": "one line"}})
}

/// A step that delegates `script` to `specialist`, then its review.
fn delegate(specialist: &str, script: Value) -> [Value; 2] {
    [
        json!({"op": "run", "brief": {
            "specialist": specialist,
            "objective": "Echo one line",
            "reason": "The benchmark measures a delegation level",
            "completion_criteria": ["the line is echoed"],
            "context": script,
        }}),
        json!({"op": "review", "decision": "ascend", "reason": "echoed"}),
    ]
}

/// boss → worker → leaf, each doing its echo first.
fn tree_script() -> String {
    let leaf = json!({"steps": [echo()]});
    let [run_leaf, review_leaf] = delegate("leaf", leaf);
    let worker = json!({"steps": [echo(), run_leaf, review_leaf]});
    let [run_worker, review_worker] = delegate("worker", worker);
    json!({"steps": [echo(), run_worker, review_worker]}).to_string()
}

/// The details of a delegator's report: one result per step.
fn results(done: &guild_host::types::TaskResult) -> Vec<Value> {
    let details = &done.report.as_ref().expect("a report").details;
    serde_json::from_str(details).expect("details are JSON")
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
        .unwrap_or(30);
    runtime.block_on(async {
        let base = std::env::var("GUILD_BENCH_DIR")
            .unwrap_or_else(|_| env!("CARGO_TARGET_TMPDIR").to_owned());
        let dir = tempfile::tempdir_in(&base).expect("tempdir");
        let folders = [
            specialist(
                dir.path(),
                "boss",
                "delegate = [\"worker\"]\ntools = [\"echo.echo\"]",
            ),
            specialist(
                dir.path(),
                "worker",
                "delegate = [\"leaf\"]\ntools = [\"echo.echo\"]",
            ),
            specialist(dir.path(), "leaf", "tools = [\"echo.echo\"]"),
            guild_tests::plugin_dir("testing/echo"),
        ];
        let list: Vec<String> = folders
            .iter()
            .map(|f| format!("{:?}", f.display().to_string()))
            .collect();
        let text = format!(
            "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\n\
             [grants.boss]\ndelegate = [\"worker\"]\ntools = [\"echo.echo\"]\n\
             [grants.worker]\ndelegate = [\"leaf\"]\ntools = [\"echo.echo\"]\n\
             [grants.leaf]\ntools = [\"echo.echo\"]\n",
            list.join(", ")
        );
        let config =
            Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("config");
        let h = Host::with_engine(config, guild_tests::engine())
            .await
            .expect("host");
        let tree = tree_script();
        let flat = json!({"steps": [echo()]}).to_string();
        // One of each first, checked: the tree is three levels deep and every call succeeded.
        let done = h.task("boss", &tree).await.expect("tree task");
        let r = results(&done);
        assert!(r.iter().all(|s| s["ok"] == json!(true)), "{r:?}");
        let nodes = h.task_tree(&done.task_id).expect("a tree").nodes;
        assert_eq!(
            nodes.iter().map(|n| n.depth).collect::<Vec<_>>(),
            [0, 1, 2],
            "{nodes:?}"
        );
        let mut trees = Vec::new();
        let mut flats = Vec::new();
        for _ in 0..rounds {
            let t = Instant::now();
            let done = h.task("boss", &tree).await.expect("tree task");
            trees.push(t.elapsed());
            assert!(results(&done).iter().all(|s| s["ok"] == json!(true)));
            let t = Instant::now();
            for name in ["boss", "worker", "leaf"] {
                let done = h.task(name, &flat).await.expect("flat task");
                assert!(results(&done).iter().all(|s| s["ok"] == json!(true)));
            }
            flats.push(t.elapsed());
        }
        let (tr, fl) = (median(trees), median(flats));
        let level = (micros(tr) - micros(fl)) / 2.0;
        println!(
            "delegation, median of {rounds} rounds (3 tasks, one echo.echo call each; data dir \
             under {base})"
        );
        println!(
            "  started flat, one top task after another:   {:>9.1} µs  1.00×",
            micros(fl)
        );
        println!(
            "  as a tree of depth 3 (boss → worker → leaf): {:>9.1} µs  {:.2}×",
            micros(tr),
            tr.as_secs_f64() / fl.as_secs_f64()
        );
        println!(
            "  host cost per delegation level:              {:>9.1} µs  ({:.1} % of a flat task)",
            level,
            level / (micros(fl) / 3.0) * 100.0
        );
    });
}
