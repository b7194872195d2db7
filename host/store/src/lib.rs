//! SQLite files that must be Guild's own: the receipts ledger, the task store and the memory
//! store each describe themselves with a [`DbSpec`] and open through [`open`].
//!
//! A new file is created whole: its schema is written to a temporary file next to it, stamped
//! with `PRAGMA application_id` (which store it is) and `PRAGMA user_version` (its schema
//! version), fsynced, and only then linked into place — so a file at the path is never a
//! half-made database. Opening an existing file checks both marks. A file that is empty, not
//! SQLite at all, or another application's database is refused with an error naming the file
//! and what to do; it is never silently adopted (an adopted stranger would hide the real data).
//!
//! Databases written before files were stamped carry no application id; one whose schema is
//! exactly the one those builds wrote is adopted (upgraded and stamped on a read-write open,
//! read as it is on a read-only one). A stamped file of an earlier schema version is upgraded
//! the same way, by the steps its [`DbSpec::upgrades`] lists, and read as it is on a read-only
//! open ([`Opened::version`] says which version it has).

pub mod space;
#[cfg(test)]
mod space_tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use thiserror::Error;

/// How long a statement waits for another process's transaction before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// What one kind of Guild database looks like.
#[derive(Debug, Clone, Copy)]
pub struct DbSpec {
    /// What the file is, for messages (e.g. `receipts ledger`).
    pub what: &'static str,
    /// `PRAGMA application_id` stamped on creation and expected on open.
    pub application_id: i32,
    /// `PRAGMA user_version`: the schema version this build writes and reads.
    pub version: i64,
    /// Creates the schema of `version` in an empty database.
    pub schema: &'static str,
    /// The schema unstamped databases of earlier builds have; only an exact match is adopted.
    pub legacy_schema: &'static str,
    /// Brings an adopted legacy database to `version` (run before stamping; may be empty).
    pub upgrade_legacy: &'static str,
    /// Upgrades of stamped files: `upgrades[i]` takes a file from version `i + 1` to `i + 2`.
    /// A read-write open runs the steps a file needs in one transaction with its new stamp;
    /// a version with no step up to `version` is refused.
    pub upgrades: &'static [&'static str],
}

/// Whether a connection may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Create the file if missing; adopt (upgrade and stamp) a legacy database.
    ReadWrite,
    /// `SQLITE_OPEN_READ_ONLY`: never create, upgrade or stamp anything.
    ReadOnly,
}

/// An open Guild database.
#[derive(Debug)]
pub struct Opened {
    /// The connection (busy timeout set).
    pub conn: Connection,
    /// An unstamped database of an earlier build, opened read-only and left as it was: it has
    /// [`DbSpec::legacy_schema`], not the current one.
    pub legacy: bool,
    /// An unstamped database of an earlier build that this read-write open just upgraded and
    /// stamped.
    pub adopted: bool,
    /// The schema version of the file as opened: [`DbSpec::version`] after a read-write open;
    /// an earlier one when a read-only open found an older file (0: an unstamped one).
    pub version: i64,
}

/// Why a Guild database file was refused or could not be opened.
#[derive(Debug, Error)]
pub enum DbFileError {
    /// The file exists and holds 0 bytes.
    #[error(
        "the {what} {} is an empty file (0 bytes), not a Guild database: if it held data, \
         restore it from a backup; to start a new, empty one, delete the file",
        path.display()
    )]
    Empty {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A read-only open of a file that does not exist.
    #[error(
        "there is no {what} at {} yet: the first host that runs with this data_dir creates it",
        path.display()
    )]
    Missing {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// The file is not a SQLite database at all.
    #[error(
        "the {what} {} is not a SQLite database ({source}): restore it from a backup or move \
         it away",
        path.display()
    )]
    NotSqlite {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// A SQLite database that is not this Guild store.
    #[error(
        "the {what} {} is a SQLite database that Guild did not create ({reason}): Guild never \
         adopts another database; move the file away or point [host] data_dir at another folder",
        path.display()
    )]
    Foreign {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What gave it away.
        reason: String,
    },
    /// A Guild database with a schema version this build does not read.
    #[error(
        "the {what} {} has schema version {found}; this build reads version {supported}: use \
         the Guild release that wrote it",
        path.display()
    )]
    UnsupportedSchema {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// `PRAGMA user_version` found.
        found: i64,
        /// The version this build reads.
        supported: i64,
    },
    /// The disk holding the file is full (or the user's quota is used up): SQLite could not
    /// create or grow the database, its write-ahead log or its shared-memory index.
    #[error(
        "failed to {op} the {what} {}: the disk is full ({}; {cause}): free space on that \
         disk, or point [host] data_dir at another one",
        path.display(),
        crate::space::describe(*available)
    )]
    DiskFull {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// Bytes available to this user on that filesystem, when known.
        available: Option<u64>,
        /// What SQLite or the system said.
        cause: String,
    },
    /// A SQLite step failed.
    #[error("failed to {op} the {what} {}: {source}", path.display())]
    Sqlite {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// A filesystem step failed.
    #[error("failed to {op} the {what} {}: {source}", path.display())]
    Io {
        /// Which store.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl DbSpec {
    fn sqlite(
        &self,
        path: &Path,
        op: &'static str,
    ) -> impl FnOnce(rusqlite::Error) -> DbFileError + use<> {
        let (what, path) = (self.what, path.to_path_buf());
        move |source| {
            if source.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) {
                DbFileError::NotSqlite { what, path, source }
            } else {
                DbFileError::from_sqlite(what, path, op, source)
            }
        }
    }

    fn io(
        &self,
        path: &Path,
        op: &'static str,
    ) -> impl FnOnce(std::io::Error) -> DbFileError + use<> {
        let (what, path) = (self.what, path.to_path_buf());
        move |source| match crate::space::io_full(&path, &source) {
            Some(available) => DbFileError::DiskFull {
                what,
                path,
                op,
                available,
                cause: source.to_string(),
            },
            None => DbFileError::Io {
                what,
                path,
                op,
                source,
            },
        }
    }
}

