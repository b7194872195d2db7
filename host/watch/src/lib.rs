//! File-system events: the one layer both watchers read, the skills service's re-scan
//! ([`guild_skills`]) and `guild serve`'s reload-on-change.
//!
//! On Linux a [`Watcher`] is one inotify instance, read by whoever owns it and by no thread of
//! its own. The kernel queues an event before the write that caused it returns, so a caller
//! that [`drain`](Watcher::drain)s the queue (never blocking) sees every change made before the
//! call: the skills re-scan relies on that, which a watcher delivering events from a background
//! thread (the `notify` crate's design) cannot promise. A caller that must wait for the next
//! event wraps the same watcher in an [`AsyncWatcher`], which registers the inotify descriptor
//! with the tokio reactor (`AsyncFd`): waiting costs no thread either. (This is why the
//! maintained `notify` crate is not used: besides the guarantee above, `guild serve` ran its
//! inotify loop thread in addition to the skills watcher's own instance; see
//! docs/operations.md, "Hot reload".)
//!
//! A watch covers one folder, not its sub-folders (inotify has no recursive watch); a caller
//! wanting a tree watches each folder of it and adds new ones as [`Event::Change::new_dir`]
//! reports them. When the kernel lost events ([`Event::Overflow`]), the caller compares
//! everything it watches. A watch the kernel refuses (a missing folder, the per-user watch
//! limit) is an error naming the folder, so the caller can fall back to comparing that folder
//! by polling.
//!
//! Elsewhere than Linux there are no events: [`Watcher::new`] fails with
//! [`WatchError::Unavailable`] and both callers poll.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[cfg(test)]
mod tests;

/// One watch, as [`Watcher::add`] returned it and [`Event::Change`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WatchId(i32);

/// Which changes in a watched folder raise an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// Entries appearing, going or being renamed, and metadata changes (not a file's content
    /// written in place).
    Entries,
    /// [`Interest::Entries`], and files written in place.
    Contents,
}

/// What the queue held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The kernel's queue overflowed and events were lost: compare everything.
    Overflow,
    /// Something changed in (or to) a watched folder.
    Change {
        /// The watch on that folder.
        watch: WatchId,
        /// The entry inside the folder the event names; `None` for the folder itself.
        name: Option<OsString>,
        /// The entry is a folder that appeared (created or moved in): a caller watching a tree
        /// watches it too.
        new_dir: bool,
        /// The watched folder itself went away (deleted, moved, unmounted): its watch is gone.
        gone: bool,
    },
}

