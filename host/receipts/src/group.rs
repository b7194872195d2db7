//! Group commit for single writes: the tool-call path begins and completes one receipt at a
//! time, from many tasks at once, and each write is a transaction with an fsync
//! (`synchronous=FULL`). Writes that arrive while another is committing wait in a queue; the
//! next writer to take the connection commits all of them in one transaction, one fsync.
//!
//! Each write runs inside its own savepoint, so one write's error (an idempotency conflict, a
//! receipt already completed) rolls back that write only and is returned to its caller alone;
//! the others commit. A failure of the shared commit itself fails every write of the group
//! ([`LedgerError::GroupCommit`]): nothing of it was recorded. Nothing is acknowledged before the
//! commit returns, so a crash loses no acknowledged receipt.
//!
//! An outcome need not be waited for where it is queued ([`Ledger::complete_queued`]): the
//! tool-call path queues it and lets the specialist go on, and waits for it
//! ([`Ledger::wait`]) before the task's result leaves the host. The queue is first in, first
//! out and groups are committed in the order they were taken, so a write queued later (the
//! task's next intent, an idempotent retry) is never committed before the outcome, and shares
//! its fsync when it arrives while that outcome is still queued.
//!
//! No thread is added (the "combining" pattern): a caller that finds nobody writing takes the
//! writer's role and commits everything queued, its own write included, so a lone write costs
//! one transaction as before. Callers that queue meanwhile wait on their own channel, not on
//! the connection: the writer answers each write of its group as soon as the group is
//! committed, then hands the role to the oldest caller still waiting (who commits the next
//! group), or gives it up. No caller writes more than the group it finds, and none whose write
//! is committed waits for a later group.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{MutexGuard, PoisonError};

use super::LedgerError;
use super::chain::Entry;
use super::ledger::{Inner, Ledger, Writer, begin_one, complete_one, move_anchor};
use super::model::{AuditEntry, Begin, Completion, Intent, IntentId, Receipt};

/// One queued write.
enum Op {
    Begin(Intent),
    Complete(IntentId, Completion),
    Audit(Box<Entry>),
}

/// What a queued write produced before the commit.
enum Staged {
    Begin(Begin),
    Complete(Box<Entry>, u64),
    Audit(Box<Entry>),
}

/// Its answer after the commit.
enum Answer {
    Begin(Begin),
    Complete(Box<Receipt>),
    Audit(Box<AuditEntry>),
}

/// Passes the writer's role on when dropped (see [`Ledger::write_and_pass`]).
struct PassOn<'a>(&'a Ledger);

impl Drop for PassOn<'_> {
    fn drop(&mut self) {
        self.0.pass_role();
    }
}

/// An outcome queued by [`Ledger::complete_queued`], not yet known to be durable: pass it to
/// [`Ledger::wait`].
#[must_use = "an outcome is durable only once `Ledger::wait` returned Ok for it"]
pub struct QueuedOutcome {
    receipt_id: String,
    ticket: Ticket,
}

impl QueuedOutcome {
    /// The receipt the outcome completes (its intent's id).
    pub fn receipt_id(&self) -> &str {
        &self.receipt_id
    }
}

impl std::fmt::Debug for QueuedOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueuedOutcome")
            .field("receipt_id", &self.receipt_id)
            .finish_non_exhaustive()
    }
}

/// The writes waiting for a group commit, and whether someone is writing groups now.
#[derive(Default)]
pub(crate) struct Queue {
    waiting: Vec<Waiting>,
    /// True while one caller has the writer's role: it commits groups and, when done, passes
    /// the role to a caller blocked on a queued write, or gives it up if there is none.
    writing: bool,
    /// Ticket of the next queued write.
    next_ticket: u64,
}

/// A write waiting for the next group commit, with where to send its answer.
pub(crate) struct Waiting {
    op: Op,
    ticket: u64,
    reply: SyncSender<Reply>,
    /// Its caller is blocked waiting for it (a queued outcome may not be yet): only such a
    /// caller can be handed the writer's role.
    waited: bool,
}

/// What a queued write's caller is told.
enum Reply {
    /// Its write was committed (or refused).
    Done(Result<Answer, LedgerError>),
    /// It has the writer's role now: commit what is queued, its own write included.
    Write,
}

/// A queued write's side of its channel.
struct Ticket {
    id: u64,
    answer: Receiver<Reply>,
}

