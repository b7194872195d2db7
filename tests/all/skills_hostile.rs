//! Skills that attack the catalog, with real files: frontmatter nested deep enough to stall a
//! YAML parser, control and bidi characters aimed at a model or a terminal, a description that
//! would crowd the others out, look-alike names and a symlinked alias folder. Each attack has
//! an allowed twin that must keep working.

use std::path::{Path, PathBuf};
use std::time::Instant;

use futures::future::BoxFuture;
use guild_host::skills::{
    Catalog, LoaderSkill, MAX_DEPTH, MAX_DESCRIPTION, Mode, NoLoaders, Severity, SkillLoaders,
    SkillLocation, SkillSource, Skills, SkillsSettings, SourceKind, TaskSkills, check_dir,
    scan_folder,
};

fn write_md(root: &Path, folder: &str, text: &str) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("SKILL.md"), text).expect("write SKILL.md");
    dir
}

fn write_skill(root: &Path, name: &str, description: &str) -> PathBuf {
    write_md(
        root,
        name,
        &format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"),
    )
}

fn shared(path: &Path) -> Vec<SkillSource> {
    vec![SkillSource::Folder {
        path: path.to_owned(),
        label: "team".to_owned(),
        kind: SourceKind::Shared,
    }]
}

async fn catalog_of(path: &Path, settings: SkillsSettings) -> Catalog {
    Skills::new(settings, path)
        .catalog(&shared(path), &NoLoaders)
        .await
}

/// `levels` nested flow sequences, or `- ` entries on one line, as the `metadata` value.
fn nested(levels: usize, flow: bool) -> String {
    let value = if flow {
        format!("{}x{}", "[".repeat(levels), "]".repeat(levels))
    } else {
        format!("\n  {}x", "- ".repeat(levels))
    };
    format!("---\nname: deep\ndescription: d\nmetadata: {value}\n---\nbody\n")
}

/// The hostile inputs of the report (50,000 and 100,000 levels), and ones small enough to pass
/// the size bound so the depth bound itself is what refuses them: every scan path finishes
/// and names the bound, and a sibling skill still loads.
#[tokio::test]
async fn deeply_nested_frontmatter_is_refused_before_parsing_on_every_path() {
    for (levels, flow) in [
        (50_000, true),
        (100_000, true),
        (100_000, false),
        (20_000, true),
        (20_000, false),
        (MAX_DEPTH + 1, true),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        write_md(dir.path(), "deep", &nested(levels, flow));
        write_skill(dir.path(), "fine", "A sibling that must still load.");
        let started = Instant::now();
        // check (strict), a lenient scan (list) and the service's catalog (serve).
        let report = check_dir(dir.path());
        let scan = scan_folder(dir.path(), Mode::Lenient, "team");
        let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
        eprintln!(
            "{levels} levels ({}): three paths in {:?}",
            if flow { "flow" } else { "sequence" },
            started.elapsed()
        );
        for (what, problems) in [
            ("check", &report.problems),
            ("scan", &scan.catalog.problems),
        ] {
            let p = problems
                .iter()
                .find(|p| p.file.ends_with("deep/SKILL.md"))
                .unwrap_or_else(|| panic!("{what}, {levels}: no problem for deep: {problems:?}"));
            assert_eq!(p.severity, Severity::Error, "{p}");
            assert!(
                p.reason.contains("levels deep") || p.reason.contains("over the limit of 65536"),
                "{what}, {levels}: {p}"
            );
        }
        assert_eq!(report.valid, vec!["fine"]);
        assert_eq!(catalog.names(), vec!["fine"]);
    }
}

#[tokio::test]
async fn ordinary_nesting_still_parses() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_md(
        dir.path(),
        "nested",
        "---\nname: nested\ndescription: Uses [brackets] and {braces} in text.\nmetadata:\n  author: ann\n  version: \"1.0\"\nallowed-tools: Read Grep\n---\nbody\n",
    );
    let report = check_dir(dir.path());
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!(report.valid, vec!["nested"]);
}

const HOSTILE: &[(&str, &str)] = &[
    (
        "esc",
        "Red \u{1b}[31mtext\u{1b}[0m and a title \u{1b}]0;pwned\u{7}",
    ),
    ("bel", "Rings \u{7} the bell"),
    ("nul", "A NUL \u{0} byte"),
    ("rlo", "Reads \u{202e}desrever backwards"),
    ("isolate", "An \u{2066}isolate\u{2069} here"),
    ("zwsp", "my\u{200b}skill is invisible"),
];

