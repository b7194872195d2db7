//! The model's final answer turned into a [`Report`]: parsed from the JSON shape the system
//! prompt asks for (tolerating a code fence or text around it), with claims resolved against
//! the calls that actually happened, so every claim carries the tool and external id the host
//! holds a receipt for (docs/receipts-and-validation.md). A claim that cites no successful
//! change is dropped and said so; a successful change the model did not cite is claimed anyway.

use std::fmt::Write as _;

use guild_sdk::agent::{CallRecord, function_name};
use guild_sdk::{Outcome, Report};
use serde::Deserialize;

use crate::prompt::clip;

/// Caps the host enforces on report fields (docs/receipts-and-validation.md), bytes and counts.
const SUMMARY_MAX: usize = 2000;
const ISSUE_MAX: usize = 2000;
const DETAILS_MAX: usize = 200 * 1024;
const LIST_MAX: usize = 100;

/// The final answer as the model wrote it.
#[derive(Debug, Deserialize)]
pub(crate) struct FinalAnswer {
    summary: String,
    outcome: Word,
    #[serde(default)]
    hard_passed: Option<bool>,
    #[serde(default)]
    details: String,
    #[serde(default)]
    open_issues: Vec<String>,
    #[serde(default)]
    claims: Vec<ClaimRef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Word {
    Satisfied,
    Partial,
    Failed,
}

/// A claim as the model cites it: by call id, or by tool and external id.
#[derive(Debug, Deserialize)]
struct ClaimRef {
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    external_id: Option<String>,
    text: String,
}

/// Parses the final answer out of `text`; the error says what was wrong, for the model.
pub(crate) fn parse(text: &str) -> Result<FinalAnswer, String> {
    let candidate = json_object(text).ok_or("it holds no JSON object")?;
    let answer: FinalAnswer = serde_json::from_str(candidate).map_err(|e| e.to_string())?;
    if answer.summary.trim().is_empty() {
        return Err("`summary` is empty".to_owned());
    }
    Ok(answer)
}

/// The JSON object in `text`: all of it, the inside of a code fence, or from the first `{` to
/// the last `}`.
fn json_object(text: &str) -> Option<&str> {
    let text = text.trim();
    let text = text
        .strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))
        .and_then(|t| t.trim_end().strip_suffix("```"))
        .map(str::trim)
        .unwrap_or(text);
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    (start < end).then(|| &text[start..=end])
}

/// The report for a final answer, its claims checked against `calls`.
pub(crate) fn report(answer: FinalAnswer, calls: &[CallRecord]) -> Report {
    let mut open: Vec<String> = answer
        .open_issues
        .iter()
        .map(|i| clip(i, ISSUE_MAX))
        .collect();
    let mut cited: Vec<&CallRecord> = Vec::new();
    let mut claims: Vec<(&CallRecord, String)> = Vec::new();
    for claim in &answer.claims {
        match find(claim, calls) {
            Some(call) if call.succeeded() && call.mutating => {
                if !cited.iter().any(|c| std::ptr::eq(*c, call)) {
                    cited.push(call);
                    claims.push((call, clip(&claim.text, ISSUE_MAX)));
                }
            }
            // A read is not an external effect: nothing to claim, nothing wrong.
            Some(call) if call.succeeded() => {}
            _ => open.push(clip(
                &format!(
                    "claim not backed by a successful tool call, left out: {}",
                    claim.text
                ),
                ISSUE_MAX,
            )),
        }
    }
    for call in calls.iter().filter(|c| c.succeeded() && c.mutating) {
        if !cited.iter().any(|c| std::ptr::eq(*c, call)) {
            claims.push((call, default_claim_text(call)));
        }
    }
    let mut outcome = match answer.outcome {
        Word::Satisfied => Outcome::Satisfied,
        Word::Partial => Outcome::Partial,
        Word::Failed => Outcome::Failed,
    };
    if outcome == Outcome::Satisfied && (!open.is_empty() || answer.hard_passed == Some(false)) {
        outcome = Outcome::Partial;
    }
    let mut details = clip(&answer.details, DETAILS_MAX);
    details.push_str(&calls_table(calls));
    let mut report = Report::new(outcome, clip(answer.summary.trim(), SUMMARY_MAX))
        .details(details)
        .hard_passed(outcome == Outcome::Satisfied);
    for issue in open.into_iter().take(LIST_MAX) {
        report = report.open_issue(issue);
    }
    with_claims(report, claims)
}

/// A report for a run that ended without a usable final answer: `why` says what happened;
/// the changes that did happen are claimed, so the host validates them like any other.
pub(crate) fn fallback(
    summary: &str,
    why: &str,
    text: Option<&str>,
    calls: &[CallRecord],
) -> Report {
    let changed = calls.iter().any(|c| c.succeeded() && c.mutating);
    let outcome = if changed {
        Outcome::Partial
    } else {
        Outcome::Failed
    };
    let mut details = String::new();
    if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
        let _ = write!(
            details,
            "The model's last answer:\n\n{}\n",
            clip(text, 16 * 1024)
        );
    }
    details.push_str(&calls_table(calls));
    let report = Report::new(outcome, clip(summary, SUMMARY_MAX))
        .details(details)
        .open_issue(clip(why, ISSUE_MAX));
    let claims = calls
        .iter()
        .filter(|c| c.succeeded() && c.mutating)
        .map(|c| (c, default_claim_text(c)))
        .collect();
    with_claims(report, claims)
}

fn with_claims(mut report: Report, claims: Vec<(&CallRecord, String)>) -> Report {
    for (call, text) in claims.into_iter().take(LIST_MAX) {
        report = match call.external_id() {
            Some(id) => report.claim(call.tool.clone(), id, text),
            None => report.claim_without_id(call.tool.clone(), text),
        };
    }
    report
}

/// The call a claim cites: by call id, else by tool (either spelling) and external id.
fn find<'c>(claim: &ClaimRef, calls: &'c [CallRecord]) -> Option<&'c CallRecord> {
    if let Some(id) = &claim.call_id {
        return calls.iter().find(|c| &c.call_id == id);
    }
    let tool = claim.tool.as_deref()?;
    calls.iter().find(|c| {
        (c.tool == tool || function_name(&c.tool) == tool)
            && claim
                .external_id
                .as_deref()
                .is_none_or(|id| c.external_id() == Some(id))
    })
}

fn default_claim_text(call: &CallRecord) -> String {
    let preview = call
        .outcome
        .as_ref()
        .ok()
        .and_then(|o| o.preview.as_deref());
    match (preview, call.external_id()) {
        (Some(preview), _) => clip(preview, ISSUE_MAX),
        (None, Some(id)) => format!("{} returned {id}", call.tool),
        (None, None) => format!("{} succeeded", call.tool),
    }
}

/// A markdown table of every connector call, for the details.
fn calls_table(calls: &[CallRecord]) -> String {
    if calls.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n\n### Tool calls\n\n| call | tool | result | external id |\n|---|---|---|---|\n",
    );
    for call in calls.iter().take(LIST_MAX) {
        let result = match &call.outcome {
            Ok(o) if o.is_success() => "success".to_owned(),
            Ok(o) => o
                .error()
                .map_or("pending".to_owned(), |e| format!("failed: {e}")),
            Err(e) => format!("refused: {e}"),
        };
        let cell = |s: &str| clip(&s.replace('|', "\\|").replace('\n', " "), 300);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&call.call_id),
            call.tool,
            cell(&result),
            cell(call.external_id().unwrap_or("-"))
        );
    }
    out
}

#[cfg(test)]
mod tests;
