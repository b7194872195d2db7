//! Team and private memory through the real `memory` WIT import: the probe specialist reads and
//! updates documents via the guest SDK, so every answer crossed the component boundary as the
//! WIT's typed result. Allowed and denied pairs, the receipt an update leaves (and the claim it
//! backs), and a refused write that reaches the guest as a typed refusal and changes nothing.

use guild_host::Host;
use guild_host::memory::Scope;
use guild_host::receipts::ReceiptStatus;
use guild_host::validate::CheckStatus;
use guild_tests::{Probe, host, probe};
use serde_json::{Value, json};

const PLUGINS: &[&str] = &["testing/probe"];
/// The operator names whose memory tasks touch.
const NAMES: &str = "[memory]\nworkspace = \"acme\"\nuser = \"ana\"\n";
const DECISION: &str = "## Decisions\n- 2026-03-01: releases go out on Tuesdays\n";

async fn memory_host(dir: &std::path::Path, grants: &str) -> Host {
    host(dir, PLUGINS, &format!("{NAMES}\n{grants}")).await
}

/// The typed error the guest saw, as the probe reports it (`{"kind", ...}`).
fn guest_error(p: &Probe) -> Value {
    assert!(!p.ok, "expected a failure, got {:?}", p.value);
    serde_json::from_str(&p.error)
        .unwrap_or_else(|e| panic!("not a typed error ({e}): {}", p.error))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_specialist_updates_and_reads_team_memory_through_the_wit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = memory_host(
        dir.path(),
        "[grants.probe]\nmemory = [\"team:read\", \"team:write\"]\n",
    )
    .await;
    let text = format!("{DECISION}- an undated note\n");
    let p = probe(
        &h,
        json!({"op": "memory_update", "scope": "team", "text": text,
               "claim": {"tool": "memory.update", "text": "recorded the release day in team memory"}}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value["stored"], json!(1), "{:?}", p.value);
    assert_eq!(p.value["no_op"], Value::Null);
    assert_eq!(p.value["usage"]["limit"], json!(25_000));
    // The limits do not count the document's final newline.
    assert_eq!(p.value["usage"]["chars"], json!(text.chars().count() - 1));
    let warnings = p.value["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap_or_default().contains("- an undated note")),
        "the odd bullet is named: {warnings:?}"
    );
    // The update is receipted like a mutating call, and the receipt backs the report's claim.
    let r = &p.result;
    assert_eq!(r.receipts.len(), 1, "{:#?}", r.receipts);
    let receipt = &r.receipts[0];
    assert_eq!(
        (receipt.receipt_type.as_str(), receipt.operation.as_str()),
        ("memory", "update")
    );
    assert_eq!(receipt.status, ReceiptStatus::Success);
    assert_eq!(receipt.route, "probe");
    assert_eq!(receipt.external_id.as_deref(), Some("team:acme@v1"));
    let v = r.validation.as_ref().expect("validated");
    assert_eq!(v.verdict, CheckStatus::Passed, "{:#?}", v.checks);

    // A second task reads back what the first one stored.
    let read = probe(&h, json!({"op": "memory_read", "scope": "team"})).await;
    assert!(read.ok, "{read:?}");
    assert_eq!(read.value["text"], json!(text));
    assert_eq!(read.value["version"], json!(1));
    assert!(read.result.receipts.is_empty(), "a read writes no receipt");
    let stored = h.memory().read(Scope::Team).await.expect("read");
    assert_eq!(stored.text, text);
    assert_eq!(stored.version.expect("version").actor, "probe@0.1.0");

    // A sentinel is an accepted no-op: nothing new is stored.
    let p = probe(
        &h,
        json!({"op": "memory_update", "scope": "team", "text": "NO_UPDATE"}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value["stored"], Value::Null);
    assert!(p.value["no_op"].is_string(), "{:?}", p.value);
    let after = h.memory().read(Scope::Team).await.expect("read");
    assert_eq!(after.version.expect("version").version, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_not_granted_or_not_requested_is_denied_through_the_wit() {
    let dir = tempfile::tempdir().expect("tempdir");
    // team:write granted and requested; team:read requested, not granted; private:write granted,
    // not requested (the probe requests team:read, team:write, private:read).
    let h = memory_host(
        dir.path(),
        "[grants.probe]\nmemory = [\"team:write\", \"private:write\"]\n",
    )
    .await;
    let p = probe(&h, json!({"op": "memory_read", "scope": "team"})).await;
    let e = guest_error(&p);
    assert_eq!(e["kind"], "denied", "{e}");
    let message = e["message"].as_str().unwrap_or_default();
    for part in ["probe", "memory", "team:read", "[grants.probe] memory"] {
        assert!(message.contains(part), "{part:?} not named: {message}");
    }

    let p = probe(
        &h,
        json!({"op": "memory_update", "scope": "private", "text": DECISION,
               "claim": {"tool": "memory.update", "text": "saved to private memory"}}),
    )
    .await;
    let e = guest_error(&p);
    assert_eq!(e["kind"], "denied", "{e}");
    let message = e["message"].as_str().unwrap_or_default();
    for part in ["probe", "memory", "private:write", "[capabilities] memory"] {
        assert!(message.contains(part), "{part:?} not named: {message}");
    }
    // Denied: no receipt, nothing stored, and the claim is not backed.
    assert!(p.result.receipts.is_empty(), "{:#?}", p.result.receipts);
    let v = p.result.validation.as_ref().expect("validated");
    assert_ne!(v.verdict, CheckStatus::Passed, "{:#?}", v.checks);
    let private = h.memory().read(Scope::Private).await.expect("read");
    assert_eq!(private.version, None);

    // The allowed side of the same grant still works: team:write.
    let p = probe(
        &h,
        json!({"op": "memory_update", "scope": "team", "text": DECISION}),
    )
    .await;
    assert!(p.ok, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_memory_grant_every_call_is_denied_and_nothing_is_stored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = memory_host(dir.path(), "").await;
    for scope in ["team", "private"] {
        let read = probe(&h, json!({"op": "memory_read", "scope": scope})).await;
        assert_eq!(guest_error(&read)["kind"], "denied", "{scope} read");
        let p = probe(
            &h,
            json!({"op": "memory_update", "scope": scope, "text": DECISION}),
        )
        .await;
        assert_eq!(guest_error(&p)["kind"], "denied", "{scope} write");
        assert!(p.result.receipts.is_empty(), "{scope}: no receipt");
    }
    for scope in [Scope::Team, Scope::Private] {
        let doc = h.memory().read(scope).await.expect("read");
        assert_eq!(doc.version, None, "{scope}: nothing stored");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_update_reaches_the_guest_as_a_typed_refusal_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = memory_host(
        dir.path(),
        "[grants.probe]\nmemory = [\"team:read\", \"team:write\"]\n",
    )
    .await;
    let first = probe(
        &h,
        json!({"op": "memory_update", "scope": "team", "text": DECISION}),
    )
    .await;
    assert!(first.ok, "{first:?}");
    let before = h.memory().read(Scope::Team).await.expect("read");

    let p = probe(
        &h,
        json!({"op": "memory_update", "scope": "team", "text": DECISION, "pad_to": 25_001,
               "claim": {"tool": "memory.update", "text": "saved the long version"}}),
    )
    .await;
    let e = guest_error(&p);
    assert_eq!(e["kind"], "refused", "{e}");
    let errors = e["errors"].as_array().expect("errors");
    assert!(
        errors.iter().any(|m| {
            let m = m.as_str().unwrap_or_default();
            m.contains("over the limit of 25,000 characters") && m.contains("Merge related entries")
        }),
        "{errors:?}"
    );
    let chars = e["usage"]["chars"].as_u64().expect("usage.chars");
    assert!(chars > 25_000, "usage of the refused text: {chars}");
    assert_eq!(e["usage"]["limit"], json!(25_000));

    // Receipted as failed with the errors; the claim is not backed; the stored version is
    // byte-identical.
    let receipts = &p.result.receipts;
    assert_eq!(receipts.len(), 1, "{receipts:#?}");
    assert_eq!(receipts[0].status, ReceiptStatus::Failed);
    assert!(
        receipts[0]
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("over the limit"),
        "{:?}",
        receipts[0].error
    );
    let v = p.result.validation.as_ref().expect("validated");
    assert_eq!(v.verdict, CheckStatus::Failed, "{:#?}", v.checks);
    let after = h.memory().read(Scope::Team).await.expect("read");
    assert_eq!(after, before);
    let read = probe(&h, json!({"op": "memory_read", "scope": "team"})).await;
    assert_eq!(read.value["text"], json!(DECISION));
    assert_eq!(read.value["version"], json!(1));
}