impl Ledger {
    /// How many write transactions (each one fsync) this `Ledger` has committed since it was
    /// opened: what grouping saves shows here (docs/receipts-and-validation.md, "Durability").
    pub fn commits(&self) -> u64 {
        self.commits.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(super) fn count_commit(&self) {
        self.commits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        // Only short, panic-free changes happen under this lock.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn submit_begin(&self, intent: Intent) -> Result<Begin, LedgerError> {
        match self.submit(Op::Begin(intent))? {
            Answer::Begin(b) => Ok(b),
            _ => Err(mismatch()),
        }
    }

    pub(super) fn submit_complete(
        &self,
        intent: &IntentId,
        outcome: Completion,
    ) -> Result<Receipt, LedgerError> {
        match self.submit(Op::Complete(IntentId(intent.0.clone()), outcome))? {
            Answer::Complete(r) => Ok(*r),
            _ => Err(mismatch()),
        }
    }

    /// Appends an audit entry in the next group commit, so that audits (a reload's) share
    /// fsyncs with concurrent tool calls instead of taking turns with them.
    pub(super) fn submit_audit(&self, entry: Entry) -> Result<AuditEntry, LedgerError> {
        match self.submit(Op::Audit(Box::new(entry)))? {
            Answer::Audit(a) => Ok(*a),
            _ => Err(mismatch()),
        }
    }

    /// Queues `op` and waits until it is committed.
    fn submit(&self, op: Op) -> Result<Answer, LedgerError> {
        let ticket = self.enqueue(op);
        self.await_answer(&ticket)
    }

    /// Puts `op` at the end of the queue; nothing is written yet. Writes are committed in the
    /// order they were queued: a write queued after this one is never committed before it.
    fn enqueue(&self, op: Op) -> Ticket {
        let (reply, answer) = sync_channel(1);
        let mut q = self.queue();
        let id = q.next_ticket;
        q.next_ticket += 1;
        q.waiting.push(Waiting {
            op,
            ticket: id,
            reply,
            waited: false,
        });
        Ticket { id, answer }
    }

    /// Waits for the answer of a queued write. With nobody writing, this caller takes the
    /// writer's role and commits everything queued (its write included) in one group; else it
    /// waits for the writer, which answers it or hands it the role. A caller whose write was
    /// answered never waits for a later group: it is not behind the connection lock.
    fn await_answer(&self, ticket: &Ticket) -> Result<Answer, LedgerError> {
        loop {
            let group = {
                let mut q = self.queue();
                match ticket.answer.try_recv() {
                    Ok(Reply::Done(answer)) => return answer,
                    // Handed the role: `writing` stays true, it is ours.
                    Ok(Reply::Write) => std::mem::take(&mut q.waiting),
                    Err(_) if !q.writing => {
                        q.writing = true;
                        std::mem::take(&mut q.waiting)
                    }
                    Err(_) => {
                        if let Some(w) = q.waiting.iter_mut().find(|w| w.ticket == ticket.id) {
                            w.waited = true;
                        }
                        drop(q);
                        match ticket.answer.recv() {
                            Ok(Reply::Done(answer)) => return answer,
                            Ok(Reply::Write) => std::mem::take(&mut self.queue().waiting),
                            Err(_) => return Err(stopped()),
                        }
                    }
                }
            };
            self.write_and_pass(group);
        }
    }

    /// Commits `group` with the writer's role held, then passes the role to the oldest caller
    /// blocked on a write still queued, or gives it up when there is none. Queued writes nobody
    /// waits for yet (queued outcomes) stay queued for the next writer.
    fn write_and_pass(&self, group: Vec<Waiting>) {
        // Passed on even if writing panics: the group's callers then get no answer (their
        // channels close), and the others are not left waiting for a writer that is gone.
        let _pass = PassOn(self);
        if !group.is_empty() {
            let mut inner = self.lock();
            self.write_group(&mut inner, group);
        }
    }

    /// Hands the writer's role to the oldest caller blocked on a queued write, or gives it up.
    fn pass_role(&self) {
        let mut q = self.queue();
        let handed = q
            .waiting
            .iter()
            .filter(|w| w.waited)
            .any(|w| w.reply.try_send(Reply::Write).is_ok());
        if !handed {
            q.writing = false;
        }
    }

    /// Queues the outcome of `intent` without waiting for it to be written: the caller's next
    /// write (or anyone's) is committed after it, in the same transaction or a later one, so
    /// an idempotent retry queued behind it sees the outcome. It is durable once
    /// [`Ledger::wait`] returns `Ok` for it, and not before: acknowledge nothing that depends
    /// on it until then. Dropping the handle does not cancel the write; the next group commit
    /// writes it.
    pub fn complete_queued(&self, intent: &IntentId, outcome: Completion) -> QueuedOutcome {
        QueuedOutcome {
            receipt_id: intent.0.clone(),
            ticket: self.enqueue(Op::Complete(IntentId(intent.0.clone()), outcome)),
        }
    }

    /// Waits until a queued outcome is committed (fsynced), committing it and everything
    /// queued before it if no other writer is doing so; returns the completed receipt or why
    /// it could not be recorded (the errors of [`Ledger::complete`]).
    pub fn wait(&self, queued: QueuedOutcome) -> Result<Receipt, LedgerError> {
        match self.await_answer(&queued.ticket)? {
            Answer::Complete(r) => Ok(*r),
            _ => Err(mismatch()),
        }
    }

    /// Writes `group` in one transaction, each write in its own savepoint, and answers each.
    fn write_group(&self, inner: &mut Inner, group: Vec<Waiting>) {
        let writes = group.len();
        let Inner { conn, in_flight } = inner;
        let mut w = match self.writer(conn) {
            Ok(w) => w,
            Err(e) => return fail_all(group, writes, &e),
        };
        let mut new_ids = Vec::new();
        let mut staged = Vec::with_capacity(writes);
        for Waiting { op, reply, .. } in group {
            let mark = w.mark();
            let ids_before = new_ids.len();
            let result = savepoint(&w, "SAVEPOINT guild_write").and_then(|()| match op {
                Op::Begin(intent) => {
                    begin_one(&mut w, in_flight, &mut new_ids, intent).map(Staged::Begin)
                }
                Op::Complete(id, outcome) => complete_one(&mut w, &id, outcome)
                    .map(|(entry, first)| Staged::Complete(Box::new(entry), first)),
                Op::Audit(entry) => w.append(*entry).map(|e| Staged::Audit(Box::new(e))),
            });
            let closed = match &result {
                Ok(_) => savepoint(&w, "RELEASE guild_write"),
                Err(_) => {
                    new_ids.truncate(ids_before);
                    w.reset(mark);
                    savepoint(&w, "ROLLBACK TO guild_write; RELEASE guild_write")
                }
            };
            if let Err(e) = closed {
                // The transaction is in an unknown state: give it up whole.
                drop(w);
                staged.push((reply, result));
                let answers = staged.into_iter().map(|(reply, _)| reply).collect();
                return fail_replies(answers, writes, &e);
            }
            staged.push((reply, result));
        }
        let head = match w.commit_durably() {
            Ok(head) => {
                self.count_commit();
                head
            }
            Err(e) => {
                let answers = staged.into_iter().map(|(reply, _)| reply).collect();
                return fail_replies(answers, writes, &e);
            }
        };
        in_flight.extend(new_ids);
        for (reply, result) in staged {
            let answer = result.and_then(|s| match s {
                Staged::Begin(b) => Ok(Answer::Begin(b)),
                Staged::Complete(entry, first) => {
                    in_flight.remove(&entry.receipt_id);
                    Receipt::from_entry(*entry, first).map(|r| Answer::Complete(Box::new(r)))
                }
                Staged::Audit(entry) => {
                    AuditEntry::from_entry(*entry).map(|a| Answer::Audit(Box::new(a)))
                }
            });
            // A caller that gave up waiting (its thread died) needs no answer.
            let _ = reply.send(Reply::Done(answer));
        }
        // After the answers: they wait for the fsync, not for the anchor. The connection lock
        // is still held, so anchors are written in commit order.
        move_anchor(self.anchor.as_deref(), head);
    }
}

fn savepoint(w: &Writer<'_>, sql: &str) -> Result<(), LedgerError> {
    w.tx.execute_batch(sql)
        .map_err(|source| LedgerError::Sqlite {
            op: "manage a write's savepoint",
            source,
        })
}

/// Answers every write of a group whose transaction could not start. A ledger refused for
/// writing ([`LedgerError::HeadMismatch`]) is said as it is to each, not as a failed commit.
fn fail_all(group: Vec<Waiting>, writes: usize, e: &LedgerError) {
    if let LedgerError::HeadMismatch { path, problem } = e {
        for w in group {
            let _ = w.reply.send(Reply::Done(Err(LedgerError::HeadMismatch {
                path: path.clone(),
                problem: problem.clone(),
            })));
        }
        return;
    }
    fail_replies(group.into_iter().map(|w| w.reply).collect(), writes, e);
}

fn fail_replies(replies: Vec<SyncSender<Reply>>, writes: usize, e: &LedgerError) {
    for reply in replies {
        let _ = reply.send(Reply::Done(Err(LedgerError::GroupCommit {
            writes,
            reason: e.to_string(),
        })));
    }
}

fn stopped() -> LedgerError {
    LedgerError::GroupCommit {
        writes: 0,
        reason: "the writer of the group stopped before answering".into(),
    }
}

fn mismatch() -> LedgerError {
    LedgerError::Corrupt {
        seq: 0,
        reason: "a group commit answered a write with another write's kind".into(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::tests::intent;
    use crate::{EntryKind, ReceiptStatus};
    use guild_core::types::CallStatus;

    /// One write run on a writer thread.
    type Write<T> = Box<dyn FnOnce(&Ledger) -> T + Send>;

    /// Holds the writer's role while `writes` queue up behind it, then passes it on: they
    /// are written as one group by the first of them to get it.
    fn queued_group<T: Send + 'static>(ledger: &Arc<Ledger>, writes: Vec<Write<T>>) -> Vec<T> {
        let expected = writes.len();
        ledger.queue().writing = true;
        let threads: Vec<_> = writes
            .into_iter()
            .map(|write| {
                let ledger = ledger.clone();
                std::thread::spawn(move || write(&ledger))
            })
            .collect();
        while ledger.queue().waiting.iter().filter(|w| w.waited).count() < expected {
            std::thread::sleep(Duration::from_millis(1));
        }
        ledger.write_and_pass(Vec::new());
        threads
            .into_iter()
            .map(|t| t.join().expect("writer thread"))
            .collect()
    }

    #[test]
    fn concurrent_begins_share_a_commit_and_a_failing_one_fails_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Arc::new(Ledger::open(dir.path().join("l.db")).expect("open"));
        // A first call under key "k"; a later begin with the same key and another input is an
        // idempotency conflict, and must not take the other writes of its group down.
        let first = ledger.begin(intent("t0", Some("k"), 1)).expect("first");
        let Begin::Proceed(first) = first else {
            panic!("first call was a replay");
        };
        ledger
            .complete(
                &first,
                Completion {
                    status: CallStatus::Success,
                    external_id: Some("ISSUE-1".into()),
                    verifiable_url: None,
                    preview: None,
                    error: None,
                },
            )
            .expect("complete");
        let writes: Vec<Write<Result<Begin, LedgerError>>> = vec![
            Box::new(|l| l.begin(intent("t1", Some("a"), 2))),
            Box::new(|l| l.begin(intent("t2", Some("k"), 9))),
            Box::new(|l| l.begin(intent("t3", Some("b"), 3))),
        ];
        let results = queued_group(&ledger, writes);
        let proceeded = results
            .iter()
            .filter(|r| matches!(r, Ok(Begin::Proceed(_))))
            .count();
        let conflicts = results
            .iter()
            .filter(|r| matches!(r, Err(LedgerError::IdempotencyConflict { .. })))
            .count();
        assert_eq!((proceeded, conflicts), (2, 1), "{results:?}");
        // Written: the first call's intent and outcome, then the two new intents; the chain
        // has no gap where the refused write was rolled back.
        let report = ledger.verify().expect("verify");
        assert!(report.ok, "{report:?}");
        assert_eq!(report.entries, 4, "{report:?}");
        for r in results.into_iter().flatten() {
            let Begin::Proceed(id) = r else { continue };
            let receipt = ledger.get(id.as_str()).expect("get").expect("stored");
            assert_eq!(
                (receipt.status, receipt.entry),
                (ReceiptStatus::Unknown, EntryKind::Intent)
            );
        }
    }

    #[test]
    fn concurrent_completes_share_a_commit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Arc::new(Ledger::open(dir.path().join("l.db")).expect("open"));
        let ids: Vec<IntentId> = (0..4u8)
            .map(
                |i| match ledger.begin(intent("t", Some(&format!("k{i}")), i)) {
                    Ok(Begin::Proceed(id)) => id,
                    other => panic!("begin {i}: {other:?}"),
                },
            )
            .collect();
        let done = |ext: String| Completion {
            status: CallStatus::Success,
            external_id: Some(ext),
            verifiable_url: None,
            preview: None,
            error: None,
        };
        let first = IntentId(ids[0].0.clone());
        let writes: Vec<Write<Result<Receipt, LedgerError>>> = ids
            .into_iter()
            .enumerate()
            .map(|(i, id)| {
                let c = done(format!("ISSUE-{i}"));
                Box::new(move |l: &Ledger| l.complete(&id, c)) as Box<_>
            })
            // Completing the first intent twice: the second is refused, alone.
            .chain(std::iter::once(Box::new(move |l: &Ledger| {
                l.complete(&first, done("again".into()))
            }) as Box<_>))
            .collect();
        let results = queued_group(&ledger, writes);
        let ok = results.iter().filter(|r| r.is_ok()).count();
        let refused = results
            .iter()
            .filter(|r| matches!(r, Err(LedgerError::AlreadyCompleted { .. })))
            .count();
        assert_eq!((ok, refused), (4, 1), "{results:?}");
        let report = ledger.verify().expect("verify");
        assert!(report.ok && report.entries == 8, "{report:?}");
        for r in results.into_iter().flatten() {
            assert_eq!(r.status, ReceiptStatus::Success);
            let stored = ledger.get(&r.id).expect("get").expect("stored");
            assert_eq!(stored.external_id, r.external_id);
        }
    }
    fn done(ext: &str) -> Completion {
        Completion {
            status: CallStatus::Success,
            external_id: Some(ext.into()),
            verifiable_url: None,
            preview: None,
            error: None,
        }
    }

