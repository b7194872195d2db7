//! Skills as they are written in the wild, with real files: folders that hold no skill,
//! symlinked skills leading out of the skills folder, `disable-model-invocation`, `{baseDir}`,
//! the catalog budget, supervisor labels, byte-exact corpus bodies and cheap re-scans.

use std::path::{Path, PathBuf};

use guild_host::skills::{
    Mode, NoLoaders, Severity, SkillError, SkillSource, Skills, SkillsSettings, SourceKind,
    TaskSkills, check_dir, read_resource, rescan_folder, scan_folder, split_frontmatter,
};
use guild_tests::repo_root;

fn write_skill(root: &Path, name: &str, front: &str, body: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\n{front}\n---\n{body}\n"),
    )
    .expect("write SKILL.md");
    dir
}

fn own(path: &Path) -> Vec<SkillSource> {
    vec![SkillSource::Folder {
        path: path.to_owned(),
        label: "own".to_owned(),
        kind: SourceKind::Own,
    }]
}

#[test]
fn check_of_a_folder_holding_no_skill_is_an_error() {
    let empty = tempfile::tempdir().expect("tempdir");
    for dir in [empty.path().to_owned(), repo_root(), PathBuf::from("/etc")] {
        let report = check_dir(&dir);
        assert!(!report.ok(), "{}: {:?}", dir.display(), report.problems);
        let p = report
            .problems
            .iter()
            .find(|p| p.reason.starts_with("no skill found"))
            .unwrap_or_else(|| panic!("{}: {:?}", dir.display(), report.problems));
        assert_eq!(p.severity, Severity::Error);
        assert!(
            p.reason
                .contains(&format!("looked for {}/<skill>/SKILL.md", dir.display())),
            "{p}"
        );
    }
    // A folder of skills, and a single skill folder, still pass.
    let dir = tempfile::tempdir().expect("tempdir");
    let one = write_skill(dir.path(), "pdf", "description: d", "body");
    assert!(check_dir(dir.path()).ok());
    assert!(check_dir(&one).ok());
}

#[test]
fn lenient_scan_finding_nothing_says_where_it_looked_and_what_it_saw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("lower")).expect("mkdir");
    std::fs::write(root.join("lower/skill.md"), "---\nname: lower\n---\n").expect("write");
    write_skill(&root.join("nested"), "inner", "description: d", "x");
    write_skill(&root.join(".hidden"), "dotted", "description: d", "x");
    std::fs::create_dir_all(root.join("plain")).expect("mkdir");
    let scan = scan_folder(root, Mode::Lenient, "t");
    assert!(scan.catalog.is_empty());
    let p = scan
        .catalog
        .problems
        .iter()
        .find(|p| p.reason.starts_with("no skill found"))
        .expect("a warning");
    assert_eq!(
        p.severity,
        Severity::Warning,
        "lenient: a warning, not an error"
    );
    for seen in [
        &format!("looked for {}/<skill>/SKILL.md", root.display()),
        "lower/skill.md: the file must be named SKILL.md",
        "nested/inner/SKILL.md: skills one level deeper",
        "dot-folder .hidden/",
        "1 folder(s) without a SKILL.md",
    ] {
        assert!(p.reason.contains(seen), "{seen:?} missing in: {}", p.reason);
    }

    // With a real skill beside it, the wrong-case one still warns on its own.
    write_skill(root, "real", "description: d", "x");
    let scan = scan_folder(root, Mode::Lenient, "t");
    assert_eq!(scan.catalog.names(), vec!["real"]);
    assert!(
        !scan
            .catalog
            .problems
            .iter()
            .any(|p| p.reason.starts_with("no skill found")),
        "{:?}",
        scan.catalog.problems
    );
    assert!(
        scan.catalog
            .problems
            .iter()
            .any(|p| p.file.ends_with("lower") && p.reason.contains("in capitals")),
        "{:?}",
        scan.catalog.problems
    );
}

