//! The tree's limits: how deep it may grow, how many children one node may start, and the
//! tree-wide budget (tasks, tool calls, model tokens, wall time) that every node draws from. A
//! child never gets more than its parent has left; what a child spends is charged to it and to
//! every ancestor (the host walks the chain), so the root's remainder is the tree's.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One kind of budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    /// Tasks started (every node is one).
    Tasks,
    /// Tool calls.
    ToolCalls,
    /// Model tokens (prompt and completion).
    Tokens,
    /// Wall-clock milliseconds.
    WallMs,
}

impl BudgetKind {
    fn name(self) -> &'static str {
        match self {
            BudgetKind::Tasks => "tasks",
            BudgetKind::ToolCalls => "tool calls",
            BudgetKind::Tokens => "model tokens",
            BudgetKind::WallMs => "wall-clock ms",
        }
    }
}

/// Amounts of each budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Budget {
    /// Tasks.
    pub tasks: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Model tokens.
    pub tokens: u64,
    /// Wall-clock milliseconds.
    pub wall_ms: u64,
}

impl Budget {
    fn fields(&self) -> [(BudgetKind, u64); 4] {
        [
            (BudgetKind::Tasks, self.tasks),
            (BudgetKind::ToolCalls, self.tool_calls),
            (BudgetKind::Tokens, self.tokens),
            (BudgetKind::WallMs, self.wall_ms),
        ]
    }

    /// Each amount the smaller of the two.
    pub fn min(&self, other: &Budget) -> Budget {
        Budget {
            tasks: self.tasks.min(other.tasks),
            tool_calls: self.tool_calls.min(other.tool_calls),
            tokens: self.tokens.min(other.tokens),
            wall_ms: self.wall_ms.min(other.wall_ms),
        }
    }
}

/// The operator's settings for every tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeLimits {
    /// Deepest level a node may sit at (the root is level 0).
    pub max_depth: u32,
    /// Most children one node may start (a revised child uses no new slot).
    pub max_children: u32,
    /// The whole tree's budget.
    pub budget: Budget,
}

/// Where a node stands: its level, the children it started, what it has left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeState {
    /// Level in the tree (root 0).
    pub depth: u32,
    /// Children started so far.
    pub children: u32,
    /// What this node (and its subtree) may still spend.
    pub remaining: Budget,
}

/// A child that may not start, or a charge over budget.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TreeError {
    /// The child would sit below the deepest level allowed.
    #[error(
        "delegation refused: the tree may be {max} level(s) deep and this task is at level {depth}; do the work here or report back"
    )]
    TooDeep {
        /// The parent's level.
        depth: u32,
        /// The limit.
        max: u32,
    },
    /// The parent started as many children as allowed.
    #[error(
        "delegation refused: a task may start {max} children and this one has; revise a child instead, or report back"
    )]
    TooManyChildren {
        /// The limit.
        max: u32,
    },
    /// A budget is spent.
    #[error("tree budget exceeded: {} ({used} used of {limit})", .kind.name())]
    Exhausted {
        /// Which budget.
        kind: BudgetKind,
        /// What was left before the charge.
        limit: u64,
        /// What the charge asked for.
        used: u64,
    },
}

impl TreeLimits {
    /// The root's state: level 0, the whole budget less its own task.
    pub fn root(&self) -> Result<NodeState, TreeError> {
        let mut root = NodeState {
            depth: 0,
            children: 0,
            remaining: self.budget,
        };
        root.charge(&Budget {
            tasks: 1,
            ..Budget::default()
        })?;
        Ok(root)
    }
}

impl NodeState {
    /// Admits one more child of this node: checks depth and fan-out, counts the child, and
    /// charges its task. Returns the child's state, whose budget is what this node has left
    /// (at most `asked`, when the parent asks for less): never more.
    pub fn admit_child(
        &mut self,
        limits: &TreeLimits,
        asked: Option<Budget>,
    ) -> Result<NodeState, TreeError> {
        if self.depth + 1 > limits.max_depth {
            return Err(TreeError::TooDeep {
                depth: self.depth,
                max: limits.max_depth,
            });
        }
        if self.children >= limits.max_children {
            return Err(TreeError::TooManyChildren {
                max: limits.max_children,
            });
        }
        self.charge(&Budget {
            tasks: 1,
            ..Budget::default()
        })?;
        self.children += 1;
        let allowance = match asked {
            Some(asked) => self.remaining.min(&asked),
            None => self.remaining,
        };
        Ok(NodeState {
            depth: self.depth + 1,
            children: 0,
            remaining: allowance,
        })
    }

    /// Charges `spent` to this node; refused (and nothing charged) when any amount is over
    /// what is left.
    pub fn charge(&mut self, spent: &Budget) -> Result<(), TreeError> {
        for ((kind, left), (_, want)) in self.remaining.fields().into_iter().zip(spent.fields()) {
            if want > left {
                return Err(TreeError::Exhausted {
                    kind,
                    limit: left,
                    used: want,
                });
            }
        }
        let r = &mut self.remaining;
        r.tasks -= spent.tasks;
        r.tool_calls -= spent.tool_calls;
        r.tokens -= spent.tokens;
        r.wall_ms -= spent.wall_ms;
        Ok(())
    }
}
