//! Report rules (docs/receipts-and-validation.md, "Report rules") and the host-generated `protocol_error` report.
//!
//! Size caps, chosen so a report stays readable by the calling agent and cheap to store:
//! summary ≤ [`MAX_SUMMARY_BYTES`] (2 KiB), details ≤ [`MAX_DETAILS_BYTES`] (256 KiB), at most
//! [`MAX_ISSUES`] (100) open and 100 remaining issues of ≤ [`MAX_ISSUE_BYTES`] (2 KiB) each, at
//! most [`MAX_CLAIMS`] (100) claims and [`MAX_ARTIFACTS`] (100) artifacts, a suggested task no
//! longer than a task description ([`guild_core::limits::MAX_DESCRIPTION_BYTES`]), and ≤
//! [`MAX_REPORT_BYTES`] (1 MiB) in all ([`Report::size`]).

use guild_core::types::{NextAction, Outcome, Report};

/// Largest summary, bytes.
pub const MAX_SUMMARY_BYTES: usize = 2 * 1024;
/// Largest details, bytes.
pub const MAX_DETAILS_BYTES: usize = 256 * 1024;
/// Most open issues, and most remaining issues.
pub const MAX_ISSUES: usize = 100;
/// Largest single issue, bytes.
pub const MAX_ISSUE_BYTES: usize = 2 * 1024;
/// Most claims.
pub const MAX_CLAIMS: usize = 100;
/// Most artifacts.
pub const MAX_ARTIFACTS: usize = 100;
/// Largest report in all ([`Report::size`]), bytes.
pub const MAX_REPORT_BYTES: usize = 1024 * 1024;

/// Every rule the report breaks, as (check name, message).
pub(super) fn violations(r: &Report) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    if r.summary.trim().is_empty() {
        v.push((
            "report.summary",
            "the summary is empty; it is required".to_owned(),
        ));
    }
    if r.outcome == Outcome::ProtocolError {
        v.push((
            "report.outcome",
            "outcome protocol_error is reserved for the host; use failed".to_owned(),
        ));
    }
    if r.outcome == Outcome::Satisfied {
        if !r.hard_passed {
            v.push((
                "report.satisfied",
                "outcome satisfied requires hard_passed".to_owned(),
            ));
        }
        if !r.open_issues.is_empty() {
            v.push((
                "report.satisfied",
                format!(
                    "outcome satisfied with {} open issue(s); report partial instead",
                    r.open_issues.len()
                ),
            ));
        }
        if !r.remaining_issues.is_empty() {
            v.push((
                "report.satisfied",
                format!(
                    "outcome satisfied with {} remaining issue(s); report partial instead",
                    r.remaining_issues.len()
                ),
            ));
        }
    }
    if let Some(step) = &r.next_step
        && matches!(step.action, NextAction::Descend | NextAction::Refine)
        && step
            .suggested_task
            .as_deref()
            .is_none_or(|t| t.trim().is_empty())
    {
        v.push((
            "report.next_step",
            format!(
                "next step {} needs a suggested task",
                if step.action == NextAction::Descend {
                    "descend"
                } else {
                    "refine"
                }
            ),
        ));
    }
    size_violations(r, &mut v);
    v
}

fn size_violations(r: &Report, v: &mut Vec<(&'static str, String)>) {
    let mut over = |what: &str, got: usize, max: usize, unit: &str| {
        if got > max {
            v.push((
                "report.size",
                format!("{what} is {got} {unit}, over the cap of {max}"),
            ));
        }
    };
    over("the summary", r.summary.len(), MAX_SUMMARY_BYTES, "bytes");
    over("the details", r.details.len(), MAX_DETAILS_BYTES, "bytes");
    over("open_issues", r.open_issues.len(), MAX_ISSUES, "items");
    over(
        "remaining_issues",
        r.remaining_issues.len(),
        MAX_ISSUES,
        "items",
    );
    let longest_issue = r
        .open_issues
        .iter()
        .chain(&r.remaining_issues)
        .map(String::len)
        .max()
        .unwrap_or(0);
    over("the longest issue", longest_issue, MAX_ISSUE_BYTES, "bytes");
    over("claims", r.claims.len(), MAX_CLAIMS, "items");
    over("artifacts", r.artifacts.len(), MAX_ARTIFACTS, "items");
    let task = r
        .next_step
        .as_ref()
        .and_then(|s| s.suggested_task.as_ref())
        .map_or(0, String::len);
    over(
        "the suggested task",
        task,
        guild_core::limits::MAX_DESCRIPTION_BYTES,
        "bytes",
    );
    over("the report", r.size(), MAX_REPORT_BYTES, "bytes");
}

/// The report the host returns instead of a missing or broken one: outcome `protocol_error`,
/// the problems as open issues, and the original summary (cut to fit) in the details. The
/// original claims and artifacts are dropped: the host does not vouch for them.
pub fn protocol_error_report(problems: &[String], original: Option<&Report>) -> Report {
    let first = problems
        .first()
        .map_or("the report broke the report rules", String::as_str);
    let more = match problems.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let summary = format!("protocol error: {first}{more}");
    let mut details = String::from(
        "The host replaced the specialist's report because it broke the report protocol \
         (docs/receipts-and-validation.md, \"Report rules\"):\n",
    );
    for p in problems {
        details.push_str("- ");
        details.push_str(truncate_bytes(p, MAX_ISSUE_BYTES));
        details.push('\n');
    }
    if let Some(r) = original
        && !r.summary.trim().is_empty()
    {
        details.push_str("\nThe specialist's summary was: ");
        details.push_str(truncate_bytes(&r.summary, MAX_SUMMARY_BYTES));
        details.push('\n');
    }
    Report {
        summary: truncate_bytes(&summary, MAX_SUMMARY_BYTES).to_owned(),
        outcome: Outcome::ProtocolError,
        details,
        hard_passed: false,
        open_issues: problems
            .iter()
            .take(MAX_ISSUES)
            .map(|p| truncate_bytes(p, MAX_ISSUE_BYTES).to_owned())
            .collect(),
        remaining_issues: Vec::new(),
        next_step: None,
        artifacts: Vec::new(),
        claims: Vec::new(),
    }
}

/// Wraps plain text from a specialist that produces no structured report: outcome partial
/// (the host cannot tell more), the first non-empty line as summary and the whole text as
/// details, each cut to its cap on a character boundary. Empty text yields an empty summary,
/// which validation turns into a `protocol_error` report.
pub fn report_from_plain_text(text: &str) -> Report {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    Report::partial(truncate_bytes(first.unwrap_or(""), MAX_SUMMARY_BYTES))
        .details(truncate_bytes(text, MAX_DETAILS_BYTES))
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(super) fn truncate_bytes(s: &str, max: usize) -> &str {
    guild_core::text::truncate(s, max)
}
