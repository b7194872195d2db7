//! Every validation rule with a passing and a failing case.

use std::collections::HashMap;

use super::*;
use guild_core::types::{ArtifactRef, Claim, NextAction, NextStep, Outcome};
use guild_receipts::{EntryKind, ReceiptStatus};

pub(super) const TASK: &str = "task-1";

fn good() -> Report {
    Report {
        summary: "Filed the bug.".into(),
        outcome: Outcome::Satisfied,
        details: String::new(),
        hard_passed: true,
        open_issues: vec![],
        remaining_issues: vec![],
        next_step: None,
        artifacts: vec![],
        claims: vec![],
    }
}

pub(super) fn receipt(
    id: &str,
    task: &str,
    tool: &str,
    status: ReceiptStatus,
    ext: Option<&str>,
) -> Receipt {
    Receipt {
        id: id.into(),
        sequence: 1,
        task_id: task.into(),
        route: "planner".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        status,
        external_id: ext.map(str::to_owned),
        verifiable_url: ext.map(|e| format!("https://tracker.example/issues/{e}")),
        preview: None,
        error: (status == ReceiptStatus::Failed).then(|| "403: project is archived".to_owned()),
        plugin: "tracker@1.0.0".into(),
        tool: tool.into(),
        time: "2026-01-01T00:00:00.000Z".into(),
        input_sha256: "0".repeat(64),
        idempotency_key: None,
        entry: EntryKind::Outcome,
        replay_of: None,
        chain: Vec::new(),
        entry_sequence: 2,
        prev_hash: "0".repeat(64),
        hash: "1".repeat(64),
    }
}

fn claim(tool: &str, ext: Option<&str>) -> Claim {
    Claim {
        tool: tool.into(),
        external_id: ext.map(str::to_owned),
        text: "created the issue".into(),
    }
}

/// Artifacts in memory; `None` makes every lookup unavailable.
pub(super) struct Mem(Option<HashMap<String, Vec<u8>>>);

impl ArtifactResolver for Mem {
    fn resolve(&self, id: &str) -> Result<Option<Vec<u8>>, ResolveError> {
        match &self.0 {
            Some(m) => Ok(m.get(id).cloned()),
            None => Err(ResolveError::Unavailable("store offline".into())),
        }
    }
}

pub(super) fn none() -> Mem {
    Mem(Some(HashMap::new()))
}

fn sha(b: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(b))
}

#[test]
fn report_rules_table() {
    type Edit = fn(&mut Report);
    let cases: &[(&str, Edit, Option<&str>)] = &[
        ("good report", |_| {}, None),
        (
            "partial with issues",
            |r| {
                r.outcome = Outcome::Partial;
                r.hard_passed = false;
                r.open_issues = vec!["x".into()];
                r.remaining_issues = vec!["y".into()];
            },
            None,
        ),
        (
            "empty summary",
            |r| r.summary = "  ".into(),
            Some("report.summary"),
        ),
        (
            "satisfied without hard_passed",
            |r| r.hard_passed = false,
            Some("report.satisfied"),
        ),
        (
            "satisfied with open issues",
            |r| r.open_issues = vec!["bug".into()],
            Some("report.satisfied"),
        ),
        (
            "satisfied with remaining issues",
            |r| r.remaining_issues = vec!["later".into()],
            Some("report.satisfied"),
        ),
        (
            "plugin claims protocol_error",
            |r| r.outcome = Outcome::ProtocolError,
            Some("report.outcome"),
        ),
        (
            "descend with a task",
            |r| {
                r.next_step = Some(NextStep {
                    action: NextAction::Descend,
                    suggested_task: Some("split it".into()),
                })
            },
            None,
        ),
        (
            "refine with a task",
            |r| {
                r.next_step = Some(NextStep {
                    action: NextAction::Refine,
                    suggested_task: Some("narrow it".into()),
                })
            },
            None,
        ),
        (
            "stop without a task",
            |r| {
                r.next_step = Some(NextStep {
                    action: NextAction::Stop,
                    suggested_task: None,
                })
            },
            None,
        ),
        (
            "descend without a task",
            |r| {
                r.next_step = Some(NextStep {
                    action: NextAction::Descend,
                    suggested_task: None,
                })
            },
            Some("report.next_step"),
        ),
        (
            "refine with a blank task",
            |r| {
                r.next_step = Some(NextStep {
                    action: NextAction::Refine,
                    suggested_task: Some(" ".into()),
                })
            },
            Some("report.next_step"),
        ),
        (
            "summary at the cap",
            |r| r.summary = "s".repeat(MAX_SUMMARY_BYTES),
            None,
        ),
        (
            "summary over the cap",
            |r| r.summary = "s".repeat(MAX_SUMMARY_BYTES + 1),
            Some("report.size"),
        ),
        (
            "details over the cap",
            |r| r.details = "d".repeat(MAX_DETAILS_BYTES + 1),
            Some("report.size"),
        ),
        (
            "too many issues",
            |r| {
                r.outcome = Outcome::Partial;
                r.open_issues = vec!["i".into(); MAX_ISSUES + 1];
            },
            Some("report.size"),
        ),
        (
            "issue too long",
            |r| {
                r.outcome = Outcome::Partial;
                r.remaining_issues = vec!["i".repeat(MAX_ISSUE_BYTES + 1)];
            },
            Some("report.size"),
        ),
        (
            "too many claims",
            |r| r.claims = vec![claim("a.b", None); MAX_CLAIMS + 1],
            Some("report.size"),
        ),
    ];
    for (name, edit, expected) in cases {
        let mut r = good();
        edit(&mut r);
        let v = check(TASK, Some(&r), &[], &none());
        let broken: Vec<&Check> = v
            .checks
            .iter()
            .filter(|c| c.name.starts_with("report"))
            .filter(|c| c.status != CheckStatus::Passed)
            .collect();
        match expected {
            None => {
                assert!(broken.is_empty(), "{name}: {broken:?}");
                assert_eq!(v.report, r, "{name}: the specialist's report is kept");
            }
            Some(rule) => {
                assert!(
                    broken.iter().any(|c| c.name == *rule),
                    "{name}: {:?}",
                    v.checks
                );
                assert_eq!(v.report.outcome, Outcome::ProtocolError, "{name}");
                assert_eq!(v.verdict, CheckStatus::Failed, "{name}");
            }
        }
    }
}