/// A valid SKILL.md of `size` bytes or more, outside any skills folder.
fn big_skill_md(path: &Path, name: &str, size: usize) {
    let mut text = format!("---\nname: {name}\ndescription: outside\n---\n");
    text.push_str(&"secret line\n".repeat(size / 12 + 1));
    std::fs::write(path, text).expect("write");
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_skill_md_leading_outside_is_refused() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    big_skill_md(&dir.path().join("outside.md"), "escape", 2 << 20);
    std::fs::create_dir_all(root.join("escape")).expect("mkdir");
    symlink(dir.path().join("outside.md"), root.join("escape/SKILL.md")).expect("symlink");
    // Allowed: a SKILL.md symlinked to a file inside its own folder.
    let inside = root.join("inside");
    std::fs::create_dir_all(&inside).expect("mkdir");
    std::fs::write(
        inside.join("real.md"),
        "---\nname: inside\ndescription: d\n---\nok\n",
    )
    .expect("write");
    symlink("real.md", inside.join("SKILL.md")).expect("symlink");
    // Refused: one symlinked to a file inside the skills folder but outside its own folder.
    std::fs::create_dir_all(root.join("sibling")).expect("mkdir");
    symlink("../inside/real.md", root.join("sibling/SKILL.md")).expect("symlink");

    let skills = Skills::new(SkillsSettings::default(), dir.path());
    let catalog = skills.catalog(&own(&root), &NoLoaders).await;
    assert_eq!(catalog.names(), vec!["inside"], "{:?}", catalog.problems);
    let p = catalog
        .problems
        .iter()
        .find(|p| p.file.ends_with("sibling/SKILL.md"))
        .expect("the refused sibling file is named");
    assert!(p.reason.contains("leading outside"), "{p}");
    let p = catalog
        .problems
        .iter()
        .find(|p| p.file.ends_with("escape/SKILL.md"))
        .expect("the refused file is named");
    assert_eq!(p.severity, Severity::Error);
    assert!(p.reason.contains("leading outside"), "{p}");
    let body = skills
        .load(&catalog, &TaskSkills::new(), "inside", &NoLoaders)
        .await
        .expect("inside loads");
    assert!(body.content.contains("\nok\n"));

    // Swapped for a symlink after the catalog was built: the body is refused, not served.
    std::fs::remove_file(inside.join("SKILL.md")).expect("rm");
    symlink(dir.path().join("outside.md"), inside.join("SKILL.md")).expect("symlink");
    let err = skills
        .load(&catalog, &TaskSkills::new(), "inside", &NoLoaders)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("leading outside"), "{err}");
    assert!(!err.to_string().contains("secret line"));
}

/// A `SKILL.md` that is a FIFO (which would block a plain `open` until a writer came) or a
/// folder is refused with its reason, and the scan goes on to the other skills.
#[cfg(unix)]
#[test]
fn a_fifo_or_a_folder_named_skill_md_is_refused_without_hanging_the_scan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    std::fs::create_dir_all(root.join("piped")).expect("mkdir");
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("piped/SKILL.md"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    std::fs::create_dir_all(root.join("nested/SKILL.md")).expect("mkdir");
    // A FIFO among a loaded skill's resources, read as one: refused, not waited on.
    let plain = write_skill(&root, "plain", "description: d", "x");
    let made = std::process::Command::new("mkfifo")
        .arg(plain.join("pipe.md"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // The receiver is gone only when the test already failed.
        let _ = tx.send(read_resource("plain", &plain, "pipe.md", 1 << 20));
    });
    let err = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the read ends (does not hang on the FIFO)")
        .expect_err("refused");
    assert!(err.to_string().contains("not a regular file"), "{err}");

    // On a thread of its own: a scan stuck in `open` fails the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(scan_folder(&root, Mode::Lenient, "t"));
    });
    let scan = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the scan ends (does not hang on the FIFO)");
    assert_eq!(
        scan.catalog.names(),
        vec!["plain"],
        "{:?}",
        scan.catalog.problems
    );
    let reason = |folder: &str| {
        scan.catalog
            .problems
            .iter()
            .find(|p| p.file.ends_with(format!("{folder}/SKILL.md")))
            .map(|p| p.reason.clone())
            .unwrap_or_else(|| panic!("{folder}: no problem in {:?}", scan.catalog.problems))
    };
    assert!(
        reason("piped").contains("not a regular file"),
        "{}",
        reason("piped")
    );
    assert!(
        reason("nested").contains("is a folder"),
        "{}",
        reason("nested")
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_skill_folder_leading_outside_is_refused() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    let outside = write_skill(dir.path(), "elsewhere", "description: outside", "x");
    big_skill_md(&outside.join("big.md"), "big", 2 << 20);
    std::fs::create_dir_all(&root).expect("mkdir");
    symlink(&outside, root.join("elsewhere")).expect("symlink");
    // Allowed: a relative symlink to a folder inside the skills folder. An absolute one is
    // refused even when it points inside (the rule cap-std applies to resources too).
    write_skill(&root.join(".store"), "kept", "description: inside", "x");
    symlink(".store/kept", root.join("kept")).expect("symlink");
    symlink(root.join(".store/kept"), root.join("absolute")).expect("symlink");
    write_skill(&root, "plain", "description: d", "x");

    let skills = Skills::new(SkillsSettings::default(), dir.path());
    let catalog = skills.catalog(&own(&root), &NoLoaders).await;
    assert_eq!(
        catalog.names(),
        vec!["kept", "plain"],
        "{:?}",
        catalog.problems
    );
    let p = catalog
        .problems
        .iter()
        .find(|p| p.file.ends_with("skills/elsewhere"))
        .expect("the refused folder is named");
    assert_eq!(p.severity, Severity::Error);
    assert!(
        p.reason.contains("leading outside the skills folder"),
        "{p}"
    );
    assert!(
        catalog
            .problems
            .iter()
            .any(|p| p.file.ends_with("skills/absolute") && p.severity == Severity::Error),
        "{:?}",
        catalog.problems
    );

    // Swapped for a symlink after the catalog was built: body and resources are refused.
    std::fs::remove_dir_all(root.join("plain")).expect("rm");
    symlink(&outside, root.join("plain")).expect("symlink");
    let task = TaskSkills::new();
    assert!(
        skills
            .load(&catalog, &task, "plain", &NoLoaders)
            .await
            .is_err()
    );
    match skills
        .read(&catalog, &task, "plain", "big.md", &NoLoaders)
        .await
    {
        Err(SkillError::InvalidPath { reason, .. }) => {
            assert!(reason.contains("outside"), "{reason}")
        }
        other => panic!("expected InvalidPath, got {:?}", other.map(|d| d.bytes)),
    }
    assert_eq!(task.stats().returned_bytes, 0);
}

