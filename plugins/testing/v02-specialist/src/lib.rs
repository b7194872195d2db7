//! Test specialist `v02-specialist`, built against the frozen `guild:plugin@0.2.0`
//! (`wit/frozen/guild-plugin@0.2.0/`) with plain wit-bindgen, as a plugin written before `llm`
//! and `definition` would be. It sends one progress report, reads config `greeting`, calls the
//! tool its brief names (`tool` line 1, JSON input line 2) and reports what it saw in
//! `details`, one `key: value` per line.

// wit-bindgen's generated glue is unsafe by nature; the plugin's own code is not.
#[allow(unsafe_code)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../../wit/frozen/guild-plugin@0.2.0",
        world: "specialist",
    });
}

use bindings::exports::guild::plugin::specialist_api::Guest;
use bindings::guild::plugin::types::{
    Brief, CallStatus, Claim, HostError, Outcome, ProgressError, Report, RunError, SpecialistInfo,
};
use bindings::guild::plugin::{config, progress, tools};

struct V02;

fn host_error(e: HostError) -> String {
    match e {
        HostError::Denied(t) => format!("denied: {t}"),
        HostError::InvalidInput(t) => format!("invalid-input: {t}"),
        HostError::LimitExceeded(t) => format!("limit-exceeded: {t}"),
        HostError::Failed(t) => format!("failed: {t}"),
    }
}

impl Guest for V02 {
    fn describe() -> SpecialistInfo {
        SpecialistInfo {
            description: "Test specialist built against guild:plugin@0.2.0.".to_owned(),
        }
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let mut lines = brief.description.lines();
        let tool = lines.next().unwrap_or_default().trim().to_owned();
        let input = lines.next().unwrap_or("{}").trim().to_owned();
        if tool.is_empty() {
            return Err(RunError::InvalidBrief(
                "line 1 must name a tool, `connector.tool`".to_owned(),
            ));
        }
        let sent = match progress::send(&format!("calling {tool}")) {
            Ok(_) => "sent".to_owned(),
            Err(ProgressError::ParentGone) => "parent-gone".to_owned(),
            Err(ProgressError::Denied(t) | ProgressError::LimitExceeded(t)) => t,
        };
        let greeting = config::get("greeting").unwrap_or_else(host_error);
        let mut details = format!("progress: {sent}\ngreeting: {greeting}\n");
        let mut claims = Vec::new();
        let outcome = match tools::call(&tool, &input, None) {
            Ok(o) => {
                let status = match &o.status {
                    CallStatus::Success => "success".to_owned(),
                    CallStatus::Pending => "pending".to_owned(),
                    CallStatus::Failed(e) => format!("failed: {e}"),
                };
                details.push_str(&format!(
                    "status: {status}\nexternal_id: {}\n",
                    o.external_id.as_deref().unwrap_or("-"),
                ));
                if let (CallStatus::Success, Some(id)) = (&o.status, o.external_id.clone()) {
                    claims.push(Claim {
                        tool: tool.clone(),
                        external_id: Some(id.clone()),
                        text: format!("created {id}"),
                    });
                    Outcome::Satisfied
                } else {
                    Outcome::Failed
                }
            }
            Err(e) => {
                details.push_str(&format!("host-error: {}\n", host_error(e)));
                Outcome::Failed
            }
        };
        Ok(Report {
            summary: format!("called {tool}"),
            outcome,
            details,
            hard_passed: outcome == Outcome::Satisfied,
            open_issues: Vec::new(),
            remaining_issues: Vec::new(),
            next_step: None,
            artifacts: Vec::new(),
            claims,
        })
    }
}

#[allow(unsafe_code)]
const _: () = {
    bindings::export!(V02 with_types_in bindings);
};