#[test]
fn no_report_becomes_a_protocol_error_report() {
    let v = check(TASK, None, &[], &none());
    assert_eq!(v.verdict, CheckStatus::Failed);
    assert_eq!(v.report.outcome, Outcome::ProtocolError);
    assert!(
        v.report.summary.contains("returned no report"),
        "{}",
        v.report.summary
    );
    assert!(!v.report.hard_passed);
}

#[test]
fn protocol_error_report_says_what_was_wrong() {
    let mut r = good();
    r.hard_passed = false;
    r.summary = "Did it all".into();
    r.claims = vec![claim("tracker.create_issue", Some("I-1"))];
    let v = check(TASK, Some(&r), &[], &none());
    let out = &v.report;
    assert!(
        out.summary
            .starts_with("protocol error: outcome satisfied requires hard_passed"),
        "{}",
        out.summary
    );
    assert_eq!(out.open_issues.len(), 1);
    assert!(out.details.contains("Did it all"), "{}", out.details);
    assert!(out.claims.is_empty(), "the host does not vouch for claims");
    // The claim was still checked.
    assert!(
        v.checks
            .iter()
            .any(|c| c.name == "claim" && c.message.contains("silent failure"))
    );
}

#[test]
fn plain_text_is_wrapped_as_partial() {
    let r = report_from_plain_text("\n  Opened the PR.\nMore detail here.");
    assert_eq!(r.outcome, Outcome::Partial);
    assert_eq!(r.summary, "Opened the PR.");
    assert!(r.details.contains("More detail here."));
    let v = check(TASK, Some(&r), &[], &none());
    assert_eq!(v.verdict, CheckStatus::Passed, "{:?}", v.checks);
    let long = report_from_plain_text(&"é".repeat(MAX_SUMMARY_BYTES));
    assert!(long.summary.len() <= MAX_SUMMARY_BYTES);
    let empty = report_from_plain_text("   ");
    let v = check(TASK, Some(&empty), &[], &none());
    assert_eq!(v.report.outcome, Outcome::ProtocolError);
}

fn claim_verdict(claims: Vec<Claim>, receipts: &[Receipt]) -> (CheckStatus, Vec<Check>) {
    let mut r = good();
    r.claims = claims;
    let v = check(TASK, Some(&r), receipts, &none());
    let claims = v.checks.into_iter().filter(|c| c.name == "claim").collect();
    (v.verdict, claims)
}