impl DbFileError {
    /// A failed SQLite step on the `what` at `path`: [`DbFileError::DiskFull`] when it means
    /// the disk is full (see [`crate::space`]), else [`DbFileError::Sqlite`].
    pub fn from_sqlite(
        what: &'static str,
        path: PathBuf,
        op: &'static str,
        source: rusqlite::Error,
    ) -> DbFileError {
        match crate::space::sqlite_full(&path, &source) {
            Some(available) => DbFileError::DiskFull {
                what,
                path,
                op,
                available,
                cause: source.to_string(),
            },
            None => DbFileError::Sqlite {
                what,
                path,
                op,
                source,
            },
        }
    }
}

/// Opens the database at `path`, creating it (read-write only) when no file is there.
pub fn open(path: &Path, spec: &DbSpec, access: Access) -> Result<Opened, DbFileError> {
    let meta = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match access {
            Access::ReadOnly => {
                return Err(DbFileError::Missing {
                    what: spec.what,
                    path: path.to_path_buf(),
                });
            }
            Access::ReadWrite => {
                create(path, spec)?;
                std::fs::metadata(path).map_err(spec.io(path, "read the metadata of"))?
            }
        },
        other => other.map_err(spec.io(path, "read the metadata of"))?,
    };
    if meta.len() == 0 {
        return Err(DbFileError::Empty {
            what: spec.what,
            path: path.to_path_buf(),
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI
        | match access {
            Access::ReadWrite => OpenFlags::SQLITE_OPEN_READ_WRITE,
            Access::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY,
        };
    let mut conn = match access {
        Access::ReadOnly if !wal_of(path).exists() => {
            // No write-ahead log: no process has the database open, and nothing written is
            // waiting in a log. Reading it as immutable takes no lock and creates no `-wal`
            // or `-shm` file beside it, so a read-only command leaves the folder as it was
            // (and works on a read-only copy). Otherwise SQLite must read the log: it may
            // create the shared-memory index, never change the database.
            Connection::open_with_flags(immutable_uri(path), flags)
        }
        _ => Connection::open_with_flags(path, flags),
    }
    .map_err(spec.sqlite(path, "open"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(spec.sqlite(path, "set the busy timeout of"))?;
    let found = recognise(&conn, path, spec)?;
    let legacy = found == Found::Legacy;
    if legacy && access == Access::ReadWrite {
        adopt(&mut conn, path, spec)?;
        tracing::info!(file = %path.display(), "stamped a {} written by an earlier build", spec.what);
        return Ok(Opened {
            conn,
            legacy: false,
            adopted: true,
            version: spec.version,
        });
    }
    let version = match found {
        Found::Legacy => 0,
        Found::Current => spec.version,
        Found::Older(v) if access == Access::ReadOnly => v,
        Found::Older(v) => {
            upgrade(&mut conn, path, spec)?;
            tracing::info!(file = %path.display(), from = v, to = spec.version, "upgraded a {}", spec.what);
            spec.version
        }
    };
    Ok(Opened {
        conn,
        legacy,
        adopted: false,
        version,
    })
}

/// What [`recognise`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// A file of this build's version.
    Current,
    /// A stamped file of an earlier version that [`DbSpec::upgrades`] can bring up to date.
    Older(i64),
    /// An unstamped file of an earlier build.
    Legacy,
}

/// Runs the upgrade steps of a stamped file of an earlier version and stamps the new one, in
/// one transaction, re-checking the version inside it (another process may have upgraded it).
fn upgrade(conn: &mut Connection, path: &Path, spec: &DbSpec) -> Result<(), DbFileError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(spec.sqlite(path, "start upgrading"))?;
    if let Found::Older(from) = recognise(&tx, path, spec)? {
        for step in &spec.upgrades[step_index(from)..step_index(spec.version)] {
            tx.execute_batch(step)
                .map_err(spec.sqlite(path, "upgrade"))?;
        }
        stamp(&tx, path, spec)?;
    }
    tx.commit()
        .map_err(spec.sqlite(path, "commit the upgrade of"))
}

/// Index in [`DbSpec::upgrades`] of the step from `version` (at least 1) to the next.
fn step_index(version: i64) -> usize {
    usize::try_from(version - 1).unwrap_or(0)
}

/// The write-ahead log SQLite keeps beside a database in WAL mode.
fn wal_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// `file:PATH?immutable=1`, with the characters a URI path cannot hold escaped.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// A new in-memory database with the schema (tests, dry runs).
pub fn open_in_memory(spec: &DbSpec) -> Result<Connection, DbFileError> {
    let path = Path::new(":memory:");
    let mut conn = Connection::open_in_memory().map_err(spec.sqlite(path, "open"))?;
    init(&mut conn, path, spec)?;
    Ok(conn)
}

/// Writes the schema and both marks in one transaction.
fn init(conn: &mut Connection, path: &Path, spec: &DbSpec) -> Result<(), DbFileError> {
    let tx = conn
        .transaction()
        .map_err(spec.sqlite(path, "start creating"))?;
    tx.execute_batch(spec.schema)
        .map_err(spec.sqlite(path, "create the schema of"))?;
    stamp(&tx, path, spec)?;
    tx.commit()
        .map_err(spec.sqlite(path, "commit the schema of"))
}

fn stamp(conn: &Connection, path: &Path, spec: &DbSpec) -> Result<(), DbFileError> {
    conn.pragma_update(None, "application_id", spec.application_id)
        .map_err(spec.sqlite(path, "write the application id of"))?;
    conn.pragma_update(None, "user_version", spec.version)
        .map_err(spec.sqlite(path, "write the schema version of"))
}

/// Builds the database in a temporary file beside `path`, then links it into place. If
/// another process created `path` meanwhile, its file wins (it was built the same way).
fn create(path: &Path, spec: &DbSpec) -> Result<(), DbFileError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.new-{}", uuid::Uuid::now_v7().simple()));
    let built = (|| {
        let mut conn = Connection::open(&tmp).map_err(spec.sqlite(&tmp, "create"))?;
        init(&mut conn, &tmp, spec)?;
        conn.close()
            .map_err(|(_, e)| spec.sqlite(&tmp, "close")(e))?;
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(spec.io(&tmp, "fsync"))?;
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(spec.io(path, "create")(e)),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    built?;
    // The new directory entry must survive a power loss too.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Checks the marks.
fn recognise(conn: &Connection, path: &Path, spec: &DbSpec) -> Result<Found, DbFileError> {
    let app: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(spec.sqlite(path, "read the application id of"))?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(spec.sqlite(path, "read the schema version of"))?;
    if app == spec.application_id {
        let upgradable =
            (1..spec.version).contains(&version) && step_index(spec.version) <= spec.upgrades.len();
        return match version {
            v if v == spec.version => Ok(Found::Current),
            v if upgradable => Ok(Found::Older(v)),
            _ => Err(DbFileError::UnsupportedSchema {
                what: spec.what,
                path: path.to_path_buf(),
                found: version,
                supported: spec.version,
            }),
        };
    }
    let foreign = |reason: String| DbFileError::Foreign {
        what: spec.what,
        path: path.to_path_buf(),
        reason,
    };
    if app != 0 {
        return Err(foreign(format!(
            "its application_id is {app:#010x}, a {} has {:#010x}",
            spec.what, spec.application_id
        )));
    }
    let found = schema_of(conn).map_err(spec.sqlite(path, "read the schema of"))?;
    let expected = {
        let mem = Connection::open_in_memory().map_err(spec.sqlite(path, "check"))?;
        mem.execute_batch(spec.legacy_schema)
            .map_err(spec.sqlite(path, "check"))?;
        schema_of(&mem).map_err(spec.sqlite(path, "check"))?
    };
    if found != expected {
        let names: Vec<&str> = found
            .iter()
            .filter(|o| o.0 == "table")
            .map(|o| o.1.as_str())
            .collect();
        return Err(foreign(if names.is_empty() {
            "it has no Guild mark and no tables".to_owned()
        } else {
            format!(
                "it has no Guild mark and its tables ({}) are not a {}'s",
                names.join(", "),
                spec.what
            )
        }));
    }
    Ok(Found::Legacy)
}

/// Every schema object but SQLite's own, sorted: (type, name, table, sql with each run of
/// whitespace made one space, so that indentation does not matter but every token does).
fn schema_of(conn: &Connection) -> rusqlite::Result<Vec<(String, String, String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name, sql FROM sqlite_master \
         WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name",
    )?;
    let rows = stmt.query_map([], |r| {
        let sql: Option<String> = r.get(3)?;
        let sql = sql
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, sql))
    })?;
    rows.collect()
}

/// Upgrades and stamps a legacy database, re-checking inside the write transaction (another
/// process may have stamped it first).
fn adopt(conn: &mut Connection, path: &Path, spec: &DbSpec) -> Result<(), DbFileError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(spec.sqlite(path, "start stamping"))?;
    if recognise(&tx, path, spec)? == Found::Legacy {
        tx.execute_batch(spec.upgrade_legacy)
            .map_err(spec.sqlite(path, "upgrade"))?;
        stamp(&tx, path, spec)?;
    }
    tx.commit()
        .map_err(spec.sqlite(path, "commit the stamp of"))
}
