//! Unit tests of the skills library: each frontmatter rule with a valid and an invalid case in
//! both modes, the gates, diffs and byte accounting. Folder, confinement, visibility and watcher
//! tests with real files are in `tests/all/skills.rs`.

use std::path::Path;

use super::*;

fn md(front: &str) -> String {
    format!("---\n{front}\n---\n# Body\nDo the thing.\n")
}

/// (loads in strict, loads in lenient, the field the first problem names)
fn check(front: &str, folder: &str) -> (bool, bool, Vec<Problem>, Vec<Problem>) {
    let text = md(front);
    let file = Path::new("x/SKILL.md");
    let (s, sp) = parse_skill_md(&text, file, Some(folder), Mode::Strict);
    let (l, lp) = parse_skill_md(&text, file, Some(folder), Mode::Lenient);
    (s.is_some(), l.is_some(), sp, lp)
}

struct Rule {
    what: &'static str,
    valid: &'static str,
    invalid: &'static str,
    field: &'static str,
    /// Whether the invalid case still loads in lenient mode.
    lenient_loads: bool,
}

const RULES: &[Rule] = &[
    Rule {
        what: "name equals folder",
        valid: "name: pdf\ndescription: d",
        invalid: "name: other\ndescription: d",
        field: "name",
        lenient_loads: true,
    },
    Rule {
        what: "name charset",
        valid: "name: pdf\ndescription: d",
        invalid: "name: PDF\ndescription: d",
        field: "name",
        lenient_loads: true,
    },
    Rule {
        what: "name no leading hyphen",
        valid: "name: pdf\ndescription: d",
        invalid: "name: -pdf\ndescription: d",
        field: "name",
        lenient_loads: true,
    },
    Rule {
        what: "name no double hyphen",
        valid: "name: pdf\ndescription: d",
        invalid: "name: p--df\ndescription: d",
        field: "name",
        lenient_loads: true,
    },
    Rule {
        what: "name present",
        valid: "name: pdf\ndescription: d",
        invalid: "description: d",
        field: "name",
        lenient_loads: true,
    },
    Rule {
        what: "description present",
        valid: "name: pdf\ndescription: d",
        invalid: "name: pdf",
        field: "description",
        lenient_loads: false,
    },
    Rule {
        what: "description not empty",
        valid: "name: pdf\ndescription: d",
        invalid: "name: pdf\ndescription: \"  \"",
        field: "description",
        lenient_loads: false,
    },
    Rule {
        what: "description is a string",
        valid: "name: pdf\ndescription: d",
        invalid: "name: pdf\ndescription: [a, b]",
        field: "description",
        lenient_loads: false,
    },
    Rule {
        what: "description without control characters",
        valid: "name: pdf\ndescription: \"Tabs\\tand emoji 👩\u{200d}💻 are fine\"",
        invalid: "name: pdf\ndescription: \"Red \\e[31m text\"",
        field: "description",
        lenient_loads: true,
    },
    Rule {
        what: "license without bidi overrides",
        valid: "name: pdf\ndescription: d\nlicense: MIT",
        invalid: "name: pdf\ndescription: d\nlicense: \"MIT\\u202E\"",
        field: "license",
        lenient_loads: true,
    },
    Rule {
        what: "frontmatter nesting depth",
        valid: "name: pdf\ndescription: \"[[[[[[[[[[ten]]]]]]]]]]\"\nmetadata: {a: b}",
        invalid: "name: pdf\ndescription: d\nmetadata: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        field: "",
        lenient_loads: false,
    },
    Rule {
        what: "compatibility length",
        valid: "name: pdf\ndescription: d\ncompatibility: needs python3",
        invalid: "", // built below: 501 characters
        field: "compatibility",
        lenient_loads: true,
    },
    Rule {
        what: "metadata string map",
        valid: "name: pdf\ndescription: d\nmetadata:\n  author: me\n  version: \"1.0\"",
        invalid: "name: pdf\ndescription: d\nmetadata:\n  version: 1.0",
        field: "metadata.version",
        lenient_loads: true,
    },
    Rule {
        what: "metadata is a map",
        valid: "name: pdf\ndescription: d\nmetadata: {}",
        invalid: "name: pdf\ndescription: d\nmetadata: [a]",
        field: "metadata",
        lenient_loads: true,
    },
    Rule {
        what: "allowed-tools is a string",
        valid: "name: pdf\ndescription: d\nallowed-tools: tracker.search_issues kb.*",
        invalid: "name: pdf\ndescription: d\nallowed-tools: [tracker.search_issues]",
        field: "allowed-tools",
        lenient_loads: true,
    },
    Rule {
        what: "license is a string",
        valid: "name: pdf\ndescription: d\nlicense: MIT",
        invalid: "name: pdf\ndescription: d\nlicense: 3",
        field: "license",
        lenient_loads: true,
    },
    Rule {
        what: "no unknown keys",
        valid: "name: pdf\ndescription: d",
        invalid: "name: pdf\ndescription: d\nversion: 2",
        field: "version",
        lenient_loads: true,
    },
    Rule {
        what: "frontmatter is a mapping",
        valid: "name: pdf\ndescription: d",
        invalid: "- name\n- pdf",
        field: "",
        lenient_loads: false,
    },
    Rule {
        what: "frontmatter parses",
        valid: "name: pdf\ndescription: d",
        invalid: "name: pdf\ndescription: [unclosed",
        field: "",
        lenient_loads: false,
    },
];

