//! The demo's prompt-defined specialist (`plugins/triage-agent`: a `prompt.md`, a skill and the
//! shared agent-loop component) triaging a bug through the tracker connector, with the model
//! it calls played by the scripted OpenAI-compatible stand-in (`guild_llm::standin`) on
//! 127.0.0.1. The binary carries the stand-in as it carries the tracker stand-in: the demo needs
//! no network and no key. Only the model's answers are scripted (load the skill, search, file,
//! report); the skill load, the tracker calls, their receipts, the token accounting and the
//! validation of the report's claim against the receipts are the host's own (docs/models.md).

use anyhow::Context;
use guild_host::llm::standin::{StandIn, Step};
use guild_host::types::TaskResult;
use guild_host::validate::CheckStatus;
use serde_json::json;

use super::render;
use crate::demo::tracker::TrackerServer;

/// The specialist the scene runs.
pub(super) const SPECIALIST: &str = "triage-agent";
/// The model alias the demo configures and grants it.
const ALIAS: &str = "fast";

/// The bug the scene triages, its title as filed and the search the model runs first.
const BUG: &str =
    "- [bug] The Save button on the profile page is hidden behind the footer on small screens\n";
const TITLE: &str = "Profile Save button hidden behind the footer on small screens";
const SEARCH: &str = "is:issue is:open Profile Save button hidden footer";

/// Starts the stand-in with an empty script; [`run`] scripts it when the scene starts.
pub(super) async fn start_model() -> anyhow::Result<StandIn> {
    StandIn::start(Vec::new())
        .await
        .context("failed to start the local model stand-in")
}

/// The `guild.toml` lines for the model: the stand-in as the endpoint, its alias, and
/// triage-agent's grants (the tracker tools, its skills, reports and the alias).
pub(super) fn config(model_url: &str) -> String {
    format!(
        r#"
# The model triage-agent calls: a scripted OpenAI-compatible stand-in on 127.0.0.1 started by
# the demo (no network, no key). Real use names a real endpoint and where its key comes from,
# then maps the alias to one of its models (docs/models.md):
#   [llm.endpoints.openai]
#   base_url = "https://api.openai.com/v1"
#   api_key_env = "OPENAI_API_KEY"
#   [llm.models]
#   {ALIAS} = {{ endpoint = "openai", model = "gpt-4o-mini" }}
[llm.endpoints.standin]
base_url = "{model_url}"

[llm.models]
{ALIAS} = {{ endpoint = "standin", model = "scripted" }}

[grants.{SPECIALIST}]
tools = ["tracker.create_issue", "tracker.search_issues"]
skills = ["skills/"]
report = true

[grants.{SPECIALIST}.llm]
models = ["{ALIAS}"]
tokens_per_task = 20000
"#
    )
}

/// The model's answers, in order: load the skill, search for a duplicate, file the bug, then
/// the final report citing the create call. `number` is the issue the tracker will assign, so
/// the report's text names what the receipt will hold.
fn script(number: u64) -> Vec<Step> {
    let call = |id: &str, name: &str, args: serde_json::Value| {
        Step::ToolCalls(vec![(id.to_owned(), name.to_owned(), args.to_string())])
    };
    let report = json!({
        "summary": format!("Filed 1 bug as #{number}; no open duplicate."),
        "outcome": "satisfied",
        "hard_passed": true,
        "details": format!("Searched the open issues for the Save button bug: none. Filed `{TITLE}` as #{number} with labels `bug`, `ui` (skill triage-labels)."),
        "open_issues": [],
        "claims": [{"call_id": "c3", "text": format!("created issue #{number}: {TITLE}")}],
    });
    vec![
        call("c1", "load_skill", json!({"name": "triage-labels"})),
        call("c2", "tracker__search_issues", json!({"query": SEARCH})),
        call(
            "c3",
            "tracker__create_issue",
            json!({
                "title": TITLE,
                "body": "Reported by QA: on a 360 px wide screen the profile page's Save button is covered by the footer, so changes cannot be saved.",
                "labels": ["bug", "ui"],
            }),
        ),
        Step::Text(format!("```json\n{report}\n```")),
    ]
}

/// Runs the scene; the task's result, and whether it went as it should (succeeded, tokens
/// accounted, validation passed).
pub(super) async fn run(
    host: &guild_host::Host,
    tracker: &TrackerServer,
    model: &StandIn,
    say: impl Fn(&str),
) -> anyhow::Result<(TaskResult, bool)> {
    say(&format!(
        "  The model is a local scripted stand-in at {} (alias `{ALIAS}`):\n  \
         its answers were written in advance (load the skill, search, file, report). The rest is\n  \
         real: the skill load, the tracker calls and their receipts, the token accounting and the\n  \
         validation of the claim. To use a real model, point [llm.endpoints.*] and [llm.models]\n  \
         in guild.toml at an OpenAI-compatible endpoint (docs/models.md).",
        model.base_url()
    ));
    let number = tracker.issues().iter().map(|i| i.number).max().unwrap_or(0) + 1;
    let before = model.requests().len();
    model.push(script(number));
    let spinner = render::spinner(&format!("running {SPECIALIST}"));
    let result = host.task(SPECIALIST, BUG).await;
    spinner.finish_and_clear();
    let result = result?;
    say(render::task_result(&result).trim_end());
    let sent = model.requests().len() - before;
    say(&format!(
        "  the stand-in answered {sent} completion request(s); tokens above are what it reported"
    ));
    let ok = result.status == guild_host::types::TaskStatus::Succeeded
        && result.usage.models.contains_key(ALIAS)
        && result
            .validation
            .as_ref()
            .is_some_and(|v| v.verdict == CheckStatus::Passed);
    Ok((result, ok))
}
