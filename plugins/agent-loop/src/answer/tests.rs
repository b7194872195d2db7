//! Final answers parsed and checked against recorded calls.

use guild_sdk::agent::CallRecord;
use guild_sdk::{HostError, Outcome, ToolOutcome};
use serde_json::json;

use super::*;

fn created(call_id: &str, id: &str) -> CallRecord {
    CallRecord {
        call_id: call_id.into(),
        tool: "tracker.create_issue".into(),
        mutating: true,
        input: "{}".into(),
        outcome: Ok(ToolOutcome::success(json!({})).external_id(id)),
    }
}

fn searched(call_id: &str) -> CallRecord {
    CallRecord {
        call_id: call_id.into(),
        tool: "tracker.search_issues".into(),
        mutating: false,
        input: "{}".into(),
        outcome: Ok(ToolOutcome::success(json!({"items": []}))),
    }
}

fn refused(call_id: &str) -> CallRecord {
    CallRecord {
        outcome: Err(HostError::Denied("not granted".into())),
        ..created(call_id, "0")
    }
}

#[test]
fn finds_the_object_in_fences_and_prose() {
    let shape = r#"{"summary": "s", "outcome": "partial"}"#;
    for text in [
        shape.to_owned(),
        format!("```json\n{shape}\n```"),
        format!("Here is my report:\n{shape}\nThanks."),
    ] {
        assert!(parse(&text).is_ok(), "{text}");
    }
    assert!(
        parse("all done!")
            .expect_err("no JSON")
            .contains("no JSON object")
    );
    assert!(parse(r#"{"summary": "s", "outcome": "great"}"#).is_err());
    assert!(parse(r#"{"summary": " ", "outcome": "failed"}"#).is_err());
}

#[test]
fn claims_carry_the_recorded_tool_and_external_id() {
    let calls = [searched("c1"), created("c2", "12")];
    let answer = parse(
        r#"{"summary": "filed", "outcome": "satisfied", "hard_passed": true,
            "claims": [{"call_id": "c2", "text": "created #12"}, {"call_id": "c1", "text": "searched"}]}"#,
    )
    .expect("parses");
    let report = report(answer, &calls);
    assert_eq!(report.outcome, Outcome::Satisfied);
    assert!(report.hard_passed && report.open_issues.is_empty());
    assert_eq!(report.claims.len(), 1);
    assert_eq!(report.claims[0].tool, "tracker.create_issue");
    assert_eq!(report.claims[0].external_id.as_deref(), Some("12"));
    assert_eq!(report.claims[0].text, "created #12");
    assert!(
        report
            .details
            .contains("| c2 | tracker.create_issue | success | 12 |")
    );
}

#[test]
fn a_claim_without_a_successful_call_is_dropped_and_the_outcome_lowered() {
    let calls = [refused("c1")];
    let answer = parse(
        r#"{"summary": "filed", "outcome": "satisfied", "hard_passed": true,
            "claims": [{"call_id": "c1", "text": "created #5"}, {"call_id": "c9", "text": "created #6"},
                       {"tool": "tracker__create_issue", "external_id": "7", "text": "created #7"}]}"#,
    )
    .expect("parses");
    let report = report(answer, &calls);
    assert!(report.claims.is_empty());
    assert_eq!(report.outcome, Outcome::Partial);
    assert!(!report.hard_passed);
    assert_eq!(report.open_issues.len(), 3);
    assert!(report.open_issues[0].contains("not backed") && report.open_issues[0].contains("#5"));
}

#[test]
fn changes_the_model_did_not_cite_are_claimed_anyway() {
    let calls = [created("c1", "3"), created("c2", "4")];
    let answer = parse(
        r#"{"summary": "s", "outcome": "partial",
            "claims": [{"tool": "tracker__create_issue", "external_id": "4", "text": "made 4"}]}"#,
    )
    .expect("parses");
    let report = report(answer, &calls);
    let ids: Vec<_> = report
        .claims
        .iter()
        .map(|c| c.external_id.as_deref())
        .collect();
    assert_eq!(ids, [Some("4"), Some("3")]);
    assert_eq!(report.claims[1].text, "tracker.create_issue returned 3");
}

#[test]
fn fallback_reports_say_why_and_keep_the_changes() {
    let report = fallback(
        "stopped",
        "step limit",
        Some("half an answer"),
        &[created("c1", "8")],
    );
    assert_eq!(report.outcome, Outcome::Partial);
    assert_eq!(report.open_issues, ["step limit"]);
    assert!(report.details.contains("half an answer"));
    assert_eq!(report.claims[0].external_id.as_deref(), Some("8"));
    let nothing = fallback("stopped", "budget", None, &[searched("c1")]);
    assert_eq!(nothing.outcome, Outcome::Failed);
    assert!(nothing.claims.is_empty());
}

#[test]
fn long_fields_are_clipped_to_the_hosts_caps() {
    let long = "x".repeat(5000);
    let answer = parse(&format!(
        r#"{{"summary": "{long}", "outcome": "failed", "open_issues": ["{long}"]}}"#
    ))
    .expect("parses");
    let report = report(answer, &[]);
    assert!(report.summary.len() <= SUMMARY_MAX && report.open_issues[0].len() <= ISSUE_MAX);
}
