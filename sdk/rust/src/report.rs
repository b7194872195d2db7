//! The specialist's final [`Report`] (defined with the host in `guild-types`) converted to the
//! raw bindings at the export edge, and back (a delegated child's report, as
//! [`delegate::ChildReport`](crate::delegate::ChildReport) carries it, read as a [`Report`]).
//!
//! ```
//! use guild_sdk::{ArtifactRef, NextAction, Outcome, Report};
//! let report = Report::partial("filed 1 of 2 issues")
//!     .claim("tracker.create_issue", "12", "created issue #12")
//!     .artifact(ArtifactRef::file("notes.md", "text/markdown", b"# Notes"))
//!     .open_issue("issue 2 was refused")
//!     .next_step(NextAction::Refine, Some("file issue 2 again".into()));
//! assert_eq!(report.outcome, Outcome::Partial);
//! assert!(!report.hard_passed);
//! ```

use guild_types::{ArtifactRef, Claim, NextAction, NextStep, Outcome, Report};

use crate::bindings::specialist::guild::plugin::types as raw;

impl From<Report> for raw::Report {
    fn from(report: Report) -> Self {
        Self {
            summary: report.summary,
            outcome: outcome(report.outcome),
            details: report.details,
            hard_passed: report.hard_passed,
            open_issues: report.open_issues,
            remaining_issues: report.remaining_issues,
            next_step: report.next_step.map(next_step),
            artifacts: report.artifacts.into_iter().map(artifact).collect(),
            claims: report.claims.into_iter().map(claim).collect(),
        }
    }
}

impl From<raw::Report> for Report {
    fn from(report: raw::Report) -> Self {
        Self {
            summary: report.summary,
            outcome: match report.outcome {
                raw::Outcome::Satisfied => Outcome::Satisfied,
                raw::Outcome::Partial => Outcome::Partial,
                raw::Outcome::Failed => Outcome::Failed,
            },
            details: report.details,
            hard_passed: report.hard_passed,
            open_issues: report.open_issues,
            remaining_issues: report.remaining_issues,
            next_step: report.next_step.map(|s| NextStep {
                action: match s.action {
                    raw::NextAction::Stop => NextAction::Stop,
                    raw::NextAction::Descend => NextAction::Descend,
                    raw::NextAction::Refine => NextAction::Refine,
                    raw::NextAction::Ascend => NextAction::Ascend,
                },
                suggested_task: s.suggested_task,
            }),
            artifacts: report
                .artifacts
                .into_iter()
                .map(|a| ArtifactRef {
                    id: a.id,
                    kind: a.kind,
                    mime_type: a.mime_type,
                    sha256: a.sha256,
                    version: a.version,
                })
                .collect(),
            claims: report
                .claims
                .into_iter()
                .map(|c| Claim {
                    tool: c.tool,
                    external_id: c.external_id,
                    text: c.text,
                })
                .collect(),
        }
    }
}

/// WIT has no `protocol-error` outcome (only the host judges a report broken), so a plugin's
/// `ProtocolError` is sent as `failed`; the host then validates the report like any other.
fn outcome(outcome: Outcome) -> raw::Outcome {
    match outcome {
        Outcome::Satisfied => raw::Outcome::Satisfied,
        Outcome::Partial => raw::Outcome::Partial,
        Outcome::Failed | Outcome::ProtocolError => raw::Outcome::Failed,
    }
}

fn next_step(step: NextStep) -> raw::NextStep {
    raw::NextStep {
        action: match step.action {
            NextAction::Stop => raw::NextAction::Stop,
            NextAction::Descend => raw::NextAction::Descend,
            NextAction::Refine => raw::NextAction::Refine,
            NextAction::Ascend => raw::NextAction::Ascend,
        },
        suggested_task: step.suggested_task,
    }
}

fn artifact(a: ArtifactRef) -> raw::ArtifactRef {
    raw::ArtifactRef {
        id: a.id,
        kind: a.kind,
        mime_type: a.mime_type,
        sha256: a.sha256,
        version: a.version,
    }
}

fn claim(c: Claim) -> raw::Claim {
    raw::Claim {
        tool: c.tool,
        external_id: c.external_id,
        text: c.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protocol_error_leaves_the_plugin_as_failed() {
        let raw = raw::Report::from(Report::new(Outcome::ProtocolError, "s"));
        assert_eq!(raw.outcome, raw::Outcome::Failed);
        let raw = raw::Report::from(
            Report::partial("s")
                .artifact(ArtifactRef::new("a", "page", "text/html", "00").version("r2")),
        );
        assert_eq!(raw.outcome, raw::Outcome::Partial);
        assert_eq!(raw.artifacts[0].version.as_deref(), Some("r2"));
    }

    #[test]
    fn a_report_reads_back_the_same() {
        let report = Report::partial("filed 1 of 2")
            .claim("tracker.create_issue", "12", "created #12")
            .artifact(ArtifactRef::new("a", "page", "text/html", "00").version("r2"))
            .open_issue("issue 2 was refused")
            .next_step(NextAction::Refine, Some("file issue 2".into()));
        assert_eq!(Report::from(raw::Report::from(report.clone())), report);
    }
}
