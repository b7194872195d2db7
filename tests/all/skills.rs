//! Skills (docs/skills.md) with real files: the public corpus, resource confinement, per-specialist
//! visibility, the team-skills loader plugin through the host's registry, hot add/change/remove
//! of skill folders, and byte accounting.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use guild_host::manifest::Manifest;
use guild_host::skills::{
    Catalog, FolderChange, Mode, NoLoaders, Severity, SkillError, SkillSource, Skills,
    SkillsSettings, SourceKind, SourceRequest, TaskSkills, check_dir, scan_folder,
};
use guild_tests::{host, repo_root};

fn corpus() -> PathBuf {
    repo_root().join("tests").join("skills-corpus")
}

fn write_skill(root: &Path, name: &str, description: &str, body: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"),
    )
    .expect("write SKILL.md");
    dir
}

fn folder(path: &Path, label: &str, kind: SourceKind) -> SkillSource {
    SkillSource::Folder {
        path: path.to_owned(),
        label: label.to_owned(),
        kind,
    }
}

#[test]
fn whole_corpus_loads_lenient_and_strict() {
    let lenient = scan_folder(&corpus(), Mode::Lenient, "corpus");
    assert_eq!(lenient.catalog.len(), 14, "{:?}", lenient.catalog.problems);
    assert!(
        lenient.catalog.problems.is_empty(),
        "{:?}",
        lenient.catalog.problems
    );
    let report = check_dir(&corpus());
    let problems: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    assert!(report.ok(), "the corpus violates the spec: {problems:#?}");
    assert_eq!(report.valid.len(), 14);
    for entry in lenient.catalog.iter() {
        assert!(!entry.description.is_empty());
        assert!(entry.full_bytes() >= entry.skill_md_bytes && entry.skill_md_bytes > 0);
    }
}

#[test]
fn check_reports_file_field_and_reason_and_keeps_going() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_skill(dir.path(), "good", "fine", "body");
    write_skill(dir.path(), "Bad_Name", "x", "body");
    std::fs::create_dir(dir.path().join("nofence")).expect("mkdir");
    std::fs::write(dir.path().join("nofence/SKILL.md"), "just text").expect("write");
    let report = check_dir(dir.path());
    assert!(!report.ok());
    assert_eq!(report.valid, vec!["good".to_owned()]);
    let lines: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Bad_Name/SKILL.md") && l.contains("field `name`")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("nofence/SKILL.md") && l.contains("frontmatter")),
        "{lines:#?}"
    );
    // Lenient: the mismatched name warns and loads; the fence-less one is skipped.
    let lenient = scan_folder(dir.path(), Mode::Lenient, "t");
    assert_eq!(lenient.catalog.names(), vec!["Bad_Name", "good"]);
    assert!(
        lenient
            .catalog
            .problems
            .iter()
            .any(|p| p.severity == Severity::Error && p.file.ends_with("nofence/SKILL.md"))
    );
}

async fn one_skill_service(max_kb: u32) -> (tempfile::TempDir, Skills, Catalog) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    let skill = write_skill(&root, "pdf", "Fill PDF forms", "Read forms.md first.");
    std::fs::write(skill.join("forms.md"), "# Forms\n").expect("write");
    std::fs::create_dir(skill.join("scripts")).expect("mkdir");
    std::fs::write(skill.join("scripts/fill.py"), "print(1)\n").expect("write");
    std::fs::write(skill.join("big.bin"), vec![b'x'; 2048]).expect("write");
    std::fs::write(dir.path().join("secret.txt"), "top secret").expect("write");
    let settings = SkillsSettings {
        max_resource_kb: max_kb,
        ..SkillsSettings::default()
    };
    let skills = Skills::new(settings, dir.path());
    let catalog = skills
        .catalog(&[folder(&root, "own", SourceKind::Own)], &NoLoaders)
        .await;
    (dir, skills, catalog)
}

