//! A delegation tree as text, the same for `guild tasks tree` and the MCP `task_tree` tool
//! (docs/delegation.md): one line per node, indented by level.

use super::{NodeStatus, TreeView};
use guild_core::text::one_line;

impl NodeStatus {
    /// The shown and stored name (`running`, `finished`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Running => "running",
            NodeStatus::Finished => "finished",
            NodeStatus::Cancelled => "cancelled",
            NodeStatus::Interrupted => "interrupted",
        }
    }
}

impl TreeView {
    /// The tree as text: a header with the root and the anchor's hash, the anchor's completion
    /// criteria and constraints when the top task's caller gave them, then one line per node
    /// indented by level: task id, specialist, status, the verdict on its report, its parent's
    /// review, and the child whose report it has yet to review.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "tree {} (anchor {})\n",
            self.root,
            &self.anchor_hash[..12.min(self.anchor_hash.len())]
        );
        if self.anchored_by_caller {
            for c in &self.completion_criteria {
                out.push_str(&format!("  completion criterion: {}\n", one_line(c)));
            }
            for c in &self.constraints {
                out.push_str(&format!("  constraint: {}\n", one_line(c)));
            }
        }
        for n in &self.nodes {
            out.push_str(&format!(
                "{}{} {} {}",
                "  ".repeat(n.depth as usize + 1),
                n.task_id,
                n.specialist,
                n.status.as_str()
            ));
            if let Some(v) = n.verdict {
                out.push_str(&format!(" verdict={}", v.as_str()));
            }
            if let Some(r) = &n.review {
                out.push_str(&format!(" review={} ({})", r.decision, one_line(&r.reason)));
            }
            if let Some(c) = &n.pending_review {
                out.push_str(&format!(" review-pending={c}"));
            }
            out.push('\n');
        }
        out
    }
}
