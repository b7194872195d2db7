//! One test per memory rule, with the protocol's exact thresholds and messages.

use super::*;

/// A valid document of exactly `n` characters (as the limits count them: the final newline
/// left out): one section, one long standard bullet.
pub(super) fn doc_of(n: usize) -> String {
    let head = "## Notes\n- 2026-01-01: ";
    let text = format!("{head}{}\n", "x".repeat(n - head.len()));
    assert_eq!(text.chars().count(), n + 1);
    text
}

pub(super) fn accepted(v: Validation) -> (String, Vec<String>, Usage) {
    match v {
        Validation::Accepted {
            text,
            warnings,
            usage,
        } => (text, warnings, usage),
        other => panic!("expected accepted, got {other:?}"),
    }
}

pub(super) fn refused(v: Validation) -> (Vec<String>, Usage) {
    match v {
        Validation::Refused { errors, usage } => (errors, usage),
        other => panic!("expected refused, got {other:?}"),
    }
}

#[test]
fn hard_limit_refuses_over_25000_chars_with_the_merge_message() {
    let (_, warnings, usage) = accepted(validate(Scope::Team, &doc_of(25_000), None));
    assert_eq!(usage.chars, 25_000);
    assert!(
        warnings.iter().any(|w| w.contains("soft limit")),
        "{warnings:?}"
    );
    let (errors, usage) = refused(validate(Scope::Team, &doc_of(25_001), None));
    assert_eq!(
        errors,
        [
            "Memory is 25,001 characters, over the limit of 25,000 characters. Merge related \
          entries, drop stale ones and shorten descriptions, then send the full document again."
        ]
    );
    assert_eq!(
        (usage.chars, usage.limit),
        (25_001, 25_000),
        "usage comes with a refusal"
    );
}

#[test]
fn soft_limit_warns_over_18000_chars_to_consolidate() {
    let (_, warnings, _) = accepted(validate(Scope::Team, &doc_of(18_000), None));
    assert!(
        warnings.is_empty(),
        "18,000 is within the soft limit: {warnings:?}"
    );
    let (_, warnings, _) = accepted(validate(Scope::Team, &doc_of(18_001), None));
    assert_eq!(
        warnings,
        [
            "Memory is 18,001 characters, over the soft limit of 18,000 (the limit is 25,000): \
          consolidate it — merge related entries and drop stale ones."
        ]
    );
}

#[test]
fn usage_against_the_limit_is_always_reported() {
    let (_, _, usage) = accepted(validate(Scope::Private, &doc_of(100), None));
    assert_eq!(
        usage,
        Usage {
            chars: 100,
            soft_limit: 18_000,
            limit: 25_000
        }
    );
    assert_eq!(usage.to_string(), "100 / 25,000 characters (0 %)");
    assert_eq!(
        Usage::of(&doc_of(12_500)).to_string(),
        "12,500 / 25,000 characters (50 %)"
    );
}

#[test]
fn content_over_40_chars_needs_a_heading() {
    let forty = "a".repeat(40);
    let (text, _, _) = accepted(validate(Scope::Team, &forty, None));
    assert_eq!(
        text,
        format!("{forty}\n"),
        "a short note without a heading is kept"
    );
    let (errors, _) = refused(validate(Scope::Team, &"a".repeat(41), None));
    assert_eq!(
        errors,
        ["Memory must be markdown with at least one ## heading."]
    );
    // A level-3 heading is not a section.
    let (errors, _) = refused(validate(
        Scope::Team,
        "### Notes\n- 2026-01-01: we ship on fridays now",
        None,
    ));
    assert_eq!(
        errors,
        ["Memory must be markdown with at least one ## heading."]
    );
}

#[test]
fn team_memory_may_not_introduce_personal_headings() {
    for heading in [
        "Preferences",
        "INSTRUCTIONS",
        "personal notes",
        "Personal Instructions:",
    ] {
        let text = format!("## Decisions\n- 2026-01-01: use tabs\n## {heading}\n- 2026-01-01: x\n");
        let stored = "## Decisions\n- 2026-01-01: use tabs\n";
        let (errors, _) = refused(validate(Scope::Team, &text, Some(stored)));
        assert_eq!(
            errors,
            [format!(
                "Team memory may not introduce the personal heading \"## {heading}\": team \
                 memory is shared by the whole workspace. Keep preferences and instructions in \
                 private memory, or file the entries under a team-safe heading (e.g. \
                 ## Decisions, ## Conventions)."
            )]
        );
        // Private memory is where they belong.
        accepted(validate(Scope::Private, &text, Some(stored)));
    }
    // Headings that merely contain the word are team-safe.
    accepted(validate(
        Scope::Team,
        "## Build instructions for CI\n- 2026-01-01: run make\n",
        None,
    ));
}

