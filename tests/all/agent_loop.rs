//! Specialists without code (docs/plugin-authors.md, "Specialists without code"): the
//! prompt-defined `triage-agent` (plugins/triage-agent, run by the shared agent-loop component)
//! against the tracker stand-in and a scripted model on 127.0.0.1. The model's answers are
//! scripted; everything else is real: the skill load, the tracker call and its receipt, the
//! report's claims and their validation, the refusal of a tool that was not granted, and the
//! report when the model grant is missing or the token budget is spent.

use guild_cli::demo::tracker::TrackerServer;
use guild_host::llm::standin::{StandIn, Step};
use guild_host::types::{CallStatus, Outcome, TaskStatus};
use guild_host::validate::CheckStatus;
use guild_tests::host;
use serde_json::{Value, json};

const PLUGINS: &[&str] = &["tracker", "triage-agent"];

/// `guild.toml` text: the tracker's grant, the model endpoint and alias, and triage-agent's
/// grant of `tools` plus `llm` (the `[grants.triage-agent.llm]` lines, empty for none).
fn config(tracker: &str, model: &str, tools: &[&str], llm: &str) -> String {
    let tools: Vec<String> = tools.iter().map(|t| format!("{t:?}")).collect();
    format!(
        r#"[llm.endpoints.standin]
base_url = "{model}"
[llm.models]
fast = {{ endpoint = "standin", model = "scripted" }}

[grants.tracker]
http = ["{tracker}"]
config = {{ base_url = "{tracker}", repo = "acme/shop" }}
secrets = {{ TRACKER_TOKEN = {{ file = "token", hosts = ["{tracker}"] }} }}

[grants.triage-agent]
tools = [{}]
skills = ["skills/"]
report = true
{llm}
"#,
        tools.join(", ")
    )
}

const GRANT_FAST: &str = "[grants.triage-agent.llm]\nmodels = [\"fast\"]\n";

async fn tracker(dir: &std::path::Path) -> TrackerServer {
    std::fs::write(dir.join("token"), "tok-123\n").expect("token");
    TrackerServer::start("tok-123")
        .await
        .expect("tracker starts")
}

fn calls(steps: &[(&str, &str, Value)]) -> Step {
    Step::ToolCalls(
        steps
            .iter()
            .map(|(id, name, args)| ((*id).to_owned(), (*name).to_owned(), args.to_string()))
            .collect(),
    )
}

/// The messages of one recorded request.
fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}

