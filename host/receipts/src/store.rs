//! [`LedgerStore`]: the ledger's operations as a trait, so that another backend (PostgreSQL, for
//! teams that outgrow one machine) can stand in for the embedded SQLite [`Ledger`] without
//! touching dispatch or validation. [`conformance`] is the behaviour every backend must show;
//! the SQLite ledger runs it in its own tests, and a new backend runs the same function.

use std::sync::Arc;

use super::{
    AuditEntry, AuditKind, Begin, Completion, Intent, IntentId, Ledger, LedgerError, Receipt,
    VerifyReport,
};

/// An outcome queued by [`LedgerStore::queue_outcome`]: [`QueuedWrite::wait`] blocks until it
/// is committed and says how that went.
pub struct QueuedWrite(Box<dyn FnOnce() -> Result<Receipt, LedgerError> + Send>);

impl QueuedWrite {
    /// A queued write that `wait` waits for.
    pub fn new(wait: impl FnOnce() -> Result<Receipt, LedgerError> + Send + 'static) -> Self {
        QueuedWrite(Box::new(wait))
    }

    /// Blocks until the outcome is committed (durable) and returns its receipt, or why it
    /// could not be recorded.
    pub fn wait(self) -> Result<Receipt, LedgerError> {
        (self.0)()
    }
}

/// The receipts ledger's contract (docs/receipts-and-validation.md): append-only, hash-chained, two-phase, with
/// idempotency keys. Every method blocks; async callers use `spawn_blocking`.
pub trait LedgerStore: Send + Sync {
    /// Commits intents before the calls run, in one transaction; answers from idempotency keys.
    fn begin_many(&self, intents: Vec<Intent>) -> Result<Vec<Begin>, LedgerError>;
    /// Queues the outcome of `intent` and returns without waiting for the database: any write
    /// queued on this store after it is committed after it (so an idempotent retry sees it),
    /// grouped with concurrent writes. It is durable once [`QueuedWrite::wait`] returns `Ok`,
    /// not before: acknowledge nothing that depends on it until then. The handle keeps the
    /// store open; dropping it does not cancel the write.
    fn queue_outcome(self: Arc<Self>, intent: &IntentId, outcome: Completion) -> QueuedWrite;
    /// Records outcomes of intents, in one transaction, all or nothing.
    fn complete_many(
        &self,
        items: Vec<(&IntentId, Completion)>,
    ) -> Result<Vec<Receipt>, LedgerError>;
    /// Forgets that this process runs the call of `intent` (see [`Ledger::release`]): the
    /// receipt stays unknown, becomes resolvable, and its idempotency key replays it.
    fn release(&self, intent: &IntentId);
    /// Appends a resolution of a pending or unknown receipt.
    fn resolve(&self, receipt_id: &str, outcome: Completion) -> Result<Receipt, LedgerError>;
    /// Appends an audit entry to the same chain.
    fn audit(&self, kind: AuditKind, plugin: &str, detail: &str)
    -> Result<AuditEntry, LedgerError>;
    /// One receipt by id, showing its latest status.
    fn get(&self, id: &str) -> Result<Option<Receipt>, LedgerError>;
    /// Every receipt of a task, in the order the calls started.
    fn for_task(&self, task_id: &str) -> Result<Vec<Receipt>, LedgerError>;
    /// The `limit` most recent receipts, oldest first.
    fn list(&self, limit: usize) -> Result<Vec<Receipt>, LedgerError>;
    /// The `limit` most recent audit entries, oldest first.
    fn audit_log(&self, limit: usize) -> Result<Vec<AuditEntry>, LedgerError>;
    /// Checks the whole chain (and whatever head anchor the backend keeps).
    fn verify(&self) -> Result<VerifyReport, LedgerError>;
    /// Accepts the ledger as it is if it no longer reaches its head anchor (entries removed
    /// behind Guild's back, an older copy restored): appends a `head_accepted` audit entry
    /// saying what was found and moves the anchor to it, so that writes go on. `Ok(None)` when
    /// the ledger reaches its anchor: nothing is written. The chain itself is not repaired.
    fn accept_head(&self) -> Result<Option<AuditEntry>, LedgerError>;

