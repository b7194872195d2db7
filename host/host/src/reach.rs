//! [`Reach`]: what a plugin can change or reach with the grants it has now, in four plain
//! facts, for adapters that must tell a person before acting (MCP tool annotations: a client
//! such as Claude Code asks for approval before a tool that is not read-only).
//!
//! It is computed from the effective capabilities (requested ∩ granted), never from what a
//! manifest asks for, and from the tool specs of the connectors loaded beside the plugin.

use guild_core::capability::Effective;
use guild_core::manifest::FsMode;
use guild_core::memory_access::Scope;
use guild_core::types::ToolSpec;
use serde::Serialize;

/// What a plugin may do with its grants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Reach {
    /// It may call a connector tool that mutates something (each call receipted).
    pub mutating_tools: bool,
    /// It may write a granted folder.
    pub writes_files: bool,
    /// It may write team or private memory.
    pub writes_memory: bool,
    /// It may reach the network itself, or call a tool of a connector that can.
    pub network: bool,
}

impl Reach {
    /// The reach of a plugin with `effective` capabilities; `tool` finds a granted tool's spec
    /// and whether its connector has network access.
    pub(crate) fn of(
        effective: &Effective,
        tool: impl Fn(&str) -> Option<(ToolSpec, bool)>,
    ) -> Self {
        let tools: Vec<(ToolSpec, bool)> = effective.tools.iter().filter_map(|t| tool(t)).collect();
        Self {
            mutating_tools: tools.iter().any(|(spec, _)| spec.mutating),
            writes_files: effective.fs.iter().any(|m| m.mode == FsMode::Rw),
            writes_memory: [Scope::Team, Scope::Private]
                .into_iter()
                .any(|scope| effective.memory.allows(scope, true)),
            network: has_network(effective) || tools.iter().any(|(_, network)| *network),
        }
    }

    /// Whether nothing here can change anything outside the task.
    pub fn read_only(&self) -> bool {
        !(self.mutating_tools || self.writes_files || self.writes_memory)
    }

    /// The union: what any of `reaches` may do.
    pub fn any<'a>(reaches: impl IntoIterator<Item = &'a Reach>) -> Reach {
        reaches.into_iter().fold(Reach::default(), |a, b| Reach {
            mutating_tools: a.mutating_tools || b.mutating_tools,
            writes_files: a.writes_files || b.writes_files,
            writes_memory: a.writes_memory || b.writes_memory,
            network: a.network || b.network,
        })
    }
}

/// Whether `effective` lets the plugin send any request out (some origin both requested and
/// granted; judged by the lists, conservatively).
pub(crate) fn has_network(effective: &Effective) -> bool {
    !effective.http.requested.is_empty() && !effective.http.granted.is_empty()
}
