//! The team-memory rules against writers that try to dodge them: each bypass refused (or
//! normalized) next to the honest form that still works.

use super::tests::{accepted, doc_of, refused};
use super::*;

const STORED: &str = "## Decisions\n- 2026-01-01: use tabs\n";

/// `heading` (a whole heading block) added to the stored team document.
fn with(heading: &str) -> String {
    format!("{STORED}{heading}\n- 2026-01-02: short names\n")
}

fn refused_as_personal(text: &str) {
    let (errors, _) = refused(validate(Scope::Team, text, Some(STORED)));
    assert!(
        errors.len() == 1 && errors[0].contains("may not introduce the personal heading"),
        "{text:?}: {errors:?}"
    );
}

#[test]
fn look_alike_personal_headings_are_refused_and_honest_ones_pass() {
    for heading in [
        "## Ｐｒｅｆｅｒｅｎｃｅｓ",                  // fullwidth letters
        "## Personal\u{a0}Notes",                     // non-breaking space
        "## Pre\u{200b}ferences",                     // zero-width space
        "## Instru\u{200d}ctions\u{feff}",            // zero-width joiner, byte-order mark
        "## Pr\u{0435}f\u{0435}r\u{0435}nc\u{0435}s", // Cyrillic е
        "## Р\u{0435}rsonal notes",                   // Cyrillic Р and е
        "## 𝐏𝐫𝐞𝐟𝐞𝐫𝐞𝐧𝐜𝐞𝐬",                             // mathematical bold
        "## Personal-Notes",
        "## **Preferences**",
        "## Preferences.",
        "## _Personal_ _instructions_:",
        "## Pre*ferences*",
        "## Pref<!-- -->erences",
        "## Pr&#101;ferences",
        "## [Preferences](https://example.com)",
        "## `Instructions`",
    ] {
        refused_as_personal(&with(heading));
        // The same heading is private memory's to keep.
        accepted(validate(Scope::Private, &with(heading), Some(STORED)));
    }
    // Honest team headings, even ones near the words, still work.
    for heading in [
        "## Conventions",
        "## Build instructions",
        "## Preferences for the CI runners",
        "## Personal notes policy",
        "## Ｃｏｎｖｅｎｔｉｏｎｓ",
    ] {
        accepted(validate(Scope::Team, &with(heading), Some(STORED)));
    }
}

#[test]
fn a_look_alike_is_named_with_what_it_reads_as() {
    let (errors, _) = refused(validate(
        Scope::Team,
        &with("## Pre\u{200b}ferences"),
        Some(STORED),
    ));
    assert!(
        errors[0].contains(r###""## Pre\u{200b}ferences" (it reads as "## preferences")"###),
        "{errors:?}"
    );
}

#[test]
fn every_line_markdown_renders_as_a_heading_is_one() {
    for text in [
        // Setext, levels 2 and 1.
        format!("{STORED}\nPreferences\n-----------\n- 2026-01-02: x\n"),
        format!("{STORED}\nPersonal notes\n==============\n"),
        // A bare CR ends a line.
        "## Decisions\r- 2026-01-01: use tabs\r## Preferences\r- 2026-01-02: x\r".to_owned(),
        // Other levels, indentation, closing hashes, containers, raw HTML.
        with("### Preferences"),
        with("# Instructions"),
        with("   ## Preferences ##"),
        with("> ## Preferences"),
        format!("{STORED}    ## Preferences\n"), // inside the list item above
        with("<h2>Personal <b>notes</b></h2>"),
    ] {
        refused_as_personal(&text);
    }
    // What Markdown does not render as a heading is not one.
    for text in [
        with("##Preferences"),
        format!("{STORED}```\n## Preferences\n```\n"),
        format!("{STORED}\nplain text\n\n    ## Preferences\n"),
        with("\\## Preferences"),
    ] {
        accepted(validate(Scope::Team, &text, Some(STORED)));
    }
    // A setext section is a section, and a bare CR is a line ending for the stored text too.
    let (text, _, _) = accepted(validate(
        Scope::Team,
        "Intro\r\rDecisions\r---------\r- 2026-01-01: use tabs\r",
        None,
    ));
    assert_eq!(text, "Decisions\n---------\n- 2026-01-01: use tabs\n");
}

#[test]
fn near_sentinels_are_no_ops_and_a_document_mentioning_one_is_not() {
    for s in [
        "`NO_CHANGES`.",
        "\"NO_UPDATE\".",
        "**NO_UPDATE**",
        "`no-update`!",
        "ＮＯ＿ＵＰＤＡＴＥ",
        "NO_\u{200b}UPDATE",
        "NO_UPDATE\r\n",
        "...",
        "`` ``",
    ] {
        assert!(
            matches!(
                validate(Scope::Team, s, Some(STORED)),
                Validation::NoOp { .. }
            ),
            "{s:?} must change nothing"
        );
    }
    for s in ["NO_UPDATE yet", "## A\n- 2026-01-01: NO_CHANGES.\n", "no"] {
        assert!(
            !matches!(
                validate(Scope::Team, s, Some(STORED)),
                Validation::NoOp { .. }
            ),
            "{s:?} is text, not a sentinel"
        );
    }
}

#[test]
fn the_limit_does_not_count_the_final_newline() {
    let exact = doc_of(25_000);
    let bare = exact.strip_suffix('\n').expect("newline");
    for text in [exact.as_str(), bare] {
        let (stored, _, usage) = accepted(validate(Scope::Team, text, None));
        assert_eq!(usage.chars, 25_000, "{:?}", &text[text.len() - 5..]);
        assert_eq!(stored, exact, "stored with one final newline");
    }
    let over = doc_of(25_001);
    let (errors, usage) = refused(validate(Scope::Team, over.trim_end(), None));
    assert_eq!(usage.chars, 25_001);
    assert!(
        errors[0].starts_with("Memory is 25,001 characters"),
        "{errors:?}"
    );
}

#[test]
fn impossible_dates_are_not_standard_bullets() {
    for date in [
        "2025-02-30",
        "2025-02-29",
        "2026-04-31",
        "2026-00-10",
        "2026-01-00",
    ] {
        let (_, warnings, _) =
            accepted(validate(Scope::Team, &format!("## A\n- {date}: x\n"), None));
        assert_eq!(warnings.len(), 1, "{date}: {warnings:?}");
        // Nor are they legacy bullets to normalize.
        let legacy = format!("## A\n- ({date}) [t] x\n");
        let (text, _, _) = accepted(validate(Scope::Team, &legacy, None));
        assert_eq!(text, legacy, "{date}");
    }
    for date in ["2024-02-29", "2000-02-29", "2026-12-31", "2026-04-30"] {
        let (_, warnings, _) =
            accepted(validate(Scope::Team, &format!("## A\n- {date}: x\n"), None));
        assert!(warnings.is_empty(), "{date}: {warnings:?}");
    }
    let (_, warnings, _) = accepted(validate(Scope::Team, "## A\n- 1900-02-29: x\n", None));
    assert_eq!(warnings.len(), 1, "1900 is not a leap year: {warnings:?}");
}
