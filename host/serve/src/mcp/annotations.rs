//! MCP tool annotations: the hints a client reads to decide which calls a person must approve
//! (Claude Code and Cursor ask before any tool that is not read-only, so a read-only tool
//! without a hint costs a click on every call).
//!
//! The delegation tools (`task`, `start_task`) get hints derived from what the specialists on
//! the roster can do with their grants ([`guild_host::Reach`]): read-only when none can call a
//! mutating tool, write a folder or write memory; destructive when one can call a mutating tool
//! or write a folder (memory keeps every version, so a memory write is not destructive);
//! open-world when one can reach the network, itself or through a connector's tool. The host's
//! own tools have fixed hints, below. A tool missing from that table gets no hints, which
//! clients treat as "may change anything".

use guild_host::manifest::PluginKind;
use guild_host::{PluginInfo, Reach};
use rmcp::model::{Tool, ToolAnnotations};

/// (tool, read-only, destructive, idempotent, open-world) for the host's own tools.
const FIXED: &[(&str, bool, bool, bool, bool)] = &[
    ("check_task", true, false, true, false),
    ("list_tasks", true, false, true, false),
    ("task_tree", true, false, true, false),
    ("list_skills", true, false, true, false),
    ("load_skill", true, false, true, false),
    ("read_skill_resource", true, false, true, false),
    ("receipts", true, false, true, false),
    ("read_memory", true, false, true, false),
    // Fetches the receipt's URL through the guarded client.
    ("verify_receipt", true, false, true, true),
    ("update_task", false, false, false, false),
    // Ends work that cannot be resumed.
    ("cancel_task", false, true, true, false),
    // Lets a mutating call go ahead: a person should see it.
    ("approve_task", false, true, true, false),
    ("reload", false, false, true, false),
    // A whole-document replacement, checked against the version read; history keeps the rest.
    ("update_memory", false, false, true, false),
];

/// `tools` with their annotations, the delegation tools' from `plugins`' reach.
pub(super) fn annotate(tools: Vec<Tool>, plugins: &[PluginInfo]) -> Vec<Tool> {
    let delegation = delegation(plugins);
    tools
        .into_iter()
        .map(|tool| {
            let hints = match tool.name.as_ref() {
                "task" | "start_task" => Some(delegation.clone()),
                name => fixed(name),
            };
            match hints {
                Some(hints) => tool.with_annotations(hints),
                None => tool,
            }
        })
        .collect()
}

/// The hints of a tool that hands work to any specialist on the roster.
fn delegation(plugins: &[PluginInfo]) -> ToolAnnotations {
    let reach = Reach::any(
        plugins
            .iter()
            .filter(|p| p.kind == PluginKind::Specialist && p.unavailable.is_none())
            .map(|p| &p.reach),
    );
    hints(
        reach.read_only(),
        reach.mutating_tools || reach.writes_files,
        false,
        reach.network,
    )
}

fn fixed(name: &str) -> Option<ToolAnnotations> {
    FIXED.iter().find(|(tool, ..)| *tool == name).map(
        |&(_, read_only, destructive, idempotent, open_world)| {
            hints(read_only, destructive, idempotent, open_world)
        },
    )
}

fn hints(
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
) -> ToolAnnotations {
    let mut a = ToolAnnotations::default();
    a.read_only_hint = Some(read_only);
    // The spec gives destructive and idempotent meaning only for tools that are not read-only.
    if !read_only {
        a.destructive_hint = Some(destructive);
        a.idempotent_hint = Some(idempotent);
    }
    a.open_world_hint = Some(open_world);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_tool_has_hints_and_read_only_ones_claim_no_harm() {
        for (name, read_only, destructive, ..) in FIXED {
            let a = fixed(name).expect("hints");
            assert_eq!(a.read_only_hint, Some(*read_only), "{name}");
            if *read_only {
                assert!(a.destructive_hint.is_none() && !destructive, "{name}");
            }
        }
        assert!(fixed("no_such_tool").is_none());
    }
}