    #[test]
    fn a_queued_outcome_is_written_only_when_waited_for_or_by_the_next_write() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Ledger::open(dir.path().join("l.db")).expect("open");
        let Ok(Begin::Proceed(id)) = ledger.begin(intent("t", Some("k"), 1)) else {
            panic!("first call");
        };
        let queued = ledger.complete_queued(&id, done("ISSUE-1"));
        assert_eq!(queued.receipt_id(), id.as_str());
        // Queued, not committed: readers still see the intent alone.
        let seen = ledger.get(id.as_str()).expect("get").expect("stored");
        assert_eq!(seen.status, ReceiptStatus::Unknown);
        // The same call retried with its key, queued behind the outcome: a replay of the
        // completed receipt, not "in flight", and committed with (or after) the outcome.
        let Ok(Begin::Replay(replayed)) = ledger.begin(intent("t", Some("k"), 1)) else {
            panic!("the retry was not answered from the outcome");
        };
        assert_eq!(
            (replayed.status, replayed.external_id.as_deref()),
            (ReceiptStatus::Success, Some("ISSUE-1"))
        );
        let receipt = ledger.wait(queued).expect("the outcome was committed");
        assert_eq!(receipt.status, ReceiptStatus::Success);
        let report = ledger.verify().expect("verify");
        assert!(report.ok && report.entries == 2, "{report:?}");
    }

    #[test]
    fn a_queued_outcome_that_cannot_be_written_fails_alone_when_waited_for() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Ledger::open(dir.path().join("l.db")).expect("open");
        let Ok(Begin::Proceed(id)) = ledger.begin(intent("t", None, 1)) else {
            panic!("begin");
        };
        let Ok(Begin::Proceed(other)) = ledger.begin(intent("t", None, 2)) else {
            panic!("begin");
        };
        let first = ledger.complete_queued(&id, done("ISSUE-1"));
        let twice = ledger.complete_queued(&id, done("again"));
        let fine = ledger.complete_queued(&other, done("ISSUE-2"));
        assert!(matches!(
            ledger.wait(twice),
            Err(LedgerError::AlreadyCompleted { .. })
        ));
        // Both good outcomes were committed in that same group: waiting finds them done.
        assert_eq!(
            ledger.wait(fine).expect("other").external_id.as_deref(),
            Some("ISSUE-2")
        );
        assert_eq!(
            ledger.wait(first).expect("first").external_id.as_deref(),
            Some("ISSUE-1")
        );
        let report = ledger.verify().expect("verify");
        assert!(report.ok && report.entries == 4, "{report:?}");
    }
}
