//! The root anchor: what the whole tree is for. Set once, from the top task; normalized and
//! hashed so every descendant's brief is checked against the same text, and read-only from then
//! on (the host stores it with the tree and hands descendants only its hash and a copy).

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use thiserror::Error;

use crate::text::{check_field, check_list, normalize};

/// Longest objective, characters.
pub const MAX_OBJECTIVE: usize = 4_000;
/// Longest criterion or constraint, characters.
pub const MAX_ITEM: usize = 1_000;
/// Most completion criteria or constraints.
pub const MAX_ITEMS: usize = 32;

/// The top task's objective, completion criteria (at least one) and constraints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootAnchor {
    /// What the tree is for.
    pub objective: String,
    /// How the top task knows it is done; at least one.
    pub completion_criteria: Vec<String>,
    /// What every task in the tree must respect; children may add, never drop.
    pub constraints: Vec<String>,
}

/// A root anchor that cannot anchor a tree.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("root anchor refused: {0}")]
pub struct AnchorError(pub String);

impl RootAnchor {
    /// The anchor with every field trimmed and its constraints de-duplicated (as compared:
    /// [`crate::text::normalize`]), after checking it: a non-empty objective, 1 to
    /// [`MAX_ITEMS`] completion criteria, at most [`MAX_ITEMS`] constraints, each within its
    /// size.
    pub fn new(
        objective: &str,
        completion_criteria: &[String],
        constraints: &[String],
    ) -> Result<Self, AnchorError> {
        check_field("objective", objective, MAX_OBJECTIVE).map_err(AnchorError)?;
        check_list(
            "completion_criteria",
            completion_criteria,
            1,
            MAX_ITEMS,
            MAX_ITEM,
        )
        .map_err(AnchorError)?;
        check_list("constraints", constraints, 0, MAX_ITEMS, MAX_ITEM).map_err(AnchorError)?;
        Ok(Self {
            objective: objective.trim().to_owned(),
            completion_criteria: dedup(completion_criteria),
            constraints: dedup(constraints),
        })
    }

    /// The anchor's hash: sha256 over its normalized fields in a fixed framing, hex. Equal
    /// for anchors that differ only in spacing or case.
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        let mut field = |tag: &str, value: &str| {
            let value = normalize(value);
            h.update(tag.as_bytes());
            h.update((value.len() as u64).to_be_bytes());
            h.update(value.as_bytes());
        };
        field("objective", &self.objective);
        for c in &self.completion_criteria {
            field("criterion", c);
        }
        for c in &self.constraints {
            field("constraint", c);
        }
        hex::encode(h.finalize())
    }
}

/// Trimmed items, the first of each normalized text kept, in order.
pub(crate) fn dedup(items: &[String]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    items
        .iter()
        .filter(|i| seen.insert(normalize(i)))
        .map(|i| i.trim().to_owned())
        .collect()
}
