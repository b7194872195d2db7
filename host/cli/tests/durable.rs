//! Durable state as an operator meets it across runs of `guild`: a ledger swapped for an
//! older copy is refused for writing (so `receipts verify` keeps saying so) until it is
//! accepted deliberately, and a mutating call that outlives its timed-out task records its
//! outcome before `guild task` exits. Runs the built binary against the real probe and echo
//! components (built by `plugins/build.sh`).

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

mod common;
use common::guild;

/// A folder whose `guild.toml` loads the probe and echo, the probe granted `echo.create` and
/// `echo.stall`; tasks give up after 1 s, echo calls after 3 s.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\ncompile_cache = false\n\
         [dispatch]\ntask_timeout_s = 1\n\
         [grants.probe]\ntools = [\"echo.create\", \"echo.stall\"]\n\
         [grants.echo]\nlimits = {{ timeout_s = 3 }}\n",
        common::plugin("testing/probe").display().to_string(),
        common::plugin("testing/echo").display().to_string(),
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("write guild.toml");
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    guild(dir, args).output().expect("guild runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn call(dir: &Path, tool: &str, input: Value) -> Output {
    let brief = json!({"op": "tool", "name": tool, "input": input}).to_string();
    run(dir, &["task", "probe", brief.as_str()])
}

fn receipts(dir: &Path) -> Vec<Value> {
    let out = run(dir, &["--json", "receipts"]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("receipts are JSON")
}

#[test]
fn a_ledger_swapped_for_an_older_copy_is_refused_until_accepted() {
    let dir = setup();
    let data = dir.path().join("data");
    let first = call(dir.path(), "echo.create", json!({"n": 1}));
    assert_eq!(code(&first), 0, "{}", text(&first.stderr));
    let old = std::fs::read(data.join("receipts.db")).expect("the ledger after one task");
    let second = call(dir.path(), "echo.create", json!({"n": 2}));
    assert_eq!(code(&second), 0, "{}", text(&second.stderr));
    std::fs::write(data.join("receipts.db"), old).expect("swap the older copy in");

    // Denied: the next run does not append (which would move the anchor past the gap).
    let refused = call(dir.path(), "echo.create", json!({"n": 3}));
    let stderr = text(&refused.stderr);
    assert_eq!(code(&refused), 1, "{stderr}");
    assert!(
        stderr.contains("refusing to write to the receipts ledger")
            && stderr.contains("guild receipts accept-head"),
        "{stderr}"
    );
    for _ in 0..2 {
        let verify = run(dir.path(), &["receipts", "verify"]);
        assert_eq!(code(&verify), 1, "{}", text(&verify.stdout));
        assert!(text(&verify.stdout).contains("TAMPERED"));
    }

    // Allowed, deliberately: accepted, recorded, and the ledger is written to again.
    let accept = run(dir.path(), &["receipts", "accept-head"]);
    assert_eq!(code(&accept), 0, "{}", text(&accept.stderr));
    assert!(
        text(&accept.stdout).contains("accepted"),
        "{}",
        text(&accept.stdout)
    );
    let verify = run(dir.path(), &["receipts", "verify"]);
    assert_eq!(code(&verify), 0, "{}", text(&verify.stdout));
    let again = call(dir.path(), "echo.create", json!({"n": 3}));
    assert_eq!(code(&again), 0, "{}", text(&again.stderr));
    let accept = run(dir.path(), &["receipts", "accept-head"]);
    assert!(
        text(&accept.stdout).contains("nothing to accept"),
        "{}",
        text(&accept.stdout)
    );
}

#[test]
fn a_call_outliving_its_timed_out_task_records_its_outcome_before_guild_task_exits() {
    let dir = setup();
    let out = call(dir.path(), "echo.stall", json!({}));
    assert_eq!(code(&out), 4, "the task timed out: {}", text(&out.stdout));
    let all = receipts(dir.path());
    let statuses: Vec<_> = all
        .iter()
        .map(|r| (r["tool"].as_str(), r["status"].as_str()))
        .collect();
    assert_eq!(
        statuses,
        [(Some("echo.stall"), Some("failed"))],
        "the call's outcome is recorded, not left unknown: {all:?}"
    );
    assert!(
        all[0]["error"].as_str().unwrap_or("").contains("timed out"),
        "{all:?}"
    );
    // A task that ends before any call runs long waits for nothing.
    let quick = call(dir.path(), "echo.create", json!({"n": 1}));
    assert_eq!(code(&quick), 0, "{}", text(&quick.stderr));
    assert!(!text(&quick.stderr).contains("waiting for"));
}