#[test]
fn every_rule_has_a_valid_and_an_invalid_case_in_both_modes() {
    let long_compat = format!(
        "name: pdf\ndescription: d\ncompatibility: {}",
        "x".repeat(501)
    );
    for rule in RULES {
        let (s, l, sp, lp) = check(rule.valid, "pdf");
        assert!(s && l, "{}: valid case rejected: {sp:?} {lp:?}", rule.what);
        assert!(sp.is_empty() && lp.is_empty(), "{}: {sp:?}", rule.what);

        let invalid = if rule.invalid.is_empty() {
            long_compat.as_str()
        } else {
            rule.invalid
        };
        let (s, l, sp, lp) = check(invalid, "pdf");
        assert!(!s, "{}: strict accepted the invalid case", rule.what);
        assert!(
            sp.iter()
                .any(|p| p.field == rule.field && p.severity == Severity::Error),
            "{}: strict problems {sp:?} do not name field {:?}",
            rule.what,
            rule.field
        );
        assert_eq!(l, rule.lenient_loads, "{}: lenient: {lp:?}", rule.what);
        let expected = if rule.lenient_loads {
            Severity::Warning
        } else {
            Severity::Error
        };
        assert!(
            lp.iter()
                .any(|p| p.field == rule.field && p.severity == expected),
            "{}: lenient problems {lp:?}",
            rule.what
        );
        for p in sp.iter().chain(&lp) {
            assert!(
                p.to_string().contains("x/SKILL.md"),
                "problem does not name the file: {p}"
            );
        }
    }
}

#[test]
fn name_length_limit() {
    let ok = "a".repeat(64);
    let long = "a".repeat(65);
    let (s, l, _, _) = check(&format!("name: {ok}\ndescription: d"), &ok);
    assert!(s && l);
    let (s, l, sp, _) = check(&format!("name: {long}\ndescription: d"), &long);
    assert!(!s && l, "over-long name: strict rejects, lenient loads");
    assert!(sp[0].reason.contains("65 characters"), "{sp:?}");
}

#[test]
fn description_length_limit() {
    let ok = format!("name: pdf\ndescription: {}", "d".repeat(1024));
    let long = format!("name: pdf\ndescription: {}", "d".repeat(1025));
    assert!(check(&ok, "pdf").0);
    let (s, l, sp, _) = check(&long, "pdf");
    assert!(!s && l, "{sp:?}");
}

#[test]
fn fences_are_required() {
    let file = Path::new("x/SKILL.md");
    for text in [
        "name: pdf\ndescription: d\n",
        "---\nname: pdf\ndescription: d\n",
    ] {
        for mode in [Mode::Strict, Mode::Lenient] {
            let (skill, problems) = parse_skill_md(text, file, Some("pdf"), mode);
            assert!(skill.is_none(), "{text:?} loaded in {mode:?}");
            assert!(problems[0].reason.contains("---"), "{problems:?}");
        }
    }
    let (skill, _) = parse_skill_md(
        &md("name: pdf\ndescription: d"),
        file,
        Some("pdf"),
        Mode::Strict,
    );
    let skill = skill.expect("loads");
    assert_eq!(skill.body, "# Body\nDo the thing.\n");
}

