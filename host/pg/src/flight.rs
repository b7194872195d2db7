//! Intents in flight across hosts. A store knows which of its own intents are running (the
//! `in_flight` set of [`crate::PgLedgerStore`]); another host needs to know it too, so that the
//! same idempotency key used there while the call runs is refused as in flight
//! ([`LedgerError::InFlight`]), as on one host, instead of replayed as `unknown`.
//!
//! The mark is a session-level advisory lock of the store's connection, one per intent, taken
//! inside the transaction that commits the intent (so no other host can see the intent
//! without it) and released once its outcome is committed or the store gives up on the call
//! ([`guild_receipts::LedgerStore::release`]). A host that dies loses its connection, and the
//! server drops its locks with it: its unfinished intents then read `unknown` everywhere and
//! their keys replay them, the safe side, with no lease to wait out. The lock only matters
//! while an intent has no outcome: a key whose receipt has one replays it, locked or not, so
//! releasing after the outcome's commit leaves no gap.
//!
//! Keys are (a class of Guild's own, 31 bits of a hash of the receipt id). Two receipt ids
//! that share a hash could make a key read as in flight while the other runs: a refusal the
//! caller retries, never a second call.

use postgres::GenericClient;
use postgres::types::Type;

use guild_receipts::LedgerError;

use crate::ledger::pg;

/// The first half of every intent's advisory lock key ("guil"), apart from the single-key
/// locks of migrations and the join check.
const CLASS: i32 = 0x6775_696c;

/// The second half of `receipt_id`'s key: 31 bits of its FNV-1a hash, so that it reads the
/// same as an `oid` in `pg_locks`.
pub(crate) fn key(receipt_id: &str) -> i32 {
    let hash = receipt_id.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    i32::try_from(hash & 0x7fff_ffff).unwrap_or(0)
}

fn keys(ids: &[String]) -> Vec<i32> {
    ids.iter().map(|id| key(id)).collect()
}

/// Marks `ids` as running on this connection (inside the transaction committing them; the
/// locks outlive it and must be released with [`let_go`] if it fails).
pub(crate) fn hold(c: &mut impl GenericClient, ids: &[String]) -> Result<(), LedgerError> {
    if ids.is_empty() {
        return Ok(());
    }
    c.query_typed(
        "SELECT pg_try_advisory_lock($1, k) FROM unnest($2) AS k",
        &[(&CLASS, Type::INT4), (&keys(ids), Type::INT4_ARRAY)],
    )
    .map_err(pg("mark intents in flight"))?;
    Ok(())
}

/// Releases the marks of `ids` (their outcomes are committed, or their calls were given up).
/// A failure is logged only: a connection that failed took its locks with it.
pub(crate) fn let_go(c: &mut impl GenericClient, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    if let Err(e) = c.query_typed(
        "SELECT pg_advisory_unlock($1, k) FROM unnest($2) AS k",
        &[(&CLASS, Type::INT4), (&keys(ids), Type::INT4_ARRAY)],
    ) {
        tracing::debug!("releasing {} in-flight marks failed: {e}", ids.len());
    }
}

/// Whether another connection (another host, or another store on this one) holds the mark of
/// `receipt_id`: its call is running there.
pub(crate) fn elsewhere(c: &mut impl GenericClient, receipt_id: &str) -> Result<bool, LedgerError> {
    let (class, key) = (CLASS.cast_unsigned(), key(receipt_id).cast_unsigned());
    let row = c
        .query_typed_one(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 \
             AND objid = $2 AND objsubid = 2 AND granted AND pid <> pg_backend_pid())",
            &[(&class, Type::OID), (&key, Type::OID)],
        )
        .map_err(pg("look for an intent in flight on another host"))?;
    row.try_get(0)
        .map_err(pg("read whether an intent is in flight"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_non_negative_and_differ() {
        let a = key("0193a1b2-0000-7000-8000-000000000001");
        assert_eq!(a, key("0193a1b2-0000-7000-8000-000000000001"));
        assert!(a >= 0);
        assert_ne!(a, key("0193a1b2-0000-7000-8000-000000000002"));
        const { assert!(CLASS > 0) };
    }
}