/// YAML double-quoted escapes put the characters in the description, as a hostile author would.
fn yaml_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c.is_ascii_graphic() || c == ' ' {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        } else {
            out.push_str(&format!("\\U{:08x}", c as u32));
        }
    }
    out.push('"');
    out
}

#[tokio::test]
async fn control_and_bidi_characters_never_reach_the_catalog_raw() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, description) in HOSTILE {
        write_skill(dir.path(), name, &yaml_quoted(description));
    }
    write_skill(dir.path(), "emoji", "Pairs 👩\u{200d}💻 with café — 技能.");
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    assert_eq!(catalog.len(), HOSTILE.len() + 1, "{:?}", catalog.problems);
    let text = catalog.render();
    let json = serde_json::to_string(&catalog.items()).expect("json");
    let shown = serde_json::to_string(&catalog.iter().collect::<Vec<_>>()).expect("json");
    for out in [&text, &json, &shown] {
        let raw = out.chars().find(|c| {
            matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}')
        });
        assert_eq!(raw, None, "a raw control character in {out}");
    }
    assert!(text.contains("Reads \\u{202e}desrever backwards"), "{text}");
    assert!(text.contains("Red \\x1b[31mtext"), "{text}");
    // The allowed twin: a joiner inside an emoji sequence and non-ASCII text stay as written.
    assert!(
        text.contains("Pairs 👩\u{200d}💻 with café — 技能."),
        "{text}"
    );
    // Each hostile one warns, naming its file.
    for (name, _) in HOSTILE {
        assert!(
            catalog.problems.iter().any(|p| p.field == "description"
                && p.severity == Severity::Warning
                && p.file.ends_with(format!("{name}/SKILL.md"))),
            "{name}: {:?}",
            catalog.problems
        );
    }
    // The body a model loads is neutralized the same way.
    let body_dir = write_md(
        dir.path(),
        "body",
        "---\nname: body\ndescription: d\n---\nStep one\u{1b}[2J\r\nStep \u{202e}two\n",
    );
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    let skills = Skills::new(SkillsSettings::default(), dir.path());
    let body = skills
        .load(&catalog, &TaskSkills::new(), "body", &NoLoaders)
        .await
        .expect("body");
    assert!(
        body.content
            .contains("Step one\\x1b[2J\r\nStep \\u{202e}two"),
        "{:?} ({})",
        body.content,
        body_dir.display()
    );
}

#[test]
fn strict_check_refuses_control_and_bidi_characters() {
    for (name, description) in HOSTILE {
        let dir = tempfile::tempdir().expect("tempdir");
        write_skill(dir.path(), name, &yaml_quoted(description));
        let report = check_dir(dir.path());
        assert!(!report.ok(), "{name}: strict check accepted it");
        let p = report
            .problems
            .iter()
            .find(|p| p.field == "description")
            .unwrap_or_else(|| panic!("{name}: {:?}", report.problems));
        assert!(
            p.reason
                .contains("control or invisible format character U+"),
            "{p}"
        );
    }
    // Other fields too.
    let dir = tempfile::tempdir().expect("tempdir");
    write_md(
        dir.path(),
        "meta",
        "---\nname: meta\ndescription: d\ncompatibility: \"x\\e[8m\"\nmetadata:\n  note: \"a\\u202eb\"\n---\nb\n",
    );
    let report = check_dir(dir.path());
    let fields: Vec<&str> = report.problems.iter().map(|p| p.field.as_str()).collect();
    assert!(
        fields.contains(&"compatibility") && fields.contains(&"metadata.note"),
        "{fields:?}"
    );
    // The allowed twin.
    let dir = tempfile::tempdir().expect("tempdir");
    write_skill(dir.path(), "emoji", "Pairs 👩\u{200d}💻 with café — 技能.");
    let report = check_dir(dir.path());
    assert!(report.ok(), "{:?}", report.problems);
}

