//! Parsing JSON that reaches a plugin, so that what the host checks is what the plugin reads.
//!
//! The host checks a tool's input and then forwards the very bytes it checked. That is sound
//! only if every parser reads those bytes the same way. JSON leaves one thing open: an object
//! may repeat a key, and parsers disagree on which value counts (serde_json keeps the last, many
//! keep the first). An input `{"n": 1, "n": 1000}` would be checked with the last value and acted
//! on with the first. So a repeated key, at any depth, is refused here, with the key and the JSON
//! path of its object; everything else is serde_json's own parse (its nesting limit included).

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a text is not JSON every parser reads alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictJsonError {
    /// An object names the same key twice.
    DuplicateKey {
        /// The repeated key, as decoded (`"a"` and `"\u0061"` are the same key).
        key: String,
        /// JSON path of the object that repeats it, `$` for the top level.
        path: String,
    },
    /// Not JSON at all (serde_json's message, with line and column).
    Syntax(String),
}

impl fmt::Display for StrictJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrictJsonError::DuplicateKey { key, path } => write!(
                f,
                "the object at {path} has the key {key:?} more than once; send each key once"
            ),
            StrictJsonError::Syntax(e) => write!(f, "not JSON: {e}"),
        }
    }
}

impl std::error::Error for StrictJsonError {}

/// Parses `text` as JSON, refusing an object that repeats a key anywhere in it.
pub fn parse(text: &str) -> Result<Value, StrictJsonError> {
    let mut found = None;
    let mut path = String::from("$");
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Strict {
        path: &mut path,
        duplicate: &mut found,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (parsed, found) {
        (_, Some(duplicate)) => Err(duplicate),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(StrictJsonError::Syntax(e.to_string())),
    }
}

/// Appends the step to `key` to a JSON path, as the schema checker renders paths: `.name` for
/// plain keys, `["odd key"]` for others.
pub(crate) fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{key:?}]"));
    }
}

/// One value being read; the path of that value and where a repeated key is reported.
struct Strict<'a> {
    path: &'a mut String,
    duplicate: &'a mut Option<StrictJsonError>,
}

impl Strict<'_> {
    /// The reader of a value one step below this one, `step` appended to the path.
    fn below(&mut self, step: impl FnOnce(&mut String)) -> (Strict<'_>, usize) {
        let len = self.path.len();
        step(self.path);
        (
            Strict {
                path: self.path,
                duplicate: self.duplicate,
            },
            len,
        )
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let index = out.len();
            let (item, len) = self.below(|p| p.push_str(&format!("[{index}]")));
            let next = seq.next_element_seed(item)?;
            self.path.truncate(len);
            match next {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                let e = format!("duplicate key {key:?}");
                *self.duplicate = Some(StrictJsonError::DuplicateKey {
                    key,
                    path: self.path.clone(),
                });
                return Err(de::Error::custom(e));
            }
            let (value, len) = self.below(|p| push_key(p, &key));
            let value = map.next_value_seed(value)?;
            self.path.truncate(len);
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn duplicate(text: &str) -> (String, String) {
        match parse(text) {
            Err(StrictJsonError::DuplicateKey { key, path }) => (key, path),
            other => panic!("{text}: expected a duplicate key, got {other:?}"),
        }
    }

    #[test]
    fn json_without_repeated_keys_parses_as_serde_json_does() {
        for text in [
            r#"{"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]}"#,
            r#"[1, -2, 3.5, 1e3, "x\u00e9", null, true, false, {}, []]"#,
            r#"  {"same": {"x": 1}, "other": {"x": 1}}  "#,
            r#""just a string""#,
            "18446744073709551615",
        ] {
            let expected: Value = serde_json::from_str(text).expect("valid JSON");
            assert_eq!(parse(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn a_repeated_key_is_refused_at_any_depth_naming_key_and_path() {
        assert_eq!(
            duplicate(r#"{"n": 1, "n": 1000}"#),
            ("n".into(), "$".into())
        );
        assert_eq!(
            duplicate(r#"{"a": {"b": [0, {"deep": {"k": 1, "k": 2}}]}}"#),
            ("k".into(), "$.a.b[1].deep".into())
        );
        assert_eq!(
            duplicate(r#"{"odd key": {"x": null, "x": null}}"#),
            ("x".into(), r#"$["odd key"]"#.into())
        );
        // The same key however it is escaped.
        assert_eq!(
            duplicate(r#"{"role": "user", "r\u006fle": "admin"}"#),
            ("role".into(), "$".into())
        );
        let message = parse(r#"{"a": {"b": 1, "b": 2}}"#)
            .expect_err("refused")
            .to_string();
        assert!(
            message.contains(r#""b""#) && message.contains("$.a"),
            "{message}"
        );
    }

    #[test]
    fn not_json_stays_a_syntax_error() {
        for text in [r#"{"a": 1"#, r#"{"a": 1} trailing"#, "", r#""\ud800""#] {
            assert!(
                matches!(parse(text), Err(StrictJsonError::Syntax(_))),
                "{text:?} must be refused as not JSON"
            );
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(
            matches!(parse(&deep), Err(StrictJsonError::Syntax(_))),
            "nesting past serde_json's limit is refused, not a stack overflow"
        );
        assert_eq!(parse("{}"), Ok(json!({})));
    }
}
