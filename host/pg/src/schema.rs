//! The database's tables and their versions. `guild_schema` holds one row: the application
//! (`guild`) and the schema version. At open, under a transaction-scoped advisory lock (so two
//! hosts starting together migrate once), the migrations newer than the recorded version run in
//! order, in the same transaction as the version update: a database is at one version or the
//! next, never between. A newer version than [`LATEST`] is refused (that database was written
//! by a newer Guild); a database without `guild_schema` that holds any table, view or sequence
//! is refused (it is someone else's), as is a `guild_schema` that is not Guild's.

use postgres::Client;

use crate::{PgError, describe};

/// The schema version this build writes.
pub const LATEST: i32 = 5;

/// The application `guild_schema` names.
const APPLICATION: &str = "guild";

/// Key of the advisory lock held while migrating ("GUILDPG" in ASCII).
const MIGRATION_LOCK: i64 = 0x0047_5549_4C44_5047;

/// Migration `n` takes the schema from version `n - 1` to `n`.
const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5];

/// Version 2: a ledger entry names its task's delegation chain (docs/delegation.md#receipts);
/// entries written before keep none, and their hashes.
const V2: &str = "ALTER TABLE ledger_entries ADD COLUMN chain text;";

const V1: &str = "
CREATE FUNCTION guild_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP;
END
$$;

CREATE TABLE ledger_entries (
    seq bigint PRIMARY KEY,
    kind text NOT NULL,
    receipt_id text NOT NULL,
    task_id text NOT NULL,
    route text NOT NULL,
    plugin text NOT NULL,
    tool text NOT NULL,
    receipt_type text NOT NULL,
    operation text NOT NULL,
    status text NOT NULL,
    external_id text,
    verifiable_url text,
    preview text,
    error text,
    time text NOT NULL,
    input_sha256 text NOT NULL,
    idempotency_key text,
    detail text,
    prev_hash text NOT NULL,
    hash text NOT NULL
);
CREATE INDEX ledger_entries_receipt ON ledger_entries (receipt_id, seq);
CREATE INDEX ledger_entries_task ON ledger_entries (task_id, seq);
CREATE UNIQUE INDEX ledger_entries_idempotency ON ledger_entries (tool, idempotency_key)
    WHERE kind = 'intent' AND idempotency_key IS NOT NULL;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION guild_append_only();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION guild_append_only();

-- The chain head: locked by every ledger write, moved in the same transaction.
CREATE TABLE ledger_head (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    seq bigint NOT NULL,
    hash text NOT NULL
);
INSERT INTO ledger_head (seq, hash)
    VALUES (0, '0000000000000000000000000000000000000000000000000000000000000000');

CREATE TABLE memory_versions (
    scope text NOT NULL,
    owner text NOT NULL,
    version bigint NOT NULL,
    actor text NOT NULL,
    at_ms bigint NOT NULL,
    sha256 text NOT NULL,
    chars bigint NOT NULL,
    bytes bigint NOT NULL,
    restored_from bigint,
    text text NOT NULL,
    PRIMARY KEY (scope, owner, version)
);
CREATE TRIGGER memory_versions_append_only BEFORE UPDATE OR DELETE ON memory_versions
    FOR EACH ROW EXECUTE FUNCTION guild_append_only();
CREATE TRIGGER memory_versions_no_truncate BEFORE TRUNCATE ON memory_versions
    FOR EACH STATEMENT EXECUTE FUNCTION guild_append_only();
";

