//! The host's delegation trees (docs/delegation.md): every task that started a child, and
//! every child, is a node here, with its parent and root ids, its level and budget
//! ([`NodeState`]), the review its parent owes its report, and the next task a review approved.
//!
//! The rules are `guild-delegate`'s; this module keeps the state they are applied to and is
//! the only place that changes it, under one lock. Charges walk the chain from a node to its
//! root: a charge any node of the chain cannot pay is refused and charges nothing. Every
//! change is written to the tree store ([`store`]) before the lock is released, so a restart
//! finds every tree as it was.

mod anchor;
mod render;
mod store;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use guild_core::types::Outcome;
use guild_delegate::{Budget, BudgetKind, NodeState, RootAnchor, TaskBrief, TreeError, TreeLimits};
use guild_validate::{CheckStatus, Decision};
use serde::{Deserialize, Serialize};

pub(crate) use anchor::root_anchor;
pub use anchor::{DEFAULT_CRITERION, TaskAnchor};
use store::TreeStore;
pub use store::{TREES_FILE, TreeStoreError};

/// Where a node's own task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// Its task is running (or waiting for its review to be answered).
    Running,
    /// Its task ended; the verdict says how its report fared.
    Finished,
    /// Its task was cancelled (itself or an ancestor).
    Cancelled,
    /// The host stopped while its task ran.
    Interrupted,
}

/// The review a parent gave one child's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRecord {
    /// The decision.
    pub decision: Decision,
    /// Why.
    pub reason: String,
}

/// A report waiting for its parent's review.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub(crate) child_id: String,
    pub(crate) verdict: CheckStatus,
    pub(crate) outcome: Outcome,
    pub(crate) suggestion: Option<TaskBrief>,
}

/// A next task a review approved: the parent's next `run` must be exactly it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Approved {
    /// The checked brief's hash.
    pub(crate) hash: String,
    /// REVISE_CHILD: the child that continues (same id, no new slot) and the feedback.
    pub(crate) continue_child: Option<(String, String)>,
}

/// One task of a tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Node {
    pub(crate) parent: Option<String>,
    pub(crate) root: String,
    pub(crate) specialist: String,
    pub(crate) state: NodeState,
    /// Its constraints (its brief's; the anchor's for the root).
    pub(crate) constraints: Vec<String>,
    /// Its checked brief (children only); its hash is `TaskBrief::hash`.
    pub(crate) brief: Option<TaskBrief>,
    pub(crate) children: Vec<String>,
    pub(crate) status: NodeStatus,
    pub(crate) verdict: Option<CheckStatus>,
    /// The review its parent gave its latest report.
    pub(crate) review: Option<ReviewRecord>,
    /// A child's report waiting for this node's review.
    pub(crate) pending: Option<Pending>,
    /// A next task this node's review approved and it has not run yet.
    pub(crate) approved: Option<Approved>,
    /// The summaries of its earlier reports, handed back when it is revised.
    pub(crate) history: Vec<String>,
    /// Where its next attempt's receipts start in the ledger: the sequence after its last
    /// receipt when its latest attempt ended (0 before any). A revised child's failed and
    /// pending receipts before it belong to earlier attempts and do not count against the
    /// current one (docs/delegation.md#revising-a-child).
    #[serde(default)]
    pub(crate) attempt_from: u64,
}

impl Node {
    /// A tree's root: the top task `specialist` runs, its anchor's constraints its own.
    pub(crate) fn root(
        task_id: &str,
        specialist: &str,
        state: NodeState,
        anchor: &RootAnchor,
    ) -> Self {
        Self::new(
            None,
            task_id.to_owned(),
            specialist,
            state,
            anchor.constraints.clone(),
            None,
        )
    }

    /// A child of `parent` in the tree of `root`, running its checked `brief`.
    pub(crate) fn child(parent: &str, root: String, brief: &TaskBrief, state: NodeState) -> Self {
        Self::new(
            Some(parent.to_owned()),
            root,
            &brief.specialist,
            state,
            brief.constraints.clone(),
            Some(brief.clone()),
        )
    }