#[test]
fn claims_against_receipts_table() {
    use ReceiptStatus::*;
    const T: &str = "tracker.create_issue";
    let cases: Vec<(&str, Claim, Vec<Receipt>, CheckStatus, &str)> = vec![
        (
            "success receipt backs the claim",
            claim(T, Some("I-1")),
            vec![receipt("r1", TASK, T, Success, Some("I-1"))],
            CheckStatus::Passed,
            "backed by success receipt r1",
        ),
        (
            "claim without external id, success of the tool",
            claim(T, None),
            vec![receipt("r1", TASK, T, Success, Some("I-1"))],
            CheckStatus::Passed,
            "backed",
        ),
        (
            "no receipt at all",
            claim(T, Some("I-1")),
            vec![],
            CheckStatus::Failed,
            "silent failure",
        ),
        (
            "success receipt with another external id",
            claim(T, Some("I-2")),
            vec![receipt("r1", TASK, T, Success, Some("I-1"))],
            CheckStatus::Failed,
            "silent failure",
        ),
        (
            "success receipt of another tool",
            claim(T, Some("I-1")),
            vec![receipt("r1", TASK, "tracker.comment", Success, Some("I-1"))],
            CheckStatus::Failed,
            "silent failure",
        ),
        (
            "the tracker refused",
            claim(T, Some("I-1")),
            vec![receipt("r1", TASK, T, Failed, None)],
            CheckStatus::Failed,
            "403: project is archived",
        ),
        (
            "pending receipt",
            claim(T, Some("I-1")),
            vec![receipt("r1", TASK, T, Pending, None)],
            CheckStatus::Unknown,
            "do not retry",
        ),
        (
            "unknown receipt",
            claim(T, Some("I-1")),
            vec![receipt("r1", TASK, T, Unknown, None)],
            CheckStatus::Unknown,
            "do not retry",
        ),
    ];
    for (name, c, receipts, status, text) in cases {
        let (_, checks) = claim_verdict(vec![c], &receipts);
        assert_eq!(checks.len(), 1, "{name}");
        assert_eq!(checks[0].status, status, "{name}: {}", checks[0].message);
        assert!(
            checks[0].message.contains(text),
            "{name}: {}",
            checks[0].message
        );
    }
}

#[test]
fn claims_without_external_id_need_one_success_receipt_each() {
    use ReceiptStatus::Success;
    const T: &str = "tracker.create_issue";
    let two = [
        receipt("r1", TASK, T, Success, Some("I-1")),
        receipt("r2", TASK, T, Success, Some("I-2")),
    ];
    // Allowed: two claims, two receipts.
    let (verdict, checks) = claim_verdict(vec![claim(T, None), claim(T, None)], &two);
    assert_eq!(verdict, CheckStatus::Passed, "{checks:?}");
    assert!(checks[0].message.contains("r1") && checks[1].message.contains("r2"));
    // Denied: two claims, one receipt.
    let (verdict, checks) = claim_verdict(vec![claim(T, None), claim(T, None)], &two[..1]);
    assert_eq!(verdict, CheckStatus::Failed, "{checks:?}");
    assert_eq!(checks[0].status, CheckStatus::Passed);
    assert_eq!(checks[1].status, CheckStatus::Failed);
    assert!(
        checks[1].message.contains("already backs another claim"),
        "{}",
        checks[1].message
    );
    // Denied: a receipt an external id names is not also counted for an id-less claim.
    let (_, checks) = claim_verdict(vec![claim(T, None), claim(T, Some("I-1"))], &two[..1]);
    assert_eq!(checks[0].status, CheckStatus::Failed, "{checks:?}");
    assert_eq!(checks[1].status, CheckStatus::Passed, "{checks:?}");
}

/// A real ledger: task-0 makes the call, [`TASK`] replays it with the same idempotency key.
fn replayed_in_task() -> Vec<Receipt> {
    use guild_core::types::CallStatus;
    use guild_receipts::{Begin, Completion, Intent, Ledger};
    let ledger = Ledger::open_in_memory().expect("ledger");
    let intent = |task: &str| Intent {
        task_id: task.into(),
        route: "planner".into(),
        plugin: "tracker@1.0.0".into(),
        tool: "t.x".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        input_sha256: "a".repeat(64),
        idempotency_key: Some("k".into()),
        chain: Vec::new(),
    };
    let Begin::Proceed(id) = ledger.begin(intent("task-0")).expect("begin") else {
        panic!("a fresh key proceeds");
    };
    let done = Completion {
        status: CallStatus::Success,
        external_id: Some("I-1".into()),
        verifiable_url: None,
        preview: None,
        error: None,
    };
    ledger.complete(&id, done).expect("complete");
    let Begin::Replay(_) = ledger.begin(intent(TASK)).expect("replay") else {
        panic!("the same key and input replay");
    };
    ledger.for_task(TASK).expect("for_task")
}

