//! Whole runs against a scripted model and a scripted host.

use std::collections::VecDeque;

use guild_sdk::llm::{Answer, Budget, Request, ToolCall};
use guild_sdk::tools::GrantedTool;
use guild_sdk::{Outcome, SkillMeta, ToolSpec};
use serde_json::json;

use super::*;

struct Scripted {
    answers: VecDeque<Result<Answer, LlmError>>,
    requests: Vec<Request>,
}

impl Model for Scripted {
    fn complete(&mut self, request: &Request) -> Result<Answer, LlmError> {
        self.requests.push(request.clone());
        self.answers
            .pop_front()
            .unwrap_or_else(|| Ok(Answer::text("(script over)")))
    }
}

fn model(answers: Vec<Result<Answer, LlmError>>) -> Scripted {
    Scripted {
        answers: answers.into(),
        requests: Vec::new(),
    }
}

/// A host with one mutating and one read-only tracker tool, one skill and one model.
#[derive(Default)]
struct Host {
    loads: Vec<String>,
    calls: Vec<(String, String)>,
    progress: Vec<String>,
}

impl Env for Host {
    fn models(&mut self) -> Vec<String> {
        vec!["granted-model".into()]
    }

    fn granted(&mut self) -> Vec<GrantedTool> {
        vec![
            GrantedTool {
                name: "tracker.create_issue".into(),
                spec: ToolSpec::new("create_issue", "Create an issue.")
                    .schema(json!({"type": "object"}))
                    .mutating("issue", "create"),
            },
            GrantedTool {
                name: "tracker.search_issues".into(),
                spec: ToolSpec::new("search_issues", "Search.").schema(json!({"type": "object"})),
            },
        ]
    }

    fn catalog(&mut self) -> Vec<SkillMeta> {
        vec![SkillMeta::new("triage-rules", "How bugs are labelled.")]
    }

    fn load_skill(&mut self, name: &str) -> Result<String, HostError> {
        self.loads.push(name.to_owned());
        match name {
            "triage-rules" => Ok("Label crashes `crash`.".into()),
            other => Err(HostError::InvalidInput(format!("no skill `{other}`"))),
        }
    }

    fn read_skill(&mut self, _name: &str, path: &str) -> Result<Vec<u8>, HostError> {
        Ok(format!("contents of {path}").into_bytes())
    }

    fn call_tool(&mut self, name: &str, input: &str) -> Result<ToolOutcome, HostError> {
        self.calls.push((name.to_owned(), input.to_owned()));
        Ok(ToolOutcome::success(json!({"number": 12})).external_id("12"))
    }

    fn progress(&mut self, text: &str) {
        self.progress.push(text.to_owned());
    }

    fn delegates(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn delegate(
        &mut self,
        brief: guild_sdk::delegate::TaskBrief,
    ) -> Result<guild_sdk::delegate::ChildReport, guild_sdk::delegate::DelegateError> {
        Err(guild_sdk::delegate::DelegateError::Denied(format!(
            "no delegate grant ({})",
            brief.specialist
        )))
    }

    fn review(
        &mut self,
        child_id: &str,
        _review: guild_sdk::delegate::TaskReview,
    ) -> Result<guild_sdk::delegate::ReviewEffect, guild_sdk::delegate::DelegateError> {
        Err(guild_sdk::delegate::DelegateError::Denied(format!(
            "no delegate grant ({child_id})"
        )))
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn definition(settings: Value) -> Definition {
    Definition {
        name: "triage-agent".into(),
        prompt: Some("# Triage\nYou triage bugs.".into()),
        settings,
    }
}

fn brief() -> Brief {
    Brief {
        task_id: "t1".into(),
        description: "- App crashes on start".into(),
    }
}

const FINAL: &str = r#"{"summary": "Filed 1 bug.", "outcome": "satisfied", "hard_passed": true,
    "details": "Filed #12.", "claims": [{"call_id": "c2", "text": "created issue #12"}]}"#;

fn tool_reply(request: &Request, call_id: &str) -> Value {
    request
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id: id,
                content,
            } if id == call_id => serde_json::from_str(content).ok(),
            _ => None,
        })
        .expect("the call was answered")
}

#[test]
fn a_run_loads_a_skill_calls_a_tool_and_claims_what_the_receipt_backs() {
    let mut model = model(vec![
        Ok(Answer::calls(vec![call(
            "c1",
            "load_skill",
            r#"{"name":"triage-rules"}"#,
        )])),
        Ok(Answer::calls(vec![
            call(
                "c2",
                "tracker__create_issue",
                r#"{"title":"App crashes on start","labels":["crash"]}"#,
            ),
            call("c3", "load_skill", r#"{"name":"triage-rules"}"#),
        ])),
        Ok(Answer::text(format!("```json\n{FINAL}\n```"))),
    ]);
    let mut host = Host::default();
    let report = run(
        &brief(),
        &definition(json!({"model": "fast", "max_steps": 5})),
        &mut host,
        &mut model,
    )
    .expect("a report");
    assert_eq!(report.outcome, Outcome::Satisfied);
    assert_eq!(report.summary, "Filed 1 bug.");
    assert_eq!(report.claims.len(), 1);
    assert_eq!(report.claims[0].tool, "tracker.create_issue");
    assert_eq!(report.claims[0].external_id.as_deref(), Some("12"));
    assert!(report.details.contains("Skills loaded: triage-rules."));
    // The skill body was fetched once; the second load said it is already there.
    assert_eq!(host.loads, ["triage-rules"]);
    let last = model.requests.last().expect("requests");
    assert!(
        tool_reply(last, "c3")["note"]
            .as_str()
            .is_some_and(|n| n.contains("already loaded"))
    );
    assert_eq!(
        tool_reply(last, "c1")["instructions"],
        "Label crashes `crash`."
    );
    assert_eq!(host.calls[0].0, "tracker.create_issue");
    // The request: the alias, the prompt with the catalog, every tool.
    let first = &model.requests[0];
    assert_eq!(first.model, "fast");
    let Message::System(system) = &first.messages[0] else {
        panic!("the system prompt comes first");
    };
    assert!(system.starts_with("# Triage") && system.contains("`triage-rules`: How bugs"));
    let names: Vec<&str> = first.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "tracker__create_issue",
            "tracker__search_issues",
            "load_skill",
            "read_skill_resource"
        ]
    );
    assert!(
        host.progress
            .iter()
            .any(|p| p == "call 1: tracker.create_issue succeeded (12)")
    );
    assert!(
        host.progress
            .iter()
            .any(|p| p == "loaded skill triage-rules")
    );
}

