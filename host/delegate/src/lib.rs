//! The recursive task protocol, as the host enforces it (docs/delegation.md): a specialist
//! granted `delegate` hands work to child specialists, and every level of the tree passes the
//! same gates.
//!
//! - [`anchor`]: the root anchor — the top task's objective, completion criteria and
//!   constraints, normalized and hashed, read-only for every descendant.
//! - [`brief`]: a child's [`TaskBrief`], checked against the anchor and its parent before the
//!   child exists; a malformed brief is refused with the rule it broke.
//! - [`tree`]: depth, children per node, and the tree-wide budget; a child never gets more
//!   than its parent has left.
//! - [`review`]: the parent's [`TaskReview`] of a child's validated report, checked against the
//!   decision matrix and the batch rules, and what the host does with an accepted one.
//!
//! Everything here is pure: the host keeps the tree's state (and persists it), calls these
//! checks at each step, and is the only one that acts on their answers.

pub mod anchor;
pub mod brief;
pub mod review;
mod text;
pub mod tree;

pub use anchor::{AnchorError, RootAnchor};
pub use brief::{BriefError, BriefParent, CheckedBrief, TaskBrief};
pub use review::{
    PendingCall, ReviewContext, ReviewEffect, ReviewError, TaskReview, check_dispatch,
    check_review, tool_allowed_during_review,
};
pub use tree::{Budget, BudgetKind, NodeState, TreeError, TreeLimits};

#[cfg(test)]
mod tests;
