use super::*;
use serde_json::{Map, json};

/// The expected violation: its path and a fragment of its message; `None`: valid.
type Expected = Option<(&'static str, &'static str)>;

/// Runs (schema, input, expected violation) cases through [`check`].
fn run(cases: Vec<(Value, Value, Expected)>) {
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
    run(vec![
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
            Some(("$.title", "expected at least 1 character(s), got 0")),
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
            Some(("$.priority", "expected at most 5, got 9")),
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
        // An object key that looks like an index stays a key in the path.
        (
            json!({"properties": {"0": {"type": "string"}}}),
            json!({"0": 1}),
            Some(("$.0", "expected string")),
        ),
        (
            json!({"items": {"properties": {"a/b~c": {"type": "string"}}}}),
            json!([{"a/b~c": 1}]),
            Some(("$[0][\"a/b~c\"]", "expected string")),
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
            Some(("$", "exactly one oneOf alternative, matches more than one")),
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
        // Booleans.
        (json!(true), json!({"x": 1}), None),
        (json!(false), json!(1), Some(("$", "no value is allowed"))),
        // Keywords the old subset skipped.
        (
            json!({"type": "array", "uniqueItems": true}),
            json!([1, 2, 1]),
            Some(("$", "expected unique items")),
        ),
        (
            json!({"multipleOf": 5}),
            json!(12),
            Some(("$", "expected a multiple of 5")),
        ),
        (
            json!({"propertyNames": {"maxLength": 3}}),
            json!({"long": 1}),
            Some(("$", "")),
        ),
        (
            json!({"propertyNames": {"maxLength": 3}}),
            json!({"ok": 1}),
            None,
        ),
    ]);
}

/// Local `$ref`s, to `$defs` (2020-12) and `definitions` (draft 7), are followed and enforced.
#[test]
fn local_refs_are_enforced() {
    let schema = json!({
        "type": "object",
        "properties": {
            "owner": {"$ref": "#/$defs/user"},
            "reviewers": {"type": "array", "items": {"$ref": "#/definitions/user"}}
        },
        "$defs": {"user": {"type": "object", "required": ["login"],
                           "properties": {"login": {"type": "string", "pattern": "^[a-z]+$"}}}},
        "definitions": {"user": {"$ref": "#/$defs/user"}}
    });
    run(vec![
        (
            schema.clone(),
            json!({"owner": {"login": "ana"}, "reviewers": [{"login": "bo"}]}),
            None,
        ),
        (
            schema.clone(),
            json!({"owner": {}}),
            Some(("$.owner", "missing required property \"login\"")),
        ),
        (
            schema.clone(),
            json!({"owner": {"login": "ana"}, "reviewers": [{"login": "bo"}, {"login": 7}]}),
            Some(("$.reviewers[1].login", "expected string, got an integer")),
        ),
        (
            schema.clone(),
            json!({"owner": {"login": "Ana"}}),
            Some(("$.owner.login", "matching the pattern \"^[a-z]+$\"")),
        ),
        // A recursive schema follows the input as deep as it goes.
        (
            json!({"$defs": {"tree": {"type": "object", "additionalProperties": false,
                                      "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
                   "$ref": "#/$defs/tree"}),
            json!({"kids": [{"kids": []}, {"kids": [{"kids": [], "x": 1}]}]}),
            Some(("$.kids[1].kids[0]", "unknown property \"x\"; allowed: kids")),
        ),
    ]);
}

/// A `$ref` or `$schema` to anything outside the document is never fetched: the schema is
/// refused, and so is every input, naming the reference.
#[test]
fn external_refs_are_never_fetched_and_refuse_every_input() {
    for reference in [
        "http://127.0.0.1:9/schema.json",
        "https://example.com/schema.json#/$defs/x",
        "file:///etc/passwd",
        "other.json",
        "urn:example:thing",
    ] {
        for schema in [
            json!({"$ref": reference}),
            json!({"properties": {"a": {"$ref": reference}}}),
            json!({"$id": "https://example.com/root.json", "properties": {"a": {"$ref": reference}}}),
        ] {
            let v = check(&schema, &json!({"a": 1})).expect_err(reference);
            assert_eq!(v.path, "$", "{schema}: {v}");
            assert!(
                v.message
                    .starts_with("the schema itself is invalid, so no input is accepted"),
                "{schema}: {v}"
            );
        }
    }
    // A meta-schema it does not carry is not fetched either.
    let v = check(
        &json!({"$schema": "http://127.0.0.1:9/meta", "type": "object"}),
        &json!({}),
    )
    .expect_err("unknown $schema");
    assert!(v.message.contains("schema itself is invalid"), "{v}");
    // The standard's own meta-schemas are built in: naming one fetches nothing.
    run(vec![
        (
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}),
            json!("x"),
            None,
        ),
        (
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"}),
            json!(1),
            Some(("$", "expected string")),
        ),
    ]);
}

/// A schema that is JSON but not a schema refuses every input, naming what is wrong with it.
#[test]
fn an_invalid_schema_refuses_every_input_naming_the_problem() {
    for (schema, problem) in [
        (json!({"type": "mystery"}), "mystery"),
        (json!("not a schema"), "not a schema"),
        (json!({"minLength": -1}), "-1"),
        (
            json!({"properties": {"a": {"pattern": "(unclosed"}}}),
            "(unclosed",
        ),
        (json!({"$ref": "#/$defs/missing"}), "missing"),
    ] {
        for input in [json!("x"), json!({"a": "x"}), json!(1)] {
            let v = check(&schema, &input).expect_err("refused");
            assert_eq!(v.path, "$");
            assert!(
                v.message
                    .starts_with("the schema itself is invalid, so no input is accepted: "),
                "{schema}: {v}"
            );
            assert!(
                v.message.contains(problem),
                "{schema}: {v} lacks {problem:?}"
            );
        }
    }
}

#[test]
fn pattern_is_enforced() {
    let schema = json!({"type": "string", "pattern": "^[A-Z]{2,4}-[0-9]+$"});
    run(vec![
        (schema.clone(), json!("GLD-42"), None),
        (
            schema.clone(),
            json!("gld-42"),
            Some(("$", "expected a string matching the pattern")),
        ),
        // ECMA-262 lookaround is supported.
        (json!({"pattern": "^(?!admin$)"}), json!("ana"), None),
        (
            json!({"pattern": "^(?!admin$)"}),
            json!("admin"),
            Some(("$", "pattern")),
        ),
        // Keys matched by patternProperties are checked.
        (
            json!({"patternProperties": {"^x-": {"type": "string"}}}),
            json!({"x-trace": 1}),
            Some(("$.x-trace", "expected string")),
        ),
    ]);
}

/// A pattern that backtracks without end fails the check instead of holding the call.
#[test]
fn a_runaway_pattern_fails_the_check() {
    let schema = json!({"pattern": "^(a|a)*(?=b)c$"});
    let input = json!(format!("{}!", "a".repeat(64)));
    let v = check(&schema, &input).expect_err("refused");
    assert!(v.message.contains("could not be evaluated"), "{v}");
}

/// `format` asserts for the formats the standard defines; names it does not define annotate.
#[test]
fn format_is_enforced_for_standard_formats() {
    let f = |format: &str| json!({"type": "string", "format": format});
    run(vec![
        (f("date-time"), json!("2026-12-02T13:58:54Z"), None),
        (
            f("date-time"),
            json!("yesterday"),
            Some((
                "$",
                "expected a string in the format \"date-time\", got \"yesterday\"",
            )),
        ),
        (f("date"), json!("2026-12-02"), None),
        (f("date"), json!("2026-13-02"), Some(("$", "\"date\""))),
        (f("email"), json!("ana@example.com"), None),
        (
            f("email"),
            json!("ana.example.com"),
            Some(("$", "\"email\"")),
        ),
        (f("uri"), json!("https://example.com/a?b=c"), None),
        (f("uri"), json!("not a uri"), Some(("$", "\"uri\""))),
        (f("ipv4"), json!("127.0.0.1"), None),
        (f("ipv4"), json!("127.0.0.256"), Some(("$", "\"ipv4\""))),
        (
            f("uuid"),
            json!("67e55044-10b1-426f-9247-bb680e5fe0c8"),
            None,
        ),
        (f("uuid"), json!("67e55044"), Some(("$", "\"uuid\""))),
        // Not a standard format: an annotation.
        (f("markdown"), json!("anything"), None),
        // A format constrains strings only.
        (json!({"format": "email"}), json!(7), None),
    ]);
}

#[test]
fn text_inputs_and_schemas() {
    let schema = r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#;
    assert_eq!(check_text(schema, r#"{"n": 1}"#), Ok(()));
    let v = check_text(schema, r#"{"n": "1"}"#).expect_err("type");
    assert_eq!(v.path, "$.n");
    let v = check_text(schema, "{").expect_err("not JSON");
    assert_eq!(v.path, "$");
    assert!(v.message.starts_with("expected JSON: "), "{v}");
    let v = check_text(schema, r#"{"a": {"n": 1, "n": 2}}"#).expect_err("repeat");
    assert_eq!(v.path, "$.a");
    assert!(v.message.contains("\"n\" appears more than once"), "{v}");
    // A schema text that is not JSON checks nothing; one that is JSON and repeats a key refuses.
    assert_eq!(check_text("{not json", r#"{"n": "1"}"#), Ok(()));
    let v = check_text(r#"{"type": "string", "type": "integer"}"#, "1").expect_err("repeat");
    assert!(v.message.contains("schema itself is invalid"), "{v}");
}

#[test]
fn each_schema_text_is_compiled_once() {
    let text = r#"{"type": "string", "$comment": "each_schema_text_is_compiled_once"}"#;
    let first = compiled(text);
    assert!(Arc::ptr_eq(&first, &compiled(text)));
    assert!(matches!(*first, Compiled::Ready(..)));
    // Invalid schemas are kept too, so a bad schema is not recompiled on every call.
    let bad = r#"{"type": "mystery", "$comment": "each_schema_text_is_compiled_once"}"#;
    assert!(Arc::ptr_eq(&compiled(bad), &compiled(bad)));
    assert!(matches!(*compiled(bad), Compiled::Invalid(_)));
}

/// Inputs and schemas deeper than the parser goes are refused cleanly, never overflowing the
/// stack; the deepest input the parser takes is checked in full, even against a recursive schema.
#[test]
fn deep_inputs_and_schemas_are_refused_without_overflowing() {
    let nested =
        |depth: usize, leaf: &str| format!("{}{leaf}{}", "[".repeat(depth), "]".repeat(depth));
    let recursive = r##"{"type": "array", "items": {"$ref": "#"}}"##;
    // 10,000 levels: not parsed at all.
    let v = check_text(recursive, &nested(10_000, "1")).expect_err("too deep");
    assert_eq!(v.path, "$");
    assert!(v.message.contains("recursion limit"), "{v}");
    // As deep as it parses: checked to the bottom.
    assert_eq!(check_text(recursive, &nested(MAX_DEPTH, "")), Ok(()));
    let v = check_text(recursive, &nested(MAX_DEPTH, "1")).expect_err("leaf");
    assert!(v.message.contains("expected array, got an integer"), "{v}");
    assert!(v.path.ends_with("[0][0]"), "{v}");
    // Built in memory deeper than any parser allows: refused before the validator recurses.
    let mut deep = json!(1);
    for _ in 0..10_000 {
        deep = Value::Array(vec![deep]);
    }
    let v = check(&json!({"items": {"$ref": "#"}}), &deep).expect_err("too deep");
    assert!(v.message.contains("more than 127 levels"), "{v}");
    let mut deep_schema = json!({"type": "string"});
    for _ in 0..10_000 {
        deep_schema = Value::Object(Map::from_iter([("items".to_owned(), deep_schema)]));
    }
    let v = check(&deep_schema, &json!([])).expect_err("schema too deep");
    assert!(v.message.contains("schema itself is invalid"), "{v}");
    // A schema text nested past the parser's limit is JSON, not a schema to skip.
    let text = format!("{}{{}}{}", r#"{"items":"#.repeat(200), "}".repeat(200));
    let v = check_text(&text, "[]").expect_err("schema text too deep");
    assert!(v.message.contains("more than 127 levels"), "{v}");
    // The deepest schema the parser takes compiles and checks.
    let text = format!(
        "{}{{\"type\": \"string\"}}{}",
        r#"{"items":"#.repeat(MAX_DEPTH - 2),
        "}".repeat(MAX_DEPTH - 2)
    );
    let v = check_text(&text, &nested(MAX_DEPTH - 2, "1")).expect_err("leaf");
    assert!(v.message.contains("expected string"), "{v}");
    // Dropping values this deep recurses; they are left to the end of the test process.
    std::mem::forget(deep);
    std::mem::forget(deep_schema);
}

/// A schema that refers to itself without consuming input terminates.
#[test]
fn self_referencing_schemas_terminate() {
    // A cycle that never reaches a keyword constrains nothing, as the standard reads it.
    run(vec![
        (json!({"$ref": "#"}), json!(1), None),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
            json!(1),
            None,
        ),
        (
            json!({"allOf": [{"$ref": "#"}], "type": "string"}),
            json!(1),
            Some(("$", "expected string, got an integer")),
        ),
        (
            json!({"allOf": [{"$ref": "#"}], "type": "string"}),
            json!("x"),
            None,
        ),
    ]);
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