/// The content of the tool message answering `call_id`, parsed.
fn tool_reply(body: &Value, call_id: &str) -> Value {
    messages(body)
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_defined_specialist_loads_its_skill_files_an_issue_and_its_claim_validates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tracker = tracker(dir.path()).await;
    let report_json = json!({
        "summary": "Filed 1 bug: #1 Checkout times out.",
        "outcome": "satisfied",
        "hard_passed": true,
        "details": "Filed `Checkout times out` as #1 with label `bug`.",
        "open_issues": [],
        "claims": [{"call_id": "c3", "text": "created issue #1: Checkout times out"}],
    });
    let model = StandIn::start(vec![
        calls(&[("c1", "load_skill", json!({"name": "triage-labels"}))]),
        calls(&[(
            "c2",
            "tracker__search_issues",
            json!({"query": "is:issue is:open Checkout times out"}),
        )]),
        calls(&[(
            "c3",
            "tracker__create_issue",
            json!({"title": "Checkout times out", "body": "Reported by QA.", "labels": ["bug"]}),
        )]),
        Step::Text(format!("```json\n{report_json}\n```")),
    ])
    .await
    .expect("model stand-in starts");
    let tools = ["tracker.create_issue", "tracker.search_issues"];
    let text = config(tracker.base_url(), &model.base_url(), &tools, GRANT_FAST);
    let h = host(dir.path(), PLUGINS, &text).await;

    let r = h
        .task("triage-agent", "- Checkout times out")
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.expect("report");
    assert_eq!(report.outcome, Outcome::Satisfied, "{report:?}");
    let issues = tracker.issues();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let number = issues[0].number.to_string();
    // The claim carries the tool and the external id the receipt holds, and validation agrees.
    assert_eq!(report.claims.len(), 1, "{report:?}");
    assert_eq!(report.claims[0].tool, "tracker.create_issue");
    assert_eq!(
        report.claims[0].external_id.as_deref(),
        Some(number.as_str())
    );
    let create = r
        .tool_calls
        .iter()
        .find(|c| c.tool == "tracker.create_issue")
        .expect("the create call is in the result");
    assert_eq!(create.outcome.status, CallStatus::Success);
    let v = r.validation.expect("validated");
    assert_eq!(v.verdict, CheckStatus::Passed, "{:?}", v.checks);

    // What the model saw: the prompt with the skills catalog, every granted tool with its
    // schema, the skill's body, and each tool's result with its call id and external id.
    let requests = model.requests();
    assert_eq!(requests.len(), 4, "one completion per step");
    let first = &requests[0].body;
    assert_eq!(first["model"], "scripted");
    let system = messages(first)[0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(system.starts_with("# Bug triage"), "{system}");
    assert!(system.contains("`triage-labels`"), "{system}");
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(
        offered,
        [
            "tracker__create_issue",
            "tracker__search_issues",
            "load_skill",
            "read_skill_resource"
        ]
    );
    let last = &requests[3].body;
    let skill = tool_reply(last, "c1");
    assert!(
        skill["instructions"]
            .as_str()
            .is_some_and(|b| b.contains("Labelling bugs")),
        "{skill}"
    );
    let created = tool_reply(last, "c3");
    assert_eq!(created["status"], "success");
    assert_eq!(created["external_id"], number.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_was_not_granted_is_refused_to_the_model_and_never_called() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tracker = tracker(dir.path()).await;
    let model = StandIn::start(vec![
        calls(&[(
            "c1",
            "tracker__create_issue",
            json!({"title": "Checkout times out"}),
        )]),
        Step::Text(
            json!({"summary": "Could not file the bug: no create tool.", "outcome": "failed",
                   "open_issues": ["tracker.create_issue is not available"]})
            .to_string(),
        ),
    ])
    .await
    .expect("model stand-in starts");
    // Only the search tool is granted.
    let text = config(
        tracker.base_url(),
        &model.base_url(),
        &["tracker.search_issues"],
        GRANT_FAST,
    );
    let h = host(dir.path(), PLUGINS, &text).await;

    let r = h
        .task("triage-agent", "- Checkout times out")
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    assert!(tracker.issues().is_empty());
    assert!(r.tool_calls.is_empty(), "{:?}", r.tool_calls);
    let requests = model.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(!offered.contains(&"tracker__create_issue"), "{offered:?}");
    let refusal = tool_reply(&requests[1].body, "c1");
    assert!(
        refusal["error"]
            .as_str()
            .is_some_and(|e| e.contains("no tool named `tracker__create_issue`")),
        "{refusal}"
    );
    let report = r.report.expect("report");
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(report.claims.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_grant_or_with_the_budget_spent_the_report_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tracker = tracker(dir.path()).await;
    let model = StandIn::start(vec![
        calls(&[(
            "c1",
            "tracker__search_issues",
            json!({"query": "is:issue is:open Checkout"}),
        )]),
        Step::Text(json!({"summary": "Nothing to file.", "outcome": "satisfied"}).to_string()),
    ])
    .await
    .expect("model stand-in starts");
    let tools = ["tracker.search_issues"];

    // No `[grants.triage-agent.llm]`: no alias to use, so the run fails saying what grants one;
    // nothing reaches the model.
    let text = config(tracker.base_url(), &model.base_url(), &tools, "");
    let h = host(dir.path(), PLUGINS, &text).await;
    let r = h.task("triage-agent", "- Checkout").await.expect("starts");
    assert_eq!(r.status, TaskStatus::Failed, "{r:?}");
    let error = r.error.unwrap_or_default();
    assert!(
        error.contains("no model alias is granted") && error.contains("[grants.NAME.llm] models"),
        "{error}"
    );
    assert!(model.requests().is_empty());
    drop(h);

    // A task budget smaller than one completion: the second call is refused before any request.
    let budget = format!("{GRANT_FAST}tokens_per_task = 10\n");
    let text = config(tracker.base_url(), &model.base_url(), &tools, &budget);
    let dir2 = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir2.path().join("token"), "tok-123\n").expect("token");
    let h = host(dir2.path(), PLUGINS, &text).await;
    let r = h.task("triage-agent", "- Checkout").await.expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.expect("report");
    assert!(
        report.summary.contains("token budget is spent"),
        "{report:?}"
    );
    assert!(
        report
            .open_issues
            .iter()
            .any(|i| i.contains("budget-exceeded")),
        "{report:?}"
    );
    assert_eq!(
        model.requests().len(),
        1,
        "the refused call never left the host"
    );
}
