//! Checking a tool's input against the JSON Schema its connector declares, before the connector
//! runs (docs/security.md, docs/plugin-authors.md).
//!
//! The whole standard is checked, by the `jsonschema` crate: every keyword of the schema's draft
//! (2020-12 when it names none), local `$ref`s (`#/$defs/...`, `#/definitions/...`), `pattern`
//! (ECMA-262 regular expressions, backtracking bounded) and `format` as an assertion for the
//! formats the standard defines (`date-time`, `email`, `uri`, `ipv4`, ...); a format name the
//! standard does not define is an annotation and checks nothing.
//!
//! Nothing outside the schema document is ever fetched: a `$ref` (or `$schema`) naming an
//! `http:`, `file:` or any other resource is a schema problem. A schema that is JSON but not a
//! valid schema (an unknown `type`, a `pattern` that is not a regular expression, such a `$ref`)
//! refuses every input, with a message naming the problem, rather than checking less than it
//! says. A schema text that is not JSON at all checks nothing: the host refuses such a connector
//! when it loads, so this is only reached by callers that skipped that.
//!
//! The first violation is reported with the JSON path of the value that broke it (`$.labels[0]`)
//! so a model can fix its call ([`message`]).

mod message;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

use crate::strict_json::StrictJsonError;

/// Deepest nesting of arrays and objects checked, in a schema or an input: serde_json parses no
/// deeper (its limit of 128 stops at the 128th level), and a deeper value built in memory is
/// refused before the validator recurses into it.
const MAX_DEPTH: usize = 127;

/// Compiled schemas kept, by text: a connector declares its schemas once and they are used on
/// every call, so each is compiled once. Past this many distinct schemas, new ones are compiled
/// per call rather than stored.
const MAX_CACHED_SCHEMAS: usize = 1024;

/// Backtracking steps one `pattern` may take on one value (the crate's default, stated): a
/// pattern needing more fails the check instead of holding the call.
const BACKTRACK_LIMIT: usize = 1_000_000;

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

/// A schema as it is checked against.
enum Compiled {
    /// The text is not JSON: nothing is checked.
    NotJson,
    /// JSON, but not a schema that can be checked; every input is refused with this problem.
    Invalid(String),
    /// The validator, and the schema it came from (read back for messages).
    Ready(Validator, Value),
}

/// Checks the JSON text `input` against the schema text `schema`, as a tool call carries them.
/// A schema that is not JSON checks nothing (the connector declared none worth the name); one
/// that is JSON but not a valid schema refuses every input. An input that is not JSON, or that
/// repeats a key in an object (which parsers read differently, see [`crate::strict_json`]), is a
/// violation, at `$` or at the object that repeats the key.
pub fn check_text(schema: &str, input: &str) -> Result<(), SchemaViolation> {
    let input = crate::strict_json::parse(input).map_err(|e| match e {
        StrictJsonError::DuplicateKey { key, path } => SchemaViolation {
            path,
            message: format!("the key {key:?} appears more than once; send each key once"),
        },
        StrictJsonError::Syntax(e) => at_root(format!("expected JSON: {e}")),
    })?;
    check_compiled(&compiled(schema), &input)
}

/// Why the schema text `schema` can check nothing valid (it is JSON but not a schema the
/// validator accepts, or it fetches from outside itself), or `None` when it is usable or is not
/// JSON at all. Compiles it into the cache, so a connector's schemas are checked, and ready,
/// when it loads.
pub fn schema_problem(schema: &str) -> Option<String> {
    match compiled(schema).as_ref() {
        Compiled::Invalid(problem) => Some(problem.clone()),
        Compiled::NotJson | Compiled::Ready(..) => None,
    }
}

/// Checks `input` against `schema` (compiled for this call, not cached).
pub fn check(schema: &Value, input: &Value) -> Result<(), SchemaViolation> {
    check_compiled(&compile(schema), input)
}

fn check_compiled(compiled: &Compiled, input: &Value) -> Result<(), SchemaViolation> {
    let (validator, schema) = match compiled {
        Compiled::NotJson => return Ok(()),
        Compiled::Invalid(problem) => {
            return Err(at_root(format!(
                "the schema itself is invalid, so no input is accepted: {problem}"
            )));
        }
        Compiled::Ready(validator, schema) => (validator, schema),
    };
    if depth_exceeds(input, MAX_DEPTH) {
        return Err(at_root(format!(
            "the input nests more than {MAX_DEPTH} levels deep"
        )));
    }
    match validator.validate(input) {
        Ok(()) => Ok(()),
        Err(e) => Err(message::violation(&e, input, schema)),
    }
}

/// The schema text compiled, from the cache when it was seen before.
fn compiled(text: &str) -> Arc<Compiled> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Compiled>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(text) {
        return hit.clone();
    }
    // Compiled outside the lock: a slow schema does not hold up calls to other tools.
    let compiled = Arc::new(match crate::strict_json::parse(text) {
        Ok(schema) => compile(&schema),
        // Checked with one value while the connector may read the other.
        Err(e @ StrictJsonError::DuplicateKey { .. }) => Compiled::Invalid(e.to_string()),
        // JSON, only deeper than serde_json parses: not a schema to skip.
        Err(StrictJsonError::Syntax(e)) if e.starts_with("recursion limit exceeded") => {
            Compiled::Invalid(format!("it nests more than {MAX_DEPTH} levels deep"))
        }
        Err(StrictJsonError::Syntax(_)) => Compiled::NotJson,
    });
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() < MAX_CACHED_SCHEMAS {
        cache.insert(text.to_owned(), compiled.clone());
    }
    compiled
}

fn compile(schema: &Value) -> Compiled {
    if depth_exceeds(schema, MAX_DEPTH) {
        return Compiled::Invalid(format!("it nests more than {MAX_DEPTH} levels deep"));
    }
    let options = jsonschema::options()
        // Never fetch a `$ref` or `$schema` from outside the document (the crate is also built
        // without its HTTP and file retrievers).
        .offline()
        .should_validate_formats(true)
        .with_pattern_options(PatternOptions::fancy_regex().backtrack_limit(BACKTRACK_LIMIT));
    match options.build(schema) {
        Ok(validator) => Compiled::Ready(validator, schema.clone()),
        Err(e) => Compiled::Invalid(message::schema_problem(&e)),
    }
}

fn at_root(message: String) -> SchemaViolation {
    SchemaViolation {
        path: "$".to_owned(),
        message,
    }
}

/// Whether `value` nests arrays and objects more than `limit` levels deep; iterative, so a value
/// built deeper than any parser allows is measured without recursion.
fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut pending = vec![(value, 1)];
    while let Some((value, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(fields) => Box::new(fields.values()),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        pending.extend(children.map(|child| (child, depth + 1)));
    }
    false
}
