//! One ledger row ([`Entry`]), its canonical encoding and hash, and the clock.
//!
//! The hash of an entry is sha256 over a versioned, length-prefixed encoding of every field
//! (sequence included, so a moved entry no longer matches) followed by the previous entry's
//! hash. Length prefixes make the encoding unambiguous: `("ab", "c")` and `("a", "bc")` differ.
//!
//! An entry of a delegated task also names its chain (root task … task,
//! docs/delegation.md#receipts): such an entry is hashed under encoding v2, which adds the chain
//! before the previous hash. An entry without a chain is hashed under v1 exactly as before, so
//! ledgers written before chains existed still verify.

use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// `prev_hash` of the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Domain separation: bump when the encoding changes.
const ENCODING: &[u8] = b"guild-ledger-entry-v1";

/// The encoding of an entry that names a chain (v1's fields, then the chain).
const ENCODING_CHAIN: &[u8] = b"guild-ledger-entry-v2";

/// Separator of the task ids in [`Entry::chain`].
pub(crate) const CHAIN_SEPARATOR: char = ' ';

/// One row of the `entries` table, as stored. Text fields that do not apply to an entry kind
/// are empty strings (required columns) or `None` (optional ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Position in the chain, from 1.
    pub seq: u64,
    /// `intent`, `outcome`, `resolution` or `audit`.
    pub kind: String,
    /// The receipt this entry is about (the intent's id); for audit entries, their own id.
    pub receipt_id: String,
    /// The task of the call (empty for audit entries).
    pub task_id: String,
    /// The specialist that made the call.
    pub route: String,
    /// `connector@version` (for audit entries, the plugin it is about).
    pub plugin: String,
    /// `connector.tool`.
    pub tool: String,
    /// Receipt type from the tool spec.
    pub receipt_type: String,
    /// The receipt's operation; for audit entries, the audit kind.
    pub operation: String,
    /// `success|pending|failed|unknown`; empty for audit entries.
    pub status: String,
    /// Id in the external system.
    pub external_id: Option<String>,
    /// Where the effect can be checked.
    pub verifiable_url: Option<String>,
    /// Short preview.
    pub preview: Option<String>,
    /// Verbatim error (failed only).
    pub error: Option<String>,
    /// When it was written (RFC 3339, UTC).
    pub time: String,
    /// Hex sha256 of the call's input.
    pub input_sha256: String,
    /// The call's idempotency key.
    pub idempotency_key: Option<String>,
    /// Audit detail.
    pub detail: Option<String>,
    /// For a task in a delegation tree: the task ids from the root to this entry's task,
    /// separated by [`CHAIN_SEPARATOR`]; `None` for a top-level task and for audit entries.
    pub chain: Option<String>,
    /// The previous entry's hash ([`GENESIS`] for the first).
    pub prev_hash: String,
    /// This entry's hash ([`Entry::compute_hash`]).
    pub hash: String,
}

/// Column list in the order [`Entry::read`] reads it.
pub(crate) const COLUMNS: &str = "seq, kind, receipt_id, task_id, route, plugin, tool, \
     receipt_type, operation, status, external_id, verifiable_url, preview, error, time, \
     input_sha256, idempotency_key, detail, prev_hash, hash, chain";

impl Entry {
    /// Reads an entry selected with [`COLUMNS`], starting at column `offset`.
    pub(crate) fn read(row: &rusqlite::Row<'_>, offset: usize) -> rusqlite::Result<Entry> {
        let seq: i64 = row.get(offset)?;
        let s = |i: usize| row.get::<_, String>(offset + i);
        let o = |i: usize| row.get::<_, Option<String>>(offset + i);
        Ok(Entry {
            // Sequences start at 1; a negative one can only come from tampering and will not
            // match its hash.
            seq: u64::try_from(seq).unwrap_or(0),
            kind: s(1)?,
            receipt_id: s(2)?,
            task_id: s(3)?,
            route: s(4)?,
            plugin: s(5)?,
            tool: s(6)?,
            receipt_type: s(7)?,
            operation: s(8)?,
            status: s(9)?,
            external_id: o(10)?,
            verifiable_url: o(11)?,
            preview: o(12)?,
            error: o(13)?,
            time: s(14)?,
            input_sha256: s(15)?,
            idempotency_key: o(16)?,
            detail: o(17)?,
            prev_hash: s(18)?,
            hash: s(19)?,
            chain: o(20)?,
        })
    }

