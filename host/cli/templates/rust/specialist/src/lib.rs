//! Specialist `{{name}}`: sends its brief to the `{{tool}}` tool and reports what came back.

use guild_sdk::serde_json::{Value, json};
use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, log, tools};

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
        let outcome = tools::call(TOOL, &input)
            .map_err(|e| RunError::Failed(format!("{TOOL} was refused ({}): {}", e.kind(), e.message())))?;
        if let Some(error) = outcome.error() {
            return Ok(Report::failed(format!("{TOOL} failed"))
                .details(error.to_owned())
                .open_issue(format!("{TOOL} failed: {error}")));
        }
        Ok(Report::satisfied(format!("{TOOL} answered")).details(outcome.output))
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

guild_sdk::export_specialist!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_brief_becomes_the_tool_input_and_an_empty_one_is_refused() {
        assert_eq!(tool_input(" hi ").ok(), Some(json!({"text": "hi"})));
        assert!(matches!(tool_input("  "), Err(RunError::InvalidBrief(_))));
    }
}
