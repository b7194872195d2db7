//! The system prompt: the definition's `prompt.md`, then what the loop adds so any prompt works
//! the same way: the skills catalog, how tool results read, and the JSON shape of the final
//! answer (which [`crate::answer`] parses).

use std::fmt::Write as _;

use guild_sdk::SkillMeta;
use guild_sdk::agent::function_name;
use guild_sdk::tools::GrantedTool;

use crate::{delegate, skills};

/// The final answer's shape, as the model is asked for it.
pub(crate) const ANSWER_SHAPE: &str = r#"{
  "summary": "one paragraph: what was done",
  "outcome": "satisfied | partial | failed",
  "hard_passed": true,
  "details": "markdown for whoever asked",
  "open_issues": ["a problem found and not resolved"],
  "claims": [{"call_id": "the call_id of a successful tool call", "text": "what that call changed"}]
}"#;

/// The system prompt for `prompt` (the text of prompt.md) with these skills, tools and
/// specialists to delegate to.
pub(crate) fn system(
    prompt: &str,
    catalog: &[SkillMeta],
    granted: &[GrantedTool],
    delegates: &[String],
) -> String {
    let mut out = prompt.trim().to_owned();
    if !catalog.is_empty() {
        let _ = write!(
            out,
            "\n\n## Skills\n\nSkills hold instructions for particular kinds of work. Before doing \
             such work, load the skill with `{}`; read a file it lists with `{}`.\n\n",
            skills::LOAD,
            skills::READ
        );
        for skill in catalog {
            let _ = writeln!(out, "- `{}`: {}", skill.name, one_line(&skill.description));
        }
    }
    let _ = write!(
        out,
        "\n\n## Tools\n\nEvery tool result is a JSON object with the call's `call_id` and \
         `status` (`success`, `pending`, `failed` or `refused`); a change also carries the \
         `external_id` the system gave it. Use only the tools you are offered."
    );
    let gated: Vec<String> = granted
        .iter()
        .filter_map(|t| {
            let skill = t.spec.requires_skill.as_deref()?;
            Some(format!(
                "- `{}` answers only after skill `{skill}` is loaded.",
                function_name(&t.name)
            ))
        })
        .collect();
    if !gated.is_empty() {
        out.push_str("\n\n");
        out.push_str(&gated.join("\n"));
    }
    if !delegates.is_empty() {
        let _ = write!(
            out,
            "\n\n## Delegating\n\nYou may hand a task to another specialist with its \
             `{}NAME` tool; its arguments are the child's brief, and the child sees nothing but \
             that brief. The result is the child's report as the system validated it: its \
             `verdict`, the `checks` behind it and the `allowed_decisions`. Review every report \
             with `{}` before any other tool call: `revise_child` when a check failed (then \
             delegate the same brief again to continue that child), `ascend` when the report \
             does what you asked. Specialists you may delegate to: {}.",
            delegate::RUN_PREFIX,
            delegate::REVIEW,
            delegates
                .iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = write!(
        out,
        "\n\n## Final answer\n\nWhen the work is done, or cannot be done, answer without \
         calling any tool, with only this JSON object:\n\n{ANSWER_SHAPE}\n\n`outcome` is \
         `satisfied` only when every requirement of the task was checked and met (then \
         `hard_passed` is true and `open_issues` is empty). In `claims` cite only calls whose \
         result said `success`, each by its `call_id`; never claim a change that no tool \
         result confirmed."
    );
    out
}

/// The first line of `text`, trimmed.
fn one_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The one-line description of a definition: `[agent] description`, else the first line of
/// prompt.md that is not a heading, else a sentence naming the plugin.
pub(crate) fn description(name: &str, prompt: Option<&str>, configured: Option<&str>) -> String {
    if let Some(d) = configured.map(str::trim).filter(|d| !d.is_empty()) {
        return clip(d, 200);
    }
    let line = prompt
        .into_iter()
        .flat_map(str::lines)
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty());
    match line {
        Some(line) => clip(line, 200),
        None => format!("Prompt-defined specialist `{name}`."),
    }
}

/// `text` cut to at most `max` bytes at a character boundary, marked with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use guild_sdk::ToolSpec;

    #[test]
    fn the_prompt_carries_catalog_gates_and_the_answer_shape() {
        let granted = [GrantedTool {
            name: "tracker.create_issue".into(),
            spec: ToolSpec::new("create_issue", "Create").requires_skill("filing"),
        }];
        let text = system(
            "# Triage\nYou triage.",
            &[SkillMeta::new("filing", "How to file.\nMore.")],
            &granted,
            &["kb".to_owned()],
        );
        assert!(text.contains("`delegate_to__NAME`") && text.contains("to: `kb`."));
        assert!(text.starts_with("# Triage\nYou triage."));
        assert!(text.contains("- `filing`: How to file.\n"));
        assert!(text.contains("`tracker__create_issue` answers only after skill `filing`"));
        assert!(text.contains(ANSWER_SHAPE));
        let bare = system("p", &[], &[], &[]);
        assert!(!bare.contains("## Skills") && !bare.contains("answers only after"));
        assert!(!bare.contains("## Delegating"));
    }

    #[test]
    fn descriptions_come_from_settings_then_the_prompt() {
        assert_eq!(
            description("t", Some("# Bug triage\n\nx"), None),
            "Bug triage"
        );
        assert_eq!(
            description("t", Some("x"), Some(" Files bugs ")),
            "Files bugs"
        );
        assert_eq!(
            description("t", None, None),
            "Prompt-defined specialist `t`."
        );
        assert_eq!(clip("ééé", 4), "…");
        assert_eq!(clip("abcdef", 5), "ab…");
    }
}
