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

/// The probe's tool call with `raw` sent as the input text, byte for byte.
async fn raw_call(h: &guild_host::Host, tool: &str, raw: &str) -> guild_tests::Probe {
    probe(h, json!({"op": "tool", "name": tool, "input_raw": raw})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_repeated_in_an_object_is_refused_before_the_connector_naming_key_and_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = "[grants.probe]\ntools = [\"echo.typed\", \"echo.echo\"]";
    let h = host(dir.path(), PROBE, grants).await;
    for (tool, raw, key, path) in [
        // Checked with the last value (valid), a first-value parser would act on "".
        (
            "echo.typed",
            r#"{"title": "", "title": "Crash on save"}"#,
            "title",
            "$",
        ),
        (
            "echo.typed",
            r#"{"title": "x", "labels": ["bug"], "labels": [7]}"#,
            "labels",
            "$",
        ),
        (
            "echo.echo",
            r#"{"a": {"b": [{"k": 1, "k": 2}]}}"#,
            "k",
            "$.a.b[0]",
        ),
        // The same key however it is escaped.
        (
            "echo.echo",
            r#"{"role": "user", "r\u006fle": "admin"}"#,
            "role",
            "$",
        ),
    ] {
        let p = raw_call(&h, tool, raw).await;
        assert!(!p.ok, "{raw}: {p:?}");
        assert!(
            p.error.starts_with(&format!(
                "invalid-input: input for '{tool}' does not match its schema at {path}: the key \"{key}\" appears more than once"
            )),
            "{raw}: {}",
            p.error
        );
        let call = &p.result.tool_calls[0];
        assert!(call.plugin.is_empty(), "{raw}: the connector ran: {call:?}");
        assert_eq!(call.outcome.status, CallStatus::Failed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connector_gets_exactly_the_bytes_that_were_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = "[grants.probe]\ntools = [\"echo.typed\", \"echo.create\"]";
    let h = host(dir.path(), PROBE, grants).await;
    // The same key in different objects is not a repeat.
    let raw = r#"{"title": "Crash",   "labels" : ["bug"], "meta": {"title": "inner"}}"#;
    let p = raw_call(&h, "echo.create", raw).await;
    assert!(p.ok, "{p:?}");
    // `create` derives its id from a hash of the input it received; the host hashed the input
    // it checked: the same bytes.
    let call = &p.result.tool_calls[0];
    let id = p.value["output"]["id"].as_str().expect("id");
    assert!(
        call.input_sha256.starts_with(id),
        "the connector got other bytes: {id} vs {}",
        call.input_sha256
    );
    let p = raw_call(&h, "echo.typed", r#"{"title":"Crash","labels":["bug"]}"#).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(
        p.value["output"],
        json!({"title": "Crash", "labels": ["bug"]})
    );
}
