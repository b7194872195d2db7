//! Winch, the baseline compiler, holds every limit Cranelift holds: a guest that spins forever
//! is stopped by its epoch deadline, a memory bomb stops at its limit, traps and stack
//! exhaustion end only their own instance, and the host keeps serving after each.

use std::time::Duration;

use guild_host::Host;
use guild_host::types::TaskStatus;
use guild_tests::{Probe, baseline_engine, host_on, probe};
use serde_json::{Value, json};

const PROBE: &[&str] = &["testing/probe", "testing/echo"];

async fn baseline_host(dir: &std::path::Path, grants: &str) -> Host {
    let h = host_on(baseline_engine(), dir, PROBE, grants).await;
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    h
}

/// Runs one probe operation; a guest the deadline failed to stop would hold this test forever,
/// so it gives up (and fails) long after the deadlines instead.
async fn bounded(h: &Host, op: Value) -> Probe {
    tokio::time::timeout(Duration::from_secs(120), probe(h, op))
        .await
        .expect("the epoch deadline stopped the guest (Winch code checks epochs)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baseline_code_spinning_forever_is_stopped_by_the_deadline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = r#"[grants.probe]
tools = ["echo.loop"]
limits = { timeout_s = 3 }
[grants.echo]
limits = { timeout_s = 1 }"#;
    let h = baseline_host(dir.path(), grants).await;
    let p = bounded(&h, json!({"op": "loop"})).await;
    assert_eq!(p.result.status, TaskStatus::TimedOut, "{:?}", p.result);
    let error = p.result.error.unwrap_or_default();
    assert!(error.contains("timed out after 3 s"), "{error}");
    // A connector spinning forever fails its call, not the specialist.
    let p = bounded(&h, json!({"op": "tool", "name": "echo.loop", "input": {}})).await;
    assert_eq!(p.result.status, TaskStatus::Succeeded, "{:?}", p.result);
    assert!(!p.ok && p.error.contains("timed out"), "{p:?}");
    let again = bounded(&h, json!({"op": "log", "text": "still here"})).await;
    assert!(again.ok, "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baseline_code_stops_at_the_memory_limit_and_traps_end_only_their_instance() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = baseline_host(dir.path(), "").await;
    let small = bounded(&h, json!({"op": "alloc", "mb": 8})).await;
    assert!(small.ok, "8 MiB fits the 32 MiB budget: {small:?}");
    let bomb = bounded(&h, json!({"op": "alloc", "mb": 256})).await;
    assert_eq!(bomb.result.status, TaskStatus::Failed, "{:?}", bomb.result);
    let error = bomb.result.error.unwrap_or_default();
    assert!(error.contains("memory limit of 32 MiB"), "{error}");

    let trap = bounded(&h, json!({"op": "trap"})).await;
    assert_eq!(trap.result.status, TaskStatus::Failed);
    let error = trap.result.error.unwrap_or_default();
    assert!(
        error.contains("trapped: wasm trap: wasm `unreachable` instruction executed"),
        "{error}"
    );
    for (frame, cause) in [
        (false, "wasm trap: call stack exhausted"),
        (true, "wasm trap: out of bounds memory access"),
    ] {
        let p = bounded(&h, json!({"op": "recurse", "frame": frame})).await;
        assert_eq!(p.result.status, TaskStatus::Failed, "frame={frame}");
        let error = p.result.error.unwrap_or_default();
        assert!(error.contains(cause), "frame={frame}: {error}");
    }
    let after = bounded(&h, json!({"op": "log", "text": "after the traps"})).await;
    assert!(after.ok, "{after:?}");
}