#[test]
fn an_ungranted_tool_is_refused_in_words_the_model_reads_and_the_run_goes_on() {
    let mut model = model(vec![
        Ok(Answer::calls(vec![call(
            "c1",
            "tracker__delete_issue",
            r#"{"number": 1}"#,
        )])),
        Ok(Answer::text(
            r#"{"summary": "Could not delete.", "outcome": "failed"}"#,
        )),
    ]);
    let mut host = Host::default();
    let report = run(&brief(), &definition(json!({})), &mut host, &mut model).expect("a report");
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(host.calls.is_empty());
    let refusal = tool_reply(&model.requests[1], "c1");
    assert!(
        refusal["error"]
            .as_str()
            .is_some_and(|e| e.contains("no tool named `tracker__delete_issue`"))
    );
    // No `[agent] model`: the first granted alias.
    assert_eq!(model.requests[0].model, "granted-model");
}

#[test]
fn an_answer_out_of_shape_is_asked_again_then_reported_as_such() {
    let mut again = model(vec![
        Ok(Answer::text("I filed it!")),
        Ok(Answer::text(FINAL)),
    ]);
    let report = run(
        &brief(),
        &definition(json!({})),
        &mut Host::default(),
        &mut again,
    )
    .expect("a report");
    assert_eq!(report.summary, "Filed 1 bug.");
    let Some(Message::User(nudge)) = again.requests[1].messages.last() else {
        panic!("the second request ends with the nudge");
    };
    assert!(nudge.contains("not the final JSON object") && nudge.contains("\"summary\""));

    let mut stubborn = model(vec![
        Ok(Answer::calls(vec![call(
            "c1",
            "tracker__create_issue",
            "{}",
        )])),
        Ok(Answer::text("I filed it!")),
        Ok(Answer::text("Really, I did.")),
    ]);
    let report = run(
        &brief(),
        &definition(json!({})),
        &mut Host::default(),
        &mut stubborn,
    )
    .expect("a report");
    assert_eq!(report.outcome, Outcome::Partial);
    assert!(report.open_issues[0].contains("could not be read as a report"));
    assert!(report.details.contains("Really, I did."));
    assert_eq!(report.claims[0].external_id.as_deref(), Some("12"));
}

#[test]
fn a_spent_budget_ends_the_run_with_a_report_that_says_so() {
    let mut model = model(vec![
        Ok(Answer::calls(vec![call(
            "c1",
            "tracker__create_issue",
            "{}",
        )])),
        Err(LlmError::BudgetExceeded {
            budget: Budget::TaskTokens,
            limit: 100,
            used: 130,
        }),
    ]);
    let report = run(
        &brief(),
        &definition(json!({})),
        &mut Host::default(),
        &mut model,
    )
    .expect("a report");
    assert_eq!(
        report.summary,
        "Stopped: the model's token budget is spent."
    );
    assert!(report.open_issues[0].contains("budget-exceeded: task token budget spent"));
    assert_eq!(report.outcome, Outcome::Partial);
    assert_eq!(report.claims.len(), 1);

    let mut late = self::model(vec![Err(LlmError::Timeout("deadline passed".into()))]);
    let report = run(
        &brief(),
        &definition(json!({})),
        &mut Host::default(),
        &mut late,
    )
    .expect("a report");
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(report.summary.contains("time ran out"));
}

#[test]
fn the_step_limit_ends_a_model_that_never_answers() {
    let again = || {
        Ok(Answer::calls(vec![call(
            "c",
            "tracker__search_issues",
            "{}",
        )]))
    };
    let mut model = model(vec![again(), again(), again()]);
    let report = run(
        &brief(),
        &definition(json!({"max_steps": 2})),
        &mut Host::default(),
        &mut model,
    )
    .expect("a report");
    assert_eq!(model.requests.len(), 2);
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(report.summary.contains("step limit (2 steps)"));
}

#[test]
fn an_unusable_definition_or_brief_is_a_run_error() {
    let mut m = model(vec![]);
    let no_prompt = Definition {
        prompt: None,
        ..definition(json!({}))
    };
    let err = run(&brief(), &no_prompt, &mut Host::default(), &mut m).expect_err("refused");
    assert!(matches!(err, RunError::Failed(m) if m.contains("no prompt.md")));
    let err = run(
        &brief(),
        &definition(json!({"steps": 3})),
        &mut Host::default(),
        &mut m,
    )
    .expect_err("refused");
    assert!(matches!(err, RunError::Failed(m) if m.contains("unknown field `steps`")));
    let empty = Brief {
        task_id: "t".into(),
        description: " ".into(),
    };
    let err =
        run(&empty, &definition(json!({})), &mut Host::default(), &mut m).expect_err("refused");
    assert!(matches!(err, RunError::InvalidBrief(_)));
    assert!(m.requests.is_empty());
}