/// Version 3: background tasks with leases, their events, and the hosts on the database.
const V3: &str = "
CREATE TABLE tasks (
    id text PRIMARY KEY,
    specialist text NOT NULL,
    description text NOT NULL,
    updates text[] NOT NULL DEFAULT '{}',
    status text NOT NULL,
    attempt integer NOT NULL DEFAULT 1,
    result text,
    created_ms bigint NOT NULL,
    updated_ms bigint NOT NULL,
    checked_seq bigint NOT NULL DEFAULT 0,
    -- The host holding the task (guild_hosts.id) and until when, on the server's clock.
    owner text NOT NULL,
    owner_name text NOT NULL,
    lease_until timestamptz NOT NULL
);
CREATE INDEX tasks_live ON tasks (lease_until) WHERE status IN ('queued', 'running');
CREATE INDEX tasks_created ON tasks (created_ms DESC, id DESC);
CREATE TABLE task_events (
    task_id text NOT NULL,
    seq bigint NOT NULL,
    kind text NOT NULL,
    payload text NOT NULL,
    at_ms bigint NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- Every host on the database while it runs: who it is, when it was last seen, its plugins.
CREATE TABLE guild_hosts (
    id text PRIMARY KEY,
    name text NOT NULL,
    started timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_seen timestamptz NOT NULL DEFAULT clock_timestamp(),
    plugins text NOT NULL DEFAULT ''
);
";

/// Version 4: the model tokens each plugin spent per UTC day (days since 1970-01-01), so that
/// hosts share the daily budgets (src/budgets.rs).
const V4: &str = "
CREATE TABLE daily_tokens (
    plugin text NOT NULL,
    day bigint NOT NULL,
    tokens bigint NOT NULL,
    PRIMARY KEY (plugin, day)
);
";

/// Version 5: tasks of retryable specialists, which a live host takes up again when the host
/// running them dies (src/orphans.rs); such a task waits unowned (`owner = ''`) meanwhile.
const V5: &str = "
ALTER TABLE tasks ADD COLUMN retryable boolean NOT NULL DEFAULT false;
CREATE INDEX tasks_orphaned ON tasks (created_ms) WHERE status = 'queued' AND owner = '';
";

/// Brings the database to [`LATEST`], creating Guild's tables in an empty one; refuses a newer
/// or a foreign database. `target` names it in errors.
pub(crate) fn migrate(client: &mut Client, target: &str) -> Result<(), PgError> {
    let query = |op: &'static str| {
        move |e: postgres::Error| PgError::Query {
            target: target.to_owned(),
            op,
            reason: describe(&e),
        }
    };
    let mut tx = client.transaction().map_err(query("start the migration"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(query("take the migration lock"))?;
    let version = match recorded(&mut tx, target)? {
        Some(version) => version,
        None => {
            adopt_empty(&mut tx, target)?;
            0
        }
    };
    if version > LATEST {
        return Err(PgError::Newer {
            target: target.to_owned(),
            found: version,
            supported: LATEST,
        });
    }
    for (n, sql) in (1..)
        .zip(MIGRATIONS)
        .skip(usize::try_from(version).unwrap_or(0))
    {
        tracing::info!(target, version = n, "applying Guild schema migration");
        tx.batch_execute(sql).map_err(query("apply a migration"))?;
        tx.execute("UPDATE guild_schema SET version = $1", &[&n])
            .map_err(query("record the schema version"))?;
    }
    tx.commit().map_err(query("commit the migration"))
}

/// The version `guild_schema` records (`None`: no such table). A table of that name that is not
/// Guild's is refused.
fn recorded(tx: &mut postgres::Transaction<'_>, target: &str) -> Result<Option<i32>, PgError> {
    let foreign = |why: String| PgError::Foreign {
        target: target.to_owned(),
        why,
    };
    let exists: bool = tx
        .query_one("SELECT to_regclass('guild_schema') IS NOT NULL", &[])
        .and_then(|r| r.try_get(0))
        .map_err(|e| PgError::Query {
            target: target.to_owned(),
            op: "look for guild_schema",
            reason: describe(&e),
        })?;
    if !exists {
        return Ok(None);
    }
    let rows = tx
        .query("SELECT application, version FROM guild_schema", &[])
        .map_err(|e| {
            foreign(format!(
                "its guild_schema table is not Guild's ({})",
                describe(&e)
            ))
        })?;
    let [row] = rows.as_slice() else {
        return Err(foreign(format!(
            "its guild_schema table has {} rows, not Guild's one",
            rows.len()
        )));
    };
    let application: String = row
        .try_get(0)
        .map_err(|e| foreign(format!("its guild_schema table is not Guild's ({e})")))?;
    if application != APPLICATION {
        return Err(foreign(format!(
            "its guild_schema table names the application {application:?}"
        )));
    }
    row.try_get(1)
        .map(Some)
        .map_err(|e| foreign(format!("its guild_schema version is unreadable ({e})")))
}

/// Creates `guild_schema` (at version 0) in a database that holds nothing in its schema.
fn adopt_empty(tx: &mut postgres::Transaction<'_>, target: &str) -> Result<(), PgError> {
    let query = |op: &'static str| {
        move |e: postgres::Error| PgError::Query {
            target: target.to_owned(),
            op,
            reason: describe(&e),
        }
    };
    let found: Vec<String> = tx
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') \
             ORDER BY c.relname LIMIT 5",
            &[],
        )
        .map_err(query("list the database's tables"))?
        .iter()
        .map(|r| r.try_get::<_, String>(0))
        .collect::<Result<_, _>>()
        .map_err(query("list the database's tables"))?;
    if !found.is_empty() {
        return Err(PgError::Foreign {
            target: target.to_owned(),
            why: format!(
                "it holds tables that are not Guild's and no guild_schema ({}…)",
                found.join(", ")
            ),
        });
    }
    tx.batch_execute(&format!(
        "CREATE TABLE guild_schema (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            application text NOT NULL,
            version integer NOT NULL
        );
        INSERT INTO guild_schema (application, version) VALUES ('{APPLICATION}', 0);"
    ))
    .map_err(query("create guild_schema"))
}
