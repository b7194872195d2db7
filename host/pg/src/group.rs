//! Group commit across the concurrent callers of one [`crate::PgLedgerStore`]: single intents,
//! outcomes and audit entries from many tasks at once share one transaction, so one head-row
//! lock, one WAL flush and one round trip of `COMMIT` serve all of them.
//!
//! A caller puts its write at the end of the store's queue, then sends a job to the store's
//! connection thread ([`crate::worker`]) and waits on a channel of its own. The job takes
//! whatever is queued when it runs — its own write, unless an earlier job already took it, and
//! every write queued since — and commits all of it in one transaction that locks the head row
//! as every ledger write does (crate docs): the cross-host serialization is the one of single
//! writes, only fewer transactions take the lock. Entries are linked in queue order. Inside,
//! the group reads the latest entries of all the receipts it completes in one query, and its
//! entries are inserted in one statement before the commit ([`Writer`]): a group costs about
//! the same round trips to the server whatever its size. A job that
//! finds the queue empty (its write went with an earlier group) does nothing, and its caller
//! was already answered: nobody waits for a group after the one holding its write.
//!
//! Each caller is answered after the commit returned, that is after the WAL flush: an intent
//! is acknowledged (and its call may run) only once it is durable, an outcome only once it is.
//! If the commit fails, or the connection dies mid-group, every write of the group is answered
//! with [`LedgerError::GroupCommit`] and none was acknowledged. (If the connection dies after
//! the server received `COMMIT` but before its answer arrived, the group may be committed while
//! its callers were told it failed; that errs on the safe side: an intent its caller did not
//! act on reads `unknown`, an outcome reads `unknown` until resolved.)
//!
//! A write refused for what it is (an idempotency conflict, an outcome for a completed receipt,
//! a call in flight) is refused before it appends anything, so it is answered alone and the
//! others commit; no savepoint is needed. A database error inside the group fails all of it:
//! PostgreSQL aborts the whole transaction on any error.

use std::collections::HashSet;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use guild_receipts::backend::{self, Entry};
use guild_receipts::{AuditEntry, Begin, Completion, Intent, LedgerError, Receipt};

use crate::flight;
use crate::ledger::locked;
use crate::worker::Worker;
use crate::writer::Writer;

type Result<T> = std::result::Result<T, LedgerError>;

/// Longest wait for the check of the connection after a failed group.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// One queued write.
pub(crate) enum Op {
    Begin(Intent),
    Complete(String, Completion),
    Audit(Box<Entry>),
}

/// Its answer after the commit.
pub(crate) enum Answer {
    Begin(Begin),
    Complete(Box<Receipt>),
    Audit(Box<AuditEntry>),
}

/// What a write produced inside the transaction, before the commit.
enum Staged {
    Begin(Begin),
    Complete(Box<Entry>, u64),
    Audit(Box<Entry>),
}

/// A write waiting for its group, with where to send its answer.
struct Waiting {
    op: Op,
    reply: SyncSender<Result<Answer>>,
}

