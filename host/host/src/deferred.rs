//! The deferred loads of a lazy start: the plugins a load left staged because no cache holds
//! their code (see `registry::load_all`). This module owns their queue — smallest component
//! first, the plugins a task asks for moved to the front — what each queued plugin is (name,
//! aliases, kind, the plugins its tasks use), the load errors of those that failed, and the
//! waits of tasks on them. The loader that compiles the queue, one plugin at a time, and adds
//! each to the plugin set is `background_load`.
//!
//! A reload compiles the plugins new to it itself, as an eager host does, but leaves those
//! queued or compiling here, in the same version, to the loader, and [`Deferred::replace`]s
//! the queue with them: the plugin being compiled stays wanted when the reload staged the same
//! version of it (so it is never compiled twice), queued plugins keep their place, and removed
//! or changed ones leave the queue (a changed one is loaded by the reload).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use guild_core::manifest::PluginKind;

use crate::plugin_load::{self, Staged, Version};
use crate::registry::Snapshot;

/// What a queued plugin is, as lists and waits see it.
#[derive(Clone, Debug)]
pub(crate) struct Queued {
    pub(crate) name: String,
    aliases: Vec<String>,
    pub(crate) kind: PluginKind,
    /// The other plugins a task on it uses ([`plugin_load::needs`]).
    needs: Vec<String>,
    /// Bytes of its component.
    pub(crate) size: usize,
}

impl Queued {
    fn of(staged: &Staged) -> Self {
        Self {
            name: staged.name().to_owned(),
            aliases: staged.aliases().to_vec(),
            kind: staged.kind(),
            needs: staged.needs(),
            size: staged.size(),
        }
    }

    fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|a| a == name)
    }
}

/// The plugin the loader took and compiles now.
struct Running {
    queued: Queued,
    version: Version,
    /// Which take this is: the loader's result counts only for the take still current.
    take: u64,
    /// False once a reload no longer wants this version (removed, or staged differently).
    wanted: bool,
}

#[derive(Default)]
struct State {
    queue: VecDeque<(Queued, Staged)>,
    running: Option<Running>,
    takes: u64,
    /// Deferred loads that failed: the plugin and its load error.
    failed: Vec<(Queued, String)>,
    /// Names in the order their compile started (the log says the same).
    started: Vec<String>,
    /// Progress of the current round: plugins finished, and queued in all.
    done: usize,
    total: usize,
    /// When the current round was queued.
    since: Option<Instant>,
    /// Whether a loader task runs.
    loader: bool,
}

/// The queue of deferred loads, shared by the loader, reloads and tasks.
#[derive(Default)]
pub(crate) struct Deferred {
    state: Mutex<State>,
    /// Bumped on every change a wait may be waiting for.
    changed: tokio::sync::watch::Sender<u64>,
    /// Set by a lazy start: this host may have a queue.
    lazy: AtomicBool,
    /// Set by a lazy start until its first load took it: that load defers every new plugin
    /// whose code is not cached.
    first_load: AtomicBool,
    /// Held by the loader while it takes the next plugin; a test holds it to see the order a
    /// task's wait makes (never by timing).
    gate: Arc<tokio::sync::Mutex<()>>,
}

/// One plugin the loader took: what it is, its staged load, and its position in the round.
pub(crate) struct Take {
    pub(crate) queued: Queued,
    pub(crate) staged: Staged,
    pub(crate) take: u64,
    /// 1-based position in the round, and the round's size.
    pub(crate) position: (usize, usize),
    pub(crate) since: Instant,
}

