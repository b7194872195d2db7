//! What a tree is anchored to (docs/delegation.md#the-root-anchor): the top task's objective (its
//! description), completion criteria and constraints. The caller of a top task may give the
//! criteria and constraints ([`TaskAnchor`]); without them the anchor is the description with
//! one default criterion and no constraints. Either way it is checked, normalized and hashed by
//! `guild_delegate::RootAnchor`, and read-only for every descendant.

use guild_delegate::anchor::MAX_OBJECTIVE;
use guild_delegate::{AnchorError, RootAnchor};
use serde::{Deserialize, Serialize};

/// The completion criterion of a root anchor whose caller gave none.
pub const DEFAULT_CRITERION: &str = "the report answers the task's description";

/// The caller's part of a top task's root anchor: how the task knows it is done, and what every
/// task of its tree must respect (a child's brief that drops one is refused). Empty
/// `completion_criteria` means [`DEFAULT_CRITERION`]. At most 32 of each, 1,000 characters
/// each (`guild_delegate::anchor`); an error names the field and the item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskAnchor {
    /// How the top task knows it is done.
    pub completion_criteria: Vec<String>,
    /// What every task of the tree must respect; children may add, never drop.
    pub constraints: Vec<String>,
}

impl TaskAnchor {
    /// Whether the caller gave nothing (the default anchor applies).
    pub fn is_empty(&self) -> bool {
        self.completion_criteria.is_empty() && self.constraints.is_empty()
    }
}

/// The root anchor of a tree whose top task got `description`, anchored by `caller` when
/// given: the description (its first [`MAX_OBJECTIVE`] characters) is the objective.
pub(crate) fn root_anchor(
    description: &str,
    caller: Option<&TaskAnchor>,
) -> Result<RootAnchor, AnchorError> {
    let objective: String = description.trim().chars().take(MAX_OBJECTIVE).collect();
    let default = [DEFAULT_CRITERION.to_owned()];
    let (criteria, constraints) = match caller {
        Some(a) if !a.completion_criteria.is_empty() => {
            (&a.completion_criteria[..], &a.constraints[..])
        }
        Some(a) => (&default[..], &a.constraints[..]),
        None => (&default[..], &[][..]),
    };
    RootAnchor::new(&objective, criteria, constraints)
}

/// Whether `anchor` is the default one (no caller's criteria or constraints): `guild tasks
/// tree` shows the caller's only.
pub(crate) fn is_default(anchor: &RootAnchor) -> bool {
    anchor.constraints.is_empty() && anchor.completion_criteria == [DEFAULT_CRITERION]
}
