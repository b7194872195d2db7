//! The ledger's SQLite schema and connection settings.
//!
//! One `STRICT` table of entries keyed by sequence; `UPDATE` and `DELETE` are refused by
//! triggers (append-only); a partial unique index makes an idempotency key name one intent per
//! tool. The file is marked as a ledger by `PRAGMA application_id` and its schema version lives
//! in `PRAGMA user_version` (checked by [`guild_store`] on every open).

use std::path::Path;

use rusqlite::Connection;

use super::LedgerError;
use guild_store::DbSpec;

/// Schema version this build writes and reads (`PRAGMA user_version`).
pub(crate) const VERSION: i64 = 1;

/// `PRAGMA application_id` of a receipts ledger: "GLDR".
pub const APPLICATION_ID: i32 = 0x474C_4452;

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

/// What a receipts ledger file looks like (see [`guild_store`]).
pub(crate) const SPEC: DbSpec = DbSpec {
    what: "receipts ledger",
    application_id: APPLICATION_ID,
    version: VERSION,
    schema: SCHEMA,
    // Ledgers of earlier builds have this very schema; only the marks are new.
    legacy_schema: SCHEMA,
    upgrade_legacy: "",
};

/// Applies the settings a writing connection needs: WAL, `synchronous=FULL`, and the whole
/// schema (triggers included).
pub(crate) fn prepare(conn: &mut Connection, path: &Path) -> Result<(), LedgerError> {
    let open = |what: &'static str| {
        move |source| match guild_store::space::sqlite_full(path, &source) {
            Some(_) => LedgerError::File(super::DbFileError::from_sqlite(
                SPEC.what,
                path.to_path_buf(),
                "prepare",
                source,
            )),
            None => LedgerError::Open {
                path: path.to_path_buf(),
                what,
                source,
            },
        }
    };
    // WAL: readers never block the writer. An in-memory database answers "memory"; any other
    // answer for a file means WAL is unavailable and durability would be different from what
    // docs/receipts-and-validation.md ("Durability") promises, so it is an error.
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
    // Puts back an index or append-only trigger that someone dropped (it repairs no entry).
    conn.execute_batch(SCHEMA)
        .map_err(open("restore the schema"))
}
