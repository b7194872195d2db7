//! Test connector `v02-connector`, built against the frozen `guild:plugin@0.2.0`
//! (`wit/frozen/guild-plugin@0.2.0/`) with plain wit-bindgen, as a plugin written before `llm`
//! and `definition` would be. Tool: `note` (mutating: creates a note whose id is derived from
//! the input; an input of `{"fail":true}` fails with a quota error).

// wit-bindgen's generated glue is unsafe by nature; the plugin's own code is not.
#[allow(unsafe_code)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../../wit/frozen/guild-plugin@0.2.0",
        world: "connector",
    });
}

use bindings::exports::guild::plugin::connector_api::Guest;
use bindings::guild::plugin::log::{Level, log};
use bindings::guild::plugin::types::{Approval, CallStatus, ToolOutcome, ToolSpec};

struct V02;

impl Guest for V02 {
    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "note".to_owned(),
            description: "Creates a note; its id is derived from the input.".to_owned(),
            input_schema: r#"{"type":"object"}"#.to_owned(),
            mutating: true,
            receipt_type: Some("note".to_owned()),
            operation: Some("create".to_owned()),
            requires_skill: None,
            approval: Approval::Never,
        }]
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        log(Level::Info, &format!("v02-connector: {tool}"));
        if input.contains("\"fail\":true") {
            return ToolOutcome {
                output: r#"{"created":false}"#.to_owned(),
                status: CallStatus::Failed("v02 quota exceeded".to_owned()),
                external_id: None,
                verifiable_url: None,
                preview: None,
            };
        }
        ToolOutcome {
            output: format!(r#"{{"created":true,"bytes":{}}}"#, input.len()),
            status: CallStatus::Success,
            external_id: Some(format!("v02-note-{}", input.len())),
            verifiable_url: None,
            preview: Some("v02 note".to_owned()),
        }
    }
}

#[allow(unsafe_code)]
const _: () = {
    bindings::export!(V02 with_types_in bindings);
};
