//! Watching skill folders: adding, changing or removing a skill updates the catalog without a
//! restart, and every change is reported as a [`CatalogDiff`](super::CatalogDiff).
//!
//! A thread re-scans every cached folder each interval (default every second,
//! `[skills] watch_interval_ms`). What a re-scan compares comes from file-system events where
//! the platform has them ([`super::events`]: only the skill folders an event named, so a quiet
//! interval costs one read of the event queue and one `stat` per skills folder), and otherwise
//! from stamps: one `stat` of each watched folder and two per skill (its folder and its
//! `SKILL.md`), with a skill walked and parsed again only when one of them changed (see
//! [`super::folder`]). Which folders are watched: every folder the service has served a
//! catalog from (or was primed with [`Skills::folder`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::service::{FolderChange, Skills};

/// A running watcher; dropping it stops the thread (within one interval at most, usually at
/// once).
pub struct SkillWatcher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Skills {
    /// Starts a watcher thread that re-scans every cached folder each interval and calls
    /// `on_change` once per folder whose catalog changed.
    pub fn watch(
        self: &Arc<Self>,
        on_change: impl Fn(&FolderChange) + Send + 'static,
    ) -> std::io::Result<SkillWatcher> {
        let interval = Duration::from_millis(self.settings().watch_interval_ms.max(10));
        self.watch_every(interval, on_change)
    }

    /// [`Skills::watch`] with an explicit interval (tests use a short one).
    pub fn watch_every(
        self: &Arc<Self>,
        interval: Duration,
        on_change: impl Fn(&FolderChange) + Send + 'static,
    ) -> std::io::Result<SkillWatcher> {
        let stop = Arc::new(AtomicBool::new(false));
        let skills = Arc::downgrade(self);
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("guild-skills-watch".to_owned())
            .spawn(move || {
                loop {
                    std::thread::park_timeout(interval);
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    // The service owns the cache; once it is gone there is nothing to watch.
                    let Some(skills) = skills.upgrade() else {
                        break;
                    };
                    for change in skills.refresh() {
                        on_change(&change);
                    }
                }
            })?;
        Ok(SkillWatcher {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for SkillWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            // A panicking callback already ended the thread; nothing more to report.
            let _ = thread.join();
        }
    }
}