    /// A running node that has done nothing yet.
    fn new(
        parent: Option<String>,
        root: String,
        specialist: &str,
        state: NodeState,
        constraints: Vec<String>,
        brief: Option<TaskBrief>,
    ) -> Self {
        Self {
            parent,
            root,
            specialist: specialist.to_owned(),
            state,
            constraints,
            brief,
            children: Vec::new(),
            status: NodeStatus::Running,
            verdict: None,
            review: None,
            pending: None,
            approved: None,
            history: Vec::new(),
            attempt_from: 0,
        }
    }
}

/// One node as `guild tasks tree` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct TreeNode {
    /// The node's task id.
    pub task_id: String,
    /// Its parent's, `None` for the root.
    pub parent: Option<String>,
    /// The specialist that ran it.
    pub specialist: String,
    /// Level (root 0).
    pub depth: u32,
    /// Where its task stands.
    pub status: NodeStatus,
    /// The verdict on its latest report.
    pub verdict: Option<CheckStatus>,
    /// Its parent's review of that report.
    pub review: Option<ReviewRecord>,
    /// A child's report waiting for this node's review.
    pub pending_review: Option<String>,
    /// What the node (and its subtree) may still spend.
    pub remaining: Budget,
}

/// A whole tree, root first, then depth first in the order children started.
#[derive(Debug, Clone, Serialize)]
pub struct TreeView {
    /// The root's task id.
    pub root: String,
    /// The root anchor's hash.
    pub anchor_hash: String,
    /// The root anchor's completion criteria.
    pub completion_criteria: Vec<String>,
    /// The root anchor's constraints: every brief in the tree keeps them.
    pub constraints: Vec<String>,
    /// Whether the top task's caller gave the criteria and constraints (otherwise they are the
    /// default: [`DEFAULT_CRITERION`], no constraints).
    pub anchored_by_caller: bool,
    /// Every node.
    pub nodes: Vec<TreeNode>,
}

#[derive(Default)]
pub(crate) struct ForestState {
    pub(crate) nodes: HashMap<String, Node>,
    pub(crate) anchors: HashMap<String, RootAnchor>,
    /// When each running child must end: its start plus the wall time its tree left it, never
    /// later than its parent's. Kept in this process only (a restart ends every run).
    pub(crate) deadlines: HashMap<String, Instant>,
    /// The latest run of each task running now, by task id: only that run may end its node
    /// (an attempt that an update replaced may be dropped after its successor started).
    runs: HashMap<String, u64>,
    /// The number the next run gets.
    next_run: u64,
}

