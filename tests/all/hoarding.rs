//! Resources one plugin could take from everyone: handles, tool calls, recorded bytes,
//! oversized outcome fields and progress reports. Each limit has an allowed and a refused case,
//! and the host keeps serving other tasks afterwards.

use guild_host::types::{CallStatus, TaskStatus};
use guild_tests::{host, probe};
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];

fn fs_grant(dir: &std::path::Path, extra: &str) -> String {
    std::fs::create_dir_all(dir.join("ro")).expect("mkdir");
    std::fs::write(dir.join("ro/readme.md"), "read me").expect("write");
    format!("[grants.probe]\nfs = [{{ guest = \"/ro\", host = \"ro\", mode = \"ro\" }}]\n{extra}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handles_below_the_limit_are_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &fs_grant(dir.path(), "")).await;
    let p = probe(
        &h,
        json!({"op": "open_many", "path": "/ro/readme.md", "count": 200}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value, json!(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handle_leak_ends_only_its_instance_at_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &fs_grant(dir.path(), "")).await;
    let leak = probe(
        &h,
        json!({"op": "open_many", "path": "/ro/readme.md", "count": 20_000}),
    );
    let other = probe(&h, json!({"op": "read", "path": "/ro/readme.md"}));
    let (leak, other) = tokio::join!(leak, other);
    assert_eq!(leak.result.status, TaskStatus::Failed, "{:?}", leak.result);
    let error = leak.result.error.unwrap_or_default();
    assert!(
        error.contains("more than 512 open handles") && error.contains("handle limit"),
        "{error}"
    );
    assert!(other.ok, "a concurrent task still reads: {other:?}");
    // The host keeps serving, file handles included.
    let after = probe(&h, json!({"op": "read", "path": "/ro/readme.md"})).await;
    assert!(after.ok, "{after:?}");
    assert_eq!(after.value, json!("read me"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handle_limit_is_an_operator_setting() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("ro")).expect("mkdir");
    std::fs::write(dir.path().join("ro/readme.md"), "read me").expect("write");
    let list = format!(
        "{:?}, {:?}",
        guild_tests::plugin_dir("testing/probe")
            .display()
            .to_string(),
        guild_tests::plugin_dir("testing/echo")
            .display()
            .to_string()
    );
    let text = format!(
        "[host]\nplugins = [{list}]\ndata_dir = \"data\"\nmax_handles = 64\n\n{}",
        fs_grant(dir.path(), "")
    );
    let config = guild_host::Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
        .expect("config parses");
    let h = guild_host::Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host starts");
    let p = probe(
        &h,
        json!({"op": "open_many", "path": "/ro/readme.md", "count": 200}),
    )
    .await;
    let error = p.result.error.unwrap_or_default();
    assert!(error.contains("more than 64 open handles"), "{error}");
    let bad = text.replace("max_handles = 64", "max_handles = 0");
    let err = guild_host::Config::parse(&bad, &dir.path().join("guild.toml"), dir.path())
        .expect_err("0 handles is refused");
    assert!(err.to_string().contains("host.max_handles"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_within_the_limit_are_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        PROBE,
        "[grants.probe]\ntools = [\"echo.echo\"]\n\n[dispatch]\nmax_tool_calls = 5",
    )
    .await;
    let p = probe(
        &h,
        json!({"op": "tool_loop", "name": "echo.echo", "input": {"n": 1}, "count": 5}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value["answered"], json!(5), "{:?}", p.value);
    assert_eq!(p.value["refused"], json!(0), "{:?}", p.value);
    assert_eq!(p.result.tool_calls.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_calls_within_the_budget_leave_the_task_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "[grants.probe]\ntools = [\"echo.echo\"]").await;
    // echo.fail is requested by the manifest but not granted: every call is refused.
    let p = probe(
        &h,
        json!({"op": "tool_loop", "name": "echo.fail", "count": 256}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value["refused"], json!(256), "{:?}", p.value);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_call_flood_stops_the_task_and_the_result_stays_small() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "[grants.probe]\ntools = [\"echo.echo\"]").await;
    let p = probe(
        &h,
        json!({"op": "tool_loop", "name": "echo.fail", "count": 300_000}),
    )
    .await;
    // The refusals counted toward the task's limit, and past it the task was stopped.
    assert_eq!(p.result.status, TaskStatus::Failed, "{:?}", p.result);
    let error = p.result.error.clone().unwrap_or_default();
    assert!(
        error.contains("more than 256 refused calls")
            && error.contains("[dispatch] max_tool_calls"),
        "{error}"
    );
    // 256 refusals plus the one that hit the limit are recorded.
    assert_eq!(p.result.tool_calls.len(), 257);
    let size = serde_json::to_string(&p.result).expect("serialize").len();
    assert!(size < 1024 * 1024, "task result is {size} bytes");
    let after = probe(
        &h,
        json!({"op": "tool", "name": "echo.echo", "input": {"a": 1}}),
    )
    .await;
    assert!(after.ok, "a new task has its own budget: {after:?}");
}

/// A task of `count` reads of an ungranted config key.
fn config_reads(count: usize) -> serde_json::Value {
    let ops: Vec<_> = (0..count)
        .map(|_| json!({"op": "config", "key": "not-granted"}))
        .collect();
    json!({"op": "seq", "ops": ops})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_capability_refusal_counts_toward_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        PROBE,
        "[grants.probe]\n\n[dispatch]\nmax_tool_calls = 20",
    )
    .await;
    // Allowed: refusals within the budget are answered as refusals.
    let within = probe(&h, config_reads(20)).await;
    assert!(within.ok, "{within:?}");
    assert!(
        within.value[19]["error"]
            .as_str()
            .is_some_and(|e| e.contains("denied")),
        "{:?}",
        within.value
    );
    // Denied: one more and the instance is stopped.
    let past = probe(&h, config_reads(21)).await;
    assert_eq!(past.result.status, TaskStatus::Failed, "{:?}", past.result);
    let error = past.result.error.unwrap_or_default();
    assert!(error.contains("more than 20 refused calls"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_outcome_fields_are_capped_in_ledger_and_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The hostcall budget is raised so the 4 × 3 MB reach the host (the default of 4 MiB
    // would already stop them at the boundary).
    let h = host(
        dir.path(),
        PROBE,
        "hostcall_kb = 16384\n\n[grants.probe]\ntools = [\"echo.sprawl\", \"echo.create\"]",
    )
    .await;
    // Allowed: fitting fields pass unchanged.
    let ok = probe(
        &h,
        json!({"op": "tool", "name": "echo.create", "input": {"a": 1}}),
    )
    .await;
    assert!(ok.ok, "{ok:?}");
    assert!(ok.value["external_id"].is_string(), "{:?}", ok.value);
    assert!(ok.value["verifiable_url"].is_string(), "{:?}", ok.value);
    // Refused: 3 MB in each field.
    let p = probe(&h, json!({"op": "tool", "name": "echo.sprawl"})).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value["status"], json!("failed"));
    let error = p.value["error"].as_str().unwrap_or_default();
    assert!(
        error.len() < 5 * 1024 && error.contains("[truncated: 3000000 bytes]"),
        "{} bytes",
        error.len()
    );
    assert_eq!(p.value["external_id"], json!(null));
    assert_eq!(p.value["verifiable_url"], json!(null));
    assert!(p.value["preview"].as_str().unwrap_or_default().len() < 300);
    let record = &p.result.tool_calls[0];
    assert_eq!(record.outcome.status, CallStatus::Failed);
    let size = serde_json::to_string(&p.result).expect("serialize").len();
    assert!(size < 64 * 1024, "task result is {size} bytes");
    let receipts = h
        .receipts(Some(&p.result.task_id), 10)
        .await
        .expect("receipts");
    assert_eq!(receipts.len(), 1);
    let stored = serde_json::to_string(&receipts[0])
        .expect("serialize")
        .len();
    assert!(stored < 16 * 1024, "ledger entry is {stored} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn specialist_error_text_is_capped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    let short = probe(&h, json!({"op": "fail_big", "bytes": 100})).await;
    let error = short.result.error.unwrap_or_default();
    assert!(error.ends_with(&"f".repeat(100)), "{error}");
    let p = probe(&h, json!({"op": "fail_big", "bytes": 3_000_000})).await;
    assert_eq!(p.result.status, TaskStatus::Failed);
    let error = p.result.error.unwrap_or_default();
    assert!(
        error.len() < 5 * 1024 && error.contains("[truncated: 3000000 bytes]"),
        "{} bytes",
        error.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_bytes_per_task_are_capped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "[grants.probe]\nreport = true").await;
    let ok = probe(
        &h,
        json!({"op": "report_many", "count": 10, "bytes": 60_000}),
    )
    .await;
    assert!(ok.ok, "{ok:?}");
    assert_eq!(ok.value["sent"], json!(10), "{:?}", ok.value);
    let p = probe(
        &h,
        json!({"op": "report_many", "count": 40, "bytes": 60_000}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    // 17 × 60,000 bytes fit in 1 MiB; the 18th does not.
    assert_eq!(p.value["sent"], json!(17), "{:?}", p.value);
    let error = p.value["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("may total at most 1048576") && error.contains("final answer"),
        "{error}"
    );
    assert_eq!(p.result.reports.len(), 17);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_bytes_per_task_are_capped_and_calls_still_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "[grants.probe]\ntools = [\"echo.echo\"]").await;
    let input = json!({"pad": "p".repeat(60_000)});
    // Allowed: a few large answers are recorded whole.
    let few = probe(
        &h,
        json!({"op": "tool_loop", "name": "echo.echo", "input": input, "count": 3}),
    )
    .await;
    assert!(few.ok, "{few:?}");
    assert!(
        few.result
            .tool_calls
            .iter()
            .all(|c| c.outcome.output.len() > 60_000)
    );
    // Past 1 MiB of records, later records keep their place but lose their text.
    let many = probe(
        &h,
        json!({"op": "tool_loop", "name": "echo.echo", "input": input, "count": 40}),
    )
    .await;
    assert!(many.ok, "{many:?}");
    assert_eq!(many.value["answered"], json!(40), "{:?}", many.value);
    assert_eq!(
        many.result.tool_calls.len(),
        40,
        "every call is still counted"
    );
    let last = &many.result.tool_calls[39].outcome;
    assert!(last.output.is_empty(), "{} bytes", last.output.len());
    assert!(
        last.error
            .as_deref()
            .unwrap_or_default()
            .contains("1 MiB limit"),
        "{last:?}"
    );
    let size = serde_json::to_string(&many.result)
        .expect("serialize")
        .len();
    assert!(size < 1200 * 1024, "task result is {size} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_key_length_is_capped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        PROBE,
        "[grants.probe]\ntools = [\"echo.create\"]",
    )
    .await;
    let ok = probe(
        &h,
        json!({"op": "tool", "name": "echo.create", "input": {"a": 1}, "key": "k".repeat(256)}),
    )
    .await;
    assert!(ok.ok, "{ok:?}");
    assert_eq!(ok.value["status"], json!("success"), "{:?}", ok.value);
    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.create", "input": {"a": 2}, "key": "k".repeat(100_000)}),
    )
    .await;
    assert!(!p.ok, "{p:?}");
    assert!(
        p.error.contains("idempotency key") && p.error.contains("over the limit of 256"),
        "{}",
        p.error
    );
    let receipts = h
        .receipts(Some(&p.result.task_id), 10)
        .await
        .expect("receipts");
    assert!(
        receipts.is_empty(),
        "nothing reached the ledger: {receipts:?}"
    );
}
