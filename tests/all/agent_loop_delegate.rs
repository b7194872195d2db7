//! A prompt-defined specialist that delegates (docs/delegation.md, "Delegation by a model"):
//! the shared agent-loop component as `lead`, whose scripted model (the stand-in on 127.0.0.1)
//! hands work to `worker` (the `delegator` test guest) through the `delegate_to__worker` and
//! `review_child` tools. The model's answers are scripted; the brief checks, the child's run
//! and validation, the decision matrix and the tree are the host's. In pairs: granted (a brief
//! refused, a review refused, revise_child after a failed verdict, then ascend) and not granted
//! (nothing offered, a scripted call refused, no child run).

use std::path::{Path, PathBuf};

use guild_host::llm::standin::{StandIn, Step};
use guild_host::types::TaskStatus;
use guild_host::validate::CheckStatus;
use guild_host::{Config, Host, NodeStatus};
use serde_json::{Value, json};

/// The lead's prompt.md.
const PROMPT: &str = "# Lead\nYou split work and hand it to other specialists.\n";

/// Plugin `lead`: the agent-loop component with a prompt and `capabilities`.
fn lead(dir: &Path, capabilities: &str) -> PathBuf {
    let to = dir.join("lead");
    std::fs::create_dir_all(&to).expect("mkdir");
    let from = guild_tests::plugin_dir("agent-loop");
    std::fs::copy(from.join("agent-loop.wasm"), to.join("agent-loop.wasm")).expect("copy");
    std::fs::write(to.join("prompt.md"), PROMPT).expect("prompt");
    let manifest = format!(
        "[plugin]\nname = \"lead\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
         component = \"agent-loop.wasm\"\ndescription = \"a lead\"\n\n\
         [capabilities]\nllm = true\n{capabilities}\n\n[agent]\nmax_steps = 12\n\n\
         [limits]\nmemory_mb = 64\ntimeout_s = 60\nmax_output_kb = 256\n"
    );
    std::fs::write(to.join("plugin.toml"), manifest).expect("manifest");
    to
}

/// Plugin `worker`: the delegator test guest, which reports what its brief's context scripts.
fn worker(dir: &Path) -> PathBuf {
    let to = dir.join("worker");
    std::fs::create_dir_all(&to).expect("mkdir");
    let from = guild_tests::plugin_dir("testing/delegator");
    std::fs::copy(from.join("delegator.wasm"), to.join("delegator.wasm")).expect("copy");
    std::fs::write(
        to.join("plugin.toml"),
        "[plugin]\nname = \"worker\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
         component = \"delegator.wasm\"\ndescription = \"a worker\"\n\n[capabilities]\n\n\
         [limits]\nmemory_mb = 64\ntimeout_s = 60\nmax_output_kb = 256\n",
    )
    .expect("manifest");
    to
}

/// A host with `lead` (requesting `capabilities`, granted `grant`) and `worker`, the model
/// alias `fast` on the stand-in.
async fn host(dir: &Path, model: &StandIn, capabilities: &str, grant: &str) -> Host {
    let folders = [lead(dir, capabilities), worker(dir)];
    let list: Vec<String> = folders
        .iter()
        .map(|f| format!("{:?}", f.display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\n\
         [llm.endpoints.standin]\nbase_url = \"{}\"\n[llm.models]\n\
         fast = {{ endpoint = \"standin\", model = \"scripted\" }}\n\n\
         [grants.lead]\n{grant}\n[grants.lead.llm]\nmodels = [\"fast\"]\n",
        list.join(", "),
        model.base_url()
    );
    let config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("config parses");
    let host = Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host starts");
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    host
}

fn call(id: &str, name: &str, arguments: &Value) -> Step {
    Step::ToolCalls(vec![(
        id.to_owned(),
        name.to_owned(),
        arguments.to_string(),
    )])
}

/// The content of the tool message answering `call_id` in the last request, parsed.
fn tool_reply(model: &StandIn, call_id: &str) -> Value {
    let requests = model.requests();
    let last = requests.last().expect("the model was asked");
    last.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null)
}

/// The names of the tools offered in the first request.
fn offered(model: &StandIn) -> Vec<String> {
    let requests = model.requests();
    requests[0].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

const FINAL: &str = r#"{"summary": "The worker's notes are in.", "outcome": "satisfied",
    "hard_passed": true, "details": "Delegated the notes to worker; revised once."}"#;

