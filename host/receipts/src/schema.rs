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
pub(crate) const VERSION: i64 = 2;

/// `PRAGMA application_id` of a receipts ledger: "GLDR".
pub const APPLICATION_ID: i32 = 0x474C_4452;

/// The entries table's columns up to version 1 (a macro so that both schemas are literals).
macro_rules! columns_v1 {
    () => {
        "
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
    hash TEXT NOT NULL"
    };
}

/// The indexes and the append-only triggers (unchanged since version 1).
macro_rules! indexes_and_triggers {
    () => {
        "
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
"
    };
}

/// Version 2: version 1 and `chain`, the delegation chain of an entry's task
/// ([`super::chain::Entry::chain`]).
const SCHEMA: &str = concat!(
    "CREATE TABLE IF NOT EXISTS entries (",
    columns_v1!(),
    ",\n    chain TEXT\n) STRICT;",
    indexes_and_triggers!()
);

/// Version 1, which ledgers of earlier builds (stamped or not) have.
pub(crate) const SCHEMA_V1: &str = concat!(
    "CREATE TABLE IF NOT EXISTS entries (",
    columns_v1!(),
    "\n) STRICT;",
    indexes_and_triggers!()
);

/// Takes a version-1 ledger to version 2: its entries keep no chain (and their v1 hashes).
const ADD_CHAIN: &str = "ALTER TABLE entries ADD COLUMN chain TEXT;";

/// What a receipts ledger file looks like (see [`guild_store`]).
pub(crate) const SPEC: DbSpec = DbSpec {
    what: "receipts ledger",
    application_id: APPLICATION_ID,
    version: VERSION,
    schema: SCHEMA,
    // Unstamped ledgers of earlier builds have version 1's schema.
    legacy_schema: SCHEMA_V1,
    upgrade_legacy: ADD_CHAIN,
    upgrades: &[ADD_CHAIN],
};

/// On a read-only connection to a ledger of version 1 (or an unstamped one), which has no
/// `chain` column: a temporary view named `entries` that adds it as NULL, so every read sees
/// the current columns. The file is not touched (the view lives in the connection's temporary
/// schema, which is searched before the file's).
pub(crate) fn read_as_current(conn: &Connection, path: &Path) -> Result<(), LedgerError> {
    let has_chain: bool = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'chain'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(|source| LedgerError::Open {
            path: path.to_path_buf(),
            what: "read the columns",
            source,
        })?;
    if has_chain {
        return Ok(());
    }
    conn.execute_batch("CREATE TEMP VIEW entries AS SELECT *, NULL AS chain FROM main.entries;")
        .map_err(|source| LedgerError::Open {
            path: path.to_path_buf(),
            what: "read a version-1 ledger",
            source,
        })
}

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