#[test]
fn lenient_mismatch_keeps_the_frontmatter_name() {
    let (skill, problems) = parse_skill_md(
        &md("name: other\ndescription: d"),
        Path::new("pdf/SKILL.md"),
        Some("pdf"),
        Mode::Lenient,
    );
    assert_eq!(skill.expect("loads").meta.name, "other");
    assert!(
        problems[0]
            .to_string()
            .contains("does not match its folder")
    );
}

#[test]
fn allowed_tools_and_metadata_are_parsed() {
    let (skill, _) = parse_skill_md(
        &md("name: pdf\ndescription: d\nallowed-tools: a.b  c.*\nmetadata:\n  k: v"),
        Path::new("pdf/SKILL.md"),
        Some("pdf"),
        Mode::Strict,
    );
    let meta = skill.expect("loads").meta;
    assert_eq!(
        meta.allowed_tools,
        Some(vec!["a.b".to_owned(), "c.*".to_owned()])
    );
    assert_eq!(meta.metadata.get("k").map(String::as_str), Some("v"));
}

#[test]
fn resource_paths_are_checked_lexically() {
    for bad in ["", "../x", "a/../../x", "/etc/passwd", "a\0b"] {
        assert!(
            matches!(
                check_relative("s", bad),
                Err(SkillError::InvalidPath { .. })
            ),
            "{bad:?} accepted"
        );
    }
    for good in ["a.md", "./a.md", "dir/a.md"] {
        check_relative("s", good).expect(good);
    }
}

#[test]
fn requires_skill_gate() {
    let task = TaskSkills::new();
    assert_eq!(task.requires_skill_gate(None), None);
    assert_eq!(
        task.requires_skill_gate(Some("pdf")).as_deref(),
        Some("load skill 'pdf' first")
    );
    task.record_resource("pdf", "a.md", 10);
    assert!(
        task.requires_skill_gate(Some("pdf")).is_some(),
        "reading a resource does not load a skill"
    );
    assert!(task.record_body("pdf", 100, 1000, None));
    assert_eq!(task.requires_skill_gate(Some("pdf")), None);
}

#[test]
fn allowed_tools_gate() {
    let task = TaskSkills::new();
    assert_eq!(
        task.allowed_tools_gate("tracker.create_issue", true),
        None,
        "no active skill"
    );
    task.record_body("plain", 1, 1, None);
    assert_eq!(
        task.allowed_tools_gate("tracker.create_issue", true),
        None,
        "no allowed-tools"
    );
    task.record_body(
        "triage",
        1,
        1,
        Some(vec!["tracker.search_issues".into(), "kb.*".into()]),
    );
    assert_eq!(task.allowed_tools_gate("tracker.search_issues", true), None);
    assert_eq!(task.allowed_tools_gate("kb.save", true), None);
    let refused = task
        .allowed_tools_gate("tracker.create_issue", true)
        .expect("refused");
    assert!(
        refused.contains("'tracker.create_issue'") && refused.contains("triage"),
        "{refused}"
    );
    assert_eq!(
        task.allowed_tools_gate("tracker.create_issue", false),
        None,
        "off by default"
    );
    task.record_body("writer", 1, 1, Some(vec!["tracker.create_issue".into()]));
    assert_eq!(
        task.allowed_tools_gate("tracker.create_issue", true),
        None,
        "union of active skills"
    );
}

#[test]
fn tool_patterns() {
    assert!(tool_matches("a.b", "a.b"));
    assert!(tool_matches("a.*", "a.b"));
    assert!(!tool_matches("a.*", "ab.c"));
    assert!(!tool_matches(".*", "a.b"));
    assert!(!tool_matches("Read", "a.b"));
    assert!(!tool_matches("a.b", "a.bc"));
}

#[test]
fn byte_accounting() {
    let task = TaskSkills::new();
    task.record_catalog(200, 10_000);
    assert!(task.record_body("pdf", 1000, 4000, None));
    assert!(
        !task.record_body("pdf", 1000, 4000, None),
        "second load records nothing"
    );
    task.record_note(50);
    task.record_resource("pdf", "a.md", 300);
    let s = task.stats();
    assert_eq!(
        (
            s.catalog_bytes,
            s.body_bytes,
            s.resource_bytes,
            s.notes_bytes
        ),
        (200, 1000, 300, 50)
    );
    assert_eq!(s.returned_bytes, 1550);
    assert_eq!(s.returned_tokens, 388);
    assert_eq!(s.loaded, vec!["pdf".to_owned()]);
    assert_eq!(s.loaded_full_bytes, 4000);
    assert_eq!(s.saved_bytes, 10_000 - 1550);
}

