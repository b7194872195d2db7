//! The OpenAI chat-completions format: a plugin's request checked against its caps and written
//! as the JSON body of `POST {base_url}/chat/completions`, and the endpoint's answer read back.
//! Anything but a chat completion with a first choice and a usage count is a malformed answer.

use guild_core::llm::{
    ChatAnswer, ChatMessage, ChatRequest, FinishReason, LlmError, TokenUsage, ToolCall,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// Most messages in one request.
pub const MAX_MESSAGES: usize = 512;
/// Most tools offered in one request.
pub const MAX_TOOLS: usize = 128;
/// Most stop sequences.
pub const MAX_STOP: usize = 4;
/// Largest request body, bytes (the whole conversation, tools included).
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// Longest text of an upstream error kept, bytes.
const MAX_ERROR_TEXT: usize = 1024;

fn invalid(m: impl Into<String>) -> LlmError {
    LlmError::InvalidRequest(m.into())
}

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The JSON body for `model` (the endpoint's id), or why the request is refused before any
/// byte is sent.
pub fn body(request: &ChatRequest, model: &str) -> Result<Vec<u8>, LlmError> {
    if request.messages.is_empty() {
        return Err(invalid("no messages"));
    }
    if request.messages.len() > MAX_MESSAGES {
        return Err(invalid(format!(
            "{} messages; at most {MAX_MESSAGES}",
            request.messages.len()
        )));
    }
    if request.tools.len() > MAX_TOOLS {
        return Err(invalid(format!(
            "{} tools; at most {MAX_TOOLS}",
            request.tools.len()
        )));
    }
    if request.stop.len() > MAX_STOP {
        return Err(invalid(format!(
            "{} stop sequences; at most {MAX_STOP}",
            request.stop.len()
        )));
    }
    let mut tools = Vec::with_capacity(request.tools.len());
    for t in &request.tools {
        if !valid_tool_name(&t.name) {
            return Err(invalid(format!(
                "tool name {:?} is not [a-zA-Z0-9_-]{{1,64}}",
                guild_core::text::truncate(&t.name, 80)
            )));
        }
        let parameters: Value = serde_json::from_str(&t.parameters)
            .map_err(|e| invalid(format!("tool `{}`: parameters are not JSON: {e}", t.name)))?;
        if !parameters.is_object() {
            return Err(invalid(format!(
                "tool `{}`: parameters must be a JSON Schema object",
                t.name
            )));
        }
        tools.push(json!({"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": parameters}}));
    }
    let messages: Vec<Value> = request.messages.iter().map(message).collect();
    let mut body = json!({"model": model, "messages": messages});
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    if let Some(n) = request.max_tokens {
        body["max_tokens"] = json!(n);
    }
    if let Some(t) = request.temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(invalid(format!("temperature {t} is outside 0 to 2")));
        }
        body["temperature"] = json!(t);
    }
    if !request.stop.is_empty() {
        body["stop"] = json!(request.stop);
    }
    let bytes = serde_json::to_vec(&body).map_err(|e| invalid(e.to_string()))?;
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(invalid(format!(
            "the request is {} bytes; at most {MAX_REQUEST_BYTES}",
            bytes.len()
        )));
    }
    Ok(bytes)
}

fn message(m: &ChatMessage) -> Value {
    match m {
        ChatMessage::System { content } => json!({"role": "system", "content": content}),
        ChatMessage::User { content } => json!({"role": "user", "content": content}),
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            let mut v = json!({"role": "assistant", "content": content});
            if !tool_calls.is_empty() {
                v["tool_calls"] = tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments}})
                    })
                    .collect();
            }
            v
        }
        ChatMessage::Tool { call_id, content } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: WireMessage,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    arguments: String,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: u32,
    completion_tokens: u32,
}

