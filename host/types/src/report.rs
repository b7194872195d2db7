//! A specialist's final [`Report`], its builder, and the host's size measure for output caps.

use serde::{Deserialize, Serialize};

use crate::artifact::{ArtifactRef, Claim};

/// How a specialist judges its own work: a hypothesis until the host validates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Everything the brief asked for was done.
    Satisfied,
    /// Some of it was done.
    Partial,
    /// None of it was done.
    Failed,
    /// The specialist broke the report protocol (no report, or one that breaks the rules). Only
    /// the host produces this: WIT has no such case, so a plugin's report that says it arrives
    /// at the host as [`Outcome::Failed`].
    ProtocolError,
}

/// What the specialist suggests the orchestrator do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NextAction {
    /// Nothing more to do.
    Stop,
    /// Break the work down further: a suggested task is required.
    Descend,
    /// Redo part of it more narrowly: a suggested task is required.
    Refine,
    /// Hand back up to the parent.
    Ascend,
}

/// A next-step suggestion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NextStep {
    /// What to do.
    pub action: NextAction,
    /// The brief of the suggested task (required for descend and refine).
    pub suggested_task: Option<String>,
}

/// The specialist's final report. The host validates it against receipts and hashes: it is a
/// hypothesis, not the truth.
///
/// ```
/// use guild_types::Report;
/// let report = Report::satisfied("filed 1 issue")
///     .details("- #12 crash on start")
///     .claim("tracker.create_issue", "12", "created issue #12")
///     .open_issue("the crash log was truncated");
/// assert_eq!(report.claims.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// One paragraph: what was done.
    pub summary: String,
    /// How the specialist judges its own work.
    pub outcome: Outcome,
    /// Markdown details for the caller.
    pub details: String,
    /// True when every hard requirement of the brief was checked and met.
    pub hard_passed: bool,
    /// Problems found in this task and not resolved.
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

    /// Approximate size in bytes (the text of every field), which the host holds against its
    /// output caps.
    pub fn size(&self) -> usize {
        let strings = |v: &[String]| v.iter().map(String::len).sum::<usize>();
        let optional = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        self.summary.len()
            + self.details.len()
            + strings(&self.open_issues)
            + strings(&self.remaining_issues)
            + self
                .next_step
                .as_ref()
                .map_or(0, |n| optional(&n.suggested_task))
            + self
                .artifacts
                .iter()
                .map(|a| a.id.len() + a.kind.len() + a.mime_type.len() + a.sha256.len())
                .sum::<usize>()
            + self
                .claims
                .iter()
                .map(|c| c.tool.len() + c.text.len() + optional(&c.external_id))
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_passed_starts_true_only_for_satisfied() {
        assert!(Report::satisfied("s").hard_passed);
        assert!(!Report::partial("s").hard_passed);
        assert!(!Report::failed("s").hard_passed);
        assert!(!Report::satisfied("s").hard_passed(false).hard_passed);
    }

    #[test]
    fn size_counts_the_text_of_every_field() {
        let report = Report::partial("12345")
            .details("123")
            .open_issue("1")
            .remaining_issue("12")
            .next_step(NextAction::Refine, Some("1234".into()))
            .artifact(ArtifactRef::new("a", "file", "t/p", "ab"))
            .claim("x.y", "7", "done")
            .claim_without_id("x.z", "d");
        // 5 + 3 + 1 + 2 + 4 + (1 + 4 + 3 + 2) + (3 + 1 + 4) + (3 + 1)
        assert_eq!(report.size(), 37);
    }

    #[test]
    fn the_wire_form_is_snake_case_and_round_trips() -> Result<(), serde_json::Error> {
        let report = Report::new(Outcome::ProtocolError, "broke the rules")
            .next_step(NextAction::Ascend, None)
            .artifact(ArtifactRef::new("a", "page", "text/html", "00").version("r2"));
        let json = serde_json::to_value(&report)?;
        assert_eq!(json["outcome"], "protocol_error");
        assert_eq!(json["next_step"]["action"], "ascend");
        assert_eq!(json["artifacts"][0]["version"], "r2");
        assert_eq!(serde_json::from_value::<Report>(json)?, report);
        Ok(())
    }
}
