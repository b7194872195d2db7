//! `guild serve`'s file-system events, read from the shared layer ([`guild_host::watch`]) and
//! waited for on the tokio reactor (no thread of their own).
//!
//! Watched: every folder of each watched folder's tree (a plugin folder, the `plugins_dir`,
//! a skill folder), adding folders that appear in a tree as their events arrive, and the folder
//! holding `guild.toml` (not its sub-folders: editors replace the file rather than write it in
//! place, so the file itself cannot be watched). An event counts when the path it names is a
//! watched path or lies below one (the config file's folder holds other files too); a lost
//! queue always counts.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use guild_host::watch::{AsyncWatcher, Event, Interest, WatchError, WatchId, Watcher};

use super::watch::{poll, reload, watched};
use crate::mcp::Server;

/// The watches of a running server.
pub(super) struct Events {
    watcher: AsyncWatcher,
    /// Watched paths: folders, and files whose folder is watched.
    roots: BTreeSet<PathBuf>,
    /// Every folder a watch is on, and whether folders appearing in it are watched too.
    dirs: BTreeMap<PathBuf, (WatchId, bool)>,
    by_watch: HashMap<WatchId, PathBuf>,
}

impl Events {
    /// Watches everything `guild.toml` names; an error when events are unavailable or a watch
    /// cannot be set (a folder that does not exist yet, the watch limit).
    pub(super) fn new(config_path: &Path) -> anyhow::Result<Self> {
        let mut events = Self {
            watcher: AsyncWatcher::new(Watcher::new()?)?,
            roots: BTreeSet::new(),
            dirs: BTreeMap::new(),
            by_watch: HashMap::new(),
        };
        events.arm(config_path)?;
        Ok(events)
    }

    /// How many paths are watched (folders count once, however deep their tree).
    pub(super) fn paths(&self) -> usize {
        self.roots.len()
    }

    /// Sets a watch on every folder wanted now (and drops those no longer wanted).
    fn arm(&mut self, config_path: &Path) -> anyhow::Result<()> {
        let roots: BTreeSet<PathBuf> = watched(config_path).into_iter().collect();
        let mut want = BTreeMap::new();
        for path in &roots {
            if path.is_dir() {
                tree(path, &mut want);
            } else {
                let parent = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                if !parent.is_dir() {
                    anyhow::bail!("{} does not exist", parent.display());
                }
                want.entry(parent).or_insert(false);
            }
        }
        let gone: Vec<PathBuf> = self
            .dirs
            .keys()
            .filter(|dir| !want.contains_key(*dir))
            .cloned()
            .collect();
        for dir in gone {
            self.unwatch(&dir);
        }
        for (dir, subtree) in want {
            match self.watch(&dir, subtree) {
                Ok(()) => {}
                // Removed since it was listed; a watched root is checked above.
                Err(WatchError::Refused { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound && !roots.contains(&dir) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.roots = roots;
        Ok(())
    }

    fn watch(&mut self, dir: &Path, subtree: bool) -> Result<(), WatchError> {
        let id = self.watcher.add(dir, Interest::Contents)?;
        self.by_watch.insert(id, dir.to_owned());
        self.dirs.insert(dir.to_owned(), (id, subtree));
        Ok(())
    }

    fn unwatch(&mut self, dir: &Path) {
        let Some((id, _)) = self.dirs.remove(dir) else {
            return;
        };
        tracing::debug!("no longer watching {}", dir.display());
        // One folder reached by two paths has one watch: keep it while another path uses it.
        if self.dirs.values().all(|(other, _)| *other != id) {
            self.by_watch.remove(&id);
            self.watcher.remove(id);
        }
    }

    /// Whether `events` touch a watched path; watches the folders that appeared in a tree.
    fn relevant(&mut self, events: Vec<Event>) -> bool {
        let mut relevant = false;
        for event in events {
            let (id, name, new_dir, gone) = match event {
                // Lost events may have been changes: reload to be safe.
                Event::Overflow => {
                    relevant = true;
                    continue;
                }
                Event::Change {
                    watch,
                    name,
                    new_dir,
                    gone,
                } => (watch, name, new_dir, gone),
            };
            let Some(dir) = self.by_watch.get(&id).cloned() else {
                continue;
            };
            let path = name.map_or_else(|| dir.clone(), |name| dir.join(name));
            if gone {
                self.unwatch(&dir);
            }
            if new_dir && self.dirs.get(&dir).is_some_and(|(_, subtree)| *subtree) {
                // Filled before its watch was set, perhaps: its whole tree, at once.
                let mut want = BTreeMap::new();
                tree(&path, &mut want);
                for (dir, subtree) in want {
                    if let Err(e) = self.watch(&dir, subtree) {
                        tracing::warn!("{e}; changes there are seen at the next reload");
                    }
                }
            }
            relevant |= self.roots.iter().any(|root| path.starts_with(root));
        }
        relevant
    }

    /// Reloads after each change, once the watched paths have been quiet for `quiet`; polls
    /// instead if the events stop.
    pub(super) async fn run(mut self, server: Arc<Server>, config_path: PathBuf, quiet: Duration) {
        if let Err(e) = self.serve(&server, &config_path, quiet).await {
            eprintln!(
                "guild serve: {e}; polling every {} ms instead",
                quiet.as_millis()
            );
            poll(server, config_path, quiet).await;
        }
    }

    async fn serve(
        &mut self,
        server: &Server,
        config_path: &Path,
        quiet: Duration,
    ) -> Result<(), WatchError> {
        loop {
            let events = self.watcher.next().await?;
            if !self.relevant(events) {
                continue;
            }
            // Debounce: wait until the watched paths have been quiet for `quiet`.
            while let Ok(events) = tokio::time::timeout(quiet, self.watcher.next()).await {
                self.relevant(events?);
            }
            reload(server, "after a change").await;
            if let Err(e) = self.arm(config_path) {
                eprintln!(
                    "guild serve: {e:#}; changes there are not seen until the next reload \
                     (use `--watch poll` to have them picked up)"
                );
            }
        }
    }
}

/// `dir` and every folder below it (not through symbolic links), as folders whose new
/// sub-folders are watched too.
fn tree(dir: &Path, out: &mut BTreeMap<PathBuf, bool>) {
    out.insert(dir.to_owned(), true);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            tree(&entry.path(), out);
        }
    }
}
