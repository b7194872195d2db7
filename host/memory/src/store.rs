//! [`MemoryStore`]: where memory documents and every accepted version of them are kept. The
//! host's default is SQLite in its data dir (in `guild-host`); another backend implements the
//! same trait and passes the same [`conformance`] checks.
//!
//! Versions are append-only: an update or a restore adds a version, nothing is edited or
//! deleted, so any version can be shown and restored. An append names the version it was
//! validated against (`parent`); if another writer got in first the append is refused with
//! [`MemoryStoreError::Conflict`] and the caller validates again against the new head.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::DocId;
use guild_store::DbFileError;

/// What is known about one stored version, without its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// 1 for the first version of a document, then +1 per accepted write.
    pub version: u64,
    /// Who wrote it: `supervisor`, or the plugin as `name@version`.
    pub actor: String,
    /// When it was stored, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Lowercase hex sha256 of the text's UTF-8 bytes.
    pub sha256: String,
    /// Characters (what the limits count).
    pub chars: usize,
    /// UTF-8 bytes.
    pub bytes: usize,
    /// The version whose text this one restored, if it is a restore.
    pub restored_from: Option<u64>,
}

/// One stored version with its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredVersion {
    /// Its metadata.
    #[serde(flatten)]
    pub info: VersionInfo,
    /// The document, exactly as stored.
    pub text: String,
}

impl StoredVersion {
    /// A version read back from a store, its text checked against its recorded sha256
    /// ([`MemoryStoreError::Corrupt`] when they differ): what every backend returns.
    pub fn checked(doc: &DocId, info: VersionInfo, text: String) -> Result<Self, MemoryStoreError> {
        let again = NewVersion {
            text,
            actor: info.actor.clone(),
            restored_from: info.restored_from,
        };
        if again.info(info.version, info.at_ms).sha256 != info.sha256 {
            return Err(MemoryStoreError::Corrupt {
                doc: doc.to_string(),
                version: info.version,
                reason: "its text does not match its recorded sha256".into(),
            });
        }
        Ok(Self {
            info,
            text: again.text,
        })
    }
}

/// A version to append (the store adds number, time, hash and sizes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVersion {
    /// The validated document.
    pub text: String,
    /// Who writes it.
    pub actor: String,
    /// Set when this restores an earlier version.
    pub restored_from: Option<u64>,
}

impl NewVersion {
    /// The metadata of this text stored as `version` at `at_ms`.
    pub fn info(&self, version: u64, at_ms: u64) -> VersionInfo {
        VersionInfo {
            version,
            actor: self.actor.clone(),
            at_ms,
            sha256: hex::encode(Sha256::digest(self.text.as_bytes())),
            chars: self.text.chars().count(),
            bytes: self.text.len(),
            restored_from: self.restored_from,
        }
    }
}