#[tokio::test]
async fn resources_are_confined_and_capped() {
    let (dir, skills, catalog) = one_skill_service(1).await;
    let task = TaskSkills::new();
    let read = |path: &'static str| skills.read(&catalog, &task, "pdf", path, &NoLoaders);

    let ok = read("scripts/fill.py").await.expect("inside");
    assert_eq!(ok.content, b"print(1)\n");
    assert_eq!(ok.bytes, 9);

    for (path, why) in [
        ("../secret.txt", "'..'"),
        ("scripts/../../secret.txt", "'..'"),
        ("/etc/passwd", "absolute"),
    ] {
        match read(path).await {
            Err(SkillError::InvalidPath { reason, .. }) => {
                assert!(reason.contains(why), "{reason}")
            }
            other => panic!("{path}: expected InvalidPath, got {other:?}"),
        }
    }
    #[cfg(unix)]
    {
        let skill = dir.path().join("skills/pdf");
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), skill.join("link.txt"))
            .expect("symlink");
        std::os::unix::fs::symlink("/etc", skill.join("etc")).expect("symlink");
        for path in ["link.txt", "etc/hostname"] {
            let err = read(path).await.expect_err("symlink out must be refused");
            assert!(
                matches!(err, SkillError::InvalidPath { .. }),
                "{path}: {err:?}"
            );
            assert!(!format!("{err}").contains("top secret"));
        }
    }
    match read("big.bin").await {
        Err(SkillError::TooLarge { size, limit, .. }) => assert_eq!((size, limit), (2048, 1024)),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(matches!(
        read("missing.md").await,
        Err(SkillError::NotFound { .. })
    ));
    assert!(matches!(
        read("scripts").await,
        Err(SkillError::InvalidPath { .. })
    ));
    // Only what was actually served is counted.
    assert_eq!(task.stats().resource_bytes, 9);
}

#[tokio::test]
async fn body_is_wrapped_listed_and_loaded_once() {
    let (_dir, skills, catalog) = one_skill_service(1024).await;
    let task = TaskSkills::new();
    let body = skills
        .load(&catalog, &task, "pdf", &NoLoaders)
        .await
        .expect("loads");
    assert!(
        body.content
            .starts_with("<skill name=\"pdf\">\nRead forms.md first.")
    );
    assert!(
        !body.content.contains("description:"),
        "frontmatter stripped"
    );
    assert!(body.content.contains("scripts/fill.py (9 bytes)"));
    assert!(body.content.contains("forms.md (8 bytes)"));
    assert!(!body.content.contains("print(1)"), "listing, not contents");
    assert_eq!(body.bytes, body.content.len() as u64);
    assert_eq!(body.approx_tokens, body.bytes.div_ceil(4));

    let again = skills
        .load(&catalog, &task, "pdf", &NoLoaders)
        .await
        .expect("note");
    assert!(again.already_loaded && again.content.contains("already loaded"));
    assert!(again.bytes < 100);
    assert_eq!(task.requires_skill_gate(Some("pdf")), None);
}

/// A specialist plugin folder (manifest only: visibility needs no wasm).
fn specialist(root: &Path, name: &str, skills: &[&str]) -> Manifest {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let list: Vec<String> = skills.iter().map(|s| format!("{s:?}")).collect();
    let text = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"specialist\"\ncomponent = \"x.wasm\"\n\n[capabilities]\nskills = [{}]\n",
        list.join(", ")
    );
    Manifest::parse(&text, &dir).expect("manifest")
}

/// The sources of `m` were every one of its requests granted (the intersection itself is
/// tested in `skill_grants.rs` and the capability table tests).
fn all_granted(skills: &Skills, m: &Manifest) -> Result<Vec<SkillSource>, SkillError> {
    let requests = m
        .capabilities
        .skills
        .iter()
        .map(|e| SourceRequest::parse(e))
        .collect::<Result<Vec<_>, _>>()?;
    skills.sources_for(m.name(), &m.dir, &requests)
}

