//! The kits' model wrappers through the host (docs/kits.md, docs/models.md), against the
//! scripted stand-in endpoint on 127.0.0.1: the C kit (plugins/testing/cask, sdk/c/guild_llm.c)
//! gets an answer and its usage, runs its tool-calling loop against the C connector `cnotes`
//! and claims what it saved, and gets a refusal as the typed `denied` error, its kind said once.

use guild_host::Host;
use guild_host::llm::standin::{StandIn, Step};
use guild_host::types::{TaskResult, TaskStatus};
use serde_json::{Value, json};

/// `[llm]` tables naming the stand-in as endpoint `local`, alias `fast`, then `grants`.
fn llm_config(standin: &StandIn, grants: &str) -> String {
    format!(
        "[llm.endpoints.local]\nbase_url = \"{}\"\n[llm.models]\nfast = {{ endpoint = \"local\", \
         model = \"m-fast\" }}\n\n{grants}",
        standin.base_url()
    )
}

/// Runs `plugin` with `brief`; the result and its report's details as JSON.
async fn run(h: &Host, plugin: &str, brief: Value) -> (TaskResult, Value) {
    let done = h
        .task(plugin, &brief.to_string())
        .await
        .expect("task starts");
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    let details = done
        .report
        .as_ref()
        .map(|r| serde_json::from_str(&r.details).expect("details are JSON"))
        .unwrap_or(Value::Null);
    (done, details)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_kit_gets_an_answer_and_its_usage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = StandIn::start(vec![Step::Text("forty-two".into())])
        .await
        .expect("stand-in");
    let grants = "[grants.cask.llm]\nmodels = [\"fast\"]\n";
    let h = guild_tests::host(dir.path(), &["testing/cask"], &llm_config(&s, grants)).await;
    let brief = json!({"op": "ask", "model": "fast", "user": "what is six times seven?"});
    let (done, details) = run(&h, "cask", brief).await;
    assert_eq!(details["status"], "ok", "{details}");
    assert_eq!(details["content"], "forty-two");
    assert_eq!(details["finish_reason"], "stop");
    assert_eq!(
        (&details["prompt_tokens"], &details["completion_tokens"]),
        (&json!(11), &json!(7)),
        "the stand-in's usage reaches C code: {details}"
    );
    let usage = &done.usage.models["fast"];
    assert_eq!((usage.calls, usage.prompt_tokens), (1, 11));
    let sent = s.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["model"], "m-fast");
    assert_eq!(sent[0].body["messages"][0]["content"], "Be brief.");
    assert_eq!(
        sent[0].body["messages"][1]["content"],
        "what is six times seven?"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_kit_without_a_grant_gets_the_typed_denial_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = StandIn::start(vec![Step::Text("never sent".into())])
        .await
        .expect("stand-in");
    let h = guild_tests::host(dir.path(), &["testing/cask"], &llm_config(&s, "")).await;
    let brief = json!({"op": "ask", "model": "fast", "user": "hello"});
    let (_, details) = run(&h, "cask", brief).await;
    assert_eq!(details["status"], "denied", "{details}");
    let error = details["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("denied: ") && error.contains("cask") && error.contains("llm"),
        "the refusal names plugin and capability: {error}"
    );
    assert_eq!(
        error.matches("denied").count(),
        1,
        "the kind is said once: {error}"
    );
    assert!(s.requests().is_empty(), "nothing reached the endpoint");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_kit_loop_runs_the_tool_the_model_asks_for_and_claims_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = StandIn::start(vec![
        Step::ToolCalls(vec![(
            "call-1".into(),
            "cnotes__save".into(),
            r#"{"text":"buy milk"}"#.into(),
        )]),
        Step::Text("saved it".into()),
    ])
    .await
    .expect("stand-in");
    let grants =
        "[grants.cask]\ntools = [\"cnotes.save\"]\n[grants.cask.llm]\nmodels = [\"fast\"]\n";
    let h = guild_tests::host(
        dir.path(),
        &["testing/cask", "testing/cnotes"],
        &llm_config(&s, grants),
    )
    .await;
    let brief = json!({"op": "loop", "model": "fast", "user": "save: buy milk"});
    let (done, details) = run(&h, "cask", brief).await;
    assert_eq!(
        (&details["status"], &details["content"], &details["steps"]),
        (&json!("ok"), &json!("saved it"), &json!(2)),
        "{details}"
    );
    let call = &details["calls"][0];
    assert_eq!(
        (&call["tool"], &call["status"]),
        (&json!("cnotes.save"), &json!("ok"))
    );
    let id = call["external_id"].as_str().expect("an external id");
    assert!(id.starts_with("note-"), "{id}");

    let sent = s.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].body["tools"][0]["function"]["name"], "cnotes__save",
        "the granted tool is offered under its function name"
    );
    let answer = &sent[1].body["messages"][3];
    assert_eq!(answer["role"], "tool", "{answer}");
    assert_eq!(answer["tool_call_id"], "call-1");
    let read: Value = serde_json::from_str(answer["content"].as_str().unwrap_or_default())
        .expect("the tool message is JSON");
    assert_eq!(
        (&read["status"], &read["external_id"]),
        (&json!("success"), &json!(id))
    );

    let report = done.report.as_ref().expect("report");
    assert_eq!(report.claims.len(), 1, "{report:?}");
    assert_eq!(report.claims[0].tool, "cnotes.save");
    assert_eq!(report.claims[0].external_id.as_deref(), Some(id));
    assert!(done.tool_calls[0].mutating && done.tool_calls[0].receipt_id.is_some());
}