#[test]
fn an_honest_claim_citing_an_idempotent_replay_is_backed() {
    let receipts = replayed_in_task();
    for c in [claim("t.x", Some("I-1")), claim("t.x", None)] {
        let (verdict, checks) = claim_verdict(vec![c.clone()], &receipts);
        assert_eq!(verdict, CheckStatus::Passed, "{c:?}: {checks:?}");
        assert!(checks[0].message.contains("replay"), "{checks:?}");
    }
}

#[test]
fn a_claim_beside_a_replay_without_its_own_receipt_still_fails() {
    let receipts = replayed_in_task();
    let (_, checks) = claim_verdict(vec![claim("t.x", Some("I-2"))], &receipts);
    assert_eq!(checks[0].status, CheckStatus::Failed, "{checks:?}");
    let (_, checks) = claim_verdict(vec![claim("t.x", None), claim("t.x", None)], &receipts);
    assert_eq!(
        checks.iter().map(|c| c.status).collect::<Vec<_>>(),
        [CheckStatus::Passed, CheckStatus::Failed],
        "one replay backs one claim: {checks:?}"
    );
    let (_, checks) = claim_verdict(vec![claim("t.y", None)], &receipts);
    assert_eq!(checks[0].status, CheckStatus::Failed, "{checks:?}");
}

#[test]
fn claim_of_another_tasks_receipt_is_a_silent_failure_and_an_error() {
    let receipts = [receipt(
        "r1",
        "task-2",
        "t.x",
        ReceiptStatus::Success,
        Some("I-1"),
    )];
    let (verdict, checks) = claim_verdict(vec![claim("t.x", Some("I-1"))], &receipts);
    assert_eq!(checks[0].status, CheckStatus::Failed);
    assert_eq!(verdict, CheckStatus::Error);
}

#[test]
fn receipt_statuses_table() {
    use ReceiptStatus::*;
    let cases: Vec<(&str, Receipt, CheckStatus, &str)> = vec![
        (
            "success",
            receipt("r1", TASK, "t.x", Success, Some("1")),
            CheckStatus::Passed,
            "all 1 receipt(s)",
        ),
        (
            "failed, error verbatim",
            receipt("r1", TASK, "t.x", Failed, None),
            CheckStatus::Failed,
            ": 403: project is archived",
        ),
        (
            "pending",
            receipt("r1", TASK, "t.x", Pending, None),
            CheckStatus::Unknown,
            "do not retry",
        ),
        (
            "unknown",
            receipt("r1", TASK, "t.x", Unknown, None),
            CheckStatus::Unknown,
            "do not retry",
        ),
        (
            "another task's",
            receipt("r1", "task-2", "t.x", Success, Some("1")),
            CheckStatus::Error,
            "belongs to task task-2",
        ),
    ];
    for (name, r, status, text) in cases {
        let v = check(TASK, Some(&good()), &[r], &none());
        assert_eq!(v.verdict, status, "{name}: {:?}", v.checks);
        let c = v
            .checks
            .iter()
            .find(|c| c.name.starts_with("receipt"))
            .expect("receipt check");
        assert!(c.message.contains(text), "{name}: {}", c.message);
    }
    let v = check(TASK, Some(&good()), &[], &none());
    assert!(
        v.checks
            .iter()
            .any(|c| c.message == "this task has no receipts")
    );
}

#[test]
fn failed_receipt_error_is_quoted_verbatim() {
    let mut r = receipt("r1", TASK, "t.x", ReceiptStatus::Failed, None);
    r.error = Some("line 1\n  \"quoted\" ünïcode".into());
    let v = check(TASK, Some(&good()), &[r], &none());
    assert!(
        v.checks
            .iter()
            .any(|c| c.message.ends_with(": line 1\n  \"quoted\" ünïcode")),
        "{:?}",
        v.checks
    );
}

