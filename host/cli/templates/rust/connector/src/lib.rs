//! Connector `{{name}}`: `echo` returns the text it is given; `save` is a mutating tool (the host
//! writes a receipt for every call) that answers with an external id. Add your tools to
//! `tools()` and `call()`; a tool's own name has no dot (callers name it `{{name}}.TOOL`).

use guild_sdk::serde_json::json;
use guild_sdk::{Connector, ToolOutcome, ToolSpec};

struct Plugin;

impl Connector for Plugin {
    fn tools() -> Vec<ToolSpec> {
        let text = json!({"type": "object", "required": ["text"], "additionalProperties": false,
                          "properties": {"text": {"type": "string", "description": "The text."}}});
        vec![
            ToolSpec::new("echo", "Returns the `text` it is given, unchanged.").schema(text.clone()),
            ToolSpec::new("save", "Saves the `text` as a note and returns the note's id.")
                .schema(text)
                .mutating("note", "create"),
        ]
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        // The host checked the input against the schema; this names the field for other callers.
        let text = match ToolOutcome::string_field(&input, "text") {
            Ok(text) => text,
            Err(refused) => return refused,
        };
        match tool.as_str() {
            "echo" => ToolOutcome::success(json!({ "echo": text })),
            "save" => {
                // The id the external system gave the note (this template stands one in).
                let id = format!("note-{}", &guild_sdk::sha256_hex(text.as_bytes())[..12]);
                ToolOutcome::success(json!({ "id": id, "saved": text })).external_id(id)
            }
            other => ToolOutcome::failed(format!("unknown tool `{other}`; tools: echo, save")),
        }
    }
}

guild_sdk::export_connector!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec of the one read-only (or mutating) tool, whatever it is named.
    fn spec(mutating: bool) -> ToolSpec {
        let specs = Plugin::tools();
        let mut found = specs.into_iter().filter(|s| s.mutating == mutating);
        found.next().expect("a tool of that kind")
    }

    #[test]
    fn every_tool_reads_its_text_and_names_a_missing_field() {
        let echoed = Plugin::call(spec(false).name, r#"{"text": "hi"}"#.to_owned());
        assert!(echoed.is_success() && echoed.output.contains("\"hi\""), "{echoed:?}");
        let refused = Plugin::call(spec(true).name, "{}".to_owned());
        assert!(refused.error().is_some_and(|e| e.contains("`text`")), "{refused:?}");
    }

    #[test]
    fn the_mutating_tool_has_a_receipt_type_and_the_same_text_gets_the_same_id() {
        let save = spec(true);
        assert!(
            save.receipt_type.is_some() && save.operation.is_some(),
            "{save:?}"
        );
        assert!(spec(false).input_schema.contains(r#""text""#));
        let id = |text: &str| {
            let input = json!({ "text": text }).to_string();
            Plugin::call(save.name.clone(), input).external_id
        };
        assert!(id("hi").is_some());
        assert_eq!(id("hi"), id("hi"));
        assert_ne!(id("hi"), id("ho"));
    }
}
