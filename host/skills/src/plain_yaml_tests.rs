//! The plain reader against serde_yaml_ng: whatever it accepts, serde_yaml_ng reads to the
//! same mapping; what it is not sure of, it leaves to serde_yaml_ng.

use std::path::Path;

use serde_yaml_ng::Value;

use super::mapping;
use crate::split_frontmatter;

/// `Some(true)` when the plain reader took `yaml` (and agreed with serde_yaml_ng), `Some(false)`
/// when it left it to serde_yaml_ng.
fn differential(yaml: &str) -> bool {
    let Some(fast) = mapping(yaml) else {
        return false;
    };
    let slow: Value = serde_yaml_ng::from_str(yaml)
        .unwrap_or_else(|e| panic!("read plainly, but serde_yaml_ng refuses {yaml:?}: {e}"));
    assert_eq!(Value::Mapping(fast), slow, "{yaml:?}");
    true
}

#[test]
fn the_usual_frontmatter_is_read_plainly_and_exactly() {
    let usual = [
        "name: pdf-tools\ndescription: Use when a PDF must be split, merged or filled.\n",
        "name: skill-00001\ndescription: Use when the task involves topic number 1; explains how to handle it step by step.\nlicense: MIT\nallowed-tools: tracker.search_issues tracker.get_issue\nmetadata:\n  author: bench\n  version: \"1.0\"\n",
        "name: x\ndescription: 'Quoted, with: a colon and # a hash'\n",
        "name: x\ndescription: \"Double quoted, it's fine\"\n",
        "name: 技能\ndescription: Навык для отчётов — C# and F#, 100% (mostly) [sic] {ok}\n",
        "name: x\ndescription: trailing spaces   \nmetadata:\n    deep: four spaces\n    other: value\nlicense: Apache-2.0\n",
        "name: x\ndescription: ends with a quote\"\ncompatibility: Requires git, docker=24 and <network>\n",
        "name: x\nmetadata:\n",
        "name: x\nmetadata:\nlicense: MIT\n",
        "name: x\ndescription: Use when stuck.\n\n",
    ];
    for yaml in usual {
        assert!(differential(yaml), "not read plainly: {yaml:?}");
    }
}

#[test]
fn anything_else_is_left_to_serde_yaml() {
    let other = [
        "",
        "\n",
        "# a comment\nname: x\n",
        "name: x # comment\n",
        "name: x\n\ndescription: y\n",
        "name: x\r\ndescription: y\r\n",
        "name:\tx\n",
        "description: >\n  folded\n  text\n",
        "description: |\n  literal\n",
        "description: one\n  continued\n",
        "allowed-tools:\n  - a\n  - b\n",
        "allowed-tools: [a, b]\n",
        "metadata: {a: b}\n",
        "metadata:\n  nested:\n    deeper: x\n",
        "metadata:\n  a: b\n   c: d\n",
        "metadata:\n    a: b\n  c: d\n",
        "version: 1.0\n",
        "version: 0x1F\n",
        "flag: true\n",
        "flag: yes\n",
        "flag: Off\n",
        "none: ~\n",
        "none: null\n",
        "float: .inf\n",
        "neg: -1\n",
        "name: x\nname: y\n",
        "metadata:\n  a: b\n  a: c\n",
        "name: \"esc\\\"aped\"\n",
        "name: \"back\\\\slash\"\n",
        "name: 'it''s'\n",
        "name: \"unterminated\n",
        "name: \"a\" trailing\n",
        "description: key: value\n",
        "description: ends with colon:\n",
        "anchor: &a x\n",
        "alias: *a\n",
        "tag: !str x\n",
        "name: x\u{85}y\n",
        "name: x\u{2028}y\n",
        "name: x\u{1}y\n",
        "true: x\n",
        "1: x\n",
        "a b: x\n",
        "name : x\n",
        "name:x\n",
        "  name: x\n",
        "- a\n- b\n",
        "just text\n",
        "%YAML 1.2\n",
    ];
    for yaml in other {
        assert!(
            !differential(yaml),
            "read plainly, expected serde_yaml_ng: {yaml:?}"
        );
    }
}