    /// One intent ([`LedgerStore::begin_many`] of one).
    fn begin(&self, intent: Intent) -> Result<Begin, LedgerError> {
        self.begin_many(vec![intent])?
            .pop()
            .ok_or(LedgerError::Corrupt {
                seq: 0,
                reason: "begin produced no answer".into(),
            })
    }

    /// One outcome ([`LedgerStore::complete_many`] of one).
    fn complete(&self, intent: &IntentId, outcome: Completion) -> Result<Receipt, LedgerError> {
        self.complete_many(vec![(intent, outcome)])?
            .pop()
            .ok_or(LedgerError::Corrupt {
                seq: 0,
                reason: "complete produced no receipt".into(),
            })
    }
}

impl LedgerStore for Ledger {
    // One intent or one outcome goes through the group commit, as the inherent methods do.
    fn begin(&self, intent: Intent) -> Result<Begin, LedgerError> {
        Ledger::begin(self, intent)
    }

    fn complete(&self, intent: &IntentId, outcome: Completion) -> Result<Receipt, LedgerError> {
        Ledger::complete(self, intent, outcome)
    }

    fn begin_many(&self, intents: Vec<Intent>) -> Result<Vec<Begin>, LedgerError> {
        Ledger::begin_many(self, intents)
    }

    fn complete_many(
        &self,
        items: Vec<(&IntentId, Completion)>,
    ) -> Result<Vec<Receipt>, LedgerError> {
        Ledger::complete_many(self, items)
    }

    fn release(&self, intent: &IntentId) {
        Ledger::release(self, intent)
    }

    fn resolve(&self, receipt_id: &str, outcome: Completion) -> Result<Receipt, LedgerError> {
        Ledger::resolve(self, receipt_id, outcome)
    }

    fn audit(
        &self,
        kind: AuditKind,
        plugin: &str,
        detail: &str,
    ) -> Result<AuditEntry, LedgerError> {
        Ledger::audit(self, kind, plugin, detail)
    }

    fn get(&self, id: &str) -> Result<Option<Receipt>, LedgerError> {
        Ledger::get(self, id)
    }

    fn for_task(&self, task_id: &str) -> Result<Vec<Receipt>, LedgerError> {
        Ledger::for_task(self, task_id)
    }

    fn list(&self, limit: usize) -> Result<Vec<Receipt>, LedgerError> {
        Ledger::list(self, limit)
    }

    fn audit_log(&self, limit: usize) -> Result<Vec<AuditEntry>, LedgerError> {
        Ledger::audit_log(self, limit)
    }

    fn accept_head(&self) -> Result<Option<AuditEntry>, LedgerError> {
        self.accept_current_head()
    }

    fn queue_outcome(self: Arc<Self>, intent: &IntentId, outcome: Completion) -> QueuedWrite {
        let queued = self.complete_queued(intent, outcome);
        QueuedWrite::new(move || self.wait(queued))
    }

    fn verify(&self) -> Result<VerifyReport, LedgerError> {
        Ledger::verify(self)
    }
}

/// The behaviour every [`LedgerStore`] must show, as one function a backend's tests call with
/// a way to make a new, empty store. It panics, naming the rule, at the first deviation.
pub mod conformance {
    use std::sync::Arc;

    use super::LedgerStore;
    use crate::{
        AuditKind, Begin, Completion, EntryKind, Intent, IntentId, LedgerError, ReceiptStatus,
    };
    use guild_core::types::CallStatus;

    fn intent(task: &str, key: Option<&str>, input: u8) -> Intent {
        Intent {
            task_id: task.into(),
            route: "planner".into(),
            plugin: "tracker@1.0.0".into(),
            tool: "tracker.create_issue".into(),
            receipt_type: "issue".into(),
            operation: "create".into(),
            input_sha256: hex::encode([input; 32]),
            idempotency_key: key.map(str::to_owned),
            chain: Vec::new(),
        }
    }

    fn outcome(status: CallStatus, external_id: Option<&str>) -> Completion {
        Completion {
            status,
            external_id: external_id.map(str::to_owned),
            verifiable_url: None,
            preview: None,
            error: (status == CallStatus::Failed).then(|| "quota exceeded".to_owned()),
        }
    }

    fn proceed(b: Begin) -> IntentId {
        match b {
            Begin::Proceed(id) => id,
            Begin::Replay(r) => panic!("a fresh intent was answered as a replay of {}", r.id),
        }
    }

