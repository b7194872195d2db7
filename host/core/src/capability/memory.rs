//! Memory rights: the manifest's `[capabilities] memory` ∩ the operator's `[grants.NAME] memory`.
//!
//! Both lists are parsed into [`MemoryAccess`] when the files are read, so the intersection is
//! a set comparison. Each right stands alone: `team:write` does not imply `team:read`. Which
//! document a right reaches (the workspace, the user) is the operator's `[memory]` setting,
//! never the plugin's.

use std::collections::BTreeSet;

use super::report::CapabilityRow;
use crate::memory_access::{MemoryAccess, Scope};

/// The rights a plugin holds after intersecting request and grant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryGrant {
    /// Requested and granted.
    pub allowed: BTreeSet<MemoryAccess>,
    /// Requested, not granted.
    pub not_granted: BTreeSet<MemoryAccess>,
    /// Granted, not requested.
    pub not_requested: BTreeSet<MemoryAccess>,
}

impl MemoryGrant {
    /// Whether reading (`write == false`) or writing `scope` is allowed.
    pub fn allows(&self, scope: Scope, write: bool) -> bool {
        self.allowed.contains(&MemoryAccess::of(scope, write))
    }

    /// Why `plugin` may not read or write `scope`, naming the file and key that would allow
    /// it; `None` when allowed.
    pub fn refusal(&self, plugin: &str, scope: Scope, write: bool) -> Option<String> {
        let right = MemoryAccess::of(scope, write);
        if self.allowed.contains(&right) {
            return None;
        }
        let request = format!(
            "add \"{right}\" to `[capabilities] memory` in the plugin.toml of plugin '{plugin}'"
        );
        let grant = format!("add \"{right}\" to `[grants.{plugin}] memory` in guild.toml");
        Some(if self.not_granted.contains(&right) {
            format!("requested but not granted by the operator: {grant}")
        } else if self.not_requested.contains(&right) {
            format!("granted by the operator but not requested by the plugin: {request}")
        } else {
            format!(
                "not requested by the plugin and not granted by the operator: {request}, then {grant}"
            )
        })
    }
}

/// The effective rights plus one row per requested or granted right.
pub(super) fn resolve(
    requested: &[MemoryAccess],
    granted: &[MemoryAccess],
    rows: &mut Vec<CapabilityRow>,
) -> MemoryGrant {
    let requested: BTreeSet<_> = requested.iter().copied().collect();
    let granted: BTreeSet<_> = granted.iter().copied().collect();
    let mut grant = MemoryGrant::default();
    for right in &requested {
        if granted.contains(right) {
            rows.push(CapabilityRow::granted("memory", right.as_str(), "granted"));
            grant.allowed.insert(*right);
        } else {
            rows.push(CapabilityRow::denied(
                "memory",
                right.as_str(),
                "not granted",
            ));
            grant.not_granted.insert(*right);
        }
    }
    for right in granted.difference(&requested) {
        rows.push(CapabilityRow::unused("memory", right.as_str()));
        grant.not_requested.insert(*right);
    }
    grant
}