/// The worker's script: a first report whose artifact's hash is wrong (a check the host runs
/// and fails), and, once revised, a report without it.
fn worker_script() -> String {
    json!({
        "report": {"summary": "wrote the notes", "artifacts": [{"id": "notes.md", "sha256": "not-a-hash"}]},
        "revised_report": {"summary": "wrote the notes, no artifact claimed"},
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_lead_delegates_is_refused_in_words_revises_the_child_and_accepts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let brief = json!({
        "objective": "Write the meeting notes",
        "reason": "The team asked for them",
        "completion_criteria": ["the notes are written"],
        "context": worker_script(),
    });
    let mut empty = brief.clone();
    empty["objective"] = json!(" ");
    let model = StandIn::start(vec![
        call("c1", "delegate_to__worker", &empty),
        call("c2", "delegate_to__worker", &brief),
        call(
            "c3",
            "review_child",
            &json!({"decision": "ascend", "reason": "looks done"}),
        ),
        call(
            "c4",
            "review_child",
            &json!({"decision": "revise_child", "reason": "the artifact's hash does not match"}),
        ),
        call("c5", "delegate_to__worker", &brief),
        call(
            "c6",
            "review_child",
            &json!({"decision": "ascend", "reason": "checks pass"}),
        ),
        Step::Text(FINAL.to_owned()),
    ])
    .await
    .expect("stand-in starts");
    let h = host(
        dir.path(),
        &model,
        "delegate = [\"worker\"]",
        "delegate = [\"worker\"]",
    )
    .await;

    let done = h
        .task("lead", "Get the meeting notes written.")
        .await
        .expect("starts");
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    let names = offered(&model);
    assert!(
        names.contains(&"delegate_to__worker".to_owned())
            && names.contains(&"review_child".to_owned()),
        "{names:?}"
    );
    let system = model.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        system.contains("## Delegating") && system.contains("`worker`"),
        "{system}"
    );

    // A brief the host refuses comes back as a tool error naming its rule; the run goes on.
    let r1 = tool_reply(&model, "c1");
    assert_eq!(r1["status"], "refused", "{r1}");
    assert_eq!(r1["kind"], "brief-refused", "{r1}");
    assert_eq!(r1["field"], "objective", "{r1}");

    // The child ran, the host's check failed its artifact, and ascend is not allowed.
    let r2 = tool_reply(&model, "c2");
    assert_eq!(r2["status"], "reported", "{r2}");
    assert_eq!(r2["verdict"], "failed", "{r2}");
    let child = r2["child_id"].as_str().expect("child id").to_owned();
    let allowed = r2["allowed_decisions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(allowed.contains(&json!("revise_child")), "{r2}");
    assert!(!allowed.contains(&json!("ascend")), "{r2}");
    let r3 = tool_reply(&model, "c3");
    assert_eq!(r3["kind"], "review-refused", "{r3}");
    assert!(
        r3["allowed_decisions"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("revise_child"))),
        "{r3}"
    );
    let r4 = tool_reply(&model, "c4");
    assert_eq!(r4["effect"], "continue_child", "{r4}");
    assert_eq!(r4["child_id"], json!(child));

    // The same child continued (same id) and its second report passed.
    let r5 = tool_reply(&model, "c5");
    assert_eq!(r5["child_id"], json!(child), "{r5}");
    assert_eq!(r5["verdict"], "passed", "{r5}");
    assert_eq!(tool_reply(&model, "c6")["effect"], "complete_parent_goal");

    let tree = h
        .task_tree(&done.task_id)
        .expect("the lead's task is a root");
    assert_eq!(tree.nodes.len(), 2, "{tree:?}");
    let node = &tree.nodes[1];
    assert_eq!(node.task_id, child);
    assert_eq!(node.specialist, "worker");
    assert_eq!(node.status, NodeStatus::Finished);
    assert_eq!(node.verdict, Some(CheckStatus::Passed));
    assert_eq!(
        node.review.as_ref().map(|r| r.decision.as_str()),
        Some("ascend")
    );
    let details = done.report.expect("report").details;
    assert!(
        details.contains(&format!("| {child} | worker | passed | ascend |")),
        "{details}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_grant_nothing_is_offered_and_a_scripted_delegation_is_refused() {
    let brief = json!({
        "objective": "Write the meeting notes",
        "reason": "The team asked for them",
        "completion_criteria": ["the notes are written"],
        "context": worker_script(),
    });
    // Requested but not granted; granted but not requested.
    for (capabilities, grant) in [
        ("delegate = [\"worker\"]", ""),
        ("", "delegate = [\"worker\"]"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let model = StandIn::start(vec![
            call("c1", "delegate_to__worker", &brief),
            call(
                "c2",
                "review_child",
                &json!({"decision": "ascend", "reason": "done"}),
            ),
            Step::Text(FINAL.to_owned()),
        ])
        .await
        .expect("stand-in starts");
        let h = host(dir.path(), &model, capabilities, grant).await;
        let done = h
            .task("lead", "Get the notes written.")
            .await
            .expect("starts");
        assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
        let names = offered(&model);
        assert!(
            !names
                .iter()
                .any(|n| n.starts_with("delegate_to__") || n == "review_child"),
            "{capabilities} / {grant}: {names:?}"
        );
        let system = model.requests()[0].body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(!system.contains("## Delegating"), "{system}");
        for id in ["c1", "c2"] {
            let reply = tool_reply(&model, id);
            assert!(
                reply["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("no tool named")),
                "{id}: {reply}"
            );
        }
        // No child ran: a first child would have made the lead's task a tree's root.
        assert!(h.task_tree(&done.task_id).is_none());
    }
}
