//! Connector `{{name}}`: `echo` returns the text it is given; `save` is a mutating tool (the host
//! writes a receipt for every call) that answers with an external id. Add your tools to
//! `tools()` and `call()`; a tool's own name has no dot (callers name it `{{name}}.TOOL`).

use guild_sdk::serde_json::{self, Value, json};
use guild_sdk::{Connector, ToolOutcome, ToolSpec, log};

const ECHO: &str = "echo";
const SAVE: &str = "save";

struct Plugin;

impl Connector for Plugin {
    fn tools() -> Vec<ToolSpec> {
        let text = json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text."}},
            "required": ["text"],
            "additionalProperties": false
        });
        vec![
            ToolSpec::new(ECHO, "Returns the `text` it is given, unchanged.").schema(text.clone()),
            ToolSpec::new(
                SAVE,
                "Saves the `text` as a note and returns the note's id.",
            )
            .schema(text)
            .mutating("note", "create"),
        ]
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        let text = match text_of(&input) {
            Ok(text) => text,
            Err(error) => return ToolOutcome::invalid_input(error),
        };
        match tool.as_str() {
            ECHO => ToolOutcome::success(json!({ "echo": text })),
            SAVE => {
                log::info(format!("saving {} bytes", text.len()));
                let id = save(&text);
                ToolOutcome::success(json!({ "id": id, "saved": text })).external_id(id)
            }
            other => ToolOutcome::failed(format!("unknown tool `{other}`; tools: {ECHO}, {SAVE}")),
        }
    }
}

/// The `text` field of a tool's input. The host has already checked the input against the
/// tool's schema; this names the field for callers of other hosts.
fn text_of(input: &str) -> Result<String, String> {
    let input: Value =
        serde_json::from_str(input).map_err(|e| format!("input is not valid JSON: {e}"))?;
    let text = input.get("text").and_then(Value::as_str);
    text.map(str::to_owned)
        .ok_or_else(|| "field `text` is required and must be a string".to_owned())
}

/// Stores `text` in the external system and returns the id it was given there (this template
/// stands one in, derived from the text).
fn save(text: &str) -> String {
    format!("note-{}", &guild_sdk::sha256_hex(text.as_bytes())[..12])
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
        assert_eq!(text_of(r#"{"text": "hi"}"#), Ok("hi".to_owned()));
        let error = text_of("{}").unwrap_err();
        assert!(error.contains("`text`"), "{error}");
    }

    #[test]
    fn the_mutating_tool_has_a_receipt_type_and_the_same_text_gets_the_same_id() {
        let save = spec(true);
        assert!(
            save.receipt_type.is_some() && save.operation.is_some(),
            "{save:?}"
        );
        assert!(spec(false).input_schema.contains(r#""text""#));
        assert_eq!(super::save("hi"), super::save("hi"));
        assert_ne!(super::save("hi"), super::save("ho"));
    }
}
