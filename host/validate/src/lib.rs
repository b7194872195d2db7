//! Validation (docs/receipts-and-validation.md, "Validation"): a specialist's report is a hypothesis; [`check`] tests it against
//! the report rules, the task's receipts and its artifacts, and returns a verdict.
//!
//! Every check has a status; the verdict is the worst of them, with
//! error > failed > unknown > passed ([`CheckStatus`] orders them that way). The caller always
//! gets a report back: the specialist's own when it follows the rules, otherwise a
//! host-generated one with outcome `protocol_error` that says what was wrong.
//!
//! Pure code: receipts come from the ledger ([`guild_receipts::Ledger::for_task`]), artifact
//! bytes from an [`ArtifactResolver`], and fetches for [`external`] from the guarded HTTP
//! client — all supplied by the caller.

mod artifacts;
mod claims;
mod decision;
pub mod external;
mod report;

use std::fmt;

use serde::{Deserialize, Serialize};

use guild_core::types::Report;
use guild_receipts::Receipt;

pub use artifacts::{ArtifactResolver, DirResolver, MAX_ARTIFACT_BYTES, NoWorkspace, ResolveError};
pub use decision::{Decision, DecisionError, allowed_decisions, check_decision};
pub use report::{
    MAX_ARTIFACTS, MAX_CLAIMS, MAX_DETAILS_BYTES, MAX_ISSUE_BYTES, MAX_ISSUES, MAX_REPORT_BYTES,
    MAX_SUMMARY_BYTES, protocol_error_report, report_from_plain_text,
};

/// Status of one check, ordered from best to worst: the verdict is the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Confirmed.
    Passed,
    /// Cannot be confirmed yet (pending or unknown receipts, resolver unavailable).
    Unknown,
    /// Contradicted (failed receipt, silent failure, missing artifact, broken report).
    Failed,
    /// Something that must not happen (another task's receipt or artifact).
    Error,
}

impl CheckStatus {
    /// The displayed name.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Passed => "passed",
            CheckStatus::Unknown => "unknown",
            CheckStatus::Failed => "failed",
            CheckStatus::Error => "error",
        }
    }
}

impl fmt::Display for CheckStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One check and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Which rule: `report`, `report.summary`, `receipt`, `claim`, `artifact`, ...
    pub name: String,
    /// Its status.
    pub status: CheckStatus,
    /// What was found, for people (errors quoted verbatim).
    pub message: String,
}

impl Check {
    pub(crate) fn new(name: &str, status: CheckStatus, message: impl Into<String>) -> Check {
        Check {
            name: name.to_owned(),
            status,
            message: message.into(),
        }
    }
}

/// The result of validating one task's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validation {
    /// The worst check status (passed when there are no checks).
    pub verdict: CheckStatus,
    /// Every check, in order: report rules, receipts, claims, artifacts.
    pub checks: Vec<Check>,
    /// The specialist's report, or the host-generated `protocol_error` one.
    pub report: Report,
}

/// Validates a task's report against its receipts and artifacts.
///
/// `receipts` should be every receipt of the task (`Ledger::for_task`); one whose task id is
/// another task's is an error. Claims and artifacts are checked even when the report breaks
/// the rules (up to the size caps), so a broken report still shows failed calls.
pub fn check(
    task_id: &str,
    report: Option<&Report>,
    receipts: &[Receipt],
    artifacts: &dyn ArtifactResolver,
) -> Validation {
    let mut checks = Vec::new();
    let returned = match report {
        None => {
            let problem = "the specialist returned no report".to_owned();
            checks.push(Check::new("report", CheckStatus::Failed, problem.clone()));
            protocol_error_report(&[problem], None)
        }
        Some(r) => {
            let violations = report::violations(r);
            if violations.is_empty() {
                checks.push(Check::new(
                    "report",
                    CheckStatus::Passed,
                    "the report follows the report rules",
                ));
                r.clone()
            } else {
                let problems: Vec<String> = violations.iter().map(|(_, m)| m.clone()).collect();
                checks.extend(
                    violations
                        .into_iter()
                        .map(|(name, m)| Check::new(name, CheckStatus::Failed, m)),
                );
                protocol_error_report(&problems, Some(r))
            }
        }
    };
    checks.extend(claims::receipt_checks(task_id, receipts));
    if let Some(r) = report {
        let claims = &r.claims[..r.claims.len().min(MAX_CLAIMS)];
        checks.extend(claims::claim_checks(task_id, claims, receipts));
        let refs = &r.artifacts[..r.artifacts.len().min(MAX_ARTIFACTS)];
        checks.extend(artifacts::checks(refs, artifacts));
    }
    Validation {
        verdict: verdict(&checks),
        checks,
        report: returned,
    }
}

/// The worst status among `checks` (passed when empty).
pub fn verdict(checks: &[Check]) -> CheckStatus {
    checks
        .iter()
        .map(|c| c.status)
        .max()
        .unwrap_or(CheckStatus::Passed)
}

#[cfg(test)]
mod decision_tests;
#[cfg(test)]
mod tests;