    /// The hash this entry must carry, given its fields and `prev_hash`.
    pub fn compute_hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(match self.chain {
            None => ENCODING,
            Some(_) => ENCODING_CHAIN,
        });
        h.update(self.seq.to_be_bytes());
        for field in [
            &self.kind,
            &self.receipt_id,
            &self.task_id,
            &self.route,
            &self.plugin,
            &self.tool,
            &self.receipt_type,
            &self.operation,
            &self.status,
        ] {
            put(&mut h, Some(field));
        }
        for field in [
            &self.external_id,
            &self.verifiable_url,
            &self.preview,
            &self.error,
        ] {
            put(&mut h, field.as_ref());
        }
        put(&mut h, Some(&self.time));
        put(&mut h, Some(&self.input_sha256));
        put(&mut h, self.idempotency_key.as_ref());
        put(&mut h, self.detail.as_ref());
        if let Some(chain) = &self.chain {
            put(&mut h, Some(chain));
        }
        put(&mut h, Some(&self.prev_hash));
        hex::encode(h.finalize())
    }
}

/// Absent and empty differ: a tag byte, then the length, then the bytes.
fn put(h: &mut Sha256, field: Option<&String>) {
    match field {
        None => h.update([0u8]),
        Some(s) => {
            h.update([1u8]);
            h.update((s.len() as u64).to_be_bytes());
            h.update(s.as_bytes());
        }
    }
}

/// Now, as RFC 3339 UTC with milliseconds (`2026-05-01T12:34:56.789Z`).
pub(crate) fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since.as_secs(), since.subsec_millis())
}

/// Formats seconds since the Unix epoch (UTC) as RFC 3339 with milliseconds.
pub(crate) fn rfc3339(secs: u64, millis: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = guild_core::calendar::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// The longest prefix of `s` with at most `max` characters (never splits a character).
pub(crate) fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(rfc3339(1_700_000_000, 999), "2023-11-14T22:13:20.999Z");
        assert_eq!(rfc3339(4_107_542_399, 0), "2100-02-28T23:59:59.000Z");
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("ab", 5), "ab");
        assert_eq!(truncate_chars("😀😀😀", 1), "😀");
    }

    #[test]
    fn encoding_is_unambiguous_and_covers_every_field() {
        let base = Entry {
            seq: 1,
            kind: "intent".into(),
            receipt_id: "r".into(),
            task_id: "ab".into(),
            route: "c".into(),
            plugin: String::new(),
            tool: String::new(),
            receipt_type: String::new(),
            operation: String::new(),
            status: "unknown".into(),
            external_id: None,
            verifiable_url: None,
            preview: None,
            error: None,
            time: "t".into(),
            input_sha256: String::new(),
            idempotency_key: None,
            detail: None,
            chain: None,
            prev_hash: GENESIS.into(),
            hash: String::new(),
        };
        let h = base.compute_hash();
        let shifted = Entry {
            task_id: "a".into(),
            route: "bc".into(),
            ..base.clone()
        };
        assert_ne!(h, shifted.compute_hash());
        let empty_vs_none = Entry {
            external_id: Some(String::new()),
            ..base.clone()
        };
        assert_ne!(h, empty_vs_none.compute_hash());
        let moved = Entry {
            seq: 2,
            ..base.clone()
        };
        assert_ne!(h, moved.compute_hash());
        let relinked = Entry {
            prev_hash: "1".repeat(64),
            ..base.clone()
        };
        assert_ne!(h, relinked.compute_hash());
        let chained = Entry {
            chain: Some("root ab".into()),
            ..base.clone()
        };
        assert_ne!(h, chained.compute_hash());
        let empty_chain = Entry {
            chain: Some(String::new()),
            ..base.clone()
        };
        assert_ne!(h, empty_chain.compute_hash());
        assert_ne!(chained.compute_hash(), empty_chain.compute_hash());
        // The stored hash itself is not an input.
        let stored = Entry {
            hash: "x".into(),
            ..base
        };
        assert_eq!(h, stored.compute_hash());
    }
}
