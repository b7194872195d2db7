//! What the loop needs from the host, as a trait, so the whole run is tested natively against a
//! scripted environment; [`HostEnv`] is the host's, through the SDK.

use guild_sdk::agent::CallRecord;
use guild_sdk::delegate::{ChildReport, DelegateError, ReviewEffect, TaskBrief, TaskReview};
use guild_sdk::tools::GrantedTool;
use guild_sdk::{HostError, SkillMeta, ToolOutcome};

/// The host as the loop sees it (besides the model).
pub(crate) trait Env {
    /// The model aliases granted to this plugin.
    fn models(&mut self) -> Vec<String>;
    /// The connector tools granted to this plugin.
    fn granted(&mut self) -> Vec<GrantedTool>;
    /// The skills catalog.
    fn catalog(&mut self) -> Vec<SkillMeta>;
    /// One skill's body.
    fn load_skill(&mut self, name: &str) -> Result<String, HostError>;
    /// One resource file of a skill.
    fn read_skill(&mut self, name: &str, path: &str) -> Result<Vec<u8>, HostError>;
    /// Calls `connector.tool`.
    fn call_tool(&mut self, name: &str, input: &str) -> Result<ToolOutcome, HostError>;
    /// Sends a progress report; whether it arrived changes nothing about the run.
    fn progress(&mut self, text: &str);
    /// The specialists this plugin may delegate to (requested and granted; empty without).
    fn delegates(&mut self) -> Vec<String>;
    /// Runs one child task to its validated report.
    fn delegate(&mut self, brief: TaskBrief) -> Result<ChildReport, DelegateError>;
    /// Reviews the report of child `child_id`.
    fn review(&mut self, child_id: &str, review: TaskReview)
    -> Result<ReviewEffect, DelegateError>;
}

/// The host, through the SDK.
pub(crate) struct HostEnv;

impl Env for HostEnv {
    fn models(&mut self) -> Vec<String> {
        guild_sdk::llm::models()
    }

    fn granted(&mut self) -> Vec<GrantedTool> {
        guild_sdk::tools::granted()
    }

    fn catalog(&mut self) -> Vec<SkillMeta> {
        guild_sdk::skills::catalog()
    }

    fn load_skill(&mut self, name: &str) -> Result<String, HostError> {
        guild_sdk::skills::load(name)
    }

    fn read_skill(&mut self, name: &str, path: &str) -> Result<Vec<u8>, HostError> {
        guild_sdk::skills::read(name, path)
    }

    fn call_tool(&mut self, name: &str, input: &str) -> Result<ToolOutcome, HostError> {
        // Through the SDK's loop tools: the model chose this call, so its refusal names no
        // line of this file (`tools::call_raw` would).
        guild_sdk::agent::Tools::call(&mut guild_sdk::agent::HostTools, name, input)
    }

    fn progress(&mut self, text: &str) {
        // Not granted, or nobody listening: the run goes on either way.
        let _ = guild_sdk::progress::send(text);
    }

    fn delegates(&mut self) -> Vec<String> {
        guild_sdk::delegate::specialists()
    }

    fn delegate(&mut self, brief: TaskBrief) -> Result<ChildReport, DelegateError> {
        guild_sdk::delegate::run(&brief)
    }

    fn review(
        &mut self,
        child_id: &str,
        review: TaskReview,
    ) -> Result<ReviewEffect, DelegateError> {
        guild_sdk::delegate::review(child_id, &review)
    }
}

/// One line of progress about the `number`th connector call.
pub(crate) fn call_progress(number: usize, record: &CallRecord) -> String {
    let result = match &record.outcome {
        Ok(outcome) if outcome.is_success() => match &outcome.external_id {
            Some(id) => format!("succeeded ({id})"),
            None => "succeeded".to_owned(),
        },
        Ok(outcome) => match outcome.error() {
            Some(error) => format!("failed: {error}"),
            None => "pending".to_owned(),
        },
        Err(err) => format!("refused: {err}"),
    };
    format!("call {number}: {} {result}", record.tool)
}
