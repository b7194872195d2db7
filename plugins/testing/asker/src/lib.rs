//! Test specialist `asker`: its brief is one JSON object. `{"op": "models"}` lists the granted
//! aliases; `{"op": "definition"}` returns its name, prompt and settings; `{"op": "complete",
//! "model", "user", "times"?, "tools"?}` calls the model `times` times (default 1) and returns
//! each answer or error; `{"op": "dump", "model"}` also returns its whole environment and config
//! beside every answer and error, as one text (tests search it for a key). The report's
//! `details` is the JSON result.

use guild_sdk::llm::{self, Message, Request, ToolDefinition};
use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, config, definition};
use serde_json::{Value, json};

struct Asker;

fn answer_json(result: Result<llm::Answer, llm::LlmError>) -> Value {
    match result {
        Ok(a) => json!({
            "ok": true,
            "content": a.content,
            "tool_calls": a.tool_calls.iter()
                .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                .collect::<Vec<_>>(),
            "finish_reason": format!("{:?}", a.finish_reason),
            "prompt_tokens": a.usage.prompt_tokens,
            "completion_tokens": a.usage.completion_tokens,
        }),
        Err(e) => json!({"ok": false, "error": e.to_string(), "debug": format!("{e:?}")}),
    }
}

fn request(brief: &Value) -> Request {
    let text = |k: &str| brief.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut r = Request::new(text("model"))
        .message(Message::system("Be brief."))
        .message(Message::user(text("user")))
        .max_tokens(64);
    for t in brief
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
        r = r.tool(ToolDefinition::new(
            name,
            "a test tool",
            &json!({"type": "object"}),
        ));
    }
    r
}

fn complete(brief: &Value) -> Value {
    let times = brief.get("times").and_then(Value::as_u64).unwrap_or(1);
    let r = request(brief);
    Value::Array((0..times).map(|_| answer_json(llm::complete(&r))).collect())
}

fn dump(brief: &Value) -> Value {
    let env: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    let greeting = config::get("greeting").map_err(|e| e.to_string());
    let answers = complete(brief);
    let text = format!(
        "env: {env:?}\nargs: {:?}\nconfig: {greeting:?}\nmodels: {:?}\nanswers: {answers}",
        std::env::args().collect::<Vec<_>>(),
        llm::models(),
    );
    json!({"text": text, "answers": answers})
}

impl Specialist for Asker {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Test specialist: calls models as its JSON brief says.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let first = brief.description.lines().next().unwrap_or_default();
        let req: Value = serde_json::from_str(first)
            .map_err(|e| RunError::InvalidBrief(format!("the first line is not JSON: {e}")))?;
        let value = match req.get("op").and_then(Value::as_str) {
            Some("models") => json!(llm::models()),
            Some("definition") => json!({
                "name": definition::name(),
                "prompt": definition::prompt(),
                "settings": definition::settings(),
            }),
            Some("complete") => complete(&req),
            Some("dump") => dump(&req),
            _ => {
                return Err(RunError::InvalidBrief(
                    "op: models, definition, complete or dump".to_owned(),
                ));
            }
        };
        Ok(Report::satisfied("asked").details(value.to_string()))
    }
}

guild_sdk::export_specialist!(Asker);
