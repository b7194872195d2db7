//! Specialist `triage`: files each bug of a brief as a tracker issue unless an open issue with
//! the same title exists, and reports what the tracker returned (ids, URLs, verbatim errors).
//! As a child task it reads only its brief's `## Context` section ([`Brief::task_input`]).

mod bugs;

use std::fmt::Write as _;

use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, ToolOutcome, log, tools};
use serde_json::{Value, json};

use bugs::Bug;

const SEARCH: &str = "tracker.search_issues";
const CREATE: &str = "tracker.create_issue";

struct Triage;

/// What happened to one bug.
enum Filed {
    Duplicate { number: String, url: String },
    Created { number: String, url: String },
    Failed(String),
}

impl Specialist for Triage {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new(
            "Bug triage: files each `- [label] title` line of the brief as a tracker issue, \
             reporting existing open issues with the same title as duplicates instead.",
        )
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let bugs = bugs::parse(brief.task_input());
        if bugs.is_empty() {
            return Err(RunError::InvalidBrief(
                "no bugs found: list each bug on its own line starting with `- `, optionally \
                 prefixed with `[label]` tags, e.g. `- [ui] Save button does nothing`"
                    .to_owned(),
            ));
        }
        let mut details = String::from("| bug | result | issue |\n|---|---|---|\n");
        let mut claims = Vec::new();
        let mut problems = Vec::new();
        let (mut created, mut duplicates) = (0, 0);
        for bug in &bugs {
            let filed = file(bug, &brief.task_id);
            let title = bug.title.replace('|', "\\|");
            match filed {
                Filed::Duplicate { number, url } => {
                    duplicates += 1;
                    let _ = writeln!(details, "| {title} | duplicate of #{number} | {url} |");
                }
                Filed::Created { number, url } => {
                    created += 1;
                    let _ = writeln!(details, "| {title} | created #{number} | {url} |");
                    claims.push((number, bug.title.clone()));
                }
                Filed::Failed(error) => {
                    let _ = writeln!(details, "| {title} | failed | - |");
                    problems.push(format!("`{}`: {error}", bug.title));
                }
            }
            // Progress for whoever started the task, when the operator granted the channel;
            // a refused or undelivered report changes nothing about the work.
            let done = created + duplicates + problems.len();
            let _ = guild_sdk::progress::send(format!("{done}/{} bugs handled", bugs.len()));
        }
        let summary = format!(
            "{} bug(s): created {created} issue(s), found {duplicates} duplicate(s), {} failed",
            bugs.len(),
            problems.len()
        );
        let mut report = if problems.is_empty() {
            Report::satisfied(summary)
        } else if created + duplicates > 0 {
            Report::partial(summary)
        } else {
            Report::failed(summary)
        };
        report = report.details(details);
        for (number, title) in claims {
            let text = format!("created issue #{number}: {title}");
            report = report.claim(CREATE, number, text);
        }
        for problem in problems {
            report = report.open_issue(problem);
        }
        Ok(report)
    }
}

/// Searches for an open issue with the bug's title, and creates one if there is none. A failed
/// search files nothing: creating blind could duplicate an issue.
fn file(bug: &Bug, task_id: &str) -> Filed {
    let query = format!("is:issue is:open {}", search_terms(&bug.title));
    let found = match call(SEARCH, &json!({ "query": query })) {
        Ok(output) => output,
        Err(error) => return Filed::Failed(format!("search failed, nothing filed: {error}")),
    };
    let existing = found
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|item| {
            let open = item.get("state").and_then(Value::as_str) != Some("closed");
            let title = item.get("title").and_then(Value::as_str).unwrap_or("");
            open && bugs::same_title(title, &bug.title)
        });
    if let Some(issue) = existing {
        return Filed::Duplicate {
            number: number_of(issue.get("number")),
            url: text_of(issue.get("html_url")),
        };
    }
    let mut input = json!({
        "title": bug.title,
        "body": format!("Filed by the Guild triage specialist (task `{task_id}`)."),
    });
    if !bug.labels.is_empty() {
        input["labels"] = json!(bug.labels);
    }
    match tools::call(CREATE, &input) {
        Ok(outcome) if outcome.is_success() => {
            let output = outcome.output_json().unwrap_or(Value::Null);
            let number = outcome
                .external_id
                .clone()
                .unwrap_or_else(|| number_of(output.get("number")));
            let url = outcome
                .verifiable_url
                .clone()
                .unwrap_or_else(|| text_of(output.get("html_url")));
            log::info(format!("created #{number} for {}", bug.title));
            Filed::Created { number, url }
        }
        Ok(outcome) => Filed::Failed(failure(&outcome)),
        Err(error) => Filed::Failed(error.to_string()),
    }
}

/// The title's words as plain search terms: quotes and `:` would read as search syntax, and
/// only the first words are sent (search engines cap query length). Exact title matching happens
/// on the results, so loose terms cost nothing but a longer result list.
fn search_terms(title: &str) -> String {
    title
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | ':' | '(' | ')'))
        .filter(|word| !word.is_empty())
        .take(12)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Calls a tool and returns its parsed output when it succeeded, else the verbatim error.
fn call(tool: &str, input: &Value) -> Result<Value, String> {
    let outcome = tools::call(tool, input).map_err(|e| e.to_string())?;
    if !outcome.is_success() {
        return Err(failure(&outcome));
    }
    outcome
        .output_json()
        .map_err(|e| format!("{tool} returned output that is not JSON: {e}"))
}

fn failure(outcome: &ToolOutcome) -> String {
    outcome.error().map_or_else(
        || format!("tool reported {:?} without an error", outcome.status),
        str::to_owned,
    )
}

fn number_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => "?".to_owned(),
    }
}

fn text_of(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_str)
        .unwrap_or("(no url)")
        .to_owned()
}

guild_sdk::export_specialist!(Triage);