#[test]
fn settings_parse_and_validate() {
    let s: SkillsSettings = toml::from_str(
        "supervisor = [\"skills\", \"loader:team-skills\", \"shared:team\"]\nshared = { team = \"t\" }\nstrict_allowed_tools = [\"triage\"]",
    )
    .expect("parses");
    s.validate().expect("valid");
    assert!(s.strict_allowed_tools_for("triage") && !s.strict_allowed_tools_for("kb"));
    assert!(
        SkillsSettings::default().strict_allowed_tools.is_empty(),
        "off by default"
    );
    let bad: SkillsSettings = toml::from_str("supervisor = [\"shared:nope\"]").expect("parses");
    let (key, msg) = bad.validate().expect_err("unknown shared folder");
    assert_eq!(key, "skills.supervisor");
    assert!(msg.contains("nope"), "{msg}");
    assert!(toml::from_str::<SkillsSettings>("unknown = 1").is_err());
}

#[test]
fn declared_sources_stay_inside_the_plugin() {
    let settings = SkillsSettings::default();
    let dir = Path::new("/plugins/kb");
    let base = Path::new("/etc/guild");
    for same in ["skills/", "skills", "./skills", "skills//"] {
        assert_eq!(
            SourceRequest::parse(same).expect("own"),
            SourceRequest::Own("skills".into()),
            "{same:?}"
        );
    }
    let own = SourceRequest::parse("skills/").expect("own");
    assert_eq!(own.to_string(), "skills/");
    let own = SkillSource::from_request(&own, "kb", dir, &settings, base).expect("own");
    assert_eq!(own.kind(), SourceKind::Own);
    assert_eq!(own.label(), "plugin:kb/skills");
    for bad in ["../other", "/abs", "", ".", "loader:Bad Name", "shared:"] {
        assert!(SourceRequest::parse(bad).is_err(), "{bad:?} accepted");
    }
    let none = SourceRequest::parse("shared:none").expect("well formed");
    assert!(
        SkillSource::from_request(&none, "kb", dir, &settings, base).is_err(),
        "a shared folder the operator never named"
    );
    let loader = SourceRequest::parse("loader:team-skills").expect("loader");
    let loader = SkillSource::from_request(&loader, "kb", dir, &settings, base).expect("loader");
    assert_eq!(loader.kind(), SourceKind::Loader);
}

/// The frontmatter as JSON is the file's, verbatim: every field, unknown ones included, nested
/// maps and lists as written, values YAML reads as numbers or booleans as such.
#[test]
fn frontmatter_json_is_the_files_frontmatter_verbatim() {
    let text = "---\nname: pdf\ndescription: \"Fill PDF forms\"\nlicense: MIT\nmetadata:\n  version: '2.1'\nallowed-tools: Read Write\nx-extra: [1, true]\n---\nbody\n";
    let map = crate::frontmatter_json(text).expect("parses");
    assert_eq!(
        serde_json::Value::Object(map),
        serde_json::json!({
            "name": "pdf",
            "description": "Fill PDF forms",
            "license": "MIT",
            "metadata": {"version": "2.1"},
            "allowed-tools": "Read Write",
            "x-extra": [1, true],
        })
    );
    // The plain reader and the YAML parser agree (no quoting, one level of blocks).
    let plain = crate::frontmatter_json("---\nname: a\ndescription: b\n---\n").expect("parses");
    assert_eq!(
        serde_json::Value::Object(plain),
        serde_json::json!({"name": "a", "description": "b"})
    );
    for (bad, why) in [
        ("no fence\n", "missing frontmatter"),
        ("---\nname: [a\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "expected a mapping"),
        (
            &format!("---\nx: {}\n---\n", "[".repeat(200)),
            "nests more than",
        ),
    ] {
        let err = crate::frontmatter_json(bad).expect_err(bad);
        assert!(err.contains(why), "{bad:?}: {err}");
    }
}
