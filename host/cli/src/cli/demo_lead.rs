//! The demo's delegation scene (docs/delegation.md): the prompt-defined `triage-lead`
//! (`plugins/triage-lead`: a `prompt.md` and the shared agent-loop component), its model played
//! by the scripted stand-in, splits a triage job into two tasks delegated to `optimist` and
//! `triage`. The tracker stand-in refuses the next create (a passing outage), so optimist's
//! first report claims an issue that was never filed and the host's validation fails it; the
//! lead answers `revise_child`, the same child runs again, files the bug, and its second report
//! passes on its own attempt's receipts. Only the model's answers are scripted; the briefs, the
//! children's runs, the receipts, the verdicts, the review checks and the tree are the host's.

use guild_host::llm::standin::{StandIn, Step};
use guild_host::types::{TaskResult, TaskStatus};
use guild_host::validate::CheckStatus;
use serde_json::{Value, json};

use super::render;
use crate::demo::tracker::TrackerServer;

/// The specialist the scene runs.
pub(super) const SPECIALIST: &str = "triage-lead";

/// The job the lead is given: one urgent bug for the quick filer, two for triage.
const JOB: &str = "Triage this week's QA findings. File the urgent checkout bug at once with \
                   optimist; give the other two to triage, which skips open duplicates.\n\
                   - Checkout total ignores the discount code\n\
                   - [bug] Order history is empty right after login\n\
                   - [ux] Date picker closes when the page scrolls\n";

/// The `guild.toml` lines for the lead: it may delegate to triage and optimist, and call the
/// model alias the triage-agent scene configures.
pub(super) fn config() -> String {
    format!(
        r#"
[grants.{SPECIALIST}]
delegate = ["triage", "optimist"]

[grants.{SPECIALIST}.llm]
models = ["fast"]
tokens_per_task = 20000
"#
    )
}

/// The model's answers, in order: delegate the urgent bug, revise the child whose report failed
/// validation, delegate the same brief again, keep the plan, delegate the rest, ascend, report.
fn script() -> Vec<Step> {
    let call = |id: &str, name: &str, args: &Value| {
        Step::ToolCalls(vec![(id.to_owned(), name.to_owned(), args.to_string())])
    };
    let urgent = json!({
        "objective": "File the urgent checkout bug as a tracker issue",
        "reason": "Checkout losing discount codes costs sales today",
        "completion_criteria": ["the bug is filed as a tracker issue"],
        "context": "- Checkout total ignores the discount code\n",
    });
    let rest = json!({
        "objective": "File the other two QA findings, skipping open duplicates",
        "reason": "QA found them this week",
        "completion_criteria": ["each finding is filed or named as a duplicate"],
        "context": "- [bug] Order history is empty right after login\n\
                    - [ux] Date picker closes when the page scrolls\n",
    });
    let review = |decision: &str, reason: &str| json!({"decision": decision, "reason": reason});
    let report = json!({
        "summary": "Triaged 3 QA findings in 2 delegated tasks; optimist's first report failed validation and was revised.",
        "outcome": "satisfied",
        "hard_passed": true,
        "details": "optimist filed the checkout bug on its second attempt (the tracker refused the first create); triage filed the other two.",
        "open_issues": [],
    });
    vec![
        call("d1", "delegate_to__optimist", &urgent),
        call(
            "r1",
            "review_child",
            &review(
                "revise_child",
                "The tracker refused the create, so the issue you claim does not exist: file it again.",
            ),
        ),
        call("d2", "delegate_to__optimist", &urgent),
        call(
            "r2",
            "review_child",
            &review(
                "reject_refine",
                "Filed, backed by its receipt; the plan stands",
            ),
        ),
        call("d3", "delegate_to__triage", &rest),
        call(
            "r3",
            "review_child",
            &review("ascend", "Both filed, backed by receipts; the job is done"),
        ),
        Step::Text(report.to_string()),
    ]
}

/// One line per tool call the lead's model made in `request` (the last one it sent holds the
/// whole conversation), with what the host answered.
fn lead_steps(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let mut names = std::collections::HashMap::new();
    let mut out = Vec::new();
    for m in &messages {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            names.insert(
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
        if m["role"] != "tool" {
            continue;
        }
        let name = m["tool_call_id"]
            .as_str()
            .and_then(|id| names.get(id))
            .cloned()
            .unwrap_or_default();
        let reply: Value = m["content"]
            .as_str()
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or(Value::Null);
        out.push(step_line(&name, &reply));
        if reply["status"] == "reported" {
            for c in reply["checks"].as_array().into_iter().flatten() {
                if c["status"] != "passed" || c["name"] == "receipt.earlier_attempt" {
                    out.push(format!(
                        "        check {} {}: {}",
                        c["name"].as_str().unwrap_or_default(),
                        c["status"].as_str().unwrap_or_default(),
                        c["message"].as_str().unwrap_or_default()
                    ));
                }
            }
        }
    }
    out
}

fn step_line(name: &str, reply: &Value) -> String {
    let text = |k: &str| reply[k].as_str().unwrap_or_default().to_owned();
    match reply["status"].as_str() {
        Some("reported") => format!(
            "  lead → {name}: child {} reported \"{}\"; verdict {}",
            text("child_id"),
            reply["report"]["summary"].as_str().unwrap_or_default(),
            text("verdict")
        ),
        Some("reviewed") => format!(
            "  lead → review_child {}: {} (child {})",
            text("decision"),
            text("effect"),
            text("child_id")
        ),
        _ => format!("  lead → {name}: {reply}"),
    }
}

/// Runs the scene; the lead's result, and whether it went as it should (the lead succeeded, its
/// first child failed validation, was revised under the same id and passed, the second passed,
/// and the tree holds the lead and its two children).
pub(super) async fn run(
    host: &guild_host::Host,
    tracker: &TrackerServer,
    model: &StandIn,
    say: impl Fn(&str),
) -> anyhow::Result<(TaskResult, bool)> {
    say(
        "  The lead's model is the scripted stand-in again; its children are the Rust triage and\n  \
         optimist. The tracker stand-in refuses the next create (503), as in a passing outage.",
    );
    model.set(script());
    let before = model.requests().len();
    tracker.refuse_next_creates(1, 503, "Service Unavailable");
    let spinner = render::spinner(&format!("running {SPECIALIST}"));
    let result = host.task(SPECIALIST, JOB).await;
    spinner.finish_and_clear();
    tracker.refuse_next_creates(0, 503, "");
    let result = result?;
    let requests = model.requests();
    let steps = requests
        .get(before..)
        .and_then(|r| r.last())
        .map(|r| lead_steps(&r.body))
        .unwrap_or_default();
    for line in &steps {
        say(line);
    }
    say(render::task_result(&result).trim_end());
    let tree = host.task_tree(&result.task_id);
    if let Some(tree) = &tree {
        say(&format!(
            "\n  the tree (as `guild tasks tree {}` prints it):",
            result.task_id
        ));
        for line in tree.to_text().lines() {
            say(&format!("  {line}"));
        }
    }
    let passed = |n: &guild_host::TreeNode, decision: &str| {
        n.verdict == Some(CheckStatus::Passed)
            && n.review
                .as_ref()
                .is_some_and(|r| r.decision.as_str() == decision)
    };
    let revised = steps
        .iter()
        .any(|l| l.contains("revise_child: continue_child"));
    let ok = result.status == TaskStatus::Succeeded
        && revised
        && tree.is_some_and(|t| {
            t.nodes.len() == 3
                && passed(&t.nodes[1], "reject_refine")
                && passed(&t.nodes[2], "ascend")
        });
    Ok((result, ok))
}