#[tokio::test]
async fn disable_model_invocation_keeps_a_skill_out_of_the_catalog_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    write_skill(&root, "listed", "description: shown", "a");
    write_skill(
        &root,
        "manual",
        "description: only on request\ndisable-model-invocation: true",
        "manual body",
    );
    let skills = Skills::new(SkillsSettings::default(), dir.path());
    let catalog = skills.catalog(&own(&root), &NoLoaders).await;
    let task = TaskSkills::new();
    let listing = skills.disclose_catalog(&catalog, &task);
    assert!(listing.content.contains("- listed: shown"));
    assert!(!listing.content.contains("manual"), "{}", listing.content);
    let body = skills
        .load(&catalog, &task, "manual", &NoLoaders)
        .await
        .expect("loadable by name");
    assert!(body.content.contains("manual body"));
    match skills.load(&catalog, &task, "nope", &NoLoaders).await {
        Err(SkillError::NotVisible { visible, .. }) => assert_eq!(visible, vec!["listed"]),
        other => panic!("expected NotVisible, got {other:?}"),
    }
}

#[tokio::test]
async fn base_dir_paths_read_from_the_skill_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    let skill = write_skill(
        &root,
        "pdf",
        "description: d",
        "Read {baseDir}/reference/forms.md first.",
    );
    std::fs::create_dir_all(skill.join("reference")).expect("mkdir");
    std::fs::write(skill.join("reference/forms.md"), "# Forms\n").expect("write");
    std::fs::write(dir.path().join("secret.txt"), "secret").expect("write");
    let skills = Skills::new(SkillsSettings::default(), dir.path());
    let catalog = skills.catalog(&own(&root), &NoLoaders).await;
    let task = TaskSkills::new();
    let body = skills
        .load(&catalog, &task, "pdf", &NoLoaders)
        .await
        .expect("body");
    assert!(
        body.content
            .contains("Read {baseDir}/reference/forms.md first.")
    );
    let res = skills
        .read(
            &catalog,
            &task,
            "pdf",
            "{baseDir}/reference/forms.md",
            &NoLoaders,
        )
        .await
        .expect("resolved to the skill root");
    assert_eq!(res.content, b"# Forms\n");
    for bad in ["{baseDir}/../secret.txt", "${baseDir}/../../secret.txt"] {
        assert!(
            matches!(
                skills.read(&catalog, &task, "pdf", bad, &NoLoaders).await,
                Err(SkillError::InvalidPath { .. })
            ),
            "{bad} was served"
        );
    }
}