#[test]
fn team_memory_keeps_a_stored_personal_heading_with_a_warning() {
    let stored = "## Preferences\n- 2026-01-01: short names\n";
    let text = "## Preferences\n- 2026-01-01: short names\n- 2026-01-02: no emoji\n";
    let (stored_text, warnings, _) = accepted(validate(Scope::Team, text, Some(stored)));
    assert_eq!(stored_text, text);
    assert_eq!(
        warnings,
        [
            "Team memory keeps the personal heading \"## Preferences\" from the stored version: \
          move its entries under team-safe headings (e.g. ## Decisions, ## Conventions)."
        ]
    );
}

#[test]
fn a_dropped_section_warns_of_data_loss() {
    let stored = "## Decisions\n- 2026-01-01: a\n## Glossary\n- 2026-01-01: b\n";
    let (_, warnings, _) = accepted(validate(
        Scope::Team,
        "## Decisions\n- 2026-01-01: a, and more\n",
        Some(stored),
    ));
    assert_eq!(
        warnings,
        [
            "Possible data loss: section(s) \"## Glossary\" of the stored version are missing. \
          Every update replaces the whole document: include every section you want to keep."
        ]
    );
    // Renaming the case of a heading is not dropping it.
    let (_, warnings, _) = accepted(validate(
        Scope::Team,
        "## decisions\n- 2026-01-01: a\n## GLOSSARY\n- 2026-01-01: b\n",
        Some(stored),
    ));
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_text_under_40_percent_of_the_stored_one_warns_of_data_loss() {
    let stored = doc_of(1_000);
    let (_, warnings, _) = accepted(validate(Scope::Team, &doc_of(400), Some(&stored)));
    assert!(warnings.is_empty(), "exactly 40 % is no loss: {warnings:?}");
    let (_, warnings, _) = accepted(validate(Scope::Team, &doc_of(399), Some(&stored)));
    assert_eq!(
        warnings,
        [
            "Possible data loss: the new text is 399 characters, under 40 % of the stored 1,000. \
          Every update replaces the whole document: include everything you want to keep."
        ]
    );
}

#[test]
fn a_non_standard_bullet_warns_naming_the_line() {
    let text = "## Decisions\n- 2026-01-01: fine\n- no date here\n-2026-01-01: no space\n  - indented detail\n---\n";
    let (stored, warnings, _) = accepted(validate(Scope::Team, text, None));
    assert_eq!(stored, text, "odd lines are kept as they were");
    assert_eq!(
        warnings,
        [
            "Line 3 is not a standard bullet `- YYYY-MM-DD: text`: \"- no date here\"",
            "Line 4 is not a standard bullet `- YYYY-MM-DD: text`: \"-2026-01-01: no space\"",
        ]
    );
    // A bad date is not a date.
    let (_, warnings, _) = accepted(validate(Scope::Team, "## A\n- 2026-13-01: x\n", None));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn text_before_the_first_heading_is_stripped() {
    let text = "Sure! Here is the updated memory:\n\n## Decisions\n- 2026-01-01: use tabs\n";
    let (stored, warnings, _) = accepted(validate(Scope::Team, text, None));
    assert_eq!(stored, "## Decisions\n- 2026-01-01: use tabs\n");
    assert_eq!(
        warnings,
        [
            "Removed the 35 characters before the first ## heading: a memory document starts at a \
          ## heading."
        ]
    );
}

#[test]
fn sentinels_and_empty_texts_are_no_ops() {
    for s in [
        "NO_UPDATE",
        "NO CHANGE",
        "no_change",
        "NO UPDATE",
        "NO-CHANGES",
        "`NO_UPDATE`",
        "  NO_UPDATES.\n",
        "NO_UPDATE_NEEDED",
        "nothing to update",
    ] {
        match validate(Scope::Team, s, Some("## A\n")) {
            Validation::NoOp { reason } => {
                assert!(reason.ends_with("nothing was changed"), "{s}: {reason}")
            }
            other => panic!("{s:?} must be a no-op, got {other:?}"),
        }
    }
    for empty in ["", "  \n\t\n"] {
        assert!(matches!(
            validate(Scope::Team, empty, Some("## A\n")),
            Validation::NoOp { .. }
        ));
    }
    // A sentinel inside a document is just text.
    accepted(validate(
        Scope::Team,
        "## A\n- 2026-01-01: NO_UPDATE\n",
        None,
    ));
}

#[test]
fn the_stored_text_again_is_a_no_op() {
    let stored = "## A\n- 2026-01-01: x\n";
    assert!(matches!(
        validate(Scope::Team, "## A\r\n- 2026-01-01: x\r\n\r\n", Some(stored)),
        Validation::NoOp { .. }
    ));
}

#[test]
fn legacy_bullets_are_normalized_without_losing_text() {
    let text = "## Decisions\n- (2025-03-04) [infra] moved CI to [self-hosted] runners\n- (2025-03-05) plain legacy\n- 2026-01-01: standard\n";
    let (stored, warnings, _) = accepted(validate(Scope::Team, text, None));
    assert_eq!(
        stored,
        "## Decisions\n- 2025-03-04: [infra] moved CI to [self-hosted] runners\n- 2025-03-05: plain legacy\n- 2026-01-01: standard\n"
    );
    assert_eq!(
        warnings,
        [
            "Normalized 2 legacy bullet(s) `- (YYYY-MM-DD) [tag] text` to the standard form \
          `- YYYY-MM-DD: [tag] text`."
        ]
    );
}

#[test]
fn unknown_lines_are_kept_as_they_were() {
    let text = "## Notes\nfree text   with  spacing\n\n### Sub\n| a | b |\n```\ncode\n```\n  - 2026-01-01: indented\n";
    let (stored, warnings, _) = accepted(validate(Scope::Private, text, None));
    assert_eq!(stored, text);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn memory_rights_parse_and_print() {
    for a in MemoryAccess::ALL {
        assert_eq!(MemoryAccess::parse(a.as_str()), Ok(a));
    }
    let err = MemoryAccess::parse("team:admin").expect_err("unknown right");
    assert!(err.contains("\"team:read\""), "{err}");
    assert!(
        MemoryAccess::parse("Team:Read").is_err(),
        "spelling is exact"
    );
}

/// A rewriter test double that answers with a fixed text and counts its calls.
struct Fixed(String, std::sync::atomic::AtomicUsize);

impl LlmRewriter for Fixed {
    fn rewrite<'a>(&'a self, _text: &'a str, limit: usize) -> RewriteFuture<'a> {
        assert_eq!(limit, HARD_LIMIT_CHARS);
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let answer = self.0.clone();
        Box::pin(async move { Ok(answer) })
    }
}

fn fixed(text: String) -> Fixed {
    Fixed(text, std::sync::atomic::AtomicUsize::new(0))
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

#[test]
fn an_over_limit_write_is_refused_without_a_rewriter() {
    let (errors, _) = refused(block_on(validate_with_rewrite(
        Scope::Team,
        &doc_of(25_001),
        None,
        None,
    )));
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("Memory is 25,001 characters, over the limit"));
}

#[test]
fn a_shorter_valid_rewrite_is_used_with_the_notice() {
    let rewriter = fixed(doc_of(20_000));
    let (text, warnings, usage) = accepted(block_on(validate_with_rewrite(
        Scope::Team,
        &doc_of(30_000),
        None,
        Some(&rewriter),
    )));
    assert_eq!(text, doc_of(20_000));
    assert_eq!(usage.chars, 20_000);
    assert_eq!(
        warnings[0],
        "Memory was automatically rewritten to fit within limits."
    );
    assert_eq!(
        rewriter.1.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one rewrite"
    );
}

#[test]
fn a_rewrite_that_is_invalid_or_not_shorter_is_not_used() {
    // Invalid: still over the limit, and no heading.
    for bad in [doc_of(26_000), "x".repeat(100), doc_of(31_000)] {
        let rewriter = fixed(bad);
        let (errors, usage) = refused(block_on(validate_with_rewrite(
            Scope::Team,
            &doc_of(30_000),
            None,
            Some(&rewriter),
        )));
        assert_eq!(usage.chars, 30_000, "the refusal is the original's");
        assert!(
            errors[0].starts_with("Memory is 30,000 characters"),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("An automatic rewrite was tried and not used"),
            "{errors:?}"
        );
    }
    // Refused for another reason too: no rewrite is tried.
    let rewriter = fixed(doc_of(100));
    let text = format!("## Preferences\n{}", &doc_of(30_000)["## Notes\n".len()..]);
    let (errors, _) = refused(block_on(validate_with_rewrite(
        Scope::Team,
        &text,
        None,
        Some(&rewriter),
    )));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(rewriter.1.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn version_metadata_hashes_and_counts_the_text() {
    let v = NewVersion {
        text: "## Café\n".into(),
        actor: "supervisor".into(),
        restored_from: None,
    }
    .info(3, 42);
    assert_eq!(
        v.sha256,
        "ac73f8afbf0e804fd602b6fd6438096791f07e951b8cde9b931a04f13b680da9"
    );
    assert_eq!((v.version, v.at_ms, v.chars, v.bytes), (3, 42, 8, 9));
}
