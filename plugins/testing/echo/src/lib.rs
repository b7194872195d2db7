//! Test connector `echo`: tools that succeed (`echo`, `create`), fail (`fail`), trap (`trap`),
//! spin (`loop`), return ~10 MiB (`big`), fill every outcome field with 3 MB (`sprawl`),
//! declare a strict input schema (`typed`) or need
//! approval (`guarded`), so host tests can exercise every outcome.

use std::hint::black_box;

use guild_sdk::{Approval, CallStatus, Connector, ToolOutcome, ToolSpec, serde_json, sha256_hex};
use serde_json::{Value, json};

struct Echo;

/// Size of the `big` tool's payload.
const BIG_BYTES: usize = 10 * 1024 * 1024;

/// Size of each field the `sprawl` tool fills.
const SPRAWL_BYTES: usize = 3 * 1000 * 1000;

impl Connector for Echo {
    fn tools() -> Vec<ToolSpec> {
        let any = json!({"type": "object"});
        vec![
            ToolSpec::new("echo", "Returns its input unchanged.").schema(any.clone()),
            ToolSpec::new(
                "create",
                "Creates an item; its id is derived from the input.",
            )
            .schema(any.clone())
            .mutating("item", "create"),
            ToolSpec::new("fail", "Always fails with a quota error.")
                .schema(any.clone())
                .mutating("item", "create"),
            ToolSpec::new("trap", "Panics (the instance traps).").schema(any.clone()),
            ToolSpec::new("loop", "Spins forever.").schema(any.clone()),
            ToolSpec::new("big", "Returns about 10 MiB of output.").schema(any.clone()),
            ToolSpec::new(
                "sprawl",
                "Fails with 3 MB in each of error, external id, URL and preview (mutating).",
            )
            .schema(any.clone())
            .mutating("item", "create"),
            ToolSpec::new(
                "crash",
                "Starts writing an item, then panics (mutating trap).",
            )
            .schema(any.clone())
            .mutating("item", "write"),
            ToolSpec::new(
                "stall",
                "Starts writing an item, then spins (mutating timeout).",
            )
            .schema(any.clone())
            .mutating("item", "write"),
            ToolSpec::new(
                "documented",
                "Echoes its input; needs the echo-guide skill loaded.",
            )
            .schema(any.clone())
            .requires_skill("echo-guide"),
            ToolSpec::new(
                "typed",
                "Echoes its input; the input schema is strict (title required, labels strings).",
            )
            .schema(json!({
                "type": "object",
                "required": ["title"],
                "additionalProperties": false,
                "properties": {
                    "title": {"type": "string", "minLength": 1},
                    "labels": {"type": "array", "items": {"type": "string"}}
                }
            })),
            ToolSpec::new(
                "guarded",
                "Sends an item; every call needs the caller's approval.",
            )
            .schema(any)
            .mutating("message", "send")
            .approval(Approval::Always),
        ]
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        match tool.as_str() {
            "echo" | "documented" | "typed" => match parse(&input) {
                Ok(parsed) => ToolOutcome::success(parsed),
                Err(failed) => failed,
            },
            "create" => match parse(&input) {
                Ok(parsed) => {
                    // Every call runs in a fresh instance, so a counter would always be 1: the
                    // id is a hash of the input instead, stable for equal inputs.
                    let id: String = sha256_hex(input.as_bytes()).chars().take(12).collect();
                    ToolOutcome::success(json!({ "id": id, "input": parsed }))
                        .external_id(id.as_str())
                        .verifiable_url(format!("http://127.0.0.1/item/{id}"))
                        .preview(format!("created item {id}"))
                }
                Err(failed) => failed,
            },
            "fail" => ToolOutcome::failed("quota exceeded for project demo"),
            "trap" | "crash" => panic!("echo: trap requested"),
            "loop" | "stall" => {
                let mut counter: u64 = 0;
                loop {
                    counter = black_box(counter.wrapping_add(1));
                }
            }
            "big" => ToolOutcome::success(json!({ "data": "x".repeat(BIG_BYTES) })),
            "sprawl" => {
                // A short output: only the side fields are oversized.
                let mut outcome = ToolOutcome::failed("sprawl")
                    .external_id("i".repeat(SPRAWL_BYTES))
                    .verifiable_url(format!("http://127.0.0.1/{}", "u".repeat(SPRAWL_BYTES)))
                    .preview("p".repeat(SPRAWL_BYTES));
                outcome.status = CallStatus::Failed("e".repeat(SPRAWL_BYTES));
                outcome
            }
            "guarded" => ToolOutcome::success(json!({ "sent": true })).external_id("sent-1"),
            other => ToolOutcome::failed(format!(
                "unknown tool `{other}`; tools: echo, create, fail, trap, loop, big, sprawl, crash, stall, documented, typed, guarded"
            )),
        }
    }
}

/// The input as JSON, or the failed outcome that says why it is not.
fn parse(input: &str) -> Result<Value, ToolOutcome> {
    serde_json::from_str(input)
        .map_err(|err| ToolOutcome::failed(format!("input is not valid JSON: {err}")))
}

guild_sdk::export_connector!(Echo);