#[tokio::test]
async fn a_name_or_folder_with_a_bidi_override_never_keys_the_catalog() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The name is not usable: the folder's is taken, with a warning.
    write_md(
        dir.path(),
        "plain",
        "---\nname: \"pl\\u202eain\"\ndescription: d\n---\nb\n",
    );
    // No name, and a folder name that cannot be one: skipped.
    write_md(dir.path(), "ev\u{202e}il", "---\ndescription: d\n---\nb\n");
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    assert_eq!(catalog.names(), vec!["plain"], "{:?}", catalog.problems);
    assert!(
        catalog
            .problems
            .iter()
            .any(|p| p.severity == Severity::Error && p.reason.contains("cannot be used")),
        "{:?}",
        catalog.problems
    );
}

#[tokio::test]
async fn one_long_description_cannot_crowd_the_others_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Sorted first, so without a cap it would take the whole 16 KiB budget.
    write_skill(dir.path(), "aaa-hog", &"x".repeat(16_000));
    for name in ["pdf", "slides", "zip"] {
        write_skill(dir.path(), name, &format!("Work with {name} files."));
    }
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    let items = catalog.items();
    let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, vec!["aaa-hog", "pdf", "slides", "zip"]);
    assert_eq!(items[0].description.chars().count(), MAX_DESCRIPTION);
    assert!(items[0].description.ends_with('…'));
    assert_eq!(catalog.omitted().count, 0);
    let warning = catalog
        .problems
        .iter()
        .find(|p| p.field == "description")
        .expect("a warning about the cut");
    assert_eq!(warning.severity, Severity::Warning);
    assert!(
        warning.reason.contains("skill 'aaa-hog'") && warning.reason.contains("16000 characters"),
        "{warning}"
    );
    // The allowed twin: exactly 1,024 characters is listed whole, without a warning.
    let dir = tempfile::tempdir().expect("tempdir");
    write_skill(dir.path(), "full", &"y".repeat(MAX_DESCRIPTION));
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    assert_eq!(catalog.items()[0].description, "y".repeat(MAX_DESCRIPTION));
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
}

#[tokio::test]
async fn a_cut_catalog_says_how_many_and_why_as_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..40 {
        write_skill(dir.path(), &format!("s-{i:02}"), &"d".repeat(90));
    }
    let small = SkillsSettings {
        catalog_max_bytes: 2048,
        ..SkillsSettings::default()
    };
    let catalog = catalog_of(dir.path(), small).await;
    let omitted = catalog.omitted();
    assert_eq!(omitted.count, 40 - catalog.items().len());
    assert!(omitted.count > 0);
    assert_eq!(omitted.reason, Some("catalog_max_bytes"));
    assert_eq!(omitted.limit_bytes, Some(2048));
    assert!(
        catalog
            .render()
            .contains(&format!("({} more skill(s) not listed", omitted.count))
    );
    // Room for everything: nothing omitted, no reason.
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    let omitted = catalog.omitted();
    assert_eq!((omitted.count, omitted.reason), (0, None));
}

