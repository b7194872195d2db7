//! A refused tool call names the line of the specialist's source that made it, in every kit
//! (docs/kits.md, "Errors that name what to fix"): a misspelled tool reaches the author as the
//! host's "did you mean" followed by ` (at FILE:LINE)`. Rust (`#[track_caller]`, the probe's
//! `tools::call`) and C (the `guild_tool_call` macro, plugins/testing/cask) here; Python and
//! JavaScript in tests/all/sdks.rs, whose specialists' denials name their lines the same way.
//! The allowed pair: a call the host runs carries no place, even when the tool itself fails.

use guild_host::types::TaskStatus;
use guild_tests::{host, probe, source_line};
use serde_json::{Value, json};

const TYPO: &str = "did you mean `echo.echo`?";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_refusal_names_the_callers_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        &["testing/probe", "testing/echo"],
        "[grants.probe]\ntools = [\"echo.echo\"]\n",
    )
    .await;
    // The probe is a member of the plugins/ workspace: rustc names its files from there.
    let at = source_line(
        "",
        "testing/probe/src/ops.rs",
        "(None, None) => tools::call(",
    );
    let p = probe(&h, json!({"op": "tool", "name": "echo.ecoh", "input": {}})).await;
    assert!(!p.ok, "{p:?}");
    assert!(
        p.error.contains(TYPO) && p.error.ends_with(&format!(" (at {at})")),
        "{}",
        p.error
    );
    assert_eq!(p.error.matches(" (at ").count(), 1, "{}", p.error);

    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.echo", "input": {"text": "hi"}}),
    )
    .await;
    assert!(p.ok && p.value["status"] == "success", "{p:?}");
}

/// Runs cask's `tool` op; its details (status and error).
async fn cask_call(h: &guild_host::Host, name: &str, input: Value) -> Value {
    let brief = json!({"op": "tool", "name": name, "input": input}).to_string();
    let done = h.task("cask", &brief).await.expect("task starts");
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    let details = done.report.map(|r| r.details).unwrap_or_default();
    serde_json::from_str(&details).expect("details are JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_refusal_names_the_callers_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        &["testing/cask", "testing/cnotes"],
        "[grants.cask]\ntools = [\"cnotes.save\"]\n",
    )
    .await;
    // sdk/c/build.sh names a plugin's files from its folder.
    let at = source_line("testing/cask", "cask.c", "guild_tool_call(name,");
    let call = cask_call(&h, "cnotes.sav", json!({"text": "hi"})).await;
    let error = call["error"].as_str().unwrap_or_default();
    assert_eq!(call["status"], "denied", "{call}");
    assert!(
        error.contains("did you mean `cnotes.save`?") && error.ends_with(&format!(" (at {at})")),
        "{error}"
    );

    let call = cask_call(&h, "cnotes.save", json!({"text": "hi"})).await;
    assert_eq!(
        (&call["status"], &call["error"]),
        (&json!("ok"), &Value::Null),
        "{call}"
    );
}
