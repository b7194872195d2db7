//! Checking a tool's input against the JSON Schema its connector declares, before the connector
//! runs.
//!
//! A focused validator for the keywords tool schemas use in practice: `type`, `properties`,
//! `required`, `additionalProperties`, `items`, `minItems`/`maxItems`, `enum`, `const`,
//! `minimum`/`maximum`, `exclusiveMinimum`/`exclusiveMaximum`, `minLength`/`maxLength`,
//! `allOf`/`anyOf`/`oneOf`/`not`. Other keywords (`$ref`, `pattern`, `format`, ...) are not
//! checked: the connector still sees every input it could see before, and remains responsible
//! for them. A schema that is not a JSON object or boolean checks nothing.
//!
//! The first violation is reported with the JSON path of the value that broke it (`$.labels[0]`)
//! so a model can fix its call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value};

use crate::strict_json::StrictJsonError;

/// Deepest nesting followed; a deeper schema is accepted past this point rather than recursed.
const MAX_DEPTH: usize = 64;

/// Parsed schemas kept, by text: a connector declares its schemas once and they are used on
/// every call, so each is parsed once. Past this many distinct schemas, new ones are parsed
/// per call rather than stored.
const MAX_CACHED_SCHEMAS: usize = 1024;

/// One step of the path to the value being checked; rendered only when a check fails.
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

type Path<'v> = Vec<Step<'v>>;

fn render(path: &[Step<'_>]) -> String {
    let mut out = String::from("$");
    for step in path {
        match step {
            Step::Key(name)
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                out.push('.');
                out.push_str(name);
            }
            Step::Key(name) => out.push_str(&format!("[{name:?}]")),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Why an input does not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON path of the offending value, `$` for the whole input.
    pub path: String,
    /// What was expected there.
    pub message: String,
}

impl std::fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "does not match its schema at {}: {}",
            self.path, self.message
        )
    }
}

/// Checks the JSON text `input` against the schema text `schema`, as a tool call carries them.
/// A schema that is not JSON checks nothing (the connector declared none worth the name); an
/// input that is not JSON, or that repeats a key in an object (which parsers read differently,
/// see [`crate::strict_json`]), is a violation, at `$` or at the object that repeats the key.
pub fn check_text(schema: &str, input: &str) -> Result<(), SchemaViolation> {
    let input = crate::strict_json::parse(input).map_err(|e| match e {
        StrictJsonError::DuplicateKey { key, path } => SchemaViolation {
            path,
            message: format!("the key {key:?} appears more than once; send each key once"),
        },
        StrictJsonError::Syntax(e) => violation(&[], format!("expected JSON: {e}")),
    })?;
    let Some(schema) = parsed(schema) else {
        return Ok(());
    };
    check(&schema, &input)
}

/// The schema text parsed, from the cache when it was seen before; `None` if it is not JSON.
fn parsed(text: &str) -> Option<Arc<Value>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Value>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(text) {
        return Some(hit.clone());
    }
    let schema = Arc::new(serde_json::from_str::<Value>(text).ok()?);
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() < MAX_CACHED_SCHEMAS {
        cache.insert(text.to_owned(), schema.clone());
    }
    Some(schema)
}

/// Checks `input` against `schema`.
pub fn check(schema: &Value, input: &Value) -> Result<(), SchemaViolation> {
    check_at(schema, input, &mut Vec::new(), 0)
}

