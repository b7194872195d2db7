//! Violations worded for the model that made the call: the JSON path of the offending value
//! (`$.labels[0]`, from the validator's JSON Pointer) and what was expected there, with values
//! cut to a readable length.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
use serde_json::Value;

use super::SchemaViolation;

/// Longest message kept from the validator's own wording (kinds without a message of ours).
const MAX_MESSAGE: usize = 300;

/// The violation for the validator's first error on `input`, checked against `schema`.
pub(super) fn violation(
    error: &ValidationError<'_>,
    input: &Value,
    schema: &Value,
) -> SchemaViolation {
    SchemaViolation {
        path: json_path(input, error.instance_path().as_str()),
        message: describe(error, input, schema),
    }
}

/// Why a schema cannot be compiled: where in the schema, and what is wrong there.
pub(super) fn schema_problem(error: &ValidationError<'_>) -> String {
    let text = cut(error.to_string());
    match error.instance_path().as_str() {
        "" => text,
        at => format!("{text} (at {at} in the schema)"),
    }
}

/// Renders a JSON Pointer into `input` as a JSON path. A pointer does not say whether `0` is an
/// index or a key, so the input is walked along it: `/labels/0` is `$.labels[0]` when `labels`
/// is an array and `$.labels.0` when it is an object.
pub(super) fn json_path(input: &Value, pointer: &str) -> String {
    let mut out = String::from("$");
    let mut at = Some(input);
    for raw in pointer.split('/').skip(1) {
        // RFC 6901: `~1` is `/`, `~0` is `~`, in that order.
        let token = raw.replace("~1", "/").replace("~0", "~");
        match (at, token.parse::<usize>()) {
            (Some(Value::Array(items)), Ok(index)) => {
                out.push_str(&format!("[{index}]"));
                at = items.get(index);
            }
            _ => {
                crate::strict_json::push_key(&mut out, &token);
                at = at.and_then(|v| v.get(&token));
            }
        }
    }
    out
}

fn describe(error: &ValidationError<'_>, input: &Value, schema: &Value) -> String {
    let got: &Value = error.instance();
    let keyword = || keyword_value(schema, error.schema_path().as_str());
    match error.kind() {
        Kind::Type { kind } => format!(
            "expected {}, got {}",
            type_names(kind, keyword()),
            type_name(got)
        ),
        Kind::Required { property } => format!("missing required property {}", brief(property)),
        Kind::AdditionalProperties { unexpected } => {
            unknown_property(unexpected, schema, error.schema_path().as_str())
        }
        Kind::MinLength { limit } => {
            format!("expected at least {limit} character(s), got {}", chars(got))
        }
        Kind::MaxLength { limit } => {
            format!("expected at most {limit} character(s), got {}", chars(got))
        }
        Kind::MinItems { limit } => {
            format!("expected at least {limit} item(s), got {}", count(got))
        }
        Kind::MaxItems { limit } => format!("expected at most {limit} item(s), got {}", count(got)),
        Kind::MinProperties { limit } => {
            format!(
                "expected at least {limit} property(ies), got {}",
                count(got)
            )
        }
        Kind::MaxProperties { limit } => {
            format!("expected at most {limit} property(ies), got {}", count(got))
        }
        Kind::Enum { options } => format!(
            "expected one of {}, got {}",
            list(options.as_array().map(Vec::as_slice).unwrap_or_default()),
            brief(got)
        ),
        Kind::Constant { expected_value } => {
            format!("expected {}, got {}", brief(expected_value), brief(got))
        }
        Kind::Minimum { limit } => format!("expected at least {limit}, got {}", brief(got)),
        Kind::Maximum { limit } => format!("expected at most {limit}, got {}", brief(got)),
        Kind::ExclusiveMinimum { limit } => {
            format!("expected more than {limit}, got {}", brief(got))
        }
        Kind::ExclusiveMaximum { limit } => {
            format!("expected less than {limit}, got {}", brief(got))
        }
        Kind::MultipleOf { multiple_of } => {
            format!("expected a multiple of {multiple_of}, got {}", brief(got))
        }
        Kind::Pattern { pattern } => format!(
            "expected a string matching the pattern {}, got {}",
            brief(&Value::String(pattern.clone())),
            brief(got)
        ),
        Kind::Format { format } => {
            format!(
                "expected a string in the format {format:?}, got {}",
                brief(got)
            )
        }
        Kind::FalseSchema => "no value is allowed here".to_owned(),
        Kind::AnyOf { context } => {
            let first = context
                .iter()
                .flatten()
                .next()
                .map(|e| format!(" (first: {})", violation(e, input, schema)))
                .unwrap_or_default();
            format!("matches none of the anyOf alternatives{first}")
        }
        Kind::OneOfNotValid { .. } => {
            "must match exactly one oneOf alternative, matches none".to_owned()
        }
        Kind::OneOfMultipleValid { .. } => {
            "must match exactly one oneOf alternative, matches more than one".to_owned()
        }
        Kind::Not { .. } => "matches a schema it must not match".to_owned(),
        Kind::UniqueItems => "expected unique items, got a repeated one".to_owned(),
        Kind::BacktrackLimitExceeded { .. } | Kind::RegexEngineFailure { .. } => {
            "the schema's pattern could not be evaluated on this value (too much backtracking)"
                .to_owned()
        }
        // The validator's wording, with the offending value cut short.
        _ => cut(error.masked_with(brief(got)).to_string()),
    }
}

/// The value at `pointer` (a JSON Pointer) in `schema`, if the pointer leads somewhere in it.
fn keyword_value<'s>(schema: &'s Value, pointer: &str) -> Option<&'s Value> {
    schema.pointer(pointer)
}

/// The type names as the schema lists them (`string or null`), else as the validator has them.
fn type_names(kind: &TypeKind, declared: Option<&Value>) -> String {
    let listed: Vec<&str> = match declared {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !listed.is_empty() {
        return listed.join(" or ");
    }
    match kind {
        TypeKind::Single(name) => name.to_string(),
        TypeKind::Multiple(names) => names
            .iter()
            .map(|name| name.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
    }
}

/// `additionalProperties: false` broken: the first unknown name and the names the schema
/// declares next to it (`schema_path` ends in `/additionalProperties`).
fn unknown_property(unexpected: &[String], schema: &Value, schema_path: &str) -> String {
    let name = unexpected.first().map(String::as_str).unwrap_or_default();
    let object = schema_path
        .rsplit_once('/')
        .and_then(|(parent, _)| schema.pointer(parent));
    let declared: Option<Vec<&str>> =
        object
            .filter(|o| o.get("patternProperties").is_none())
            .map(|o| match o.get("properties").and_then(Value::as_object) {
                Some(properties) => properties.keys().map(String::as_str).collect(),
                None => Vec::new(),
            });
    match declared {
        Some(names) if names.is_empty() => format!("unknown property {name:?}; allowed: none"),
        Some(names) => format!("unknown property {name:?}; allowed: {}", names.join(", ")),
        None => format!("unknown property {name:?}"),
    }
}

fn chars(value: &Value) -> usize {
    value.as_str().map_or(0, |s| s.chars().count())
}

fn count(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.len(),
        Value::Object(fields) => fields.len(),
        _ => 0,
    }
}

/// A value as it appears in a message, cut to a readable length.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

fn list(values: &[Value]) -> String {
    let shown: Vec<String> = values.iter().take(10).map(brief).collect();
    let more = if values.len() > 10 { ", …" } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

fn cut(text: String) -> String {
    match text.char_indices().nth(MAX_MESSAGE) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}
