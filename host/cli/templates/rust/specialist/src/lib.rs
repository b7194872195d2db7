//! Specialist `{{name}}`: sends its brief to the `{{tool}}` tool and reports what came back.
//! When the tool reports an external id (a mutating tool's note, issue, message ...), the report
//! claims that effect; the host checks every claim against the call's receipt.

use guild_sdk::serde_json::json;
use guild_sdk::{Brief, Report, RunError, Specialist, ToolOutcome, progress, tools};

/// The tool this specialist calls: requested in plugin.toml, granted in guild.toml.
const TOOL: &str = "{{tool}}";

struct Plugin;

impl Specialist for Plugin {
    const DESCRIPTION: &'static str = "Sends its brief to {{tool}} and reports the answer.";

    fn run(brief: Brief) -> Result<Report, RunError> {
        let text = brief.description.trim();
        if text.is_empty() {
            let why = format!("the brief is empty: say what to send to {TOOL}");
            return Err(RunError::InvalidBrief(why));
        }
        // Seen by whoever started the task while it runs (plugin.toml: report = true).
        progress::send(format!("calling {TOOL}")).map_err(|e| RunError::Failed(e.to_string()))?;
        // Every fact of the call; a refusal by the host (denied, ...) ends the task with its text.
        let outcome = tools::call_outcome(TOOL, &json!({ "text": text }))?;
        Ok(report(&outcome))
    }
}

/// The report on what the tool answered, claiming the effect it reported an id for.
fn report(outcome: &ToolOutcome) -> Report {
    if let Some(error) = outcome.error() {
        let failed = Report::failed(format!("{TOOL} failed")).details(error);
        return failed.open_issue(format!("{TOOL} failed: {error}"));
    }
    let report = Report::satisfied(format!("{TOOL} answered")).details(outcome.output.clone());
    match &outcome.external_id {
        Some(id) => report.claim(TOOL, id, format!("{TOOL} recorded the brief as {id}")),
        None => report,
    }
}

guild_sdk::export_specialist!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_names_the_tool() {
        assert!(Plugin::describe().description.contains(TOOL));
    }

    #[test]
    fn an_external_id_is_claimed_and_a_failure_fails_the_report() {
        let saved = report(&ToolOutcome::success(json!({"id": "n1"})).external_id("n1"));
        assert_eq!(saved.claims.len(), 1);
        assert_eq!(saved.claims[0].external_id.as_deref(), Some("n1"));
        assert!(report(&ToolOutcome::success(json!({}))).claims.is_empty());
        let failed = report(&ToolOutcome::failed("no such thing"));
        assert!(failed.open_issues[0].ends_with("failed: no such thing"));
    }
}