impl Deferred {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a panic between two plain field updates: the queue is whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn notify(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Makes this host's next load (its first) defer plugins whose code must be compiled.
    pub(crate) fn set_lazy(&self) {
        self.lazy.store(true, Ordering::SeqCst);
        self.first_load.store(true, Ordering::SeqCst);
    }

    /// Whether this host started lazily (a reload then replaces the queue).
    pub(crate) fn is_lazy(&self) -> bool {
        self.lazy.load(Ordering::SeqCst)
    }

    /// Whether this load is a lazy start's first, which defers every new plugin without cached
    /// code; true once.
    pub(crate) fn take_first_load(&self) -> bool {
        self.first_load.swap(false, Ordering::SeqCst)
    }

    /// Whether `version` is queued or compiling: a reload leaves it to the loader.
    pub(crate) fn holds(&self, version: &Version) -> bool {
        let state = self.lock();
        state
            .running
            .as_ref()
            .is_some_and(|r| r.version == *version)
            || state.queue.iter().any(|(_, s)| s.version() == *version)
    }

    /// The lock the loader takes before each plugin (a test hook).
    pub(crate) fn gate(&self) -> Arc<tokio::sync::Mutex<()>> {
        self.gate.clone()
    }

    /// Makes `staged` (a reload's, in folder order) the queue. The plugin being compiled stays
    /// wanted only when `staged` holds the same version of it, which then is not queued again;
    /// plugins queued before keep their order in front of new ones, which go smallest first.
    pub(crate) fn replace(&self, staged: Vec<Staged>) {
        let mut state = self.lock();
        let mut staged = staged;
        if let Some(running) = &mut state.running {
            let before = staged.len();
            staged.retain(|s| s.version() != running.version);
            running.wanted = staged.len() < before;
        }
        let old: Vec<String> = state.queue.iter().map(|(q, _)| q.name.clone()).collect();
        let place = |s: &Staged| {
            old.iter()
                .position(|n| n == s.name())
                .map_or((1, 0, s.size()), |i| (0, i, 0))
        };
        staged.sort_by_key(place);
        let renamed: Vec<String> = staged.iter().map(|s| s.name().to_owned()).collect();
        state.failed.retain(|(q, _)| !renamed.contains(&q.name));
        let before = state.queue.len();
        state.queue = staged.into_iter().map(|s| (Queued::of(&s), s)).collect();
        if state.running.is_none() && before == 0 {
            state.done = 0;
            state.total = 0;
            state.since = Some(Instant::now());
        }
        let added = state.queue.len().saturating_sub(before);
        state.total += added;
        state.total = state.total.max(state.done + state.queue.len());
        drop(state);
        self.notify();
    }

    /// Whether a loader must be started (none runs and plugins are queued); the caller starts
    /// one when it is.
    pub(crate) fn claim_loader(&self) -> bool {
        let mut state = self.lock();
        if state.loader || state.queue.is_empty() {
            return false;
        }
        state.loader = true;
        true
    }

    /// The next plugin to compile, or `None` when the queue is empty (the loader then ends).
    pub(crate) fn take(&self) -> Option<Take> {
        let mut state = self.lock();
        let Some((queued, staged)) = state.queue.pop_front() else {
            state.loader = false;
            return None;
        };
        state.takes += 1;
        let take = state.takes;
        state.running = Some(Running {
            queued: queued.clone(),
            version: staged.version(),
            take,
            wanted: true,
        });
        state.started.push(queued.name.clone());
        let position = (state.done + 1, state.total.max(state.done + 1));
        let since = *state.since.get_or_insert_with(Instant::now);
        Some(Take {
            queued,
            staged,
            take,
            position,
            since,
        })
    }

    /// Whether the result of `take` is still wanted (called under the reload lock, before the
    /// loader adds it), and whether it is the last plugin of the round.
    pub(crate) fn still_wanted(&self, take: u64) -> (bool, bool) {
        let state = self.lock();
        let wanted = state
            .running
            .as_ref()
            .is_some_and(|r| r.take == take && r.wanted);
        (wanted, state.queue.is_empty())
    }

    /// Ends `take`: its load `error`, if it failed, is kept for the tasks that ask for it.
    pub(crate) fn done(&self, take: u64, error: Option<String>) {
        let mut state = self.lock();
        if let Some(running) = state.running.take_if(|r| r.take == take) {
            if let Some(error) = error.filter(|_| running.wanted) {
                state.failed.retain(|(q, _)| q.name != running.queued.name);
                state.failed.push((running.queued, error));
            }
            state.done += 1;
        }
        drop(state);
        self.notify();
    }

    /// The queued or compiling plugin `name` (name or alias) is, if it is one.
    pub(crate) fn pending(&self, name: &str) -> Option<Queued> {
        let state = self.lock();
        let running = state.running.iter().map(|r| &r.queued);
        running
            .chain(state.queue.iter().map(|(q, _)| q))
            .find(|q| q.answers_to(name))
            .cloned()
    }

    /// The load error of the deferred plugin `name` (name or alias), if its load failed.
    pub(crate) fn failure(&self, name: &str) -> Option<String> {
        let state = self.lock();
        state
            .failed
            .iter()
            .find(|(q, _)| q.answers_to(name))
            .map(|(_, e)| e.clone())
    }

    /// Every plugin not loaded yet: the one compiling first, then the queue in order.
    pub(crate) fn queued(&self) -> Vec<Queued> {
        let state = self.lock();
        let running = state.running.iter().map(|r| r.queued.clone());
        running
            .chain(state.queue.iter().map(|(q, _)| q.clone()))
            .collect()
    }

    /// Whether nothing is queued or compiling.
    pub(crate) fn is_empty(&self) -> bool {
        let state = self.lock();
        state.running.is_none() && state.queue.is_empty()
    }

    /// A receiver that sees every change of the queue (a plugin queued, taken or finished).
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Names in the order their deferred compile started.
    pub(crate) fn started(&self) -> Vec<String> {
        self.lock().started.clone()
    }

    /// Moves the queued plugins named in `names` to the front, in that order.
    fn prioritize(&self, names: &[String]) {
        let mut state = self.lock();
        for name in names.iter().rev() {
            if let Some(i) = state.queue.iter().position(|(q, _)| q.answers_to(name))
                && let Some(entry) = state.queue.remove(i)
            {
                state.queue.push_front(entry);
            }
        }
    }

    /// Resolves once nothing is queued or compiling.
    pub(crate) async fn all_loaded(&self) {
        let mut changes = self.changed.subscribe();
        while !self.is_empty() {
            // The sender lives in `self`: the wait ends only by a change.
            let _ = changes.changed().await;
        }
    }

    /// Waits, within `until`, for the plugins a task on `name` uses that are still queued or
    /// compiling — `name` itself, then the connectors of its granted tools and `[requires]` and
    /// its skill loaders — after moving them to the front of the queue. Returns their names
    /// (none when nothing was pending); `Err` names what is still loading when time runs out
    /// (the task then ends `timed_out`, as any task whose time runs out).
    pub(crate) async fn ready_for(
        &self,
        current: &Snapshot,
        name: &str,
        until: Option<tokio::time::Instant>,
    ) -> Result<Vec<String>, Vec<String>> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        let itself = self.pending(name);
        let needs = match current.resolve(name) {
            Some(p) => plugin_load::needs(&p.manifest, p.runtime.effective(), &p.skill_sources),
            None => itself.as_ref().map(|q| q.needs.clone()).unwrap_or_default(),
        };
        let mut wanted: Vec<String> = itself.iter().map(|q| q.name.clone()).collect();
        wanted.extend(needs.iter().filter_map(|n| self.pending(n)).map(|q| q.name));
        if wanted.is_empty() {
            return Ok(wanted);
        }
        self.prioritize(&wanted);
        tracing::info!(
            "a task on {name} waits for {} to load (moved to the front of the queue)",
            wanted.join(", ")
        );
        let mut changes = self.changed.subscribe();
        let all_ready = async {
            while wanted.iter().any(|n| self.pending(n).is_some()) {
                let _ = changes.changed().await;
            }
        };
        let in_time = match until {
            Some(until) => tokio::time::timeout_at(until, all_ready).await.is_ok(),
            None => {
                all_ready.await;
                true
            }
        };
        if in_time {
            return Ok(wanted);
        }
        Err(wanted
            .iter()
            .filter(|n| self.pending(n).is_some())
            .cloned()
            .collect())
    }
}
