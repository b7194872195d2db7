//! The install's folder swap under failure: whatever step fails, the installed version stays
//! exactly as it was and no staging is left behind; once the exchange happened, the new version
//! is complete even if cleaning up fails.

use std::collections::BTreeMap;
use std::path::Path;

use super::{InstallError, STAGING_DIR, Step, stage_and_swap};

fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(p, c)| ((*p).to_owned(), c.as_bytes().to_vec()))
        .collect()
}

/// Every file under `dir`, with its content, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir");
                let rel = rel.to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    out
}

fn old_version() -> BTreeMap<String, Vec<u8>> {
    files(&[
        ("plugin.toml", "old"),
        ("old.wasm", "old component"),
        ("skills/a/SKILL.md", "old skill"),
    ])
}

fn new_version() -> BTreeMap<String, Vec<u8>> {
    files(&[
        ("plugin.toml", "new"),
        ("new.wasm", "new component"),
        ("skills/b/SKILL.md", "new skill"),
    ])
}

/// A plugins folder with the old version installed at `probe`.
fn installed() -> (tempfile::TempDir, std::path::PathBuf) {
    let plugins = tempfile::tempdir().expect("tempdir");
    let target = plugins.path().join("probe");
    for (path, bytes) in old_version() {
        let dest = target.join(path);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::write(dest, bytes).expect("write");
    }
    (plugins, target)
}

fn compiles() -> Result<(), InstallError> {
    Ok(())
}

#[test]
fn a_failure_at_any_step_before_the_exchange_leaves_the_old_version_intact() {
    for step in [Step::Stage, Step::Compile, Step::Exchange] {
        let (plugins, target) = installed();
        let err = stage_and_swap(
            plugins.path(),
            &target,
            &new_version(),
            compiles,
            Some(step),
        )
        .expect_err("injected failure");
        assert!(err.to_string().contains(&format!("{step:?}")), "{err}");
        assert_eq!(tree(&target), old_version(), "after a failure at {step:?}");
        assert!(
            !plugins.path().join(STAGING_DIR).exists(),
            "staging left behind after {step:?}"
        );
    }
}

#[test]
fn a_component_that_does_not_compile_leaves_the_old_version_intact() {
    let (plugins, target) = installed();
    let refuse = || {
        Err(InstallError::Compile {
            plugin: "probe".into(),
            component: "new.wasm".into(),
            message: "bad type".into(),
        })
    };
    let err =
        stage_and_swap(plugins.path(), &target, &new_version(), refuse, None).expect_err("refused");
    assert!(err.to_string().contains("does not compile"), "{err}");
    assert_eq!(tree(&target), old_version());
    assert!(!plugins.path().join(STAGING_DIR).exists());
}

#[test]
fn the_exchange_replaces_the_whole_folder_even_if_cleaning_up_fails() {
    let (plugins, target) = installed();
    stage_and_swap(
        plugins.path(),
        &target,
        &new_version(),
        compiles,
        Some(Step::RemoveOld),
    )
    .expect("installed; only the clean-up failed");
    assert_eq!(tree(&target), new_version(), "no file of the old version");
    let left: Vec<_> = std::fs::read_dir(plugins.path().join(STAGING_DIR))
        .expect("staging left")
        .flatten()
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(
        tree(&left[0].path().join("new")),
        old_version(),
        "what is left in staging is the old version, whole"
    );

    let (plugins, target) = installed();
    stage_and_swap(plugins.path(), &target, &new_version(), compiles, None).expect("installed");
    assert_eq!(tree(&target), new_version());
    assert!(!plugins.path().join(STAGING_DIR).exists(), "old removed");
}

#[test]
fn a_first_install_renames_into_place_and_a_non_folder_target_is_refused() {
    let plugins = tempfile::tempdir().expect("tempdir");
    let target = plugins.path().join("probe");
    stage_and_swap(plugins.path(), &target, &new_version(), compiles, None).expect("installed");
    assert_eq!(tree(&target), new_version());

    let file_target = plugins.path().join("other");
    std::fs::write(&file_target, "not a folder").expect("write");
    let err = stage_and_swap(plugins.path(), &file_target, &new_version(), compiles, None)
        .expect_err("refused");
    assert!(err.to_string().contains("not a plain folder"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&file_target).expect("read"),
        "not a folder"
    );
    assert!(!plugins.path().join(STAGING_DIR).exists());
}