#[tokio::test]
async fn each_specialist_sees_only_what_it_declared() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let alpha = specialist(root, "alpha", &["skills/", "shared:team"]);
    let beta = specialist(root, "beta", &["skills"]);
    let gamma = specialist(root, "gamma", &[]);
    write_skill(&root.join("alpha/skills"), "alpha-only", "a", "alpha body");
    write_skill(
        &root.join("alpha/skills"),
        "common",
        "alpha's own",
        "own wins",
    );
    write_skill(&root.join("beta/skills"), "beta-only", "b", "beta body");
    write_skill(&root.join("team"), "common", "the team's", "shared loses");
    write_skill(&root.join("team"), "team-guide", "t", "team body");
    let mut settings = SkillsSettings::default();
    settings.shared.insert("team".into(), "team".into());
    settings.supervisor = vec!["shared:team".into()];
    let skills = Skills::new(settings, root);

    let cat = |m: &Manifest| {
        let sources = all_granted(&skills, m).expect("sources");
        let skills = &skills;
        async move { skills.catalog(&sources, &NoLoaders).await }
    };
    let a = cat(&alpha).await;
    assert_eq!(a.names(), vec!["alpha-only", "common", "team-guide"]);
    assert_eq!(a.get("common").expect("common").description, "alpha's own");
    assert!(
        a.problems
            .iter()
            .any(|p| p.reason.contains("hidden by") && p.severity == Severity::Warning),
        "a collision warns: {:?}",
        a.problems
    );
    let b = cat(&beta).await;
    assert_eq!(b.names(), vec!["beta-only"]);
    assert!(
        cat(&gamma).await.is_empty(),
        "nothing declared, nothing seen"
    );
    let sup = skills
        .catalog(
            &skills.supervisor_sources().expect("supervisor"),
            &NoLoaders,
        )
        .await;
    assert_eq!(sup.names(), vec!["common", "team-guide"]);

    // beta cannot load alpha's skill, nor the team's (it did not declare shared:team), and its
    // caller's set is not inherited.
    let task = TaskSkills::new();
    for name in ["alpha-only", "team-guide"] {
        match skills.load(&b, &task, name, &NoLoaders).await {
            Err(SkillError::NotVisible { skill, visible }) => {
                assert_eq!(skill, name);
                assert_eq!(visible, vec!["beta-only"]);
            }
            other => panic!("beta loaded {name}: {other:?}"),
        }
        assert!(matches!(
            skills.read(&b, &task, name, "SKILL.md", &NoLoaders).await,
            Err(SkillError::NotVisible { .. })
        ));
    }
    // A manifest cannot reach outside its folder or name an undefined shared folder.
    for bad in ["../alpha/skills", "/etc", "shared:other"] {
        let m = specialist(root, "delta", &[bad]);
        assert!(all_granted(&skills, &m).is_err(), "{bad} accepted");
    }
}

