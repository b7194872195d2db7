//! The probe's memory ops, through the SDK's typed `memory` module:
//! `{"op": "memory_read", "scope": "team"}` answers `{text, version, usage}`;
//! `{"op": "memory_update", "scope": "team", "text": "...", "pad_to"?: n}` (the text padded
//! with bullets to at least `n` characters, for limit tests) answers
//! `{stored, no_op, warnings, usage}`. A failure is reported as JSON text so tests can see
//! which typed error reached the guest: `{"kind": "refused", "errors", "usage"}` or
//! `{"kind": "denied" | "invalid-input" | "limit-exceeded" | "failed", "message"}`.

use guild_sdk::HostError;
use guild_sdk::memory::{self, MemoryError, Scope, Usage};
use serde_json::{Value, json};

use crate::ops::str_arg;

/// The result of an op: the value, or the error as text.
type OpResult = Result<Value, String>;

fn scope(req: &Value) -> Result<Scope, String> {
    match str_arg(req, "scope")? {
        "team" => Ok(Scope::Team),
        "private" => Ok(Scope::Private),
        other => Err(format!("scope `{other}` must be `team` or `private`")),
    }
}

fn usage(u: Usage) -> Value {
    json!({"chars": u.chars, "soft_limit": u.soft_limit, "limit": u.limit})
}

fn host_error(e: &HostError) -> String {
    json!({"kind": e.kind(), "message": e.message()}).to_string()
}

/// `memory_read`.
pub(crate) fn read(req: &Value) -> Result<OpResult, String> {
    Ok(memory::read(scope(req)?)
        .map(|d| json!({"text": d.text, "version": d.version, "usage": usage(d.usage)}))
        .map_err(|e| host_error(&e)))
}

/// `memory_update`.
pub(crate) fn update(req: &Value) -> Result<OpResult, String> {
    let scope = scope(req)?;
    let mut text = str_arg(req, "text")?.to_owned();
    let pad_to = req.get("pad_to").and_then(Value::as_u64).unwrap_or(0);
    let pad_to = usize::try_from(pad_to).map_err(|e| e.to_string())?;
    let mut n = 0;
    while text.chars().count() < pad_to {
        n += 1;
        text.push_str(&format!("- 2026-01-01: padding entry number {n}\n"));
    }
    Ok(memory::update(scope, &text)
        .map(|u| {
            json!({
                "stored": u.stored,
                "no_op": u.no_op,
                "warnings": u.warnings,
                "usage": usage(u.usage),
            })
        })
        .map_err(|e| match e {
            MemoryError::Refused { errors, usage: u } => {
                json!({"kind": "refused", "errors": errors, "usage": usage(u)}).to_string()
            }
            MemoryError::Host(e) => host_error(&e),
        }))
}