    /// Runs every rule, each on a new store from `fresh`.
    pub fn run(fresh: &dyn Fn() -> Box<dyn LedgerStore>) {
        two_phase(fresh().as_ref());
        idempotency(fresh().as_ref());
        released(fresh().as_ref());
        resolution(fresh().as_ref());
        reads(fresh().as_ref());
        queued(Arc::from(fresh()));
    }

    /// A queued outcome comes before whatever is queued after it, and is durable once waited.
    fn queued(s: Arc<dyn LedgerStore>) {
        let id = proceed(s.begin(intent("t1", Some("k"), 1)).expect("begin"));
        let pending = Arc::clone(&s).queue_outcome(&id, outcome(CallStatus::Success, Some("I-1")));
        match s.begin(intent("t2", Some("k"), 1)).expect("replay") {
            Begin::Replay(r) => assert_eq!(
                (r.status, r.external_id.as_deref()),
                (ReceiptStatus::Success, Some("I-1")),
                "a retry queued after the outcome sees it"
            ),
            Begin::Proceed(_) => panic!("a recorded key must not call again"),
        }
        let receipt = pending.wait().expect("the queued outcome is committed");
        assert_eq!(
            (receipt.id.as_str(), receipt.status),
            (id.as_str(), ReceiptStatus::Success)
        );
        let second = proceed(s.begin(intent("t3", None, 2)).expect("begin"));
        let refused = Arc::clone(&s)
            .queue_outcome(&id, outcome(CallStatus::Failed, None))
            .wait();
        assert!(
            matches!(refused, Err(LedgerError::AlreadyCompleted { .. })),
            "a second queued outcome is refused when waited: {refused:?}"
        );
        drop(Arc::clone(&s).queue_outcome(&second, outcome(CallStatus::Success, Some("I-2"))));
        s.begin(intent("t4", None, 3)).expect("a later write");
        let later = s.get(second.as_str()).expect("get").expect("receipt");
        assert_eq!(
            later.status,
            ReceiptStatus::Success,
            "a dropped handle does not cancel the write"
        );
        assert!(s.verify().expect("verify").ok);
    }

    fn two_phase(s: &dyn LedgerStore) {
        let id = proceed(s.begin(intent("t1", None, 1)).expect("begin"));
        let r = s
            .get(id.as_str())
            .expect("get")
            .expect("an intent is readable");
        assert_eq!(
            r.status,
            ReceiptStatus::Unknown,
            "an intent alone reads unknown"
        );
        let r = s
            .complete(&id, outcome(CallStatus::Success, Some("I-1")))
            .expect("complete");
        assert_eq!(
            (r.status, r.entry),
            (ReceiptStatus::Success, EntryKind::Outcome)
        );
        assert!(
            matches!(
                s.complete(&id, outcome(CallStatus::Success, Some("I-2"))),
                Err(LedgerError::AlreadyCompleted { .. })
            ),
            "a second outcome is refused"
        );
        let v = s.verify().expect("verify");
        assert!(v.ok && v.entries == 2, "an intact chain verifies: {v}");
    }

    fn idempotency(s: &dyn LedgerStore) {
        let id = proceed(s.begin(intent("t1", Some("k"), 1)).expect("begin"));
        assert!(
            matches!(
                s.begin(intent("t1", Some("k"), 1)),
                Err(LedgerError::InFlight { .. })
            ),
            "the same key is refused while its first call is in flight"
        );
        let first = s
            .complete(&id, outcome(CallStatus::Success, Some("I-1")))
            .expect("complete");
        let answered = match s.begin(intent("t2", Some("k"), 1)).expect("replay") {
            Begin::Replay(r) => *r,
            Begin::Proceed(_) => panic!("the same key and input must not call again"),
        };
        let of_t2 = s.for_task("t2").expect("for_task");
        assert_eq!(
            of_t2.len(),
            1,
            "a replay in another task is recorded for that task"
        );
        let replay = &of_t2[0];
        assert_eq!(
            (
                replay.entry,
                replay.replay_of.as_deref(),
                replay.status,
                replay.external_id.as_deref()
            ),
            (
                EntryKind::Replay,
                Some(first.id.as_str()),
                ReceiptStatus::Success,
                Some("I-1")
            ),
            "the replay entry copies the replayed receipt and names it"
        );
        assert_eq!(
            &answered, replay,
            "the replay is answered with the replaying task's own receipt"
        );
        assert!(
            matches!(
                s.resolve(&replay.id, outcome(CallStatus::Failed, None)),
                Err(LedgerError::IsReplay { .. })
            ),
            "a replay entry is not resolved itself"
        );
        s.begin(intent("t2", Some("k"), 1)).expect("replay again");
        s.begin(intent("t1", Some("k"), 1))
            .expect("replay in the calling task");
        assert_eq!(
            (
                s.for_task("t2").expect("for_task").len(),
                s.for_task("t1").expect("for_task").len()
            ),
            (1, 1),
            "one replay entry per task, none for the task that made the call"
        );
        assert!(s.verify().expect("verify").ok, "replay entries verify");
        assert!(
            matches!(
                s.begin(intent("t1", Some("k"), 2)),
                Err(LedgerError::IdempotencyConflict { .. })
            ),
            "the same key with another input is a conflict"
        );
        let ids = s
            .begin_many(vec![intent("t1", None, 3), intent("t1", None, 4)])
            .expect("begin_many");
        assert_eq!(ids.len(), 2, "one answer per intent");
    }