fn violation(path: &[Step<'_>], message: String) -> SchemaViolation {
    SchemaViolation {
        path: render(path),
        message,
    }
}

fn check_at<'v>(
    schema: &Value,
    value: &'v Value,
    path: &mut Path<'v>,
    depth: usize,
) -> Result<(), SchemaViolation> {
    let rules = match schema {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return Err(violation(path, "no value is allowed here".into())),
        Value::Object(rules) if depth < MAX_DEPTH => rules,
        _ => return Ok(()),
    };
    if let Some(expected) = rules.get("type") {
        check_type(expected, value, path)?;
    }
    if let Some(allowed) = rules.get("enum").and_then(Value::as_array)
        && !allowed.iter().any(|a| same(a, value))
    {
        return Err(violation(
            path,
            format!("expected one of {}, got {}", list(allowed), brief(value)),
        ));
    }
    if let Some(expected) = rules.get("const")
        && !same(expected, value)
    {
        return Err(violation(
            path,
            format!("expected {}, got {}", brief(expected), brief(value)),
        ));
    }
    match value {
        Value::Object(fields) => check_object(rules, fields, path, depth)?,
        Value::Array(items) => check_array(rules, items, path, depth)?,
        Value::String(s) => check_string(rules, s, path)?,
        Value::Number(n) => {
            if let Some(n) = n.as_f64() {
                check_number(rules, n, path)?;
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
    check_combinators(rules, value, path, depth)
}

fn check_type(expected: &Value, value: &Value, path: &[Step<'_>]) -> Result<(), SchemaViolation> {
    let holds = match expected {
        Value::String(name) => has_type(value, name),
        Value::Array(names) => {
            let mut names = names.iter().filter_map(Value::as_str).peekable();
            names.peek().is_none() || names.any(|name| has_type(value, name))
        }
        _ => true,
    };
    if holds {
        return Ok(());
    }
    // Only a failure pays for the list.
    let names: Vec<&str> = match expected {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    Err(violation(
        path,
        format!("expected {}, got {}", names.join(" or "), type_name(value)),
    ))
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        // JSON Schema counts 1.0 as an integer.
        "integer" => value
            .as_f64()
            .is_some_and(|n| n.fract() == 0.0 && n.is_finite()),
        // An unknown type name constrains nothing.
        _ => true,
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

fn check_object<'v>(
    rules: &Map<String, Value>,
    fields: &'v Map<String, Value>,
    path: &mut Path<'v>,
    depth: usize,
) -> Result<(), SchemaViolation> {
    if let Some(required) = rules.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                return Err(violation(
                    path,
                    format!("missing required property {name:?}"),
                ));
            }
        }
    }
    let properties = rules.get("properties").and_then(Value::as_object);
    for (name, value) in fields {
        let declared = properties.and_then(|p| p.get(name));
        let sub = match (declared, rules.get("additionalProperties")) {
            (Some(sub), _) => sub,
            (None, Some(Value::Bool(false))) => {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return Err(violation(
                    path,
                    format!(
                        "unknown property {name:?}; allowed: {}",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
            (None, Some(sub)) => sub,
            (None, None) => continue,
        };
        path.push(Step::Key(name));
        let result = check_at(sub, value, path, depth + 1);
        path.pop();
        result?;
    }
    Ok(())
}

fn check_array<'v>(
    rules: &Map<String, Value>,
    items: &'v [Value],
    path: &mut Path<'v>,
    depth: usize,
) -> Result<(), SchemaViolation> {
    let count = items.len() as u64;
    if let Some(min) = rules.get("minItems").and_then(Value::as_u64)
        && count < min
    {
        return Err(violation(
            path,
            format!("expected at least {min} item(s), got {count}"),
        ));
    }
    if let Some(max) = rules.get("maxItems").and_then(Value::as_u64)
        && count > max
    {
        return Err(violation(
            path,
            format!("expected at most {max} item(s), got {count}"),
        ));
    }
    if let Some(sub) = rules.get("items") {
        for (i, item) in items.iter().enumerate() {
            path.push(Step::Index(i));
            let result = check_at(sub, item, path, depth + 1);
            path.pop();
            result?;
        }
    }
    Ok(())
}

fn check_string(
    rules: &Map<String, Value>,
    s: &str,
    path: &[Step<'_>],
) -> Result<(), SchemaViolation> {
    if !rules.contains_key("minLength") && !rules.contains_key("maxLength") {
        return Ok(());
    }
    let chars = s.chars().count() as u64;
    if let Some(min) = rules.get("minLength").and_then(Value::as_u64)
        && chars < min
    {
        return Err(violation(
            path,
            format!("expected at least {min} character(s), got {chars}"),
        ));
    }
    if let Some(max) = rules.get("maxLength").and_then(Value::as_u64)
        && chars > max
    {
        return Err(violation(
            path,
            format!("expected at most {max} character(s), got {chars}"),
        ));
    }
    Ok(())
}

fn check_number(
    rules: &Map<String, Value>,
    n: f64,
    path: &[Step<'_>],
) -> Result<(), SchemaViolation> {
    type Holds = fn(f64, f64) -> bool;
    let bounds: [(&str, &str, Holds); 4] = [
        ("minimum", "at least", |n, limit| n >= limit),
        ("maximum", "at most", |n, limit| n <= limit),
        ("exclusiveMinimum", "more than", |n, limit| n > limit),
        ("exclusiveMaximum", "less than", |n, limit| n < limit),
    ];
    for (key, words, holds) in bounds {
        if let Some(limit) = rules.get(key).and_then(Value::as_f64)
            && !holds(n, limit)
        {
            return Err(violation(
                path,
                format!("expected {words} {limit}, got {n}"),
            ));
        }
    }
    Ok(())
}

fn check_combinators<'v>(
    rules: &Map<String, Value>,
    value: &'v Value,
    path: &mut Path<'v>,
    depth: usize,
) -> Result<(), SchemaViolation> {
    let subs = |key: &str| rules.get(key).and_then(Value::as_array);
    if let Some(all) = subs("allOf") {
        for sub in all {
            check_at(sub, value, path, depth + 1)?;
        }
    }
    if let Some(any) = subs("anyOf") {
        let mut first = None;
        for sub in any {
            match check_at(sub, value, path, depth + 1) {
                Ok(()) => {
                    first = None;
                    break;
                }
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first {
            return Err(violation(
                path,
                format!("matches none of the anyOf alternatives (first: {e})"),
            ));
        }
    }
    if let Some(one) = subs("oneOf") {
        let matched = one
            .iter()
            .filter(|sub| check_at(sub, value, path, depth + 1).is_ok())
            .count();
        if matched != 1 {
            return Err(violation(
                path,
                format!("must match exactly one oneOf alternative, matches {matched}"),
            ));
        }
    }
    if let Some(not) = rules.get("not")
        && check_at(not, value, path, depth + 1).is_ok()
    {
        return Err(violation(path, "matches a schema it must not match".into()));
    }
    Ok(())
}

/// Equality as JSON Schema means it: 1 and 1.0 are the same number.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The expected violation: its path and a fragment of its message; `None`: valid.
    type Expected = Option<(&'static str, &'static str)>;

    /// (schema, input, expected violation).
    #[test]
    fn table() {
        let issue = json!({
            "type": "object",
            "required": ["title"],
            "additionalProperties": false,
            "properties": {
                "title": {"type": "string", "minLength": 1, "maxLength": 10},
                "labels": {"type": "array", "items": {"enum": ["bug", "ux"]}, "maxItems": 2},
                "priority": {"type": "integer", "minimum": 1, "maximum": 5},
                "kind": {"const": "issue"},
                "weight": {"type": "number", "exclusiveMinimum": 0},
                "owner": {"type": ["string", "null"]},
                "odd key": {"type": "boolean"}
            }
        });
        let cases: Vec<(Value, Value, Expected)> = vec![
            (issue.clone(), json!({"title": "Crash"}), None),
            (
                issue.clone(),
                json!({"title": "Crash", "labels": ["bug"], "priority": 5, "kind": "issue",
                       "weight": 0.5, "owner": null, "odd key": true}),
                None,
            ),
            (
                issue.clone(),
                json!({"title": "Crash", "priority": 3.0}),
                None,
            ),
            (
                issue.clone(),
                json!([]),
                Some(("$", "expected object, got an array")),
            ),
            (
                issue.clone(),
                json!({}),
                Some(("$", "missing required property \"title\"")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "tilte": "y"}),
                Some(("$", "unknown property \"tilte\"; allowed: ")),
            ),
            (
                issue.clone(),
                json!({"title": 7}),
                Some(("$.title", "expected string, got an integer")),
            ),
            (
                issue.clone(),
                json!({"title": ""}),
                Some(("$.title", "at least 1 character")),
            ),
            (
                issue.clone(),
                json!({"title": "a very long title"}),
                Some(("$.title", "at most 10 character")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "labels": ["bug", "feature"]}),
                Some((
                    "$.labels[1]",
                    "expected one of [\"bug\", \"ux\"], got \"feature\"",
                )),
            ),
            (
                issue.clone(),
                json!({"title": "x", "labels": ["bug", "ux", "bug"]}),
                Some(("$.labels", "at most 2 item(s), got 3")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "priority": 1.5}),
                Some(("$.priority", "expected integer, got a number")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "priority": 9}),
                Some(("$.priority", "at most 5")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "kind": "pr"}),
                Some(("$.kind", "expected \"issue\"")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "weight": 0}),
                Some(("$.weight", "more than 0")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "owner": 3}),
                Some(("$.owner", "expected string or null")),
            ),
            (
                issue.clone(),
                json!({"title": "x", "odd key": "yes"}),
                Some(("$[\"odd key\"]", "expected boolean")),
            ),
            // Open objects: extra properties are checked against additionalProperties.
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                json!({"a": "x", "b": 1}),
                Some(("$.b", "expected string")),
            ),
            (
                json!({"type": "object"}),
                json!({"anything": [1, {"x": null}]}),
                None,
            ),
            // Combinators.
            (
                json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
                json!(true),
                Some(("$", "none of the anyOf")),
            ),
            (
                json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
                json!(4),
                None,
            ),
            (
                json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
                json!(4),
                Some(("$", "exactly one oneOf alternative, matches 2")),
            ),
            (
                json!({"allOf": [{"type": "object"}, {"required": ["id"]}]}),
                json!({}),
                Some(("$", "missing required property \"id\"")),
            ),
            (
                json!({"not": {"type": "null"}}),
                json!(null),
                Some(("$", "must not match")),
            ),
            // Booleans and what is not checked.
            (json!(true), json!({"x": 1}), None),
            (json!(false), json!(1), Some(("$", "no value is allowed"))),
            (json!({"type": "string", "pattern": "^a"}), json!("b"), None),
            (json!({"$ref": "#/definitions/x"}), json!(1), None),
            (json!("not a schema"), json!(1), None),
            (json!({"type": "mystery"}), json!(1), None),
        ];
        for (schema, input, expected) in cases {
            let got = check(&schema, &input);
            match (expected, got) {
                (None, Ok(())) => {}
                (Some((path, fragment)), Err(v)) => {
                    assert_eq!(v.path, path, "{input} against {schema}: {v}");
                    assert!(
                        v.message.contains(fragment),
                        "{input} against {schema}: {v:?} lacks {fragment:?}"
                    );
                }
                (expected, got) => {
                    panic!("{input} against {schema}: expected {expected:?}, got {got:?}")
                }
            }
        }
    }

    #[test]
    fn deep_schemas_stop_recursing_instead_of_overflowing() {
        let mut schema = json!({"type": "string"});
        let mut input = json!(1);
        for _ in 0..(MAX_DEPTH * 4) {
            schema = json!({"type": "array", "items": schema});
            input = json!([input]);
        }
        // The violation sits below the depth limit, so it is not reported; nothing overflows.
        assert!(check(&schema, &input).is_ok());
    }

    #[test]
    fn display_names_the_path() {
        let v = check(
            &json!({"properties": {"a": {"type": "string"}}}),
            &json!({"a": 1}),
        )
        .expect_err("violation");
        assert_eq!(
            v.to_string(),
            "does not match its schema at $.a: expected string, got an integer"
        );
    }
}
