//! Receipts and claims (docs/receipts-and-validation.md, "Receipts and claims"): what the task's receipts say, and whether every external
//! effect the report claims is backed by a success receipt of *this* task (claims without an
//! external id one-to-one: one receipt backs one such claim).

use std::collections::HashSet;

use super::{Check, CheckStatus};
use guild_core::types::Claim;
use guild_receipts::{Receipt, ReceiptStatus};

/// One check per receipt that is not a plain success of this task, or one passed check.
pub(super) fn receipt_checks(task_id: &str, receipts: &[Receipt]) -> Vec<Check> {
    let mut checks = Vec::new();
    for r in receipts {
        if r.task_id != task_id {
            checks.push(Check::new(
                "receipt.task",
                CheckStatus::Error,
                format!(
                    "receipt {} ({}) belongs to task {}, not to this task {task_id}",
                    r.id, r.tool, r.task_id
                ),
            ));
            continue;
        }
        if let Some(check) = status_check("receipt", r) {
            checks.push(check);
        }
    }
    if checks.is_empty() {
        let n = receipts.len();
        checks.push(Check::new(
            "receipt",
            CheckStatus::Passed,
            match n {
                0 => "this task has no receipts".to_owned(),
                n => format!("all {n} receipt(s) of this task are success"),
            },
        ));
    }
    checks
}

/// What a receipt that is not a success means for the caller; `None` for a success.
fn status_check(name: &str, r: &Receipt) -> Option<Check> {
    let (status, message) = match r.status {
        ReceiptStatus::Success => return None,
        // The error goes last and untouched, so it reads verbatim.
        ReceiptStatus::Failed => (
            CheckStatus::Failed,
            format!(
                "{} failed (receipt {}; do not retry unless the user asks): {}",
                r.tool,
                r.id,
                r.error.as_deref().unwrap_or("")
            ),
        ),
        ReceiptStatus::Pending => (
            CheckStatus::Unknown,
            format!(
                "{} is pending (receipt {}): do not retry; a later ledger entry will resolve it",
                r.tool, r.id
            ),
        ),
        ReceiptStatus::Unknown => (
            CheckStatus::Unknown,
            format!(
                "{} has no recorded outcome (receipt {}; the host stopped during the call): do \
                 not retry; reconcile it first",
                r.tool, r.id
            ),
        ),
    };
    Some(Check::new(name, status, message))
}

/// One check per claim. A claim naming an external id is backed by the success receipt with
/// that id; claims without one are matched one-to-one with the remaining success receipts of
/// their tool, in order, so two such claims need two receipts.
pub(super) fn claim_checks(task_id: &str, claims: &[Claim], receipts: &[Receipt]) -> Vec<Check> {
    // Receipts that an external id names belong to those claims first.
    let mut used: HashSet<&str> = claims
        .iter()
        .filter_map(|c| {
            let id = c.external_id.as_ref()?;
            receipts
                .iter()
                .find(|r| {
                    r.task_id == task_id
                        && r.tool == c.tool
                        && r.status == ReceiptStatus::Success
                        && r.external_id.as_ref() == Some(id)
                })
                .map(|r| r.id.as_str())
        })
        .collect();
    claims
        .iter()
        .map(|c| claim_check(task_id, c, receipts, &mut used))
        .collect()
}

fn claim_check<'r>(
    task_id: &str,
    claim: &Claim,
    receipts: &'r [Receipt],
    used: &mut HashSet<&'r str>,
) -> Check {
    let what = describe(claim);
    let same_tool: Vec<&Receipt> = receipts
        .iter()
        .filter(|r| r.task_id == task_id && r.tool == claim.tool)
        .collect();
    let exact: Vec<&Receipt> = same_tool
        .iter()
        .copied()
        .filter(|r| claim.external_id.is_none() || r.external_id == claim.external_id)
        .collect();
    let open = [ReceiptStatus::Pending, ReceiptStatus::Unknown];
    if claim.external_id.is_some() {
        if let Some(r) = find(&exact, &[ReceiptStatus::Success]) {
            return backed(&what, r);
        }
    } else {
        let free: Vec<&Receipt> = exact
            .iter()
            .copied()
            .filter(|r| !used.contains(r.id.as_str()))
            .collect();
        if let Some(r) = find(&free, &[ReceiptStatus::Success]) {
            used.insert(r.id.as_str());
            return backed(&what, r);
        }
        let taken = exact
            .iter()
            .filter(|r| r.status == ReceiptStatus::Success)
            .count();
        if taken > 0 && find(&exact, &open).is_none() {
            return Check::new(
                "claim",
                CheckStatus::Failed,
                format!(
                    "silent failure: {what}, but each of this task's {taken} success receipt(s) \
                     for {} already backs another claim",
                    claim.tool
                ),
            );
        }
    }
    // Pending before failed: an unresolved call may still turn out to be the claimed effect.
    if let Some(r) = find(&exact, &open).or_else(|| find(&same_tool, &open)) {
        return Check::new(
            "claim",
            CheckStatus::Unknown,
            format!(
                "{what} cannot be confirmed: receipt {} is {}; do not retry",
                r.id, r.status
            ),
        );
    }
    if let Some(r) = find(&exact, &[ReceiptStatus::Failed])
        .or_else(|| find(&same_tool, &[ReceiptStatus::Failed]))
    {
        return Check::new(
            "claim",
            CheckStatus::Failed,
            format!(
                "silent failure: {what}, but receipt {} says the call failed: {}",
                r.id,
                r.error.as_deref().unwrap_or("")
            ),
        );
    }
    Check::new(
        "claim",
        CheckStatus::Failed,
        format!("silent failure: {what}, but this task has no success receipt for it"),
    )
}

fn backed(what: &str, r: &Receipt) -> Check {
    Check::new(
        "claim",
        CheckStatus::Passed,
        match &r.replay_of {
            Some(original) => format!(
                "{what} is backed by success receipt {} (an idempotent replay of receipt {original})",
                r.id
            ),
            None => format!("{what} is backed by success receipt {}", r.id),
        },
    )
}

fn find<'r>(set: &[&'r Receipt], status: &[ReceiptStatus]) -> Option<&'r Receipt> {
    set.iter().copied().find(|r| status.contains(&r.status))
}

fn describe(c: &Claim) -> String {
    match &c.external_id {
        Some(id) => format!("claim {:?} ({}, external id {id})", c.text, c.tool),
        None => format!("claim {:?} ({})", c.text, c.tool),
    }
}
