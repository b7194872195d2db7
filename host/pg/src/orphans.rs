//! Retryable tasks whose host is gone. A task of a specialist marked `retryable` (its
//! manifest's `[plugin] retryable`, stored with the task) that loses its host — the lease ran
//! out, or the host stopped while it was live — is not ended `interrupted`: it is released
//! ([`release`]) to wait unowned (`owner = ''`) as `queued`, its attempt number raised, with an
//! event saying why. Every live host's task manager asks now and then for such tasks of the
//! specialists it has loaded ([`crate::PgTaskStore::claim_orphans`]); one host takes each (the
//! claim is an update of rows locked `FOR UPDATE SKIP LOCKED`, so two hosts never take the same
//! one), holds it under its own lease and runs the new attempt from the stored brief and
//! updates. An attempt runs only after the conditional move from `queued` to `running` under a
//! valid lease ([`crate::PgTaskStore::start_attempt`]) and the old holder's attempt stops once
//! it sees the row moved on, so one attempt runs at a time.
//!
//! A retried task runs again from the start: the specialist's mutating calls are meant to
//! carry idempotency keys, so the second run replays what the first recorded (and a call still
//! running on a host that is not quite dead is refused as in flight, src/flight.rs).

use postgres::GenericClient;

use crate::HostIdentity;
use crate::tasks::{COLUMNS, PgTask, append_event, now_ms, task};

/// Most tasks one host takes up in one claim.
const CLAIM_AT_ONCE: i64 = 8;

/// Releases task `id` (its row locked by the caller) to wait for another host, saying `why`.
pub(crate) fn release(
    tx: &mut impl GenericClient,
    id: &str,
    why: &str,
) -> Result<(), postgres::Error> {
    let attempt: i32 = tx
        .query_one(
            "UPDATE tasks SET status = 'queued', attempt = attempt + 1, result = NULL, \
             owner = '', owner_name = '', lease_until = clock_timestamp(), updated_ms = $2 \
             WHERE id = $1 RETURNING attempt",
            &[&id, &now_ms()],
        )?
        .try_get(0)?;
    append_event(
        tx,
        id,
        "status",
        &format!("{why}; it is retryable: attempt {attempt} waits for another host"),
    )
    .map(drop)
}

/// Takes up to [`CLAIM_AT_ONCE`] orphaned tasks of `specialists` for `me`, under a lease of
/// `lease_ms`: the tasks now held, oldest first.
pub(crate) fn claim(
    c: &mut postgres::Client,
    me: &HostIdentity,
    lease_ms: i64,
    specialists: &[String],
) -> Result<Vec<PgTask>, postgres::Error> {
    if specialists.is_empty() {
        return Ok(Vec::new());
    }
    let mut tx = c.transaction()?;
    let rows = tx.query(
        &format!(
            "UPDATE tasks SET owner = $1, owner_name = $2, updated_ms = $3, \
             lease_until = clock_timestamp() + $4::bigint * interval '1 millisecond' \
             WHERE id IN (SELECT id FROM tasks WHERE status = 'queued' AND owner = '' AND \
             specialist = ANY($5) ORDER BY created_ms LIMIT $6 FOR UPDATE SKIP LOCKED) \
             RETURNING {COLUMNS}"
        ),
        &[
            &me.id,
            &me.name,
            &now_ms(),
            &lease_ms,
            &specialists,
            &CLAIM_AT_ONCE,
        ],
    )?;
    let mut claimed = rows.iter().map(task).collect::<Result<Vec<_>, _>>()?;
    for t in &claimed {
        append_event(
            &mut tx,
            &t.id,
            "status",
            &format!("taken up by {} as attempt {}", me.name, t.attempt),
        )?;
    }
    tx.commit()?;
    claimed.sort_by_key(|t| t.created_ms);
    Ok(claimed)
}
