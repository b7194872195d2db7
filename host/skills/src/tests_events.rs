//! The watcher's re-scan with file-system events, against real folders: events spare the
//! skill folders they do not name (polling compares every one), and every kind of change is
//! still seen — in place, renamed over, deleted and made again.

use std::path::{Path, PathBuf};

use super::*;

fn write_skill(root: &Path, name: &str, description: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join(SKILL_FILE),
        format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
    )
    .expect("write SKILL.md");
    dir
}

/// A folder of `n` skills.
fn folder_of(n: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("skills");
    for i in 0..n {
        write_skill(&root, &format!("s{i:03}"), "first");
    }
    (tmp, root)
}

/// A service over `root`, its first catalog scanned and two re-scans done (the first adds the
/// watches, the second compares in full once after them).
fn watched(root: &Path, events: bool) -> Skills {
    let settings = SkillsSettings {
        watch_events: events,
        ..SkillsSettings::default()
    };
    let skills = Skills::new(settings, root);
    assert!(!skills.folder(root, "t").catalog.is_empty());
    assert!(skills.refresh().is_empty());
    assert!(skills.refresh().is_empty());
    skills
}

fn edit(root: &Path, name: &str, description: &str) {
    write_skill(root, name, description);
}

#[test]
fn events_compare_only_the_skill_that_changed_polling_compares_all() {
    // Written a moment ago: stamps too recent to trust. Polling compares them every time;
    // events need not, once each skill was loaded after its watch.
    let trees = [folder_of(40), folder_of(40)];
    for ((_tmp, root), (events, expected)) in trees.iter().zip([(true, 1), (false, 40)]) {
        let skills = watched(root, events);
        edit(root, "s007", "second");
        let changes = skills.refresh();
        assert_eq!(changes.len(), 1, "events {events}: {changes:?}");
        assert_eq!(changes[0].diff.changed, vec!["s007"]);
        assert_eq!(
            skills.folder(root, "t").compared(),
            expected,
            "events {events}"
        );
        assert!(skills.refresh().is_empty(), "events {events}: nothing more");
    }
}

#[test]
fn events_see_a_folder_renamed_over_a_skill_and_a_skill_made_again() {
    let (tmp, root) = folder_of(3);
    let skills = watched(&root, true);
    // Renamed over an existing skill's name: the skills folder's event names it.
    let staged = write_skill(tmp.path(), "s001", "replaced");
    std::fs::remove_dir_all(root.join("s001")).expect("rm");
    std::fs::rename(&staged, root.join("s001")).expect("rename");
    let changes = skills.refresh();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].diff.changed, vec!["s001"]);
    let catalog = &skills.folder(&root, "t").catalog;
    assert_eq!(catalog.get("s001").expect("s001").description, "replaced");

    // Deleted, then made again: its new folder is watched, so a later edit is seen too.
    std::fs::remove_dir_all(root.join("s002")).expect("rm");
    assert_eq!(skills.refresh()[0].diff.removed, vec!["s002"]);
    write_skill(&root, "s002", "again");
    assert_eq!(skills.refresh()[0].diff.added, vec!["s002"]);
    assert!(skills.refresh().is_empty());
    edit(&root, "s002", "edited after");
    let changes = skills.refresh();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].diff.changed, vec!["s002"]);
    // An edit of the renamed-in folder is seen as well.
    edit(&root, "s001", "replaced twice");
    assert_eq!(skills.refresh()[0].diff.changed, vec!["s001"]);
}

#[test]
fn contents_are_walked_once_on_first_use() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("skills");
    let dir = write_skill(&root, "a", "d");
    std::fs::create_dir_all(dir.join("references")).expect("mkdir");
    std::fs::write(dir.join("references/r.md"), "12345").expect("write");
    let scan = scan_folder(&root, Mode::Lenient, "t");
    let entry = scan.catalog.get("a").expect("a");
    let md = std::fs::metadata(dir.join(SKILL_FILE)).expect("stat").len();
    assert_eq!(entry.full_bytes(), md + 5);
    assert_eq!(entry.resources().len(), 1);
    assert_eq!(entry.resources()[0].path, "references/r.md");
    // Walked once: a file added afterwards is not in this entry's (cached) listing.
    std::fs::write(dir.join("references/late.md"), "x").expect("write");
    assert_eq!(entry.resources().len(), 1);
    // A clone shares the walk.
    let clone = (*entry).clone();
    assert_eq!(clone.full_bytes(), md + 5);
}
