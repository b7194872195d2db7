//! Reading tool inputs: each helper names the field it could not use, so a caller (often a
//! model) can fix its call.

use serde_json::{Map, Value};

/// The input document as a JSON object.
pub(crate) fn object(input: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(input) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("input must be a JSON object".to_owned()),
        Err(err) => Err(format!("input is not valid JSON: {err}")),
    }
}

/// A required, non-empty string.
pub(crate) fn required_str(input: &Map<String, Value>, field: &str) -> Result<String, String> {
    match input.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("field `{field}` must not be empty")),
        Some(_) => Err(format!("field `{field}` must be a string")),
        None => Err(format!("field `{field}` is required")),
    }
}

/// An optional string (null counts as absent).
pub(crate) fn optional_str(
    input: &Map<String, Value>,
    field: &str,
) -> Result<Option<String>, String> {
    match input.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("field `{field}` must be a string")),
    }
}

/// An optional array of strings (null counts as absent).
pub(crate) fn optional_strings(
    input: &Map<String, Value>,
    field: &str,
) -> Result<Option<Vec<String>>, String> {
    match input.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                _ => Err(format!("field `{field}` must be an array of strings")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("field `{field}` must be an array of strings")),
    }
}

/// A required positive integer; a string of digits is accepted too, since models often quote
/// numbers.
pub(crate) fn required_number(input: &Map<String, Value>, field: &str) -> Result<u64, String> {
    let number = match input.get(field) {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().trim_start_matches('#').parse().ok(),
        Some(_) => None,
        None => return Err(format!("field `{field}` is required")),
    };
    match number {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("field `{field}` must be a positive integer")),
    }
}