fn ledger_with(installs: &[(&str, &str)]) -> (tempfile::TempDir, guild_receipts::Ledger) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = guild_receipts::Ledger::open(dir.path().join("ledger.db")).expect("ledger");
    for (version, digest) in installs {
        let detail = serde_json::to_string(&record(version, digest)).expect("json");
        ledger
            .audit(
                guild_receipts::AuditKind::BundleInstalled,
                &format!("probe@{version}"),
                &detail,
            )
            .expect("audit");
    }
    (dir, ledger)
}

fn record(version: &str, content: &str) -> super::InstallRecord {
    super::InstallRecord {
        name: "probe".into(),
        version: version.into(),
        digest: format!("manifest-{content}"),
        content_digest: content.into(),
        signers: Vec::new(),
    }
}

#[test]
fn build_metadata_neither_makes_another_release_nor_a_newer_one() {
    let strict = super::InstallOptions::default();
    let (_dir, ledger) = ledger_with(&[("2.0.0", "A")]);
    let offer = |version: &str, content: &str| {
        super::check_history(&ledger, &record(version, content), &strict)
    };
    // Denied: the same release with other content, whatever build metadata it carries.
    for version in ["2.0.0", "2.0.0+evil", "2.0.0+zzz.999"] {
        let e = offer(version, "B").expect_err("equivocation");
        assert!(
            matches!(e, InstallError::Equivocation { .. }) && e.to_string().contains("2.0.0"),
            "{version}: {e}"
        );
    }
    let e = offer("1.9.9+later", "B").expect_err("rollback");
    assert!(matches!(e, InstallError::Rollback { .. }), "{e}");
    // Allowed: the same content again (any build metadata), and a real new release.
    assert_eq!(offer("2.0.0+rebuild", "A").expect("same content"), None);
    assert_eq!(offer("2.0.1", "B").expect("new release"), None);

    // Two installs recorded with different build metadata are one release.
    let (_dir, ledger) = ledger_with(&[("2.0.0+one", "A")]);
    let e = super::check_history(&ledger, &record("2.0.0+two", "B"), &strict)
        .expect_err("equivocation across build metadata");
    assert!(
        e.to_string()
            .contains("2.0.0 (installed as 2.0.0+one, offered as 2.0.0+two)"),
        "{e}"
    );
    let lenient = super::InstallOptions {
        allow_equivocation: true,
        ..super::InstallOptions::default()
    };
    let note = super::check_history(&ledger, &record("2.0.0+two", "B"), &lenient)
        .expect("overridden")
        .expect("a note for the audit");
    assert!(note.contains("equivocation at 2.0.0"), "{note}");
}

#[test]
fn staging_left_by_a_killed_install_is_removed_and_a_live_one_is_kept() {
    let plugins = tempfile::tempdir().expect("tempdir");
    let staging = plugins.path().join(STAGING_DIR);
    // What a kill between staging and clean-up leaves: a whole copy, twice.
    for id in ["dead-1", "dead-2"] {
        let dir = staging.join(id).join("new/skills");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("SKILL.md"), "left behind").expect("write");
    }
    std::fs::write(staging.join("stray"), "x").expect("write");
    // An install in progress holds its staging folder locked.
    let live = staging.join("live");
    std::fs::create_dir_all(live.join("new")).expect("mkdir");
    let held = super::lock(&live).expect("lock");

    assert_eq!(super::clean_stale_staging(plugins.path()), 3);
    let left: Vec<_> = std::fs::read_dir(&staging)
        .expect("staging kept for the live install")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["live"], "only the live install's folder is kept");

    drop(held);
    assert_eq!(super::clean_stale_staging(plugins.path()), 1);
    assert!(!staging.exists(), "nothing left once the install is gone");
}

#[tokio::test]
async fn a_host_start_removes_what_killed_installs_left() {
    let dir = tempfile::tempdir().expect("tempdir");
    let left = dir
        .path()
        .join("plugins")
        .join(STAGING_DIR)
        .join("killed/new");
    std::fs::create_dir_all(&left).expect("mkdir");
    std::fs::write(left.join("probe.wasm"), vec![0u8; 4096]).expect("write");
    let config = guild_core::config::Config::parse(
        "[host]\nplugins_dir = \"plugins\"\ndata_dir = \"data\"\ncompile_cache = false\n",
        &dir.path().join("guild.toml"),
        dir.path(),
    )
    .expect("config");
    let host = crate::Host::new(config).await.expect("host starts");
    assert!(
        !dir.path().join("plugins").join(STAGING_DIR).exists(),
        "stale staging survived a start"
    );
    drop(host);
}
