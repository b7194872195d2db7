//! File-system events for the skills watcher: which skill folders changed since the last
//! re-scan, so that a re-scan compares those and trusts the rest without a `stat`.
//!
//! On Linux one inotify instance per [`super::Skills`] service watches each cached skills
//! folder and each of its skill folders (not their sub-folders: edits below a skill folder do
//! not change its catalog entry). The kernel queues an event before the write that caused it
//! returns, and a re-scan drains the queue without blocking, so a change made before
//! [`super::Skills::refresh`] is always seen by it.
//!
//! Whatever events cannot vouch for is compared in full, by stamps: a folder not watched yet
//! (and the re-scan after its watches were added, which covers changes made while they were
//! being added), a lost queue (`IN_Q_OVERFLOW`), a watch the kernel refused (the per-user
//! watch limit) or an instance it refused; and every [`FULL_EVERY`]th re-scan, for network
//! file systems whose changes made on other machines raise no local event. Elsewhere than
//! Linux, and with `[skills] watch_events = false`, every re-scan compares in full.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Every this many re-scans, a watched folder is compared in full anyway.
pub(crate) const FULL_EVERY: u32 = 30;

/// What one re-scan of a folder must compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Every skill folder, by stamps.
    All,
    /// Only these skill folders; the rest are unchanged. (Stamps too recent to trust need no
    /// second look here: every skill folder outside the set was loaded after its watch was
    /// added, so a later write raised an event. One loaded before its watch is put in the set
    /// when the watch is added.)
    Only(BTreeSet<String>),
}

/// Per skills folder: its watches and what changed since the last [`Events::take`].
#[derive(Debug, Default)]
struct Folder {
    root: Option<Watch>,
    children: HashMap<String, Watch>,
    dirty: BTreeSet<String>,
    /// The next re-scan compares in full (just watched, queue lost, watch refused).
    full: bool,
    /// Watches refused for this folder: compared in full every time.
    polled: bool,
    rounds: u32,
}

/// The events of one skills service.
pub(crate) struct Events {
    sys: Option<sys::Watcher>,
    folders: HashMap<PathBuf, Folder>,
    /// What each watch is on: a skills folder, and the skill folder's name below it.
    targets: HashMap<Watch, (PathBuf, Option<String>)>,
}

type Watch = i32;

/// One event as read from the queue.
enum Raw {
    /// The queue overflowed: events were lost.
    Overflow,
    /// Something happened in (or to) a watched folder.
    Event {
        wd: Watch,
        /// The entry inside the folder it names, if any.
        name: Option<String>,
        /// The watched folder itself went away (deleted, moved, unmounted).
        gone: bool,
    },
}

impl Events {
    /// Events when `enabled` and the platform has them; otherwise every check is [`Check::All`].
    pub(crate) fn new(enabled: bool) -> Self {
        let sys = if enabled {
            match sys::Watcher::new() {
                Ok(w) => Some(w),
                Err(e) => {
                    tracing::info!(
                        "skills watcher: no file-system events ({e}); comparing every skill folder each interval"
                    );
                    None
                }
            }
        } else {
            None
        };
        Self {
            sys,
            folders: HashMap::new(),
            targets: HashMap::new(),
        }
    }

    /// Reads every queued event (never blocks) into the folders' dirty sets.
    pub(crate) fn drain(&mut self) {
        let Some(sys) = &mut self.sys else { return };
        let mut overflow = false;
        let mut seen: Vec<(Watch, Option<String>, bool)> = Vec::new();
        if let Err(e) = sys.read(|raw| match raw {
            Raw::Overflow => overflow = true,
            Raw::Event { wd, name, gone } => seen.push((wd, name, gone)),
        }) {
            tracing::warn!("skills watcher: reading events failed ({e}); comparing in full");
            overflow = true;
        }
        if overflow {
            for folder in self.folders.values_mut() {
                folder.full = true;
            }
        }
        for (wd, name, gone) in seen {
            let Some((dir, child)) = self.targets.get(&wd).cloned() else {
                continue;
            };
            let Some(folder) = self.folders.get_mut(&dir) else {
                continue;
            };
            match child {
                // In a skill folder: that skill.
                Some(child) => {
                    if gone {
                        folder.children.remove(&child);
                        self.targets.remove(&wd);
                    }
                    folder.dirty.insert(child);
                }
                // In the skills folder: the entry it names (created, removed, renamed, replaced).
                None => {
                    if let Some(name) = name {
                        folder.dirty.insert(name);
                    }
                    if gone {
                        folder.root = None;
                        folder.full = true;
                        self.targets.remove(&wd);
                    }
                }
            }
        }
    }

    /// What the next re-scan of `dir` must compare; resets its dirty set.
    pub(crate) fn take(&mut self, dir: &Path) -> Check {
        let Some(folder) = self.folders.get_mut(dir) else {
            return Check::All;
        };
        folder.rounds = folder.rounds.wrapping_add(1);
        let dirty = std::mem::take(&mut folder.dirty);
        if self.sys.is_none()
            || folder.polled
            || folder.root.is_none()
            || std::mem::take(&mut folder.full)
            || folder.rounds % FULL_EVERY == 0
        {
            return Check::All;
        }
        Check::Only(dirty)
    }

