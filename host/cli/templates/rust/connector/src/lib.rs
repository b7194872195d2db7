//! Connector `{{name}}`: one tool, `echo`, that returns the text it is given. Add your tools to
//! `tools()` and `call()`.

use guild_sdk::serde_json::{self, Value, json};
use guild_sdk::{Connector, ToolOutcome, ToolSpec, log};

struct Plugin;

impl Connector for Plugin {
    fn tools() -> Vec<ToolSpec> {
        vec![
            ToolSpec::new("echo", "Returns the `text` it is given, unchanged.").schema(json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "What to echo."}
                },
                "required": ["text"],
                "additionalProperties": false
            })),
        ]
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        match tool.as_str() {
            "echo" => match echo(&input) {
                Ok(output) => ToolOutcome::success(output),
                Err(error) => ToolOutcome::failed(error),
            },
            other => ToolOutcome::failed(format!("unknown tool `{other}`; tools: echo")),
        }
    }
}

/// The `echo` tool: `{"text": T}` in, `{"echo": T}` out. The host has already checked the input
/// against the tool's schema; the checks here name the field for callers of other hosts.
fn echo(input: &str) -> Result<Value, String> {
    let input: Value =
        serde_json::from_str(input).map_err(|e| format!("input is not valid JSON: {e}"))?;
    let Some(text) = input.get("text").and_then(Value::as_str) else {
        return Err("field `text` is required and must be a string".to_owned());
    };
    log::info(format!("echoing {} bytes", text.len()));
    Ok(json!({ "echo": text }))
}

guild_sdk::export_connector!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_returns_the_text_and_names_a_missing_field() {
        assert_eq!(echo(r#"{"text": "hi"}"#), Ok(json!({"echo": "hi"})));
        let error = echo("{}").unwrap_err();
        assert!(error.contains("`text`"), "{error}");
    }
}
