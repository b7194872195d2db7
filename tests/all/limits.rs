//! Limits: deadline, memory summed over the instance, output caps, traps — each ends only its
//! own instance while the host keeps serving.

use guild_host::types::TaskStatus;
use guild_tests::{host, probe};
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn infinite_loop_stopped_by_deadline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        PROBE,
        "[grants.probe]\nlimits = { timeout_s = 1 }",
    )
    .await;
    let p = probe(&h, json!({"op": "loop"})).await;
    assert_eq!(p.result.status, TaskStatus::TimedOut, "{:?}", p.result);
    let error = p.result.error.unwrap_or_default();
    assert!(
        error.contains("timed out after 1 s") && error.contains("re-route"),
        "{error}"
    );
    // The host still serves.
    let again = probe(&h, json!({"op": "log", "text": "still here"})).await;
    assert!(again.ok, "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_blocked_in_host_call_stopped_by_wall_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        PROBE,
        "[grants.probe]\nlimits = { timeout_s = 1 }",
    )
    .await;
    let p = probe(&h, json!({"op": "sleep", "ms": 30_000})).await;
    assert_eq!(p.result.status, TaskStatus::TimedOut, "{:?}", p.result);
    assert!(p.result.usage.wall_ms < 10_000, "{:?}", p.result.usage);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_bomb_stops_at_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    let small = probe(&h, json!({"op": "alloc", "mb": 8})).await;
    assert!(small.ok, "8 MiB fits the 32 MiB budget: {small:?}");
    let p = probe(&h, json!({"op": "alloc", "mb": 256})).await;
    assert_eq!(p.result.status, TaskStatus::Failed, "{:?}", p.result);
    let error = p.result.error.unwrap_or_default();
    assert!(error.contains("memory limit of 32 MiB"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_output_capped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    let ok = probe(&h, json!({"op": "output", "kb": 16})).await;
    assert_eq!(
        ok.result.status,
        TaskStatus::Succeeded,
        "{:?}",
        ok.result.error
    );
    let p = probe(&h, json!({"op": "output", "kb": 1024})).await;
    assert_eq!(p.result.status, TaskStatus::Failed);
    let error = p.result.error.unwrap_or_default();
    assert!(error.contains("output limit of 64 KiB"), "{error}");
    assert!(p.result.report.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trap_does_not_disturb_concurrent_task() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    let slow = probe(&h, json!({"op": "sleep", "ms": 300}));
    let trap = probe(&h, json!({"op": "trap"}));
    let (slow, trap) = tokio::join!(slow, trap);
    assert_eq!(trap.result.status, TaskStatus::Failed);
    assert!(trap.result.error.unwrap_or_default().contains("trapped"));
    assert!(slow.ok, "{slow:?}");
    let after = probe(&h, json!({"op": "log", "text": "after the trap"})).await;
    assert!(after.ok, "{after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_connector_fails_the_call_not_the_specialist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = r#"[grants.probe]
tools = ["echo.trap", "echo.big", "echo.loop", "echo.echo"]
[grants.echo]
limits = { timeout_s = 1 }"#;
    let h = host(dir.path(), PROBE, grants).await;
    for (tool, expect) in [
        ("echo.trap", "trapped"),
        ("echo.big", "limit"),
        ("echo.loop", "timed out"),
    ] {
        let p = probe(&h, json!({"op": "tool", "name": tool, "input": {}})).await;
        assert_eq!(
            p.result.status,
            TaskStatus::Succeeded,
            "the specialist survives {tool}"
        );
        assert!(!p.ok, "{tool}: {p:?}");
        assert!(p.error.contains(expect), "{tool}: {}", p.error);
        assert_eq!(p.result.tool_calls.len(), 1);
        assert_eq!(
            p.result.tool_calls[0].outcome.status,
            guild_host::types::CallStatus::Failed
        );
    }
    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.echo", "input": {"x": 1}}),
    )
    .await;
    assert!(p.ok, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trapped_guest_shows_its_last_stderr_lines_and_the_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    // What a Python guest prints before it traps, then a Rust panic.
    let traceback = "Traceback (most recent call last):\n  File \"app.py\", line 3, in run\nTypeError: Report.__init__() missing 1 required positional argument";
    let p = probe(
        &h,
        json!({"op": "seq", "ops": [{"op": "print", "text": traceback}, {"op": "trap"}]}),
    )
    .await;
    assert_eq!(p.result.status, TaskStatus::Failed);
    let error = p.result.error.unwrap_or_default();
    for part in [
        "trapped: wasm trap: wasm `unreachable` instruction executed",
        "stderr: Traceback (most recent call last):",
        "stderr: TypeError: Report.__init__() missing 1 required positional argument",
        "probe: trap requested",
    ] {
        assert!(error.contains(part), "{part:?} missing from:\n{error}");
    }
    assert!(
        !error.contains("error while executing at wasm backtrace"),
        "the backtrace belongs in the log: {error}"
    );

    // A guest that wrote nothing to stderr: the cause alone, no empty stderr section.
    for (frame, cause) in [
        (false, "wasm trap: call stack exhausted"),
        (true, "wasm trap: out of bounds memory access"),
    ] {
        let p = probe(&h, json!({"op": "recurse", "frame": frame})).await;
        assert_eq!(p.result.status, TaskStatus::Failed);
        let error = p.result.error.unwrap_or_default();
        assert!(error.contains(cause), "frame={frame}: {error}");
        assert!(!error.contains("stderr"), "frame={frame}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostcall_data_cap_allows_below_and_stops_above() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Appended to `[host]`: 64 KiB per host call.
    let h = host(dir.path(), PROBE, "hostcall_kb = 64\n").await;
    let below = probe(&h, json!({"op": "log", "text": "x", "repeat": 32 * 1024})).await;
    assert!(below.ok, "32 KiB fits a 64 KiB cap: {below:?}");
    assert_eq!(below.value, json!(32 * 1024));
    let above = probe(&h, json!({"op": "log", "text": "x", "repeat": 256 * 1024})).await;
    assert_eq!(
        above.result.status,
        TaskStatus::Failed,
        "{:?}",
        above.result
    );
    let error = above.result.error.unwrap_or_default();
    assert!(
        error.contains("passed more than 64 KiB to the host in one call"),
        "{error}"
    );
}