/// The writes of one store waiting for the next group commit.
#[derive(Default)]
pub(crate) struct Queue {
    waiting: Mutex<Vec<Waiting>>,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Vec<Waiting>> {
        // Only pushes and takes happen under this lock: nothing that can panic halfway.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `op`, has the connection thread commit the queue, and waits for `op`'s answer.
    pub(crate) fn submit(
        self: &Arc<Self>,
        worker: &Worker,
        in_flight: &Arc<Mutex<HashSet<String>>>,
        target: &str,
        op: Op,
    ) -> Result<Answer> {
        self.enqueue(worker, in_flight, target, op).wait()
    }

    /// Queues `op` and has the connection thread commit the queue, without waiting: writes
    /// queued later are committed after it. [`Queued::wait`] waits for its answer.
    pub(crate) fn enqueue(
        self: &Arc<Self>,
        worker: &Worker,
        in_flight: &Arc<Mutex<HashSet<String>>>,
        target: &str,
        op: Op,
    ) -> Queued {
        let (reply, answer) = sync_channel(1);
        self.lock().push(Waiting { op, reply });
        let queue = Arc::clone(self);
        let in_flight = Arc::clone(in_flight);
        let target = target.to_owned();
        let sent = worker.send(move |client| {
            let group = std::mem::take(&mut *queue.lock());
            write_group(client, group, &in_flight, &target);
        });
        Queued { answer, sent }
    }

    /// What each queued write is for, in queue order (tests watch groups form).
    #[cfg(test)]
    pub(crate) fn queued(&self) -> Vec<String> {
        self.lock()
            .iter()
            .map(|w| match &w.op {
                Op::Begin(intent) => intent.task_id.clone(),
                Op::Complete(id, _) => id.clone(),
                Op::Audit(entry) => entry.plugin.clone(),
            })
            .collect()
    }
}

/// A write in the queue ([`Queue::enqueue`]).
pub(crate) struct Queued {
    answer: Receiver<Result<Answer>>,
    sent: bool,
}

impl Queued {
    /// Waits until the write's group is committed (or failed) and returns its answer.
    pub(crate) fn wait(self) -> Result<Answer> {
        if !self.sent {
            return Err(stopped());
        }
        // A group that panicked dropped its reply senders: its callers learn it here.
        self.answer.recv().unwrap_or_else(|_| Err(stopped()))
    }
}

/// Writes `group` in one transaction and answers each of its callers.
fn write_group(
    client: &mut postgres::Client,
    group: Vec<Waiting>,
    in_flight: &Mutex<HashSet<String>>,
    target: &str,
) {
    let writes = group.len();
    if writes == 0 {
        return;
    }
    // Intents marked in flight before the commit (src/flight.rs), and the ones the group
    // completed, whose marks go once every caller is answered.
    let (mut held, mut done) = (Vec::new(), Vec::new());
    let committed = commit_group(client, group, in_flight, target, &mut held, &mut done);
    flight::let_go(client, &done);
    if let Err(failed) = committed {
        let (replies, e) = *failed;
        fail(replies, writes, &e);
        flight::let_go(client, &held);
        if !matches!(e, LedgerError::HeadMismatch { .. }) {
            // The failure may be the connection's: a round trip lets the client notice a
            // closed one, so that the connection thread replaces it before the next group
            // instead of failing that one too.
            let _ = client.is_valid(CHECK_TIMEOUT);
        }
    }
}

/// A group that was not committed: the callers to answer, and why.
type Failed = Box<(Vec<SyncSender<Result<Answer>>>, LedgerError)>;

/// Commits `group` and answers each write; or, if the transaction failed, hands back every
/// caller unanswered. `held` gets the new intents once they are marked in flight, `done` the
/// intents this store ran whose outcomes were committed.
fn commit_group(
    client: &mut postgres::Client,
    group: Vec<Waiting>,
    in_flight: &Mutex<HashSet<String>>,
    target: &str,
    held: &mut Vec<String>,
    done: &mut Vec<String>,
) -> std::result::Result<(), Failed> {
    let mut w = match Writer::start(client, target) {
        Ok(w) => w,
        Err(e) => return Err(Box::new((group.into_iter().map(|w| w.reply).collect(), e))),
    };
    let outcomes: Vec<String> = group
        .iter()
        .filter_map(|w| match &w.op {
            Op::Complete(id, _) => Some(id.clone()),
            _ => None,
        })
        .collect();
    if !outcomes.is_empty()
        && let Err(e) = w.prefetch(&outcomes)
    {
        return Err(Box::new((group.into_iter().map(|w| w.reply).collect(), e)));
    }
    let mut new_ids = Vec::new();
    let mut staged = Vec::with_capacity(group.len());
    let mut rest = group.into_iter();
    while let Some(Waiting { op, reply }) = rest.next() {
        let before = w.seq();
        let result = match op {
            Op::Begin(intent) => {
                let flying = locked(in_flight);
                w.begin_one(&flying, &mut new_ids, intent)
                    .map(Staged::Begin)
            }
            Op::Complete(id, outcome) => w
                .complete_one(&id, outcome)
                .map(|(entry, first)| Staged::Complete(Box::new(entry), first)),
            Op::Audit(entry) => w.append(*entry).map(|e| Staged::Audit(Box::new(e))),
        };
        match result {
            // The transaction is aborted, or holds part of this write: give it up whole.
            Err(e) if w.seq() != before || matches!(e, LedgerError::Backend { .. }) => {
                let replies = staged
                    .into_iter()
                    .map(|(reply, _)| reply)
                    .chain([reply])
                    .chain(rest.map(|w| w.reply))
                    .collect();
                return Err(Box::new((replies, e)));
            }
            result => staged.push((reply, result)),
        }
    }
    held.clone_from(&new_ids);
    if let Err(e) = w.hold(&new_ids).and_then(|()| w.commit()) {
        let replies = staged.into_iter().map(|(reply, _)| reply).collect();
        return Err(Box::new((replies, e)));
    }
    let mut flying = locked(in_flight);
    flying.extend(new_ids);
    for (reply, result) in staged {
        let answer = result.and_then(|s| match s {
            Staged::Begin(b) => Ok(Answer::Begin(b)),
            Staged::Complete(entry, first) => {
                if flying.remove(&entry.receipt_id) {
                    done.push(entry.receipt_id.clone());
                }
                backend::receipt(*entry, first).map(|r| Answer::Complete(Box::new(r)))
            }
            Staged::Audit(entry) => backend::audit(*entry).map(|a| Answer::Audit(Box::new(a))),
        });
        // A caller that stopped waiting (its thread died) needs no answer.
        let _ = reply.send(answer);
    }
    Ok(())
}

/// Answers every write of a group that was not committed. A ledger refused for writing
/// ([`LedgerError::HeadMismatch`]) is said as it is to each, not as a failed commit.
fn fail(replies: Vec<SyncSender<Result<Answer>>>, writes: usize, e: &LedgerError) {
    for reply in replies {
        let error = match e {
            LedgerError::HeadMismatch { path, problem } => LedgerError::HeadMismatch {
                path: path.clone(),
                problem: problem.clone(),
            },
            other => LedgerError::GroupCommit {
                writes,
                reason: other.to_string(),
            },
        };
        let _ = reply.send(Err(error));
    }
}

fn stopped() -> LedgerError {
    LedgerError::GroupCommit {
        writes: 0,
        reason: "the PostgreSQL connection thread stopped before answering".into(),
    }
}

/// A group answered a write with another write's kind (cannot happen: each answer is made
/// from its own write).
pub(crate) fn mismatch() -> LedgerError {
    LedgerError::Corrupt {
        seq: 0,
        reason: "a group commit answered a write with another write's kind".into(),
    }
}
