//! Test connector `legacy-connector`, built against the frozen `guild:plugin@0.1.0`
//! (`wit/frozen/guild-plugin@0.1.0/`) with plain wit-bindgen, as a plugin written for the first
//! host would be. It exports 0.1.0's bare `tools` and `call` and reports failures the 0.1.0 way
//! (status `failed` plus a separate `error`). Tools: `note` (mutating: creates a note whose id is
//! derived from the input) and `fail` (mutating, always fails).

// wit-bindgen's generated glue is unsafe by nature; the plugin's own code is not.
#[allow(unsafe_code)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../../wit/frozen/guild-plugin@0.1.0",
        world: "connector",
    });
}

use bindings::guild::plugin::log::{Level, log};
use bindings::guild::plugin::types::{Approval, CallStatus, ToolOutcome, ToolSpec};

struct Legacy;

fn spec(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: r#"{"type":"object"}"#.to_owned(),
        mutating: true,
        receipt_type: Some("note".to_owned()),
        operation: Some("create".to_owned()),
        requires_skill: None,
        approval: Approval::Never,
    }
}

impl bindings::Guest for Legacy {
    fn tools() -> Vec<ToolSpec> {
        vec![
            spec("note", "Creates a note; its id is derived from the input."),
            spec("fail", "Always fails with a quota error."),
        ]
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        log(Level::Info, &format!("legacy-connector: {tool}"));
        match tool.as_str() {
            "note" => ToolOutcome {
                output: format!(r#"{{"created":true,"bytes":{}}}"#, input.len()),
                status: CallStatus::Success,
                external_id: Some(format!("note-{}", input.len())),
                verifiable_url: None,
                preview: Some("legacy note".to_owned()),
                error: None,
            },
            other => ToolOutcome {
                output: r#"{"created":false}"#.to_owned(),
                status: CallStatus::Failed,
                external_id: None,
                verifiable_url: None,
                preview: None,
                error: Some(format!("legacy quota exceeded ({other})")),
            },
        }
    }
}

#[allow(unsafe_code)]
const _: () = {
    bindings::export!(Legacy with_types_in bindings);
};