fn corpus() -> PathBuf {
    repo_root().join("tests").join("skills-corpus")
}

#[tokio::test]
async fn catalog_budget_comes_from_the_settings() {
    let sources = vec![SkillSource::Folder {
        path: corpus(),
        label: "corpus".to_owned(),
        kind: SourceKind::Shared,
    }];
    let full = Skills::new(SkillsSettings::default(), repo_root());
    let text = full.catalog(&sources, &NoLoaders).await.render();
    assert!(!text.contains("not listed"), "the default fits the corpus");
    let settings = SkillsSettings {
        catalog_max_bytes: 1024,
        ..SkillsSettings::default()
    };
    let small = Skills::new(settings, repo_root());
    let catalog = small.catalog(&sources, &NoLoaders).await;
    let listing = small.disclose_catalog(&catalog, &TaskSkills::new());
    assert!(listing.bytes <= 1024, "{}", listing.bytes);
    assert!(
        listing.content.ends_with(
            "not listed: the catalog is limited to 1024 bytes by [skills] catalog_max_bytes)\n"
        ),
        "{}",
        listing.content
    );
    assert!(text.starts_with(listing.content.lines().next().unwrap_or("")));
}

#[tokio::test]
async fn a_supervisor_folder_never_shows_its_host_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("private-skills");
    write_skill(&root, "pdf", "description: d", "x");
    let settings = SkillsSettings {
        supervisor: vec![root.display().to_string()],
        ..SkillsSettings::default()
    };
    let skills = Skills::new(settings, "/");
    let sources = skills.supervisor_sources().expect("sources");
    let catalog = skills.catalog(&sources, &NoLoaders).await;
    let text = catalog.render();
    assert!(
        text.contains("- pdf: d [supervisor:private-skills]"),
        "{text}"
    );
    assert!(!text.contains(&dir.path().display().to_string()), "{text}");
    for item in catalog.items() {
        assert!(!item.location.contains('/'), "{item:?}");
    }
}

/// Every corpus body comes back exactly as written (frontmatter stripped, trimmed), wrapped
/// with its name and a listing of its files: rebuilt here independently of the library.
#[tokio::test]
async fn corpus_bodies_are_byte_exact() {
    let skills = Skills::new(SkillsSettings::default(), repo_root());
    let sources = vec![SkillSource::Folder {
        path: corpus(),
        label: "corpus".to_owned(),
        kind: SourceKind::Shared,
    }];
    let catalog = skills.catalog(&sources, &NoLoaders).await;
    assert_eq!(catalog.len(), 14);
    for entry in catalog.iter() {
        let dir = corpus().join(&entry.name);
        let text = std::fs::read_to_string(dir.join("SKILL.md")).expect("read");
        let (_, body) = split_frontmatter(&text).expect("frontmatter");
        let mut files = Vec::new();
        list_files(&dir, "", &mut files);
        files.sort();
        let mut expected = format!("<skill name=\"{}\">\n{}\n", entry.name, body.trim());
        if files.is_empty() {
            expected.push_str("<resources>none</resources>\n");
        } else {
            expected.push_str(&format!(
                "<resources note=\"read one by its path relative to skill '{}'\">\n",
                entry.name
            ));
            for (path, size) in &files {
                expected.push_str(&format!("{path} ({size} bytes)\n"));
            }
            expected.push_str("</resources>\n");
        }
        expected.push_str("</skill>\n");
        let got = skills
            .load(&catalog, &TaskSkills::new(), &entry.name, &NoLoaders)
            .await
            .expect("body");
        assert_eq!(got.content, expected, "{}", entry.name);
        for (path, size) in files {
            let res = skills
                .read(&catalog, &TaskSkills::new(), &entry.name, &path, &NoLoaders)
                .await
                .expect("resource");
            assert_eq!(res.content, std::fs::read(dir.join(&path)).expect("read"));
            assert_eq!(res.bytes, size);
        }
    }
}

fn list_files(dir: &Path, prefix: &str, out: &mut Vec<(String, u64)>) {
    for e in std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(Result::ok)
    {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let meta = e.path().symlink_metadata().expect("stat");
        if meta.is_dir() {
            list_files(&e.path(), &rel, out);
        } else if meta.is_file() && rel != "SKILL.md" {
            out.push((rel, meta.len()));
        }
    }
}

