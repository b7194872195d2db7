//! Tool input is checked against the tool's declared JSON Schema before the connector runs.

use guild_host::types::CallStatus;
use guild_tests::{host, probe};
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];
const GRANTS: &str = r#"[grants.probe]
tools = ["echo.typed"]"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_matching_the_schema_reaches_the_connector() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, GRANTS).await;
    let input = json!({"title": "Crash on save", "labels": ["bug"]});
    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.typed", "input": input}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value["output"], input);
    assert_eq!(p.result.tool_calls.len(), 1);
    assert_eq!(p.result.tool_calls[0].plugin, "echo@0.1.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_breaking_the_schema_is_refused_naming_the_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, GRANTS).await;
    for (input, path, what) in [
        (json!({}), "$", "missing required property \"title\""),
        (
            json!({"title": "x", "labels": ["bug", 7]}),
            "$.labels[1]",
            "expected string, got an integer",
        ),
        (
            json!({"title": "x", "tilte": "y"}),
            "$",
            "unknown property \"tilte\"",
        ),
        (
            json!({"title": ""}),
            "$.title",
            "expected at least 1 character",
        ),
    ] {
        let p = probe(
            &h,
            json!({"op": "tool", "name": "echo.typed", "input": input}),
        )
        .await;
        assert!(!p.ok, "{input}: {p:?}");
        assert!(
            p.error
                .starts_with("invalid-input: input for 'echo.typed' does not match its schema"),
            "{input}: {}",
            p.error
        );
        assert!(
            p.error.contains(&format!("at {path}: {what}")),
            "{input}: {}",
            p.error
        );
        // Refused before any connector instance: the record names no plugin.
        let call = &p.result.tool_calls[0];
        assert!(
            call.plugin.is_empty(),
            "{input}: the connector ran: {call:?}"
        );
        assert_eq!(call.outcome.status, CallStatus::Failed);
    }
}