#[tokio::test]
async fn byte_accounting_on_the_corpus() {
    let skills = Skills::new(SkillsSettings::default(), repo_root());
    let catalog = skills
        .catalog(
            &[folder(&corpus(), "corpus", SourceKind::Shared)],
            &NoLoaders,
        )
        .await;
    let task = TaskSkills::new();
    let listing = skills.disclose_catalog(&catalog, &task);
    assert_eq!(listing.bytes, listing.content.len() as u64);
    let body = skills
        .load(&catalog, &task, "systematic-debugging", &NoLoaders)
        .await
        .expect("body");
    let note = skills
        .load(&catalog, &task, "systematic-debugging", &NoLoaders)
        .await
        .expect("note");
    let res = skills
        .read(
            &catalog,
            &task,
            "systematic-debugging",
            "root-cause-tracing.md",
            &NoLoaders,
        )
        .await
        .expect("resource");
    let on_disk = std::fs::metadata(corpus().join("systematic-debugging/root-cause-tracing.md"))
        .expect("stat")
        .len();
    assert_eq!(res.bytes, on_disk);

    let full: u64 = walk_size(&corpus().join("systematic-debugging"));
    let s = task.stats();
    assert_eq!(s.catalog_bytes, listing.bytes);
    assert_eq!(s.body_bytes, body.bytes);
    assert_eq!(s.notes_bytes, note.bytes);
    assert_eq!(s.resource_bytes, on_disk);
    assert_eq!(
        s.returned_bytes,
        listing.bytes + body.bytes + note.bytes + on_disk
    );
    assert_eq!(s.loaded_full_bytes, full);
    let corpus_full: u64 = catalog
        .iter()
        .map(|e| walk_size(&corpus().join(&e.name)))
        .sum();
    assert_eq!(s.visible_full_bytes, corpus_full);
    assert_eq!(s.saved_bytes, corpus_full - s.returned_bytes);
    assert!(
        listing.bytes * 20 < corpus_full,
        "the catalog ({}) is a small fraction of the corpus ({corpus_full})",
        listing.bytes
    );
}

fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(Result::ok)
        .map(|e| {
            let meta = e.path().symlink_metadata().expect("stat");
            if meta.is_dir() {
                walk_size(&e.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

#[test]
fn catalog_diff_names_added_changed_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_skill(dir.path(), "a", "one", "x");
    write_skill(dir.path(), "b", "two", "x");
    let old = scan_folder(dir.path(), Mode::Lenient, "t").catalog;
    std::fs::remove_dir_all(dir.path().join("a")).expect("rm");
    write_skill(dir.path(), "b", "two, longer now", "x");
    write_skill(dir.path(), "c", "three", "x");
    let new = scan_folder(dir.path(), Mode::Lenient, "t").catalog;
    let diff = Catalog::diff(&old, &new);
    assert_eq!(diff.added, vec!["c"]);
    assert_eq!(diff.changed, vec!["b"]);
    assert_eq!(diff.removed, vec!["a"]);
    assert_eq!(diff.to_string(), "+c ~b -a");
}

fn next_change(rx: &mpsc::Receiver<FolderChange>) -> FolderChange {
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the watcher reports the change within 5 s")
}

#[tokio::test]
async fn watcher_sees_hot_add_change_remove() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    write_skill(&root, "first", "one", "x");
    let skills = Arc::new(Skills::new(SkillsSettings::default(), dir.path()));
    let sources = [folder(&root, "own", SourceKind::Own)];
    assert_eq!(
        skills.catalog(&sources, &NoLoaders).await.names(),
        vec!["first"]
    );
    let (tx, rx) = mpsc::channel();
    let _watcher = skills
        .watch_every(Duration::from_millis(50), move |c| {
            let _ = tx.send(c.clone());
        })
        .expect("watcher starts");

    write_skill(&root, "second", "two", "x");
    let c = next_change(&rx);
    assert_eq!(
        (c.diff.added.as_slice(), c.label.as_str()),
        (&["second".to_owned()][..], "own")
    );
    assert_eq!(
        skills.catalog(&sources, &NoLoaders).await.names(),
        vec!["first", "second"]
    );

    write_skill(&root, "second", "two, edited", "new body that is longer");
    let c = next_change(&rx);
    assert_eq!(c.diff.changed, vec!["second"]);
    let catalog = skills.catalog(&sources, &NoLoaders).await;
    assert_eq!(
        catalog.get("second").expect("second").description,
        "two, edited"
    );
    let body = skills
        .load(&catalog, &TaskSkills::new(), "second", &NoLoaders)
        .await
        .expect("body");
    assert!(body.content.contains("new body"));

    std::fs::remove_dir_all(root.join("first")).expect("rm");
    let c = next_change(&rx);
    assert_eq!(c.diff.removed, vec!["first"]);
    assert_eq!(
        skills.catalog(&sources, &NoLoaders).await.names(),
        vec!["second"]
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from)
        .expect("read_dir")
        .filter_map(Result::ok)
    {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn team_skills_loader_plugin_serves_through_the_host() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &repo_root().join("plugins/team-skills/example"),
        &dir.path().join("team"),
    );
    write_skill(
        &dir.path().join("own"),
        "incident-triage",
        "the local one wins",
        "x",
    );
    let config = r#"[grants.team-skills]
fs = [{ guest = "/skills", host = "team", mode = "ro" }]

[grants.probe]
skills = ["skills/"]

[skills]
supervisor = ["loader:team-skills", "own"]
strict_allowed_tools = ["probe"]
"#;
    let h = host(dir.path(), &["team-skills", "testing/probe"], config).await;
    let skills = h.skills();
    let catalog = skills.catalog(None).await.expect("catalog");
    assert_eq!(
        catalog.names(),
        vec!["incident-triage", "release-checklist"],
        "{:?}",
        catalog.problems
    );
    assert_eq!(
        catalog.get("incident-triage").expect("entry").source,
        "supervisor:own",
        "a folder wins over a loader"
    );
    assert_eq!(
        catalog.get("release-checklist").expect("entry").source,
        "loader:team-skills"
    );

    let task = TaskSkills::new();
    let body = skills
        .load(&catalog, &task, "release-checklist")
        .await
        .expect("body from the loader");
    assert!(
        body.content.contains("# Release checklist"),
        "{}",
        body.content
    );
    assert!(
        !body.content.contains("allowed-tools:"),
        "frontmatter stripped"
    );
    // The loader's SKILL.md declares allowed-tools: strict mode now refuses other tools.
    assert!(
        task.allowed_tools_gate("tracker.search_issues", true)
            .is_none()
    );
    assert!(
        task.allowed_tools_gate("tracker.create_issue", true)
            .is_some()
    );

    let res = skills
        .read(&catalog, &task, "release-checklist", "notes-template.md")
        .await
        .expect("resource");
    assert!(String::from_utf8_lossy(&res.content).starts_with("# Release X.Y.Z"));
    match skills
        .read(&catalog, &task, "release-checklist", "index.json")
        .await
    {
        Err(SkillError::Loader { plugin, reason }) => {
            assert_eq!(plugin, "team-skills");
            assert!(reason.contains("no resource"), "{reason}");
        }
        other => panic!("expected the loader's refusal, got {other:?}"),
    }
    assert!(matches!(
        skills
            .read(&catalog, &task, "release-checklist", "../index.json")
            .await,
        Err(SkillError::InvalidPath { .. })
    ));

    // The probe specialist was granted only its own `skills/` folder: it sees none of the
    // supervisor's or the loader's skills.
    let probe = skills.catalog(Some("probe")).await.expect("probe catalog");
    assert_eq!(probe.names(), vec!["careful-echo", "echo-guide"]);
    assert!(matches!(
        skills
            .load(&probe, &TaskSkills::new(), "release-checklist")
            .await,
        Err(SkillError::NotVisible { .. })
    ));
    assert!(
        h.skills()
            .service()
            .settings()
            .strict_allowed_tools_for("probe")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loader_without_its_folder_is_a_problem_not_a_crash() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("empty")).expect("mkdir");
    write_skill(&dir.path().join("own"), "local", "still served", "x");
    let config = r#"[grants.team-skills]
fs = [{ guest = "/skills", host = "empty", mode = "ro" }]

[skills]
supervisor = ["own", "loader:team-skills", "loader:missing"]
"#;
    let h = host(dir.path(), &["team-skills"], config).await;
    let catalog = h.skills().catalog(None).await.expect("catalog");
    assert_eq!(catalog.names(), vec!["local"]);
    assert!(
        catalog
            .problems
            .iter()
            .any(|p| p.file == Path::new("loader:missing") && p.reason.contains("no skill-loader")),
        "{:?}",
        catalog.problems
    );
}
