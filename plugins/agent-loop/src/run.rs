//! One run of a prompt-defined specialist: the system prompt from its definition, every granted
//! tool and the skill tools offered to the model, the tool-calling loop within the step limit,
//! and a report at every ending (an answer in the asked-for shape, one that is not, the step
//! limit, a failed model call).

use guild_sdk::agent::{CallRecord, Ending, ToolLoop, Tools};
use guild_sdk::llm::{LlmError, Message, Model};
use guild_sdk::{Brief, HostError, Outcome, Report, RunError, ToolOutcome};
use serde_json::Value;

use crate::answer;
use crate::delegate::{self, Delegations};
use crate::env::{Env, call_progress};
use crate::prompt;
use crate::settings::Settings;
use crate::skills::{self, Loaded};

/// What the plugin's folder defines (the WIT `definition` interface).
pub(crate) struct Definition {
    /// `[plugin] name`.
    pub(crate) name: String,
    /// prompt.md, if there is one.
    pub(crate) prompt: Option<String>,
    /// The `[agent]` table.
    pub(crate) settings: Value,
}

/// Times the model is asked again when its final answer is not the JSON shape.
const REASKS: u32 = 1;

/// Runs `brief` for `definition`. An unusable definition or brief is a [`RunError`]; anything
/// that goes wrong once the model is working ends in a report that says what happened.
pub(crate) fn run(
    brief: &Brief,
    definition: &Definition,
    env: &mut dyn Env,
    model: &mut dyn Model,
) -> Result<Report, RunError> {
    let settings = Settings::parse(definition.settings.clone()).map_err(RunError::Failed)?;
    let prompt = definition
        .prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| {
            RunError::Failed(format!(
                "plugin `{}` has no prompt.md (or it is empty): a prompt-defined specialist is \
                 its prompt",
                definition.name
            ))
        })?;
    if brief.description.trim().is_empty() {
        return Err(RunError::InvalidBrief("the brief is empty".to_owned()));
    }
    let alias = match settings.model.clone() {
        Some(alias) => alias,
        None => env.models().into_iter().next().ok_or_else(|| {
            RunError::Failed(
                "no model alias is granted to this plugin: the operator grants one in \
                 `[grants.NAME.llm] models` of guild.toml"
                    .to_owned(),
            )
        })?,
    };
    let catalog = env.catalog();
    let granted = env.granted();
    let delegates = env.delegates();
    let mut chat = ToolLoop::new(alias.as_str())
        .system(prompt::system(prompt, &catalog, &granted, &delegates))
        .user(brief.description.clone())
        .max_steps(settings.max_steps);
    if let Some(t) = settings.temperature {
        chat = chat.temperature(t);
    }
    if let Some(n) = settings.max_tokens {
        chat = chat.max_tokens(n);
    }
    chat = granted.iter().fold(chat, |c, t| c.offer_connector(t));
    if !catalog.is_empty() {
        chat = skills::definitions(&catalog)
            .into_iter()
            .fold(chat, ToolLoop::offer_local);
    }
    chat = delegate::definitions(&delegates)
        .into_iter()
        .fold(chat, ToolLoop::offer_local);
    env.progress(&format!(
        "working on model `{alias}` with {} tool(s), {} skill(s) and {} specialist(s) to \
         delegate to, at most {} steps",
        granted.len(),
        catalog.len(),
        delegates.len(),
        settings.max_steps
    ));
    let mut tools = AgentTools {
        env,
        loaded: Loaded::default(),
        delegations: Delegations::new(delegates),
        calls: 0,
    };
    let report = converse(&mut chat, model, &mut tools);
    let loaded: Vec<&str> = tools.loaded.names().collect();
    let mut report = report;
    if !loaded.is_empty() {
        report
            .details
            .push_str(&format!("\n\nSkills loaded: {}.", loaded.join(", ")));
    }
    report
        .details
        .push_str(&delegate::children_table(tools.delegations.children()));
    tools.env.progress(&format!(
        "finished after {} step(s): {}",
        chat.steps(),
        outcome_word(report.outcome)
    ));
    Ok(report)
}

fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Satisfied => "satisfied",
        Outcome::Partial => "partial",
        Outcome::Failed => "failed",
        Outcome::ProtocolError => "protocol error",
    }
}

/// Runs the loop to a report, asking again (within the step limit) when the final answer is
/// not the JSON shape.
fn converse(chat: &mut ToolLoop, model: &mut dyn Model, tools: &mut AgentTools<'_>) -> Report {
    let mut reasks = 0;
    loop {
        let text = match chat.run(model, tools) {
            Ending::Answered(text) => text,
            Ending::StepLimit => {
                return answer::fallback(
                    &format!(
                        "Stopped at the step limit ({} steps) before the work was finished.",
                        chat.steps()
                    ),
                    "the step limit was reached; raise `[agent] max_steps` or narrow the brief",
                    None,
                    chat.calls(),
                );
            }
            Ending::ModelError(err) => return model_failed(&err, chat.calls()),
        };
        match answer::parse(&text) {
            Ok(parsed) => return answer::report(parsed, chat.calls()),
            Err(why) if reasks < REASKS && chat.steps_left() > 0 => {
                reasks += 1;
                chat.push(Message::user(format!(
                    "Your last answer is not the final JSON object ({why}). Answer again with \
                     only that JSON object:\n\n{}",
                    prompt::ANSWER_SHAPE
                )));
            }
            Err(why) => {
                return answer::fallback(
                    "The model's final answer was not the report shape asked for; its text is \
                     in the details.",
                    &format!("the final answer could not be read as a report: {why}"),
                    Some(&text),
                    chat.calls(),
                );
            }
        }
    }
}

/// The report when a completion failed: what failed, and the changes made before it.
fn model_failed(err: &LlmError, calls: &[CallRecord]) -> Report {
    let summary = match err {
        LlmError::BudgetExceeded { .. } => "Stopped: the model's token budget is spent.",
        LlmError::Timeout(_) => "Stopped: the task's time ran out while waiting for the model.",
        LlmError::Denied(_) | LlmError::ModelNotGranted(_) => {
            "Stopped: the model is not granted to this specialist."
        }
        _ => "Stopped: a model call failed.",
    };
    answer::fallback(summary, &format!("model call failed: {err}"), None, calls)
}

/// The loop's tools: connector calls through the host with a progress report each, the skill
/// tools and the delegation tools.
struct AgentTools<'e> {
    env: &'e mut dyn Env,
    loaded: Loaded,
    delegations: Delegations,
    calls: usize,
}

impl Tools for AgentTools<'_> {
    fn call(&mut self, name: &str, input: &str) -> Result<ToolOutcome, HostError> {
        self.env.call_tool(name, input)
    }

    fn local(&mut self, name: &str, arguments: &Value) -> String {
        if self.delegations.owns(name) {
            return self.delegations.call(self.env, name, arguments);
        }
        self.loaded.call(self.env, name, arguments)
    }

    fn after_call(&mut self, record: &CallRecord) {
        self.calls += 1;
        let line = call_progress(self.calls, record);
        self.env.progress(&line);
    }
}

#[cfg(test)]
mod tests;