/// Why events are not available, or not for a folder.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The platform has no events here (not Linux), or the kernel refused an instance.
    #[error("file-system events unavailable: {0}")]
    Unavailable(#[source] std::io::Error),
    /// The kernel refused a watch on `path` (it does not exist, is not a folder, or the
    /// per-user watch limit is reached).
    #[error("cannot watch {}: {source}", path.display())]
    Refused {
        /// The folder asked for.
        path: PathBuf,
        /// What the kernel said.
        #[source]
        source: std::io::Error,
    },
    /// Reading the event queue failed.
    #[error("failed to read file-system events: {0}")]
    Read(#[source] std::io::Error),
}

/// One set of watches and their event queue; see the module doc.
pub struct Watcher {
    sys: sys::Queue,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Watcher {
    /// A watcher with no watches yet; [`WatchError::Unavailable`] elsewhere than Linux.
    pub fn new() -> Result<Self, WatchError> {
        Ok(Self {
            sys: sys::Queue::new().map_err(WatchError::Unavailable)?,
        })
    }

    /// Watches the folder `path` (not its sub-folders). Watching a folder already watched
    /// returns the same [`WatchId`].
    pub fn add(&mut self, path: &Path, interest: Interest) -> Result<WatchId, WatchError> {
        self.sys
            .add(path, interest)
            .map(WatchId)
            .map_err(|source| WatchError::Refused {
                path: path.to_owned(),
                source,
            })
    }

    /// Stops a watch (nothing happens when it is already gone).
    pub fn remove(&mut self, watch: WatchId) {
        self.sys.remove(watch.0);
    }

    /// Hands every queued event to `each`, in order, without blocking; returns when the queue
    /// is empty.
    pub fn drain(&mut self, each: impl FnMut(Event)) -> Result<(), WatchError> {
        self.sys.read(each).map_err(WatchError::Read)
    }
}

/// A [`Watcher`] whose caller waits for events on the tokio reactor (no thread of its own).
#[derive(Debug)]
pub struct AsyncWatcher {
    sys: sys::Async,
}

impl AsyncWatcher {
    /// Registers `watcher` with the current tokio runtime (so: called inside one).
    pub fn new(watcher: Watcher) -> Result<Self, WatchError> {
        Ok(Self {
            sys: sys::Async::new(watcher).map_err(WatchError::Unavailable)?,
        })
    }

    /// [`Watcher::add`].
    pub fn add(&mut self, path: &Path, interest: Interest) -> Result<WatchId, WatchError> {
        self.sys.watcher().add(path, interest)
    }

    /// [`Watcher::remove`].
    pub fn remove(&mut self, watch: WatchId) {
        self.sys.watcher().remove(watch);
    }

    /// Waits until the queue holds at least one event, then returns all it holds.
    pub async fn next(&mut self) -> Result<Vec<Event>, WatchError> {
        self.sys.next().await.map_err(WatchError::Read)
    }
}

#[cfg(target_os = "linux")]
mod sys {
    //! The inotify side.

    use std::collections::HashMap;
    use std::io;
    use std::os::fd::{AsRawFd, RawFd};
    use std::path::Path;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    use super::{Event, Watcher};

    pub(super) struct Queue {
        inotify: Inotify,
        by_id: HashMap<i32, WatchDescriptor>,
        buffer: Vec<u8>,
    }

    impl Queue {
        pub(super) fn new() -> io::Result<Self> {
            Ok(Self {
                // Non-blocking: reading an empty queue is `WouldBlock`, never a wait.
                inotify: Inotify::init()?,
                by_id: HashMap::new(),
                buffer: vec![0; 64 * 1024],
            })
        }

        pub(super) fn add(&mut self, path: &Path, interest: super::Interest) -> io::Result<i32> {
            // Never access, open or close-without-write: reading a watched folder (a reload
            // does) must not look like a change to it.
            let mut mask = WatchMask::CREATE
                | WatchMask::DELETE
                | WatchMask::MOVED_FROM
                | WatchMask::MOVED_TO
                | WatchMask::ATTRIB
                | WatchMask::DELETE_SELF
                | WatchMask::MOVE_SELF
                | WatchMask::ONLYDIR;
            if interest == super::Interest::Contents {
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

        pub(super) fn read(&mut self, mut each: impl FnMut(Event)) -> io::Result<()> {
            loop {
                let events = match self.inotify.read_events(&mut self.buffer) {
                    Ok(events) => events,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) => return Err(e),
                };
                let mut ignored = Vec::new();
                for event in events {
                    if event.mask.contains(EventMask::Q_OVERFLOW) {
                        each(Event::Overflow);
                        continue;
                    }
                    let id = event.wd.get_watch_descriptor_id();
                    if event.mask.contains(EventMask::IGNORED) {
                        ignored.push(id);
                    }
                    each(Event::Change {
                        watch: super::WatchId(id),
                        name: event.name.map(ToOwned::to_owned),
                        new_dir: event.mask.contains(EventMask::ISDIR)
                            && event
                                .mask
                                .intersects(EventMask::CREATE | EventMask::MOVED_TO),
                        gone: event.mask.intersects(
                            EventMask::IGNORED | EventMask::DELETE_SELF | EventMask::MOVE_SELF,
                        ),
                    });
                }
                for id in ignored {
                    self.by_id.remove(&id);
                }
            }
        }
    }

    impl AsRawFd for Watcher {
        fn as_raw_fd(&self) -> RawFd {
            self.sys.inotify.as_raw_fd()
        }
    }

    #[derive(Debug)]
    pub(super) struct Async(AsyncFd<Watcher>);

    impl Async {
        #[allow(unsafe_code)]
        pub(super) fn new(watcher: Watcher) -> io::Result<Self> {
            // SAFETY: the descriptor is the inotify instance's, which the `Watcher` owns and
            // never replaces, so it stays open and the same until the `AsyncFd` drops it. The
            // `Watcher` is never handed out (`watcher` below is private to this layer, and only
            // adds and removes watches), so no caller can swap it for another.
            let fd = unsafe { AsyncFd::register_with_interest(watcher, Interest::READABLE) }?;
            Ok(Self(fd))
        }

        /// The watcher inside, for [`super::AsyncWatcher`]'s `add` and `remove` only.
        pub(super) fn watcher(&mut self) -> &mut Watcher {
            self.0.get_mut()
        }

        pub(super) async fn next(&mut self) -> io::Result<Vec<Event>> {
            loop {
                let mut ready = self.0.readable_mut().await?;
                // Cleared before draining: an event queued after the clear makes the
                // descriptor ready again, so none waits unseen until a later one.
                ready.clear_ready();
                let mut events = Vec::new();
                ready.get_inner_mut().sys.read(|e| events.push(e))?;
                if !events.is_empty() {
                    return Ok(events);
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    //! No events here: [`Queue::new`] fails, so nothing else is ever called.

    use std::io;
    use std::path::Path;

    use super::{Event, Interest, Watcher};

    pub(super) struct Queue;

    impl Queue {
        pub(super) fn new() -> io::Result<Self> {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "file-system events are used on Linux only",
            ))
        }

        pub(super) fn add(&mut self, _: &Path, _: Interest) -> io::Result<i32> {
            Err(io::ErrorKind::Unsupported.into())
        }

        pub(super) fn remove(&mut self, _: i32) {}

        pub(super) fn read(&mut self, _: impl FnMut(Event)) -> io::Result<()> {
            Ok(())
        }
    }

    #[derive(Debug)]
    pub(super) struct Async(Watcher);

    impl Async {
        pub(super) fn new(watcher: Watcher) -> io::Result<Self> {
            Ok(Self(watcher))
        }

        pub(super) fn watcher(&mut self) -> &mut Watcher {
            &mut self.0
        }

        pub(super) async fn next(&mut self) -> io::Result<Vec<Event>> {
            std::future::pending().await
        }
    }
}