    /// Watches `dir` and exactly the skill folders `children` below it (adding what is new,
    /// dropping what is gone). A newly watched skill folder is compared at the next re-scan,
    /// which covers a change made between its last load and its watch.
    pub(crate) fn watch(&mut self, dir: &Path, children: &[String]) {
        let Some(sys) = &mut self.sys else { return };
        let folder = self.folders.entry(dir.to_owned()).or_default();
        if folder.polled {
            return;
        }
        let refused = |folder: &mut Folder, what: &Path, e: std::io::Error| {
            tracing::info!(
                folder = %what.display(),
                "skills watcher: cannot watch ({e}); comparing this skills folder in full each interval"
            );
            folder.polled = true;
        };
        if folder.root.is_none() {
            match sys.add(dir, true) {
                Ok(wd) => {
                    folder.root = Some(wd);
                    folder.full = true;
                    self.targets.insert(wd, (dir.to_owned(), None));
                }
                Err(e) => return refused(folder, dir, e),
            }
        }
        let wanted: BTreeSet<&str> = children.iter().map(String::as_str).collect();
        let gone: Vec<String> = folder
            .children
            .keys()
            .filter(|name| !wanted.contains(name.as_str()))
            .cloned()
            .collect();
        for name in gone {
            if let Some(wd) = folder.children.remove(&name) {
                sys.remove(wd);
                self.targets.remove(&wd);
            }
        }
        for name in children {
            if folder.children.contains_key(name) {
                continue;
            }
            match sys.add(&dir.join(name), false) {
                Ok(wd) => {
                    folder.children.insert(name.clone(), wd);
                    folder.dirty.insert(name.clone());
                    self.targets
                        .insert(wd, (dir.to_owned(), Some(name.clone())));
                }
                // Removed since it was listed: the root's event reports it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    folder.dirty.insert(name.clone());
                }
                Err(e) => return refused(folder, &dir.join(name), e),
            }
        }
    }

    /// True when `dir` has watches in place (events decide what its re-scans compare).
    pub(crate) fn is_watched(&self, dir: &Path) -> bool {
        self.sys.is_some()
            && self
                .folders
                .get(dir)
                .is_some_and(|f| f.root.is_some() && !f.polled)
    }
}

#[cfg(target_os = "linux")]
mod sys {
    //! The inotify side.

    use std::path::Path;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

    use super::Raw;

    pub(super) struct Watcher {
        inotify: Inotify,
        by_id: std::collections::HashMap<i32, WatchDescriptor>,
        buffer: Vec<u8>,
    }

    impl Watcher {
        pub(super) fn new() -> std::io::Result<Self> {
            Ok(Self {
                inotify: Inotify::init()?,
                by_id: std::collections::HashMap::new(),
                buffer: vec![0; 64 * 1024],
            })
        }

        pub(super) fn add(&mut self, path: &Path, root: bool) -> std::io::Result<i32> {
            let mut mask = WatchMask::CREATE
                | WatchMask::DELETE
                | WatchMask::MOVED_FROM
                | WatchMask::MOVED_TO
                | WatchMask::ATTRIB
                | WatchMask::DELETE_SELF
                | WatchMask::MOVE_SELF
                | WatchMask::ONLYDIR;
            if !root {
                // A skill folder's own files: SKILL.md written in place.
                mask |= WatchMask::MODIFY | WatchMask::CLOSE_WRITE;
            }
            let wd = self.inotify.watches().add(path, mask)?;
            let id = wd.get_watch_descriptor_id();
            self.by_id.insert(id, wd);
            Ok(id)
        }

        pub(super) fn remove(&mut self, id: i32) {
            if let Some(wd) = self.by_id.remove(&id) {
                // Already gone when the folder was deleted: nothing to undo.
                let _ = self.inotify.watches().remove(wd);
            }
        }

        pub(super) fn read(&mut self, mut each: impl FnMut(Raw)) -> std::io::Result<()> {
            loop {
                let events = match self.inotify.read_events(&mut self.buffer) {
                    Ok(events) => events,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) => return Err(e),
                };
                let mut ignored = Vec::new();
                for event in events {
                    if event.mask.contains(EventMask::Q_OVERFLOW) {
                        each(Raw::Overflow);
                        continue;
                    }
                    let id = event.wd.get_watch_descriptor_id();
                    let gone = event.mask.intersects(
                        EventMask::IGNORED | EventMask::DELETE_SELF | EventMask::MOVE_SELF,
                    );
                    if event.mask.contains(EventMask::IGNORED) {
                        ignored.push(id);
                    }
                    each(Raw::Event {
                        wd: id,
                        name: event.name.map(|n| n.to_string_lossy().into_owned()),
                        gone,
                    });
                }
                for id in ignored {
                    self.by_id.remove(&id);
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    //! No events here: every re-scan compares in full.

    use std::path::Path;

    use super::Raw;

    pub(super) struct Watcher;

    impl Watcher {
        pub(super) fn new() -> std::io::Result<Self> {
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "file-system events are used on Linux only",
            ))
        }

        pub(super) fn add(&mut self, _: &Path, _: bool) -> std::io::Result<i32> {
            Err(std::io::ErrorKind::Unsupported.into())
        }

        pub(super) fn remove(&mut self, _: i32) {}

        pub(super) fn read(&mut self, _: impl FnMut(Raw)) -> std::io::Result<()> {
            Ok(())
        }
    }
}