#[test]
fn verdict_is_the_worst_check() {
    let c = |s| Check::new("x", s, "");
    use CheckStatus::*;
    assert_eq!(verdict(&[]), Passed);
    assert_eq!(verdict(&[c(Passed), c(Unknown)]), Unknown);
    assert_eq!(verdict(&[c(Unknown), c(Failed), c(Passed)]), Failed);
    assert_eq!(verdict(&[c(Failed), c(Error), c(Unknown)]), Error);
    let receipts = [
        receipt("r1", TASK, "t.x", ReceiptStatus::Pending, None),
        receipt("r2", TASK, "t.x", ReceiptStatus::Failed, None),
    ];
    assert_eq!(
        check(TASK, Some(&good()), &receipts, &none()).verdict,
        Failed
    );
}

fn artifact(id: &str, content: &[u8]) -> ArtifactRef {
    ArtifactRef {
        id: id.into(),
        kind: "file".into(),
        mime_type: "text/plain".into(),
        sha256: sha(content),
        version: None,
    }
}

fn artifact_check(a: ArtifactRef, resolver: &dyn ArtifactResolver) -> Check {
    let mut r = good();
    r.artifacts = vec![a];
    let v = check(TASK, Some(&r), &[], resolver);
    v.checks
        .into_iter()
        .find(|c| c.name == "artifact")
        .expect("artifact check")
}

#[test]
fn artifacts_table() {
    let store = Mem(Some(HashMap::from([(
        "notes.md".to_owned(),
        b"hello".to_vec(),
    )])));
    let mut upper = artifact("notes.md", b"hello");
    upper.sha256 = upper.sha256.to_uppercase();
    let mut malformed = artifact("notes.md", b"hello");
    malformed.sha256 = "xyz".into();
    let cases: Vec<(&str, ArtifactRef, &dyn ArtifactResolver, CheckStatus)> = vec![
        (
            "found with the right hash",
            artifact("notes.md", b"hello"),
            &store,
            CheckStatus::Passed,
        ),
        ("hash in upper case", upper, &store, CheckStatus::Passed),
        (
            "hash mismatch",
            artifact("notes.md", b"other"),
            &store,
            CheckStatus::Failed,
        ),
        ("malformed hash", malformed, &store, CheckStatus::Failed),
        (
            "missing",
            artifact("gone.md", b"x"),
            &store,
            CheckStatus::Failed,
        ),
        (
            "resolver unavailable",
            artifact("notes.md", b"hello"),
            &Mem(None),
            CheckStatus::Unknown,
        ),
        (
            "no workspace",
            artifact("notes.md", b"hello"),
            &NoWorkspace,
            CheckStatus::Unknown,
        ),
    ];
    for (name, a, resolver, status) in cases {
        let c = artifact_check(a, resolver);
        assert_eq!(c.status, status, "{name}: {}", c.message);
    }
}

#[test]
fn dir_resolver_stays_inside_the_workspace() {
    let root = tempfile::tempdir().expect("tempdir");
    let ws = root.path().join("task-1");
    std::fs::create_dir_all(ws.join("out")).expect("mkdir");
    std::fs::write(ws.join("out/report.md"), b"report").expect("write");
    std::fs::write(root.path().join("secret.txt"), b"secret").expect("write");
    std::fs::create_dir_all(root.path().join("task-2")).expect("mkdir");
    std::fs::write(root.path().join("task-2/a.md"), b"theirs").expect("write");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.path().join("secret.txt"), ws.join("link-out"))
            .expect("symlink");
        std::os::unix::fs::symlink("out/report.md", ws.join("link-in")).expect("symlink");
    }
    let d = DirResolver::open(&ws).expect("open");
    let ok = |id: &str, content: &[u8]| artifact_check(artifact(id, content), &d).status;
    assert_eq!(ok("out/report.md", b"report"), CheckStatus::Passed);
    assert_eq!(ok("./out/report.md", b"report"), CheckStatus::Passed);
    assert_eq!(ok("out/missing.md", b""), CheckStatus::Failed);
    assert_eq!(
        ok("out", b""),
        CheckStatus::Failed,
        "a folder is not an artifact"
    );
    assert_eq!(ok("../secret.txt", b"secret"), CheckStatus::Error);
    assert_eq!(
        ok("../task-2/a.md", b"theirs"),
        CheckStatus::Error,
        "another task's artifact"
    );
    assert_eq!(
        ok(
            &root.path().join("secret.txt").display().to_string(),
            b"secret"
        ),
        CheckStatus::Error
    );
    assert_eq!(ok("", b""), CheckStatus::Error);
    #[cfg(unix)]
    {
        assert_eq!(ok("link-out", b"secret"), CheckStatus::Error, "symlink out");
        assert_eq!(
            ok("link-in", b"report"),
            CheckStatus::Passed,
            "symlink within"
        );
    }
}