#[tokio::test]
async fn look_alike_names_warn_naming_both_folders() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_skill(dir.path(), "my-skill", "The real one.");
    write_skill(dir.path(), "ｍｙ-skill", "A fullwidth impostor.");
    write_skill(dir.path(), "𝐦𝐲-skill", "A mathematical bold impostor.");
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    assert_eq!(catalog.len(), 3);
    let warnings: Vec<&str> = catalog
        .problems
        .iter()
        .filter(|p| p.reason.contains("looks like"))
        .map(|p| p.reason.as_str())
        .collect();
    assert_eq!(warnings.len(), 2, "{:?}", catalog.problems);
    let real = dir.path().join("my-skill").display().to_string();
    for (w, impostor) in warnings.iter().zip(["ｍｙ-skill", "𝐦𝐲-skill"]) {
        let folder = dir.path().join(impostor).display().to_string();
        assert!(
            w.contains(&folder) && w.contains(&real) && w.contains("'my-skill'"),
            "{w}"
        );
    }
    // check warns too (a look-alike is not a violation of the specification).
    assert!(
        check_dir(dir.path())
            .problems
            .iter()
            .any(|p| p.reason.contains("looks like"))
    );
    // Across sources as well: a look-alike in a second folder.
    let other = tempfile::tempdir().expect("tempdir");
    write_skill(other.path(), "ｐｄｆ", "Another source's look-alike.");
    write_skill(dir.path(), "pdf", "The real pdf.");
    let skills = Skills::new(SkillsSettings::default(), dir.path());
    let mut sources = shared(dir.path());
    sources.push(SkillSource::Folder {
        path: other.path().to_owned(),
        label: "other".to_owned(),
        kind: SourceKind::Shared,
    });
    let catalog = skills.catalog(&sources, &NoLoaders).await;
    assert!(
        catalog
            .problems
            .iter()
            .any(|p| p.reason.contains("'ｐｄｆ' from other")
                && p.reason.contains("'pdf' from team")),
        "{:?}",
        catalog.problems
    );
    // Distinct names (even non-ASCII ones) do not warn.
    let plain = tempfile::tempdir().expect("tempdir");
    for name in ["my-skill", "my-skills", "技能", "навык"] {
        write_skill(plain.path(), name, "d");
    }
    let catalog = catalog_of(plain.path(), SkillsSettings::default()).await;
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_alias_folder_does_not_hide_the_skill_it_points_at() {
    let dir = tempfile::tempdir().expect("tempdir");
    let real = write_skill(dir.path(), "my-skill", "The real one.");
    // `alias` sorts first: before the fix the alias won and the real folder was hidden.
    std::os::unix::fs::symlink("my-skill", dir.path().join("alias")).expect("symlink");
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    let entry = catalog.get("my-skill").expect("listed");
    assert_eq!(entry.location, SkillLocation::Folder { dir: real.clone() });
    let hidden = catalog
        .problems
        .iter()
        .find(|p| p.reason.contains("is hidden by"))
        .expect("a warning");
    assert!(
        hidden.reason.contains("alias")
            && hidden.reason.contains("folder's name is the skill's name"),
        "{hidden}"
    );
    // Two folders, neither named for the skill: the first still wins, as before.
    let dir = tempfile::tempdir().expect("tempdir");
    write_md(
        dir.path(),
        "b-copy",
        "---\nname: thing\ndescription: first\n---\nb\n",
    );
    write_md(
        dir.path(),
        "c-copy",
        "---\nname: thing\ndescription: second\n---\nb\n",
    );
    let catalog = catalog_of(dir.path(), SkillsSettings::default()).await;
    assert_eq!(catalog.get("thing").expect("listed").description, "first");
}

/// A skill-loader plugin's catalog as a hostile loader might return it.
struct HostileLoader;

impl SkillLoaders for HostileLoader {
    fn list<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Vec<LoaderSkill>, String>> {
        let skill = |name: &str, description: String| LoaderSkill {
            name: name.to_owned(),
            description,
        };
        Box::pin(async move {
            Ok(vec![
                skill("ansi", "Red \u{1b}[31mtext \u{202e}desrever".to_owned()),
                skill("hog", "x".repeat(16_000)),
                skill("pdf", "The real pdf.".to_owned()),
                skill("ｐｄｆ", "A fullwidth look-alike.".to_owned()),
            ])
        })
    }
    fn load<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async { Err("not served".to_owned()) })
    }
    fn read<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, String>> {
        Box::pin(async { Err("not served".to_owned()) })
    }
}

#[tokio::test]
async fn a_loader_plugins_catalog_is_neutralized_capped_and_checked_for_look_alikes() {
    let skills = Skills::new(SkillsSettings::default(), "/");
    let sources = vec![SkillSource::Loader {
        plugin: "hostile".to_owned(),
    }];
    let catalog = skills.catalog(&sources, &HostileLoader).await;
    assert_eq!(catalog.len(), 4, "{:?}", catalog.problems);
    let ansi = catalog.get("ansi").expect("ansi");
    assert_eq!(ansi.description, "Red \\x1b[31mtext \\u{202e}desrever");
    assert_eq!(ansi.meta.description, ansi.description);
    let hog = catalog.get("hog").expect("hog");
    assert_eq!(hog.description.chars().count(), MAX_DESCRIPTION);
    let reasons: Vec<&str> = catalog.problems.iter().map(|p| p.reason.as_str()).collect();
    assert!(
        reasons.iter().any(|r| r.contains("skill 'hog'")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains("U+001B")), "{reasons:?}");
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("'ｐｄｆ' from loader:hostile looks like skill 'pdf'")),
        "{reasons:?}"
    );
    // The plain one: as written, no problem names it.
    assert_eq!(
        catalog.get("pdf").expect("pdf").description,
        "The real pdf."
    );
    assert!(
        !catalog
            .problems
            .iter()
            .any(|p| p.file.ends_with("pdf") && !p.reason.contains("ｐｄｆ")),
        "{:?}",
        catalog.problems
    );
}