/// Why a memory store operation failed.
#[derive(Debug, Error)]
pub enum MemoryStoreError {
    /// Another writer stored a version after this update was validated.
    #[error(
        "memory {doc} changed while this update was validated (now at version {found}, \
         validated against {expected}): read it again and send the full document"
    )]
    Conflict {
        /// The document.
        doc: String,
        /// The version the update was validated against (0: none).
        expected: u64,
        /// The version stored now.
        found: u64,
    },
    /// The database file is missing (read-only open), empty, not SQLite or not a memory store.
    #[error(transparent)]
    File(#[from] DbFileError),
    /// A read or write failed.
    #[error("memory store: failed to {op}: {source}")]
    Sqlite {
        /// What the store was doing.
        op: &'static str,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// A read or write of another backend (PostgreSQL) failed.
    #[error("memory store ({backend}): failed to {op}: {reason}")]
    Backend {
        /// Which backend.
        backend: &'static str,
        /// What the store was doing.
        op: &'static str,
        /// The backend's error, in full.
        reason: String,
    },
    /// A stored version that cannot be read back.
    #[error("memory {doc} version {version} is unreadable: {reason}")]
    Corrupt {
        /// The document.
        doc: String,
        /// The version.
        version: u64,
        /// What is wrong.
        reason: String,
    },
}

/// The memory store's contract. Every method blocks; async callers use `spawn_blocking`.
pub trait MemoryStore: Send + Sync {
    /// The newest version of `doc`, if it has any.
    fn current(&self, doc: &DocId) -> Result<Option<StoredVersion>, MemoryStoreError>;
    /// One version of `doc`.
    fn version(&self, doc: &DocId, version: u64)
    -> Result<Option<StoredVersion>, MemoryStoreError>;
    /// The `limit` newest versions of `doc`, newest first, without their texts.
    fn history(&self, doc: &DocId, limit: usize) -> Result<Vec<VersionInfo>, MemoryStoreError>;
    /// Appends `new` as the version after `parent` (`None`: the document has no version yet),
    /// atomically and durably; [`MemoryStoreError::Conflict`] when the head is not `parent`.
    fn append(
        &self,
        doc: &DocId,
        parent: Option<u64>,
        new: NewVersion,
    ) -> Result<VersionInfo, MemoryStoreError>;
}

/// The behaviour every [`MemoryStore`] must show, as one function a backend's tests call with
/// a way to make a new, empty store. It panics, naming the rule, at the first deviation.
pub mod conformance {
    use super::{MemoryStore, MemoryStoreError, NewVersion};
    use crate::{DocId, Scope};

    fn new(text: &str, actor: &str) -> NewVersion {
        NewVersion {
            text: text.to_owned(),
            actor: actor.to_owned(),
            restored_from: None,
        }
    }

    /// Runs every check on fresh stores from `make`.
    pub fn run(make: &dyn Fn() -> Box<dyn MemoryStore>) {
        empty_document(make());
        append_and_read_back(make());
        conflicts_change_nothing(make());
        history_and_versions(make());
        documents_are_separate(make());
    }

    fn empty_document(store: Box<dyn MemoryStore>) {
        let doc = DocId::new(Scope::Team, "acme");
        assert!(
            store.current(&doc).expect("store call").is_none(),
            "a new store has no document"
        );
        assert!(
            store.history(&doc, 10).expect("store call").is_empty(),
            "a new store has no history"
        );
        assert!(
            store.version(&doc, 1).expect("store call").is_none(),
            "a new store has no version 1"
        );
    }

    fn append_and_read_back(store: Box<dyn MemoryStore>) {
        let doc = DocId::new(Scope::Private, "ana");
        let text = "## Notes\n- 2026-01-02: café ☕ opens at 8\n";
        let info = store
            .append(&doc, None, new(text, "supervisor"))
            .expect("store call");
        assert_eq!(info.version, 1, "the first version is 1");
        assert_eq!(info.actor, "supervisor", "the actor is kept");
        assert_eq!(info.chars, text.chars().count(), "chars counts characters");
        assert_eq!(info.bytes, text.len(), "bytes counts UTF-8 bytes");
        assert_eq!(
            info.sha256,
            new(text, "x").info(1, 0).sha256,
            "sha256 of the text"
        );
        let current = store.current(&doc).expect("store call").expect("stored");
        assert_eq!(
            current.text.as_bytes(),
            text.as_bytes(),
            "text is byte-identical"
        );
        assert_eq!(current.info, info, "current returns what append returned");
        let second = store
            .append(&doc, Some(1), new("## Notes\n", "kb@0.1.0"))
            .expect("store call");
        assert_eq!(second.version, 2, "versions count up");
        assert!(second.at_ms >= info.at_ms, "time does not go backwards");
    }

    fn conflicts_change_nothing(store: Box<dyn MemoryStore>) {
        let doc = DocId::new(Scope::Team, "acme");
        store
            .append(&doc, None, new("## A\n", "supervisor"))
            .expect("store call");
        for parent in [None, Some(0), Some(2), Some(7)] {
            match store.append(&doc, parent, new("## B\n", "supervisor")) {
                Err(MemoryStoreError::Conflict {
                    expected, found, ..
                }) => {
                    assert_eq!(expected, parent.unwrap_or(0), "conflict names the parent");
                    assert_eq!(found, 1, "conflict names the head");
                }
                other => panic!("append on parent {parent:?} must conflict, got {other:?}"),
            }
        }
        let current = store.current(&doc).expect("store call").expect("stored");
        assert_eq!(current.text, "## A\n", "a conflict stores nothing");
        assert_eq!(
            store.history(&doc, 10).expect("store call").len(),
            1,
            "nor adds history"
        );
    }

    fn history_and_versions(store: Box<dyn MemoryStore>) {
        let doc = DocId::new(Scope::Team, "acme");
        for i in 1..=5u64 {
            let parent = (i > 1).then(|| i - 1);
            store
                .append(&doc, parent, new(&format!("## V{i}\n"), "supervisor"))
                .expect("store call");
        }
        let history = store.history(&doc, 3).expect("store call");
        let numbers: Vec<u64> = history.iter().map(|v| v.version).collect();
        assert_eq!(numbers, [5, 4, 3], "history is newest first, limited");
        let v2 = store
            .version(&doc, 2)
            .expect("store call")
            .expect("version 2 kept");
        assert_eq!(v2.text, "## V2\n", "every version keeps its text");
        let restore = NewVersion {
            text: v2.text.clone(),
            actor: "supervisor".into(),
            restored_from: Some(2),
        };
        let info = store.append(&doc, Some(5), restore).expect("store call");
        assert_eq!(info.version, 6, "a restore is a new version");
        assert_eq!(info.restored_from, Some(2), "and says what it restored");
        assert_eq!(info.sha256, v2.info.sha256, "with the restored text");
        assert!(
            store.version(&doc, 7).expect("store call").is_none(),
            "no version 7 yet"
        );
    }

    fn documents_are_separate(store: Box<dyn MemoryStore>) {
        let team = DocId::new(Scope::Team, "ana");
        let private = DocId::new(Scope::Private, "ana");
        let other = DocId::new(Scope::Team, "beta");
        store
            .append(&team, None, new("## Team\n", "supervisor"))
            .expect("store call");
        store
            .append(&private, None, new("## Mine\n", "supervisor"))
            .expect("store call");
        assert_eq!(
            store
                .current(&team)
                .expect("store call")
                .expect("store call")
                .text,
            "## Team\n"
        );
        assert_eq!(
            store
                .current(&private)
                .expect("store call")
                .expect("store call")
                .text,
            "## Mine\n"
        );
        assert!(
            store.current(&other).expect("store call").is_none(),
            "workspaces are separate"
        );
        store
            .append(&other, None, new("## B\n", "supervisor"))
            .expect("store call");
        assert_eq!(
            store.history(&team, 10).expect("store call").len(),
            1,
            "one document's versions never show in another's history"
        );
    }
}