/// A 2xx body read as a chat completion.
pub fn answer(body: &[u8]) -> Result<ChatAnswer, LlmError> {
    let c: Completion = serde_json::from_slice(body)
        .map_err(|e| LlmError::MalformedAnswer(format!("not a chat completion: {e}")))?;
    let Some(choice) = c.choices.into_iter().next() else {
        return Err(LlmError::MalformedAnswer("no choices".to_owned()));
    };
    let Some(usage) = c.usage else {
        return Err(LlmError::MalformedAnswer("no usage".to_owned()));
    };
    let finish_reason = match choice.finish_reason.as_deref() {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    };
    Ok(ChatAnswer {
        content: choice.message.content,
        tool_calls: choice
            .message
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|c| ToolCall {
                id: c.id,
                name: c.function.name,
                arguments: c.function.arguments,
            })
            .collect(),
        finish_reason,
        usage: TokenUsage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        },
    })
}

/// The provider's message from an error body: `error.message` when it is OpenAI's shape, the
/// text otherwise; cut to a kilobyte.
pub fn error_text(body: &[u8]) -> String {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let text = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message").and_then(Value::as_str))
        .map(str::to_owned)
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    guild_core::text::truncate(&text, MAX_ERROR_TEXT).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use guild_core::llm::ToolDefinition;

    fn request() -> ChatRequest {
        ChatRequest {
            model: "fast".into(),
            messages: vec![
                ChatMessage::System {
                    content: "be brief".into(),
                },
                ChatMessage::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "look".into(),
                        arguments: "{}".into(),
                    }],
                },
                ChatMessage::Tool {
                    call_id: "c1".into(),
                    content: "found".into(),
                },
            ],
            tools: vec![ToolDefinition {
                name: "look".into(),
                description: "looks".into(),
                parameters: r#"{"type":"object"}"#.into(),
            }],
            max_tokens: Some(50),
            temperature: None,
            stop: vec![],
        }
    }

    #[test]
    fn the_body_is_openai_shaped() {
        let b: Value = serde_json::from_slice(&body(&request(), "m-1").expect("ok")).expect("json");
        assert_eq!(b["model"], "m-1");
        assert_eq!(
            b["messages"][1]["tool_calls"][0]["function"]["name"],
            "look"
        );
        assert_eq!(b["messages"][2]["tool_call_id"], "c1");
        assert_eq!(b["tools"][0]["type"], "function");
        assert_eq!(b["tools"][0]["function"]["parameters"]["type"], "object");
        assert_eq!(b["max_tokens"], 50);
        assert!(b.get("temperature").is_none() && b.get("stop").is_none());
    }

    #[test]
    fn bad_requests_are_refused_before_sending() {
        let mut r = request();
        r.tools[0].name = "has space".into();
        assert!(matches!(body(&r, "m"), Err(LlmError::InvalidRequest(_))));
        let mut r = request();
        r.tools[0].parameters = "[1]".into();
        assert!(matches!(body(&r, "m"), Err(LlmError::InvalidRequest(_))));
        let mut r = request();
        r.messages.clear();
        assert!(matches!(body(&r, "m"), Err(LlmError::InvalidRequest(_))));
        let mut r = request();
        r.messages = vec![ChatMessage::User {
            content: "x".repeat(MAX_REQUEST_BYTES),
        }];
        assert!(matches!(body(&r, "m"), Err(LlmError::InvalidRequest(_))));
        assert!(body(&request(), "m").is_ok());
    }

    #[test]
    fn answers_are_read_and_anything_else_is_malformed() {
        let ok = br#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
        let a = answer(ok).expect("reads");
        assert_eq!(a.finish_reason, FinishReason::ToolCalls);
        assert_eq!(a.tool_calls[0].name, "f");
        assert_eq!(a.usage.total(), 7);
        for bad in [
            &b"{not json"[..],
            br#"{"choices":[]}"#,
            br#"{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}"#,
        ] {
            assert!(matches!(answer(bad), Err(LlmError::MalformedAnswer(_))));
        }
        assert_eq!(
            error_text(br#"{"error":{"message":"slow down"}}"#),
            "slow down"
        );
    }
}