/// Every tree of this host.
pub(crate) struct Forest {
    pub(crate) limits: TreeLimits,
    state: Mutex<ForestState>,
    /// Where the trees are kept (`None`: in memory only, for unit tests).
    store: Option<TreeStore>,
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Forest {
    /// The trees stored at `path` (created when missing), under `settings`.
    pub(crate) fn open(
        settings: &guild_core::settings::DelegateSettings,
        path: &std::path::Path,
    ) -> Result<Self, TreeStoreError> {
        let store = TreeStore::open(path)?;
        let state = store.load()?;
        let mut forest = Self::new(settings);
        forest.state = Mutex::new(state);
        forest.store = Some(store);
        Ok(forest)
    }

    /// Writes the tree `id` belongs to. A failed write is logged, naming the file: the task
    /// goes on, and the tree read after a restart is the last one written.
    pub(crate) fn save(&self, state: &ForestState, id: &str) {
        let (Some(store), Some(node)) = (&self.store, state.nodes.get(id)) else {
            return;
        };
        if let Err(e) = store.save(state, &node.root) {
            tracing::error!(root = %node.root, "delegation tree not saved: {e}");
        }
    }

    pub(crate) fn new(settings: &guild_core::settings::DelegateSettings) -> Self {
        let b = settings.budget;
        Self {
            limits: TreeLimits {
                max_depth: settings.max_depth,
                max_children: settings.max_children,
                budget: Budget {
                    tasks: b.tasks,
                    tool_calls: b.tool_calls,
                    tokens: b.tokens,
                    wall_ms: b.wall_ms,
                },
            },
            state: Mutex::new(ForestState::default()),
            store: None,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, ForestState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The tree that `task_id` belongs to, or `None` when it is in none.
    pub(crate) fn view(&self, task_id: &str) -> Option<TreeView> {
        self.lock().view(task_id)
    }

    /// The chain a receipt of `task_id` names (root first, the task last): empty for a task
    /// that is no tree's child (a top-level task, a root included).
    pub(crate) fn receipt_chain(&self, task_id: &str) -> Vec<String> {
        let state = self.lock();
        match state.nodes.get(task_id) {
            Some(node) if node.parent.is_some() => {
                let mut chain = state.chain(task_id);
                chain.reverse();
                chain
            }
            _ => Vec::new(),
        }
    }
}

/// The tree `task_id` belongs to, read from the tree store at `path` without writing anything
/// (`guild tasks tree`); `Ok(None)` when no tree holds it or there is no store yet. A node a
/// running host is still working on reads `running`.
pub fn read_tree(
    path: &std::path::Path,
    task_id: &str,
) -> Result<Option<TreeView>, TreeStoreError> {
    if !path.exists() {
        return Ok(None);
    }
    Ok(TreeStore::open_read_only(path)?.read()?.view(task_id))
}

impl ForestState {
    /// The tree that `task_id` belongs to, or `None` when it is in none.
    pub(crate) fn view(&self, task_id: &str) -> Option<TreeView> {
        let state = self;
        let root = state.nodes.get(task_id)?.root.clone();
        let anchor = state.anchors.get(&root)?;
        let mut nodes = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(id) = stack.pop() {
            let Some(n) = state.nodes.get(&id) else {
                continue;
            };
            nodes.push(TreeNode {
                task_id: id.clone(),
                parent: n.parent.clone(),
                specialist: n.specialist.clone(),
                depth: n.state.depth,
                status: n.status,
                verdict: n.verdict,
                review: n.review.clone(),
                pending_review: n.pending.as_ref().map(|p| p.child_id.clone()),
                remaining: n.state.remaining,
            });
            stack.extend(n.children.iter().rev().cloned());
        }
        Some(TreeView {
            root,
            anchor_hash: anchor.hash(),
            completion_criteria: anchor.completion_criteria.clone(),
            constraints: anchor.constraints.clone(),
            anchored_by_caller: !anchor::is_default(anchor),
            nodes,
        })
    }

    /// Makes `task_id` a tree's root anchored to `anchor`, its own task charged to the tree's
    /// budget. A task already in a tree keeps its node and its anchor (the anchor is read-only:
    /// a new attempt of the top task does not change it). `true` when planted.
    pub(crate) fn plant_root(
        &mut self,
        task_id: &str,
        specialist: &str,
        limits: &TreeLimits,
        anchor: RootAnchor,
    ) -> Result<bool, TreeError> {
        if self.nodes.contains_key(task_id) {
            return Ok(false);
        }
        let state = limits.root()?;
        let node = Node::root(task_id, specialist, state, &anchor);
        self.nodes.insert(task_id.to_owned(), node);
        self.anchors.insert(task_id.to_owned(), anchor);
        Ok(true)
    }

    /// Starts a run of `task_id`'s task and returns its number. A new attempt of a tree's top
    /// task (a background task restarted under its id by an update, or after a restart of the
    /// host) sets its node running again; what the tree spent stays spent. `true` when the
    /// node changed.
    pub(crate) fn begin_run(&mut self, task_id: &str) -> (u64, bool) {
        self.next_run += 1;
        let run = self.next_run;
        self.runs.insert(task_id.to_owned(), run);
        let reopened = match self.nodes.get_mut(task_id) {
            Some(n) if n.parent.is_none() && n.status != NodeStatus::Running => {
                n.status = NodeStatus::Running;
                true
            }
            _ => false,
        };
        (run, reopened)
    }

    /// Ends run `run` of `task_id`; `false` (and nothing changes) when a later run of the
    /// same task started since: the node is that run's to end.
    pub(crate) fn end_run(&mut self, task_id: &str, run: u64) -> bool {
        if self.runs.get(task_id) != Some(&run) {
            return false;
        }
        self.runs.remove(task_id);
        self.deadlines.remove(task_id);
        true
    }

    /// The ids from `id` up to its root, `id` first.
    pub(crate) fn chain(&self, id: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = Some(id.to_owned());
        while let Some(id) = at {
            at = self.nodes.get(&id).and_then(|n| n.parent.clone());
            out.push(id);
        }
        out
    }

    /// Charges `spent` to `id` and every ancestor; refused (nothing charged) when one of them
    /// cannot pay.
    pub(crate) fn charge(&mut self, id: &str, spent: &Budget) -> Result<(), TreeError> {
        let chain = self.chain(id);
        for at in &chain {
            if let Some(n) = self.nodes.get(at) {
                let mut trial = n.state;
                trial.charge(spent)?;
            }
        }
        for at in &chain {
            if let Some(n) = self.nodes.get_mut(at) {
                n.state.charge(spent)?;
            }
        }
        Ok(())
    }

    /// What the tree leaves `id` of `kind`: the least any node of its chain has left (a
    /// sibling's spending is charged to the ancestors, not to `id`).
    pub(crate) fn left(&self, id: &str, kind: BudgetKind) -> u64 {
        self.chain(id)
            .iter()
            .filter_map(|at| self.nodes.get(at))
            .map(|n| {
                let r = &n.state.remaining;
                match kind {
                    BudgetKind::Tasks => r.tasks,
                    BudgetKind::ToolCalls => r.tool_calls,
                    BudgetKind::Tokens => r.tokens,
                    BudgetKind::WallMs => r.wall_ms,
                }
            })
            .min()
            .unwrap_or(0)
    }

    /// Starts `child`'s clock at `now`: its deadline is what the tree leaves it of wall time,
    /// never later than its parent's own deadline. Returns the milliseconds it may run.
    pub(crate) fn start_clock(&mut self, parent: &str, child: &str, now: Instant) -> u64 {
        let left = self.left(child, BudgetKind::WallMs);
        let wall = allowance(left, self.deadlines.get(parent).copied(), now);
        self.deadlines
            .insert(child.to_owned(), now + Duration::from_millis(wall));
        wall
    }

    /// Charges what can be paid of `spent` to `id` and every ancestor (what was already spent
    /// cannot be refused: wall time, tokens of an answered call); past the budget it is 0.
    pub(crate) fn charge_spent(&mut self, id: &str, spent: &Budget) {
        for at in self.chain(id) {
            if let Some(n) = self.nodes.get_mut(&at) {
                let r = &mut n.state.remaining;
                r.tasks = r.tasks.saturating_sub(spent.tasks);
                r.tool_calls = r.tool_calls.saturating_sub(spent.tool_calls);
                r.tokens = r.tokens.saturating_sub(spent.tokens);
                r.wall_ms = r.wall_ms.saturating_sub(spent.wall_ms);
            }
        }
    }

    /// Admits a child of `parent`: depth and fan-out on the parent, its task charged to the
    /// parent and every ancestor. Returns the child's state.
    pub(crate) fn admit(
        &mut self,
        parent: &str,
        limits: &TreeLimits,
    ) -> Result<NodeState, TreeError> {
        let Some(node) = self.nodes.get(parent) else {
            return Err(TreeError::Exhausted {
                kind: BudgetKind::Tasks,
                limit: 0,
                used: 1,
            });
        };
        let mut trial = node.state;
        trial.admit_child(limits, None)?;
        // Every ancestor above the parent pays the child's task too.
        let one = Budget {
            tasks: 1,
            ..Budget::default()
        };
        if let Some(up) = node.parent.clone() {
            self.charge(&up, &one)?;
        }
        let node = self
            .nodes
            .get_mut(parent)
            .ok_or(TreeError::TooManyChildren {
                max: limits.max_children,
            })?;
        node.state.admit_child(limits, None)
    }

    /// Marks `id` and its whole subtree cancelled (those still running).
    pub(crate) fn cancel_subtree(&mut self, id: &str) {
        let mut stack = vec![id.to_owned()];
        while let Some(at) = stack.pop() {
            if let Some(n) = self.nodes.get_mut(&at) {
                if n.status == NodeStatus::Running {
                    n.status = NodeStatus::Cancelled;
                }
                stack.extend(n.children.iter().cloned());
            }
        }
    }
}

/// The milliseconds a child may run from `now`: `left` (what its tree leaves it), and no more
/// than its parent has before `parent_deadline` (a root has none: its own time limit holds).
fn allowance(left: u64, parent_deadline: Option<Instant>, now: Instant) -> u64 {
    match parent_deadline {
        Some(deadline) => {
            let parent_left = deadline.saturating_duration_since(now).as_millis();
            left.min(u64::try_from(parent_left).unwrap_or(u64::MAX))
        }
        None => left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_allowance_is_never_past_its_parents_deadline() {
        let now = Instant::now();
        let in_ms = |ms| now + Duration::from_millis(ms);
        // A root's child: what the tree leaves it.
        assert_eq!(allowance(2_000, None, now), 2_000);
        // A grandchild started late in its parent's run: what the parent has left.
        assert_eq!(allowance(2_000, Some(in_ms(700)), now), 700);
        // The tree has less left than the parent's deadline allows.
        assert_eq!(allowance(300, Some(in_ms(700)), now), 300);
        // The parent's deadline passed: nothing.
        assert_eq!(allowance(2_000, Some(now), in_ms(5)), 0);
    }

    #[test]
    fn a_new_run_of_a_top_task_reopens_its_node_and_only_the_latest_run_ends_it() {
        let limits = TreeLimits {
            max_depth: 2,
            max_children: 4,
            budget: Budget {
                tasks: 4,
                tool_calls: 8,
                tokens: 100,
                wall_ms: 1_000,
            },
        };
        let anchor =
            RootAnchor::new("sort the issues", &["sorted".to_owned()], &[]).expect("anchor");
        let mut state = limits.root().expect("root");
        state
            .charge(&Budget {
                tool_calls: 3,
                ..Budget::default()
            })
            .expect("charge");
        let mut forest = ForestState::default();
        let mut root = Node::root("top", "boss", state, &anchor);
        // The host stopped while it ran (what `TreeStore::load` leaves).
        root.status = NodeStatus::Interrupted;
        forest.nodes.insert("top".into(), root);
        forest.anchors.insert("top".into(), anchor);
        let child = TaskBrief {
            specialist: "worker".into(),
            objective: "o".into(),
            reason: "r".into(),
            completion_criteria: vec!["c".into()],
            expected_outputs: vec![],
            parent_findings: String::new(),
            context: String::new(),
            constraints: vec![],
            context_refs: vec![],
            validation_scopes: vec![],
        };
        let mut interrupted = Node::child("top", "top".into(), &child, state);
        interrupted.status = NodeStatus::Interrupted;
        forest.nodes.insert("kid".into(), interrupted);

        let (first, reopened) = forest.begin_run("top");
        assert!(reopened);
        assert_eq!(forest.nodes["top"].status, NodeStatus::Running);
        // What it spent stays spent.
        assert_eq!(forest.nodes["top"].state.remaining.tool_calls, 5);
        // A child is no top task: nothing reopens it.
        assert!(!forest.begin_run("kid").1);
        assert_eq!(forest.nodes["kid"].status, NodeStatus::Interrupted);
        // A later run started: the earlier one may no longer end the node.
        let (second, reopened) = forest.begin_run("top");
        assert!(!reopened, "already running");
        assert!(!forest.end_run("top", first));
        assert!(forest.end_run("top", second));
        assert!(!forest.end_run("top", second), "a run ends once");
    }
}
