//! Specialist `{{name}}`: sends its brief to the `{{tool}}` tool and reports what came back.
//! When the tool reports an external id (a mutating tool's note, issue, message ...), the report
//! claims that effect; the host checks every claim against the call's receipt.

use guild_sdk::serde_json::{Value, json};
use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, ToolOutcome, log, tools};

/// The tool this specialist calls: requested in plugin.toml, granted in guild.toml.
const TOOL: &str = "{{tool}}";

struct Plugin;

impl Specialist for Plugin {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Sends its brief to {{tool}} and reports the answer.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let input = tool_input(&brief.description)?;
        log::info(format!("calling {TOOL}"));
        let outcome = tools::call_outcome(TOOL, &input).map_err(|e| {
            RunError::Failed(format!(
                "{TOOL} was refused ({}): {}",
                e.kind(),
                e.message()
            ))
        })?;
        Ok(report(&outcome))
    }
}

/// The tool's input for a brief: `{"text": brief}`; an empty brief is refused.
fn tool_input(brief: &str) -> Result<Value, RunError> {
    let text = brief.trim();
    if text.is_empty() {
        return Err(RunError::InvalidBrief(format!(
            "the brief is empty: say what to send to {TOOL}"
        )));
    }
    Ok(json!({ "text": text }))
}

/// The report on what the tool answered, claiming the effect it reported an id for.
fn report(outcome: &ToolOutcome) -> Report {
    if let Some(error) = outcome.error() {
        return Report::failed(format!("{TOOL} failed"))
            .details(error.to_owned())
            .open_issue(format!("{TOOL} failed: {error}"));
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
    fn the_brief_becomes_the_tool_input_and_an_empty_one_is_refused() {
        assert_eq!(tool_input(" hi ").ok(), Some(json!({"text": "hi"})));
        assert!(matches!(tool_input("  "), Err(RunError::InvalidBrief(_))));
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
