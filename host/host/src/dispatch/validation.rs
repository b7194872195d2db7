//! What a finished task's report is judged on: its receipts (a revised child's current attempt
//! only, [`current_attempt`]) and its workspace, checked by guild-validate
//! (docs/receipts-and-validation.md). The report is a hypothesis; the verdict says what backs it.

use guild_receipts::{Receipt, ReceiptStatus};
use guild_validate::{
    self as validate, ArtifactResolver, Check, CheckStatus, DirResolver, NoWorkspace, Validation,
};

use super::Services;
use crate::registry::LoadedPlugin;
use crate::types::Report;

/// Checks the report against this task's receipts and its workspace (docs/receipts-and-validation.md). The report
/// is a hypothesis; the verdict says what backs it. `attempt_from` is where a revised child's
/// current attempt starts in the ledger (0: the task's first or only attempt): its failed and
/// pending receipts before it are set aside ([`current_attempt`]).
pub(super) async fn validate_task(
    services: &Services,
    plugin: &LoadedPlugin,
    task_id: &str,
    report: Option<Report>,
    mutated: bool,
    attempt_from: u64,
) -> (Vec<Receipt>, Validation) {
    // Receipts exist only for mutating calls and artifacts only when reported: without either
    // the checks are pure and stay on this thread (no ledger read, no blocking hop). A revised
    // child's earlier attempts may have left receipts that back its claims, so it reads them.
    let has_artifacts = report.as_ref().is_some_and(|r| !r.artifacts.is_empty());
    if !mutated && !has_artifacts && attempt_from == 0 {
        return (
            Vec::new(),
            validate::check(task_id, report.as_ref(), &[], &NoWorkspace),
        );
    }
    let ledger = services.ledger.clone();
    // Artifacts resolve in the specialist's first granted folder, read through cap-std.
    let workspace = plugin
        .runtime
        .effective()
        .fs
        .first()
        .map(|m| m.host.clone());
    let task_id = task_id.to_owned();
    let joined = tokio::task::spawn_blocking(move || {
        let (receipts, ledger_check) = match ledger.for_task(&task_id) {
            Ok(r) => (r, None),
            Err(e) => (
                Vec::new(),
                Some(format!("the receipts ledger could not be read: {e}")),
            ),
        };
        let resolver: Box<dyn ArtifactResolver> = match workspace.as_deref().map(DirResolver::open)
        {
            Some(Ok(dir)) => Box::new(dir),
            _ => Box::new(NoWorkspace),
        };
        let (counted, set_aside) = current_attempt(&receipts, attempt_from);
        let mut validation =
            validate::check(&task_id, report.as_ref(), &counted, resolver.as_ref());
        if let Some(check) = set_aside {
            validation.checks.push(check);
        }
        if let Some(problem) = ledger_check {
            validation.checks.push(Check {
                name: "receipts".into(),
                status: CheckStatus::Unknown,
                message: problem,
            });
            validation.verdict = validation.verdict.max(CheckStatus::Unknown);
        }
        (receipts, validation)
    })
    .await;
    match joined {
        Ok(v) => v,
        Err(e) => {
            let problem = format!("validation did not run: {e}");
            (
                Vec::new(),
                Validation {
                    verdict: CheckStatus::Error,
                    checks: vec![Check {
                        name: "validation".into(),
                        status: CheckStatus::Error,
                        message: problem.clone(),
                    }],
                    report: validate::protocol_error_report(&[problem], None),
                },
            )
        }
    }
}

/// The receipts a task's current attempt is judged on: every success (a fact, whichever attempt
/// made it) and the failed or pending receipts from `attempt_from` on; those of earlier
/// attempts are set aside, named in a passed check (docs/delegation.md#revising-a-child).
fn current_attempt(receipts: &[Receipt], attempt_from: u64) -> (Vec<Receipt>, Option<Check>) {
    let (counted, earlier): (Vec<&Receipt>, Vec<&Receipt>) = receipts.iter().partition(|r| {
        r.sequence >= attempt_from
            || !matches!(r.status, ReceiptStatus::Failed | ReceiptStatus::Pending)
    });
    let check = (!earlier.is_empty()).then(|| {
        let named: Vec<String> = earlier
            .iter()
            .map(|r| format!("{} {} ({})", r.tool, r.status, r.id))
            .collect();
        Check {
            name: "receipt.earlier_attempt".into(),
            status: CheckStatus::Passed,
            message: format!(
                "{} receipt(s) of an earlier attempt, before this revision, are not counted against it: {}",
                earlier.len(),
                named.join(", ")
            ),
        }
    });
    (counted.into_iter().cloned().collect(), check)
}
