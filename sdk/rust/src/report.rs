//! The specialist's final [`Report`] and its builder.

use crate::bindings::specialist::guild::plugin::types as raw;
use crate::types::{ArtifactRef, Claim, Outcome};

/// What the specialist suggests the orchestrator do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextAction {
    /// Nothing more to do.
    Stop,
    /// Break the work down further (needs a suggested task).
    Descend,
    /// Redo part of it more narrowly (needs a suggested task).
    Refine,
    /// Hand back to the parent.
    Ascend,
}

/// A next-step suggestion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextStep {
    /// What to do.
    pub action: NextAction,
    /// The brief of the suggested task.
    pub suggested_task: Option<String>,
}

/// The specialist's final report. The host validates it against receipts and hashes: it is a
/// hypothesis, not the truth.
///
/// ```
/// use guild_sdk::Report;
/// let report = Report::satisfied("filed 1 issue")
///     .details("- #12 crash on start")
///     .claim("tracker.create_issue", "12", "created issue #12")
///     .open_issue("the crash log was truncated");
/// assert_eq!(report.claims.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// One paragraph: what was done.
    pub summary: String,
    /// How the specialist judges its own work.
    pub outcome: Outcome,
    /// Markdown details for the caller.
    pub details: String,
    /// True when every hard requirement of the brief was checked and met.
    pub hard_passed: bool,
    /// Problems found and not resolved.
    pub open_issues: Vec<String>,
    /// Problems known to remain beyond this task's scope.
    pub remaining_issues: Vec<String>,
    /// Suggested next step for the orchestrator.
    pub next_step: Option<NextStep>,
    /// Files or documents produced.
    pub artifacts: Vec<ArtifactRef>,
    /// External effects claimed.
    pub claims: Vec<Claim>,
}

impl Report {
    /// A report with the given outcome. `hard_passed` starts true only for
    /// [`Outcome::Satisfied`]; override it with [`Report::hard_passed`].
    pub fn new(outcome: Outcome, summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            outcome,
            details: String::new(),
            hard_passed: outcome == Outcome::Satisfied,
            open_issues: Vec::new(),
            remaining_issues: Vec::new(),
            next_step: None,
            artifacts: Vec::new(),
            claims: Vec::new(),
        }
    }

    /// Everything the brief asked for was done.
    pub fn satisfied(summary: impl Into<String>) -> Self {
        Self::new(Outcome::Satisfied, summary)
    }

    /// Some of the work was done.
    pub fn partial(summary: impl Into<String>) -> Self {
        Self::new(Outcome::Partial, summary)
    }

    /// The work was not done.
    pub fn failed(summary: impl Into<String>) -> Self {
        Self::new(Outcome::Failed, summary)
    }

    /// Sets the markdown details.
    pub fn details(mut self, markdown: impl Into<String>) -> Self {
        self.details = markdown.into();
        self
    }

    /// Sets whether every hard requirement was checked and met.
    pub fn hard_passed(mut self, passed: bool) -> Self {
        self.hard_passed = passed;
        self
    }

    /// Adds an artifact.
    pub fn artifact(mut self, artifact: ArtifactRef) -> Self {
        self.artifacts.push(artifact);
        self
    }

    /// Adds a claim of an external effect with the external id the tool returned.
    pub fn claim(
        mut self,
        tool: impl Into<String>,
        external_id: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        self.claims.push(Claim {
            tool: tool.into(),
            external_id: Some(external_id.into()),
            text: text.into(),
        });
        self
    }

    /// Adds a claim for a tool that returned no external id.
    pub fn claim_without_id(mut self, tool: impl Into<String>, text: impl Into<String>) -> Self {
        self.claims.push(Claim {
            tool: tool.into(),
            external_id: None,
            text: text.into(),
        });
        self
    }

    /// Adds a problem found and not resolved.
    pub fn open_issue(mut self, text: impl Into<String>) -> Self {
        self.open_issues.push(text.into());
        self
    }

    /// Adds a problem that remains beyond this task's scope.
    pub fn remaining_issue(mut self, text: impl Into<String>) -> Self {
        self.remaining_issues.push(text.into());
        self
    }

    /// Suggests a next step; descend and refine need a suggested task.
    pub fn next_step(mut self, action: NextAction, suggested_task: Option<String>) -> Self {
        self.next_step = Some(NextStep {
            action,
            suggested_task,
        });
        self
    }

    pub(crate) fn into_raw(self) -> raw::Report {
        raw::Report {
            summary: self.summary,
            outcome: self.outcome.into_raw(),
            details: self.details,
            hard_passed: self.hard_passed,
            open_issues: self.open_issues,
            remaining_issues: self.remaining_issues,
            next_step: self.next_step.map(|n| raw::NextStep {
                action: match n.action {
                    NextAction::Stop => raw::NextAction::Stop,
                    NextAction::Descend => raw::NextAction::Descend,
                    NextAction::Refine => raw::NextAction::Refine,
                    NextAction::Ascend => raw::NextAction::Ascend,
                },
                suggested_task: n.suggested_task,
            }),
            artifacts: self
                .artifacts
                .into_iter()
                .map(ArtifactRef::into_raw)
                .collect(),
            claims: self.claims.into_iter().map(Claim::into_raw).collect(),
        }
    }
}