#[tokio::test]
async fn rescan_sees_every_kind_of_change_without_a_full_walk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    let a = write_skill(&root, "alpha", "description: aaaa", "x");
    std::fs::create_dir_all(root.join("beta")).expect("mkdir");
    let skills = Skills::new(SkillsSettings::default(), dir.path());
    let sources = own(&root);
    assert_eq!(
        skills.catalog(&sources, &NoLoaders).await.names(),
        vec!["alpha"]
    );
    assert!(skills.refresh().is_empty(), "nothing changed");

    // Same size, same second: an in-place edit is still seen (ctime and size are compared).
    std::fs::write(
        a.join("SKILL.md"),
        "---\nname: alpha\ndescription: bbbb\n---\nx\n",
    )
    .expect("write");
    let changes = skills.refresh();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].diff.changed, vec!["alpha"]);
    let catalog = skills.catalog(&sources, &NoLoaders).await;
    assert_eq!(catalog.get("alpha").expect("alpha").description, "bbbb");

    // A folder that was not a skill gains a SKILL.md (the skills folder itself is unchanged).
    write_skill(&root, "beta", "description: b", "x");
    let changes = skills.refresh();
    assert_eq!(changes[0].diff.added, vec!["beta"]);

    // A resource added deep inside: the body lists it at once.
    std::fs::create_dir_all(a.join("references")).expect("mkdir");
    std::fs::write(a.join("references/new.md"), "new").expect("write");
    let catalog = skills.catalog(&sources, &NoLoaders).await;
    let body = skills
        .load(&catalog, &TaskSkills::new(), "alpha", &NoLoaders)
        .await
        .expect("body");
    assert!(
        body.content.contains("references/new.md (3 bytes)"),
        "{}",
        body.content
    );

    std::fs::remove_dir_all(&a).expect("rm");
    let changes = skills.refresh();
    assert_eq!(changes[0].diff.removed, vec!["alpha"]);
    assert!(skills.refresh().is_empty());
}

/// The re-scan's cache, both ways: a skill whose folder and `SKILL.md` are untouched is reused
/// as it was (the same entry, nothing read), and an edited (same size), added or removed skill
/// is seen, while its neighbours stay cached.
#[test]
fn rescan_reuses_untouched_skills_and_reloads_changed_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    for name in ["alpha", "beta", "gamma"] {
        let d = write_skill(&root, name, "description: first", "body");
        std::fs::create_dir_all(d.join("references")).expect("mkdir");
        std::fs::write(d.join("references/notes.md"), "notes").expect("write");
    }
    // Stamps younger than the file system's timestamp granularity are never trusted (they are
    // re-read on every scan), so let them age before looking for cache hits.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let first = scan_folder(&root, Mode::Lenient, "t");
    assert_eq!(first.catalog.names(), vec!["alpha", "beta", "gamma"]);
    let same = |a: &guild_host::skills::FolderScan, b: &guild_host::skills::FolderScan, n: &str| {
        let (a, b) = (
            a.catalog.get(n).expect("in a"),
            b.catalog.get(n).expect("in b"),
        );
        std::sync::Arc::ptr_eq(a, b)
    };

    let second = rescan_folder(&root, Mode::Lenient, "t", Some(&first));
    for name in ["alpha", "beta", "gamma"] {
        assert!(same(&first, &second, name), "{name} was loaded again");
    }

    let beta = root.join("beta").join("SKILL.md");
    let text = std::fs::read_to_string(&beta).expect("read");
    std::fs::write(&beta, text.replace("first", "other")).expect("write");
    write_skill(&root, "delta", "description: new", "body");
    std::fs::remove_dir_all(root.join("gamma")).expect("rm");
    let third = rescan_folder(&root, Mode::Lenient, "t", Some(&second));
    assert_eq!(third.catalog.names(), vec!["alpha", "beta", "delta"]);
    assert!(
        same(&second, &third, "alpha"),
        "untouched alpha was loaded again"
    );
    assert!(!same(&second, &third, "beta"), "edited beta was reused");
    assert_eq!(
        third.catalog.get("beta").expect("beta").description,
        "other"
    );
    let diff = guild_host::skills::Catalog::diff(&second.catalog, &third.catalog);
    assert_eq!(diff.changed, vec!["beta"]);
    assert_eq!(diff.added, vec!["delta"]);
    assert_eq!(diff.removed, vec!["gamma"]);
}
