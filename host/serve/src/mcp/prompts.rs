//! MCP prompts: one per specialist on the roster, so a client that shows prompts as commands
//! (Claude Code's `/mcp__guild__NAME`, an IDE's prompt picker) offers "delegate this to NAME".
//!
//! A prompt takes one required argument, `brief` (the self-contained description of the work),
//! and expands to a user message asking the model to hand it to that specialist with the `task`
//! tool and to treat the report as a hypothesis until its validation backs it
//! (docs/receipts-and-validation.md). The list follows the roster, so it changes with reloads.

use guild_host::text::one_line;
use guild_host::types::RosterEntry;
use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

/// The prompt's one argument.
const BRIEF: &str = "brief";

/// One prompt per specialist, in roster order.
pub(super) fn list(roster: &[RosterEntry]) -> Vec<Prompt> {
    roster
        .iter()
        .map(|entry| {
            Prompt::new(
                entry.name.clone(),
                Some(format!(
                    "Delegate to the {} specialist: {}",
                    entry.name,
                    one_line(&entry.description)
                )),
                Some(vec![
                    PromptArgument::new(BRIEF)
                        .with_description(
                            "What the specialist should do: one self-contained description of \
                             the objective, what done looks like, and any constraints.",
                        )
                        .with_required(true),
                ]),
            )
        })
        .collect()
}

/// The messages of prompt `name` with `arguments`; an unknown prompt or a missing, empty or
/// non-string `brief` is invalid params (-32602) naming what is wrong.
pub(super) fn get(
    roster: &[RosterEntry],
    name: &str,
    arguments: Option<&Map<String, Value>>,
) -> Result<GetPromptResult, ErrorData> {
    if !roster.iter().any(|e| e.name == name) {
        let known: Vec<&str> = roster.iter().map(|e| e.name.as_str()).collect();
        return Err(ErrorData::invalid_params(
            format!(
                "unknown prompt {:?}; prompts: {}",
                one_line(name),
                known.join(", ")
            ),
            None,
        ));
    }
    let brief = match arguments.and_then(|a| a.get(BRIEF)) {
        Some(Value::String(text)) if !text.trim().is_empty() => text,
        Some(Value::String(_)) | None => {
            return Err(ErrorData::invalid_params(
                format!(
                    "prompt {name:?} needs the argument `{BRIEF}`: what the specialist should do"
                ),
                None,
            ));
        }
        Some(other) => {
            return Err(ErrorData::invalid_params(
                format!("prompt {name:?}: `{BRIEF}` must be a string, not {other}"),
                None,
            ));
        }
    };
    let text = format!(
        "Delegate this to Guild's `{name}` specialist with the `task` tool \
         (subagent_type \"{name}\"), passing the brief below as its description. When the \
         report comes back, rely only on what its validation backs (claims checked against \
         receipts) and say what it does not.\n\nBrief:\n{brief}"
    );
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(format!("Delegate to the {name} specialist")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster() -> Vec<RosterEntry> {
        vec![RosterEntry {
            name: "triage".into(),
            version: "1.0.0".into(),
            description: "Sorts incoming issues\u{1b}[31m".into(),
            aliases: vec![],
        }]
    }

    #[test]
    fn one_prompt_per_specialist_with_a_required_brief_and_escaped_text() {
        let prompts = list(&roster());
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0].name, "triage");
        let description = prompts[0].description.as_deref().expect("description");
        assert!(!description.contains('\u{1b}'), "{description}");
        let args = prompts[0].arguments.as_ref().expect("arguments");
        assert_eq!(args[0].name, BRIEF);
        assert_eq!(args[0].required, Some(true));
    }

    #[test]
    fn get_expands_the_brief_and_refuses_what_is_missing_or_unknown() {
        let mut arguments = Map::new();
        arguments.insert(BRIEF.into(), Value::String("Sort issue 42".into()));
        let result = get(&roster(), "triage", Some(&arguments)).expect("expands");
        let text = serde_json::to_string(&result.messages).expect("json");
        assert!(
            text.contains("Sort issue 42") && text.contains("subagent_type"),
            "{text}"
        );

        let refusals = [
            ("nobody", Some(arguments.clone()), "unknown prompt"),
            ("triage", None, "needs the argument"),
            ("triage", Some(Map::new()), "needs the argument"),
        ];
        for (name, args, want) in refusals {
            let e = get(&roster(), name, args.as_ref()).expect_err("refused");
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains(want), "{}", e.message);
        }
        let mut wrong = Map::new();
        wrong.insert(BRIEF.into(), Value::from(7));
        let e = get(&roster(), "triage", Some(&wrong)).expect_err("not a string");
        assert!(e.message.contains("must be a string"), "{}", e.message);
    }
}
