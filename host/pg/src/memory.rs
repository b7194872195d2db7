//! [`PgMemoryStore`]: memory documents and every accepted version, in PostgreSQL. An append is
//! compare-and-swap on the version: inside its transaction it takes an advisory lock on the
//! document (so writers of one document on every host go one at a time), reads the head, and
//! inserts `parent + 1` only if the head is `parent`; otherwise [`MemoryStoreError::Conflict`].
//! The primary key (scope, owner, version) would refuse a second version `n` even without the
//! lock, and that too is reported as a conflict.

use guild_memory::{DocId, MemoryStore, MemoryStoreError, NewVersion, StoredVersion, VersionInfo};
use postgres::{GenericClient, Row};

use crate::worker::Worker;
use crate::{PgConfig, PgError, describe, schema};

type Result<T> = std::result::Result<T, MemoryStoreError>;

/// First key of the per-document advisory locks ("GLDM").
const DOC_LOCK_CLASS: i32 = 0x474C_444D;

const COLUMNS: &str = "version, actor, at_ms, sha256, chars, bytes, restored_from, text";

fn pg(op: &'static str) -> impl FnOnce(postgres::Error) -> MemoryStoreError {
    move |e| MemoryStoreError::Backend {
        backend: "postgres",
        op,
        reason: describe(&e),
    }
}

/// The memory store on PostgreSQL. `Send + Sync`; every method blocks (crate docs).
pub struct PgMemoryStore {
    worker: Worker,
}

impl PgMemoryStore {
    /// Connects and migrates the database to this build's schema (or refuses it).
    pub fn open(config: &PgConfig) -> std::result::Result<PgMemoryStore, PgError> {
        let target = config.target().to_owned();
        let worker = Worker::start(config, "memory", move |c| schema::migrate(c, &target))?;
        Ok(PgMemoryStore { worker })
    }

    fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        self.worker.run(f).unwrap_or_else(|| {
            Err(MemoryStoreError::Backend {
                backend: "postgres",
                op: "run a memory call",
                reason: "the connection thread stopped or the call panicked".into(),
            })
        })
    }
}

fn number(row: &Row, i: usize) -> Result<u64> {
    let n: i64 = row.try_get(i).map_err(pg("read a version"))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

fn row(r: &Row) -> Result<(VersionInfo, String)> {
    let info = VersionInfo {
        version: number(r, 0)?,
        actor: r.try_get(1).map_err(pg("read a version"))?,
        at_ms: number(r, 2)?,
        sha256: r.try_get(3).map_err(pg("read a version"))?,
        chars: usize::try_from(number(r, 4)?).unwrap_or(usize::MAX),
        bytes: usize::try_from(number(r, 5)?).unwrap_or(usize::MAX),
        restored_from: r
            .try_get::<_, Option<i64>>(6)
            .map_err(pg("read a version"))?
            .map(|v| u64::try_from(v).unwrap_or(0)),
    };
    Ok((info, r.try_get(7).map_err(pg("read a version"))?))
}

fn head(c: &mut impl GenericClient, doc: &DocId) -> Result<u64> {
    let row = c
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM memory_versions WHERE scope = $1 AND owner = $2",
            &[&doc.scope.as_str(), &doc.owner],
        )
        .map_err(pg("read the head of"))?;
    number(&row, 0)
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl MemoryStore for PgMemoryStore {
    fn current(&self, doc: &DocId) -> Result<Option<StoredVersion>> {
        let doc = doc.clone();
        self.call(move |c| {
            let sql = format!(
                "SELECT {COLUMNS} FROM memory_versions WHERE scope = $1 AND owner = $2 \
                 ORDER BY version DESC LIMIT 1"
            );
            let found = c
                .query_opt(&sql, &[&doc.scope.as_str(), &doc.owner])
                .map_err(pg("read the current version from"))?;
            found
                .map(|r| row(&r).and_then(|f| StoredVersion::checked(&doc, f.0, f.1)))
                .transpose()
        })
    }

    fn version(&self, doc: &DocId, version: u64) -> Result<Option<StoredVersion>> {
        let doc = doc.clone();
        self.call(move |c| {
            let sql = format!(
                "SELECT {COLUMNS} FROM memory_versions WHERE scope = $1 AND owner = $2 \
                 AND version = $3"
            );
            let found = c
                .query_opt(&sql, &[&doc.scope.as_str(), &doc.owner, &to_i64(version)])
                .map_err(pg("read a version from"))?;
            found
                .map(|r| row(&r).and_then(|f| StoredVersion::checked(&doc, f.0, f.1)))
                .transpose()
        })
    }

    fn history(&self, doc: &DocId, limit: usize) -> Result<Vec<VersionInfo>> {
        let doc = doc.clone();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.call(move |c| {
            let rows = c
                .query(
                    "SELECT version, actor, at_ms, sha256, chars, bytes, restored_from, '' \
                     FROM memory_versions WHERE scope = $1 AND owner = $2 \
                     ORDER BY version DESC LIMIT $3",
                    &[&doc.scope.as_str(), &doc.owner, &limit],
                )
                .map_err(pg("read the history from"))?;
            rows.iter().map(|r| row(r).map(|(info, _)| info)).collect()
        })
    }

    fn append(&self, doc: &DocId, parent: Option<u64>, new: NewVersion) -> Result<VersionInfo> {
        let doc = doc.clone();
        self.call(move |c| append(c, &doc, parent, new))
    }
}

fn append(
    c: &mut postgres::Client,
    doc: &DocId,
    parent: Option<u64>,
    new: NewVersion,
) -> Result<VersionInfo> {
    let mut tx = c.transaction().map_err(pg("start a write to"))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext($2::text || '/' || $3::text))",
        &[&DOC_LOCK_CLASS, &doc.scope.as_str(), &doc.owner],
    )
    .map_err(pg("lock the document in"))?;
    let found = head(&mut tx, doc)?;
    let expected = parent.unwrap_or(0);
    let conflict = |found| MemoryStoreError::Conflict {
        doc: doc.to_string(),
        expected,
        found,
    };
    if found != expected {
        return Err(conflict(found));
    }
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let info = new.info(found + 1, at_ms);
    let inserted = tx.execute(
        "INSERT INTO memory_versions (scope, owner, version, actor, at_ms, sha256, chars, bytes, \
         restored_from, text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &doc.scope.as_str(),
            &doc.owner,
            &to_i64(info.version),
            &info.actor,
            &to_i64(info.at_ms),
            &info.sha256,
            &to_i64(info.chars as u64),
            &to_i64(info.bytes as u64),
            &info.restored_from.map(to_i64),
            &new.text,
        ],
    );
    match inserted {
        Ok(_) => {}
        // Another writer stored this version first (only possible without the lock).
        Err(e) if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) => {
            return Err(conflict(found + 1));
        }
        Err(e) => return Err(pg("append a version to")(e)),
    }
    tx.commit().map_err(pg("commit a version to"))?;
    Ok(info)
}
