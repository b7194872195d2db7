//! `guild tasks tree ID`: the delegation tree a task belongs to (docs/delegation.md), read from
//! the tree store without starting a host. One line per node, indented by level: its task id,
//! specialist, status, the verdict on its report, its parent's review, and the child whose
//! report it has yet to review (`TreeView::to_text`, the same text the MCP `task_tree` tool
//! returns).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use guild_host::{Config, TREES_FILE, read_tree};

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
        outln!("{}", tree.to_text().trim_end())?;
    }
    Ok(ExitCode::SUCCESS)
}
