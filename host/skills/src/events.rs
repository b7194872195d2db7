//! File-system events for the skills watcher: which skill folders changed since the last
//! re-scan, so that a re-scan compares those and trusts the rest without a `stat`.
//!
//! On Linux one inotify instance per [`super::Skills`] service watches each cached skills
//! folder and each of its skill folders (not their sub-folders: edits below a skill folder do
//! not change its catalog entry). The kernel queues an event before the write that caused it
//! returns, and a re-scan drains the queue without blocking, so a change made before
//! [`super::Skills::refresh`] is always seen by it.
//!
//! The events come from the shared layer ([`guild_watch`]), drained synchronously here.
//!
//! Whatever events cannot vouch for is compared in full, by stamps: a folder not watched yet
//! (and the re-scan after its watches were added, which covers changes made while they were
//! being added), a lost queue (`IN_Q_OVERFLOW`), a watch the kernel refused (the per-user
//! watch limit) or an instance it refused; and every [`FULL_EVERY`]th re-scan, for network
//! file systems whose changes made on other machines raise no local event. Elsewhere than
//! Linux, and with `[skills] watch_events = false`, every re-scan compares in full.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use guild_watch::{Event, Interest, WatchError, WatchId, Watcher};

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
    sys: Option<Watcher>,
    folders: HashMap<PathBuf, Folder>,
    /// What each watch is on: a skills folder, and the skill folder's name below it.
    targets: HashMap<Watch, (PathBuf, Option<String>)>,
}

type Watch = WatchId;

impl Events {
    /// Events when `enabled` and the platform has them; otherwise every check is [`Check::All`].
    pub(crate) fn new(enabled: bool) -> Self {
        let sys = if enabled {
            match Watcher::new() {
                Ok(w) => Some(w),
                Err(e) => {
                    tracing::info!(
                        "skills watcher: {e}; comparing every skill folder each interval"
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
        let mut events = Vec::new();
        if let Err(e) = sys.drain(|event| events.push(event)) {
            tracing::warn!("skills watcher: {e}; comparing in full");
            events.push(Event::Overflow);
        }
        self.apply(events);
    }

    /// Marks what `events` name as changed; a lost queue marks every folder.
    fn apply(&mut self, events: Vec<Event>) {
        for event in events {
            let (wd, name, gone) = match event {
                Event::Overflow => {
                    for folder in self.folders.values_mut() {
                        folder.full = true;
                    }
                    continue;
                }
                Event::Change {
                    watch, name, gone, ..
                } => (watch, name, gone),
            };
            let name = name.map(|n| n.to_string_lossy().into_owned());
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
        let refused = |folder: &mut Folder, e: WatchError| {
            tracing::info!(
                "skills watcher: {e}; comparing this skills folder in full each interval"
            );
            folder.polled = true;
        };
        if folder.root.is_none() {
            // The skills folder: skill folders coming and going (not files written in it).
            match sys.add(dir, Interest::Entries) {
                Ok(wd) => {
                    folder.root = Some(wd);
                    folder.full = true;
                    self.targets.insert(wd, (dir.to_owned(), None));
                }
                Err(e) => return refused(folder, e),
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
            // A skill folder: its SKILL.md written in place too.
            match sys.add(&dir.join(name), Interest::Contents) {
                Ok(wd) => {
                    folder.children.insert(name.clone(), wd);
                    folder.dirty.insert(name.clone());
                    self.targets
                        .insert(wd, (dir.to_owned(), Some(name.clone())));
                }
                // Removed since it was listed: the root's event reports it.
                Err(WatchError::Refused { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    folder.dirty.insert(name.clone());
                }
                Err(e) => return refused(folder, e),
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A watched skills folder with one skill, past the full comparison after its watches.
    fn settled() -> (tempfile::TempDir, PathBuf, Events) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("skills");
        std::fs::create_dir_all(root.join("a")).expect("mkdir");
        let mut events = Events::new(true);
        events.watch(&root, &["a".to_owned()]);
        events.drain();
        assert_eq!(events.take(&root), Check::All, "just watched");
        (tmp, root, events)
    }

    #[test]
    fn a_lost_queue_compares_everything_a_quiet_one_nothing() {
        let (_tmp, root, mut events) = settled();
        events.drain();
        assert_eq!(events.take(&root), Check::Only(BTreeSet::new()));

        events.apply(vec![Event::Overflow]);
        assert_eq!(events.take(&root), Check::All);
    }
}
