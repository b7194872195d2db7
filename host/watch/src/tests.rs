//! The shared event layer against real folders: a write in a watched folder is an event naming
//! it, a write elsewhere is none, a lost queue is reported as [`Event::Overflow`], and a watch
//! the kernel refuses is an error naming the folder. Linux only (elsewhere there are no events).

#![cfg(target_os = "linux")]

use std::ffi::OsString;

use super::*;

fn drained(watcher: &mut Watcher) -> Vec<Event> {
    let mut events = Vec::new();
    watcher.drain(|e| events.push(e)).expect("drain");
    events
}

fn names(events: &[Event], watch: WatchId) -> Vec<OsString> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Change {
                watch: w,
                name: Some(name),
                ..
            } if *w == watch => Some(name.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_write_in_a_watched_folder_is_an_event_naming_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut watcher = Watcher::new().expect("inotify");
    let watch = watcher
        .add(tmp.path(), Interest::Contents)
        .expect("watch the folder");
    assert!(drained(&mut watcher).is_empty(), "nothing happened yet");

    std::fs::write(tmp.path().join("plugin.toml"), "x").expect("write");
    // Queued before the write returned: the drain right after sees it.
    let events = drained(&mut watcher);
    assert!(
        names(&events, watch).contains(&OsString::from("plugin.toml")),
        "{events:?}"
    );
    assert!(drained(&mut watcher).is_empty(), "drained once");
}

#[test]
fn a_write_in_an_unwatched_folder_is_none() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (watched, other) = (tmp.path().join("watched"), tmp.path().join("other"));
    for dir in [&watched, &other] {
        std::fs::create_dir(dir).expect("mkdir");
    }
    let mut watcher = Watcher::new().expect("inotify");
    watcher.add(&watched, Interest::Contents).expect("watch");

    std::fs::write(other.join("plugin.toml"), "x").expect("write");
    // Nor below a watched folder: a watch covers one folder, not its sub-folders.
    std::fs::create_dir(watched.join("sub")).expect("mkdir sub");
    let _ = drained(&mut watcher);
    std::fs::write(watched.join("sub").join("plugin.toml"), "x").expect("write");
    assert_eq!(drained(&mut watcher), vec![]);
}

#[test]
fn a_folder_appearing_is_reported_as_new_and_a_removed_one_as_gone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sub = tmp.path().join("sub");
    let mut watcher = Watcher::new().expect("inotify");
    let root = watcher.add(tmp.path(), Interest::Entries).expect("watch");
    std::fs::create_dir(&sub).expect("mkdir");
    let events = drained(&mut watcher);
    assert!(
        events.contains(&Event::Change {
            watch: root,
            name: Some("sub".into()),
            new_dir: true,
            gone: false,
        }),
        "{events:?}"
    );

    let watch = watcher.add(&sub, Interest::Entries).expect("watch sub");
    std::fs::remove_dir(&sub).expect("rmdir");
    let events = drained(&mut watcher);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Change { watch: w, gone: true, .. } if *w == watch)),
        "{events:?}"
    );
}

#[test]
fn entries_interest_ignores_a_file_written_in_place_contents_sees_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("SKILL.md");
    std::fs::write(&file, "one").expect("write");
    for (interest, seen) in [(Interest::Entries, false), (Interest::Contents, true)] {
        let mut watcher = Watcher::new().expect("inotify");
        let watch = watcher.add(tmp.path(), interest).expect("watch");
        std::fs::write(&file, "two").expect("write in place");
        let events = drained(&mut watcher);
        assert_eq!(
            !names(&events, watch).is_empty(),
            seen,
            "{interest:?}: {events:?}"
        );
    }
}

#[test]
fn a_lost_queue_is_reported_as_overflow() {
    let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16384);
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut watcher = Watcher::new().expect("inotify");
    watcher.add(tmp.path(), Interest::Entries).expect("watch");
    // One event per new name, none drained: the queue holds `limit` and loses the rest.
    for i in 0..=limit {
        std::fs::File::create(tmp.path().join(format!("f{i}"))).expect("create");
    }
    let events = drained(&mut watcher);
    assert_eq!(
        events.last(),
        Some(&Event::Overflow),
        "{} events",
        events.len()
    );

    // Without the flood: no overflow.
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut watcher = Watcher::new().expect("inotify");
    watcher.add(tmp.path(), Interest::Entries).expect("watch");
    std::fs::File::create(tmp.path().join("one")).expect("create");
    assert!(!drained(&mut watcher).contains(&Event::Overflow));
}

#[test]
fn a_watch_that_cannot_be_set_is_reported_naming_the_folder() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("not-there-yet");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let mut watcher = Watcher::new().expect("inotify");
    for path in [&missing, &file] {
        let err = watcher.add(path, Interest::Contents).expect_err("refused");
        assert!(
            matches!(&err, WatchError::Refused { path: p, .. } if p == path),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }
    // The folder that exists is watched.
    assert!(watcher.add(tmp.path(), Interest::Contents).is_ok());
}

#[tokio::test]
async fn the_async_watcher_wakes_for_a_write_and_returns_what_is_queued() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut watcher = AsyncWatcher::new(Watcher::new().expect("inotify")).expect("reactor");
    let watch = watcher.add(tmp.path(), Interest::Contents).expect("watch");
    let dir = tmp.path().to_owned();
    let writer = tokio::task::spawn_blocking(move || {
        std::fs::write(dir.join("guild.toml"), "x").expect("write")
    });
    let events = watcher.next().await.expect("events");
    writer.await.expect("writer");
    assert!(
        names(&events, watch).contains(&OsString::from("guild.toml")),
        "{events:?}"
    );
}
