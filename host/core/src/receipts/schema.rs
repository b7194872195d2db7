//! The ledger's SQLite schema and connection settings.
//!
//! One `STRICT` table of entries keyed by sequence; `UPDATE` and `DELETE` are refused by
//! triggers (append-only); a partial unique index makes an idempotency key name one intent per
//! tool. The schema version lives in `PRAGMA user_version`.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use super::LedgerError;

/// Schema version this build writes and reads.
pub(crate) const VERSION: i64 = 1;

/// How long a write waits for another process's transaction before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    receipt_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    route TEXT NOT NULL,
    plugin TEXT NOT NULL,
    tool TEXT NOT NULL,
    receipt_type TEXT NOT NULL,
    operation TEXT NOT NULL,
    status TEXT NOT NULL,
    external_id TEXT,
    verifiable_url TEXT,
    preview TEXT,
    error TEXT,
    time TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    idempotency_key TEXT,
    detail TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS entries_receipt ON entries (receipt_id, seq);
CREATE INDEX IF NOT EXISTS entries_task ON entries (task_id, seq);
CREATE UNIQUE INDEX IF NOT EXISTS entries_idempotency ON entries (tool, idempotency_key)
    WHERE kind = 'intent' AND idempotency_key IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'the receipts ledger is append-only: UPDATE refused');
END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
BEGIN
    SELECT RAISE(ABORT, 'the receipts ledger is append-only: DELETE refused');
END;
";

/// Applies the connection settings and creates the schema if needed.
pub(crate) fn prepare(conn: &mut Connection, path: &Path) -> Result<(), LedgerError> {
    let open = |what: &'static str| {
        move |source| LedgerError::Open {
            path: path.to_path_buf(),
            what,
            source,
        }
    };
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(open("set the busy timeout"))?;
    // WAL: readers never block the writer. An in-memory database answers "memory"; any other
    // answer for a file means WAL is unavailable and durability would be different from what
    // DESIGN §5 promises, so it is an error.
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(open("enable WAL"))?;
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        return Err(LedgerError::Open {
            path: path.to_path_buf(),
            what: "enable WAL",
            source: rusqlite::Error::InvalidParameterName(format!(
                "journal_mode is {mode:?}, not \"wal\""
            )),
        });
    }
    // FULL, not NORMAL: NORMAL in WAL mode can lose the last commits on power loss.
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(open("set synchronous=FULL"))?;
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(open("start the schema transaction"))?;
    let found: i64 = tx
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(open("read the schema version"))?;
    if found > VERSION {
        return Err(LedgerError::UnsupportedSchema {
            path: path.to_path_buf(),
            found,
            supported: VERSION,
        });
    }
    tx.execute_batch(SCHEMA)
        .map_err(open("create the schema"))?;
    tx.pragma_update(None, "user_version", VERSION)
        .map_err(open("write the schema version"))?;
    tx.commit().map_err(open("commit the schema"))
}
