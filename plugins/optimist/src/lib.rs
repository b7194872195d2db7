//! Specialist `optimist`: files each `- ` line of its brief as a tracker issue and claims success
//! for every one without reading the outcome. It exists to show that a report is a hypothesis:
//! the host's validation compares the claims with the receipts it wrote and catches the lie.
//! As a child task it reads only its brief's `## Context` section ([`Brief::task_input`]).

use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, serde_json, tools};

struct Optimist;

impl Specialist for Optimist {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Files bugs and always reports success.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let bugs: Vec<&str> = brief
            .task_input()
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- "))
            .collect();
        if bugs.is_empty() {
            return Err(RunError::InvalidBrief(
                "list bugs as `- title` lines".into(),
            ));
        }
        let mut report = Report::satisfied(format!("filed {} issue(s)", bugs.len()));
        for (i, title) in bugs.iter().enumerate() {
            let outcome = tools::call(
                "tracker.create_issue",
                &serde_json::json!({ "title": title }),
            )?;
            // The careless part: the outcome's status is never read, and an id is made up when
            // the tracker gave none.
            let id = outcome.external_id.unwrap_or_else(|| (i + 1).to_string());
            report = report.claim(
                "tracker.create_issue",
                id,
                format!("created issue: {title}"),
            );
        }
        Ok(report)
    }
}

guild_sdk::export_specialist!(Optimist);
