//! Requests for a method this server implements whose params do not have that method's shape.
//!
//! The SDK reads a request it cannot parse as any standard one as a custom request, which would
//! answer `-32601` (method not found) for, say, a `tools/call` whose `arguments` is a string.
//! JSON-RPC says that is `-32602` (invalid params): this module gives that answer, with the
//! parser's reason where the params type is known, so a client sees what to fix.

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The standard methods this server answers (the Tasks extension's own methods are handled
/// where the extension is).
const IMPLEMENTED: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "logging/setLevel",
    "tasks/get",
    "tasks/cancel",
];

/// `Some(-32602 error)` when `method` is one this server implements (its params did not parse),
/// `None` for a method it does not have.
pub(super) fn invalid_params(method: &str, params: Option<&Value>) -> Option<ErrorData> {
    if !IMPLEMENTED.contains(&method) {
        return None;
    }
    let params = params.cloned().unwrap_or(Value::Null);
    let reason = match method {
        "tools/call" => parse_error::<CallToolRequestParams>(params),
        "prompts/get" => parse_error::<GetPromptRequestParams>(params),
        "resources/read" => parse_error::<ReadResourceRequestParams>(params),
        _ => None,
    }
    .unwrap_or_else(|| "the params do not have the shape this method takes".to_owned());
    Some(ErrorData::invalid_params(
        format!("{method}: invalid params: {reason}"),
        None,
    ))
}

fn parse_error<T: DeserializeOwned>(params: Value) -> Option<String> {
    serde_json::from_value::<T>(params)
        .err()
        .map(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implemented_methods_get_the_reason_and_others_none() {
        let e = invalid_params(
            "tools/call",
            Some(&serde_json::json!({"name": "task", "arguments": "x"})),
        )
        .expect("implemented");
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(
            e.message.starts_with("tools/call: invalid params: "),
            "{}",
            e.message
        );
        assert!(invalid_params("ping", None).is_some());
        assert!(invalid_params("subscriptions/listen", None).is_none());
        assert!(invalid_params("no/such", None).is_none());
    }
}
