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
