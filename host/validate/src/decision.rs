//! Review decisions (docs/receipts-and-validation.md, "Review decisions"): what a recursive orchestrator may do with a child's result,
//! given the validation verdict and the report's outcome.
//!
//! | verdict / outcome            | allowed                                                        |
//! |------------------------------|----------------------------------------------------------------|
//! | passed                       | all seven                                                      |
//! | failed, unknown              | revise_child, replan_current, fail                             |
//! | error                        | revise_child, fail                                             |
//! | outcome failed/protocol_error | revise_child, fail (whatever the verdict)                     |

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::CheckStatus;
use guild_core::types::Outcome;

/// What the orchestrator decides to do with a child's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Accept the child's refinement.
    AcceptRefine,
    /// Reject the child's refinement and keep the current plan.
    RejectRefine,
    /// Send the child back with corrections.
    ReviseChild,
    /// Break the work down again.
    DescendAgain,
    /// Hand the result up to the parent.
    Ascend,
    /// Re-plan the current level.
    ReplanCurrent,
    /// Give up on this branch.
    Fail,
}

const ALL: &[Decision] = &[
    Decision::AcceptRefine,
    Decision::RejectRefine,
    Decision::ReviseChild,
    Decision::DescendAgain,
    Decision::Ascend,
    Decision::ReplanCurrent,
    Decision::Fail,
];

const ON_PASSED: &[Decision] = ALL;
const ON_FAILED_OR_UNKNOWN: &[Decision] = &[
    Decision::ReviseChild,
    Decision::ReplanCurrent,
    Decision::Fail,
];
const ONLY_REVISE_OR_FAIL: &[Decision] = &[Decision::ReviseChild, Decision::Fail];

impl Decision {
    /// The wire name (`accept_refine`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::AcceptRefine => "accept_refine",
            Decision::RejectRefine => "reject_refine",
            Decision::ReviseChild => "revise_child",
            Decision::DescendAgain => "descend_again",
            Decision::Ascend => "ascend",
            Decision::ReplanCurrent => "replan_current",
            Decision::Fail => "fail",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Decision {
    type Err = String;

    fn from_str(s: &str) -> Result<Decision, String> {
        ALL.iter()
            .copied()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| format!("unknown decision {s:?}; expected one of {}", names(ALL)))
    }
}

/// A decision the matrix does not allow.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error(
    "decision {decision} is not allowed when the verdict is {verdict} and the report outcome is \
     {}; allowed: {}",
    outcome_name(*outcome),
    names(allowed)
)]
pub struct DecisionError {
    /// What was asked.
    pub decision: Decision,
    /// The verdict.
    pub verdict: CheckStatus,
    /// The report's outcome.
    pub outcome: Outcome,
    /// What would have been accepted.
    pub allowed: Vec<Decision>,
}

/// The decisions allowed for a verdict and report outcome.
pub fn allowed_decisions(verdict: CheckStatus, outcome: Outcome) -> &'static [Decision] {
    if matches!(outcome, Outcome::Failed | Outcome::ProtocolError) {
        return ONLY_REVISE_OR_FAIL;
    }
    match verdict {
        CheckStatus::Passed => ON_PASSED,
        CheckStatus::Failed | CheckStatus::Unknown => ON_FAILED_OR_UNKNOWN,
        CheckStatus::Error => ONLY_REVISE_OR_FAIL,
    }
}

/// Accepts `decision` if the matrix allows it, or says what is allowed.
pub fn check_decision(
    verdict: CheckStatus,
    outcome: Outcome,
    decision: Decision,
) -> Result<(), DecisionError> {
    let allowed = allowed_decisions(verdict, outcome);
    if allowed.contains(&decision) {
        Ok(())
    } else {
        Err(DecisionError {
            decision,
            verdict,
            outcome,
            allowed: allowed.to_vec(),
        })
    }
}

fn names(ds: &[Decision]) -> String {
    ds.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", ")
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Satisfied => "satisfied",
        Outcome::Partial => "partial",
        Outcome::Failed => "failed",
        Outcome::ProtocolError => "protocol_error",
    }
}
