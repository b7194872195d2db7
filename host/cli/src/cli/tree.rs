//! `guild tasks tree ID`: the delegation tree a task belongs to (docs/delegation.md), read from
//! the tree store without starting a host. One line per node, indented by level: its task id,
//! specialist, status, the verdict on its report, its parent's review, and the child whose
//! report it has yet to review.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use guild_host::text::one_line;
use guild_host::{Config, NodeStatus, TREES_FILE, TreeView, read_tree};

use super::print_json;

pub(crate) async fn run(config: &Path, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let config = Config::load(config).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config.display()
        )
    })?;
    let path = config.data_dir().join(TREES_FILE);
    let wanted = id.to_owned();
    let tree = tokio::task::spawn_blocking(move || read_tree(&path, &wanted)).await??;
    let Some(tree) = tree else {
        anyhow::bail!("task {id} is in no delegation tree: it started no child and is no child");
    };
    if json {
        print_json(&tree)?;
    } else {
        render(&tree)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn status(s: NodeStatus) -> &'static str {
    match s {
        NodeStatus::Running => "running",
        NodeStatus::Finished => "finished",
        NodeStatus::Cancelled => "cancelled",
        NodeStatus::Interrupted => "interrupted",
    }
}

fn render(tree: &TreeView) -> std::io::Result<()> {
    for line in lines(tree) {
        outln!("{line}")?;
    }
    Ok(())
}

/// The tree as text, one line per node after a headline (also `guild demo`'s delegation scene).
pub(crate) fn lines(tree: &TreeView) -> Vec<String> {
    let mut out = vec![format!(
        "tree {} (anchor {})",
        tree.root,
        &tree.anchor_hash[..12.min(tree.anchor_hash.len())]
    )];
    for n in &tree.nodes {
        let mut line = format!(
            "{}{} {} {}",
            "  ".repeat(n.depth as usize + 1),
            n.task_id,
            n.specialist,
            status(n.status)
        );
        if let Some(v) = n.verdict {
            line.push_str(&format!(" verdict={}", v.as_str()));
        }
        if let Some(r) = &n.review {
            line.push_str(&format!(" review={} ({})", r.decision, one_line(&r.reason)));
        }
        if let Some(c) = &n.pending_review {
            line.push_str(&format!(" review-pending={c}"));
        }
        out.push(line);
    }
    out
}
