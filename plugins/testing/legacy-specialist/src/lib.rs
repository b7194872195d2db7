//! Test specialist `legacy-specialist`, built against the frozen `guild:plugin@0.1.0`
//! (`wit/frozen/guild-plugin@0.1.0/`) with plain wit-bindgen, as a plugin written for the first
//! host would be. It exports 0.1.0's bare `describe` and `run`, sends one progress report through
//! 0.1.0's `report` interface, calls the tool its brief names (`tool` line 1, JSON input line 2)
//! through 0.1.0's `tools`, and reports what it saw in `details`, one `key: value` per line.

// wit-bindgen's generated glue is unsafe by nature; the plugin's own code is not.
#[allow(unsafe_code)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../../wit/frozen/guild-plugin@0.1.0",
        world: "specialist",
    });
}

use bindings::guild::plugin::report;
use bindings::guild::plugin::tools;
use bindings::guild::plugin::types::{
    Brief, CallStatus, Claim, HostError, Outcome, Report, RunError, SpecialistInfo,
};

struct Legacy;

impl bindings::Guest for Legacy {
    fn describe() -> SpecialistInfo {
        SpecialistInfo {
            description: "Test specialist built against guild:plugin@0.1.0.".to_owned(),
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
        let sent = match report::send(&format!("calling {tool}")) {
            Ok(_) => "sent".to_owned(),
            Err(text) => text,
        };
        let mut details = format!("report: {sent}\n");
        let mut claims = Vec::new();
        let outcome = match tools::call(&tool, &input, None) {
            Ok(o) => {
                let status = match o.status {
                    CallStatus::Success => "success",
                    CallStatus::Pending => "pending",
                    CallStatus::Failed => "failed",
                };
                details.push_str(&format!(
                    "status: {status}\nerror: {}\nexternal_id: {}\n",
                    o.error.as_deref().unwrap_or("-"),
                    o.external_id.as_deref().unwrap_or("-"),
                ));
                if let (CallStatus::Success, Some(id)) = (o.status, o.external_id.clone()) {
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
                let (kind, text) = match e {
                    HostError::Denied(t) => ("denied", t),
                    HostError::InvalidInput(t) => ("invalid-input", t),
                    HostError::LimitExceeded(t) => ("limit-exceeded", t),
                    HostError::Failed(t) => ("failed", t),
                };
                details.push_str(&format!("host-error: {kind}: {text}\n"));
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
    bindings::export!(Legacy with_types_in bindings);
};