#[test]
fn many_keys_read_in_one_pass_and_a_late_repeat_is_left_to_serde_yaml() {
    // A hostile SKILL.md may hold tens of thousands of keys within its size cap.
    let mut yaml: String = (0..50_000).map(|i| format!("k{i}: v\n")).collect();
    assert!(differential(&yaml));
    assert_eq!(mapping(&yaml).map(|m| m.len()), Some(50_000));
    yaml.push_str("k7: again\n");
    assert!(!differential(&yaml));
}

#[test]
fn the_public_corpus_reads_the_same_either_way() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/skills-corpus");
    let mut plain = 0;
    let mut total = 0;
    for dir in std::fs::read_dir(&corpus).expect("tests/skills-corpus") {
        let file = dir.expect("entry").path().join("SKILL.md");
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let (yaml, _) = split_frontmatter(&text).expect("corpus skills have frontmatter");
        total += 1;
        plain += usize::from(differential(yaml));
    }
    assert!(total >= 10, "corpus has {total} skills");
    assert!(plain > 0, "none of {total} corpus skills read plainly");
}

/// xorshift64*: reproducible generated cases without a dependency.
struct Cases(u64);

impl Cases {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

#[test]
fn generated_frontmatter_reads_the_same_either_way() {
    // Mostly what skills write, with a pinch of everything YAML treats specially.
    const INDENTS: &[&str] = &["", "", "", "", "", "", "  ", "  ", " ", "    "];
    const KEYS: &[&str] = &[
        "name",
        "description",
        "metadata",
        "license",
        "author",
        "Name",
        "a_b",
        "k-1",
        "true",
        "y",
        "1",
        "-x",
        "a b",
        "Null",
        "on",
    ];
    const SEPARATORS: &[&str] = &[
        ": ", ": ", ": ", ": ", ": ", ": ", ":", ":  ", " : ", ": \t", ":x",
    ];
    const USUAL: &[&str] = &[
        "word", "Use", "when", " ", " ", " ", "é", "技能", "😀", "\u{a0}", "=", "<", "$", "/", ",",
        "-", "1", "'", "\"", "(", ")", "#", ":", "[", "]", "{", "}", "%", "\\", ".",
    ];
    const SPECIAL: &[&str] = &[
        " #", ": ", "1.5", "true", "null", "~", "\u{85}", "\u{2028}", "\u{feff}", "&a", "*a", "!t",
        "|", ">", "@", "`", "?", "inf", ".nan", "0x1F", "yes", "On", "  ", "\u{7f}", "\u{1}",
    ];
    let mut cases = Cases(0x9e37_79b9_7f4a_7c15);
    let mut plain = 0;
    for _ in 0..20_000 {
        let mut yaml = String::new();
        for _ in 0..=cases.below(4) {
            let usual = cases.below(4) > 0;
            yaml.push_str(if usual { "" } else { cases.pick(INDENTS) });
            yaml.push_str(cases.pick(if usual { &KEYS[..5] } else { KEYS }));
            yaml.push_str(if usual { ": " } else { cases.pick(SEPARATORS) });
            let quote = cases.pick(&["", "", "", "", "'", "\""]);
            yaml.push_str(quote);
            for _ in 0..cases.below(6) {
                let from = if cases.below(10) > 0 { USUAL } else { SPECIAL };
                yaml.push_str(cases.pick(from));
            }
            yaml.push_str(quote);
            yaml.push('\n');
        }
        plain += usize::from(differential(&yaml));
    }
    // The cases must exercise the plain reader, not only the fallback.
    assert!(plain > 2_000, "only {plain} of 20,000 cases read plainly");
}