    fn released(s: &dyn LedgerStore) {
        let id = proceed(s.begin(intent("t1", Some("k"), 1)).expect("begin"));
        s.release(&id);
        match s
            .begin(intent("t2", Some("k"), 1))
            .expect("replay after release")
        {
            Begin::Replay(r) => assert_eq!(
                (r.replay_of.as_deref(), r.status),
                (Some(id.as_str()), ReceiptStatus::Unknown),
                "a released intent replays as unknown, not in flight"
            ),
            Begin::Proceed(_) => panic!("a released key must not call again"),
        }
        let r = s
            .resolve(id.as_str(), outcome(CallStatus::Failed, None))
            .expect("a released intent is resolvable");
        assert_eq!(r.status, ReceiptStatus::Failed);
        let kept = proceed(s.begin(intent("t1", Some("k2"), 2)).expect("begin"));
        assert!(
            matches!(
                s.resolve(kept.as_str(), outcome(CallStatus::Success, None)),
                Err(LedgerError::InFlight { .. })
            ),
            "an intent not released stays in flight"
        );
    }

    fn resolution(s: &dyn LedgerStore) {
        let id = proceed(s.begin(intent("t1", None, 1)).expect("begin"));
        s.complete(&id, outcome(CallStatus::Pending, None))
            .expect("pending");
        let r = s
            .resolve(id.as_str(), outcome(CallStatus::Success, Some("I-9")))
            .expect("resolve");
        assert_eq!(
            (r.status, r.entry),
            (ReceiptStatus::Success, EntryKind::Resolution)
        );
        assert!(
            matches!(
                s.resolve(id.as_str(), outcome(CallStatus::Failed, None)),
                Err(LedgerError::NotResolvable { .. })
            ),
            "a success cannot be resolved again"
        );
        assert!(matches!(
            s.resolve("no-such-receipt", outcome(CallStatus::Success, None)),
            Err(LedgerError::NotFound { .. })
        ));
    }

    fn reads(s: &dyn LedgerStore) {
        let mut ids = Vec::new();
        for (n, task) in [(1, "a"), (2, "b"), (3, "a")] {
            let id = proceed(s.begin(intent(task, None, n)).expect("begin"));
            s.complete(&id, outcome(CallStatus::Success, None))
                .expect("complete");
            ids.push(id.as_str().to_owned());
        }
        s.audit(AuditKind::PluginLoaded, "tracker@1.0.0", "sha256 00")
            .expect("audit");
        let of_a: Vec<String> = s
            .for_task("a")
            .expect("for_task")
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(
            of_a,
            [ids[0].clone(), ids[2].clone()],
            "a task's receipts in order"
        );
        let newest: Vec<String> = s.list(2).expect("list").into_iter().map(|r| r.id).collect();
        assert_eq!(
            newest,
            ids[1..],
            "the newest receipts, oldest first; audits excluded"
        );
        let audits = s.audit_log(10).expect("audit_log");
        assert_eq!(audits.len(), 1);
        assert_eq!(audits[0].plugin, "tracker@1.0.0");
        let v = s.verify().expect("verify");
        assert!(v.ok && v.entries == 7, "audits share the chain: {v}");
    }
}
