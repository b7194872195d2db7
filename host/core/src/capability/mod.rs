//! Effective capabilities: what a plugin requested ∩ what the operator granted.
//!
//! This is the one place where the intersection is computed. It is pure (no wasm, no I/O except
//! resolving granted host folders against the host's own folders and reading secret values), so
//! `guild plugins check` and `guild plugins show` use it directly, and the rows they print are
//! built from the same values the runtime enforces. Each capability area lives in its own sub-module
//! with its own `resolve` and table tests; per-instance state is built from [`Effective`] by the
//! runtime.

mod delegate;
mod egress;
mod fs;
mod llm;
mod memory;
#[cfg(test)]
mod memory_tests;
mod origins;
mod report;
mod skills;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

pub use fs::{FsMount, FsQuota};
pub use guild_http::decision::{denied, trace_decision, trace_refusal};
pub use memory::MemoryGrant;
pub use report::{CapabilityRow, RowStatus};

use crate::config::{Config, Grant};
use crate::error::LoadError;
use crate::manifest::{Limits, Manifest, Requested};
use crate::skill_sources::SourceRequest;
use guild_http::{AllowList, EgressPolicy};

/// What one plugin may do, after intersecting request and grant. Equal values grant exactly
/// the same (a reload keeps a plugin whose effective grant did not change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    /// Filesystem preopens.
    pub fs: Vec<FsMount>,
    /// Outbound HTTP policy (empty allowlists deny everything).
    pub http: EgressPolicy,
    /// Granted config values.
    pub config: BTreeMap<String, String>,
    /// Granted connector tools, `connector.tool`.
    pub tools: BTreeSet<String>,
    /// Tools the manifest requests that the operator did not grant (explains a refusal).
    pub tools_not_granted: BTreeSet<String>,
    /// Tools the operator grants that the manifest does not request (explains a refusal).
    pub tools_not_requested: BTreeSet<String>,
    /// Skill sources requested ∩ granted, in the manifest's order.
    pub skills: Vec<SourceRequest>,
    /// Memory rights requested ∩ granted.
    pub memory: MemoryGrant,
    /// Model aliases requested ∩ granted, with the grant's budgets (docs/models.md).
    pub llm: crate::llm::ModelGrant,
    /// Specialists this plugin may start as child tasks, requested ∩ granted
    /// (docs/delegation.md); empty denies every delegation.
    pub delegate: BTreeSet<String>,
    /// Whether the manifest requests `delegate` at all (explains a refusal).
    pub delegate_requested: bool,
    /// Progress reports through the report channel.
    pub report: bool,
    /// Effective limits.
    pub limits: Limits,
}

impl Effective {
    /// Nothing but logging: what a plugin with no grant gets.
    pub fn none(plugin: &str, limits: Limits) -> Self {
        Self {
            fs: Vec::new(),
            http: EgressPolicy::deny_all(plugin),
            config: BTreeMap::new(),
            tools: BTreeSet::new(),
            tools_not_granted: BTreeSet::new(),
            tools_not_requested: BTreeSet::new(),
            skills: Vec::new(),
            memory: MemoryGrant::default(),
            llm: crate::llm::ModelGrant::default(),
            delegate: BTreeSet::new(),
            delegate_requested: false,
            report: false,
            limits,
        }
    }

    /// Why `plugin` may not call `tool`, naming the file and key that would allow it; `None`
    /// when the tool is granted. The manifest requests (`[capabilities] tools` in the plugin's
    /// `plugin.toml`) and the operator grants (`[grants.PLUGIN] tools` in `guild.toml`): a
    /// plugin author and an operator each need to know which of the two is missing.
    pub fn tool_refusal(&self, plugin: &str, tool: &str) -> Option<String> {
        if self.tools.contains(tool) {
            return None;
        }
        let request =
            format!("add it to `[capabilities] tools` in the plugin.toml of plugin '{plugin}'");
        let grant = format!("add it to `[grants.{plugin}] tools` in guild.toml");
        Some(if self.tools_not_granted.contains(tool) {
            format!("requested but not granted by the operator: {grant}")
        } else if self.tools_not_requested.contains(tool) {
            format!("granted by the operator but not requested by the plugin: {request}")
        } else {
            format!(
                "not requested by the plugin and not granted by the operator: {request}, then {grant}"
            )
        })
    }
}

/// Computes the effective capabilities of `manifest` under `config`, plus one report row per
/// requested or granted item (for `guild plugins show`).
pub fn resolve(
    manifest: &Manifest,
    config: &Config,
) -> Result<(Effective, Vec<CapabilityRow>), LoadError> {
    let name = manifest.name();
    let empty = Grant::default();
    let grant = config.grants.get(name).unwrap_or(&empty);
    let grant_err = |message: String| LoadError::Grant {
        plugin: name.to_owned(),
        message,
    };
    let req = &manifest.capabilities;
    let mut rows = Vec::new();

    // Filesystem.
    let fs = fs::resolve(name, &req.fs, &grant.fs, config, &mut rows).map_err(grant_err)?;

    let (tools, tools_not_granted, tools_not_requested) = tools(req, grant, &mut rows);
    let values = config_values(req, grant, &mut rows);
    let (requested, allowed) = egress::http(req, grant, &mut rows).map_err(grant_err)?;
    let secrets = egress::secrets(name, req, grant, config, &mut rows).map_err(grant_err)?;

    // Skill sources: requested by the manifest, granted by the operator; never inherited.
    let skills = skills::resolve(&req.skills, &grant.skills, &mut rows).map_err(grant_err)?;

    // Memory rights: requested by the manifest, granted by the operator.
    let memory = memory::resolve(&req.memory, &grant.memory, &mut rows);

    // Model aliases: requested by the manifest, granted (with budgets) by the operator.
    let llm = llm::resolve(&req.llm, grant.llm.as_ref(), config, &mut rows);
    // Child tasks: requested by the manifest, granted by the operator, by specialist name.
    let delegate = delegate::resolve(&req.delegate, &grant.delegate, &mut rows);
    let report = report(req.report, grant.report, &mut rows);
    let limits = limits(manifest.limits, grant);
    rows.push(CapabilityRow::granted(
        "limits",
        "",
        &format!(
            "memory {} MiB, timeout {} s, output {} KiB",
            limits.memory_mb, limits.timeout_s, limits.max_output_kb
        ),
    ));

    let http = EgressPolicy {
        plugin: name.to_owned(),
        requested,
        granted: AllowList::new(allowed),
        secrets,
    };
    Ok((
        Effective {
            fs,
            http,
            config: values,
            tools,
            tools_not_granted,
            tools_not_requested,
            skills,
            memory,
            llm,
            delegate,
            delegate_requested: !req.delegate.is_empty(),
            report,
            limits,
        },
        rows,
    ))
}

/// Tools: exact names in both lists. Returns the granted ones, those requested but not granted,
/// and those granted but not requested.
fn tools(
    req: &Requested,
    grant: &Grant,
    rows: &mut Vec<CapabilityRow>,
) -> (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    let granted_tools: BTreeSet<&str> = grant.tools.iter().map(String::as_str).collect();
    let mut tools = BTreeSet::new();
    let mut not_granted = BTreeSet::new();
    let mut not_requested = BTreeSet::new();
    for tool in &req.tools {
        if granted_tools.contains(tool.as_str()) {
            tools.insert(tool.clone());
            rows.push(CapabilityRow::granted("tools", tool, "granted"));
        } else {
            not_granted.insert(tool.clone());
            rows.push(CapabilityRow::denied("tools", tool, "not granted"));
        }
    }
    for tool in &grant.tools {
        if !req.tools.contains(tool) {
            not_requested.insert(tool.clone());
            rows.push(CapabilityRow::unused("tools", tool));
        }
    }
    (tools, not_granted, not_requested)
}

/// Config values: only granted values of requested keys.
fn config_values(
    req: &Requested,
    grant: &Grant,
    rows: &mut Vec<CapabilityRow>,
) -> BTreeMap<String, String> {
    let mut values = BTreeMap::new();
    for key in &req.config {
        match grant.config.get(key) {
            Some(v) => {
                values.insert(key.clone(), v.clone());
                rows.push(CapabilityRow::granted("config", key, "granted"));
            }
            None => rows.push(CapabilityRow::denied("config", key, "no value granted")),
        }
    }
    for key in grant.config.keys() {
        if !req.config.contains(key) {
            rows.push(CapabilityRow::unused("config", key));
        }
    }
    values
}

/// The report channel: requested and granted.
fn report(requested: bool, granted: bool, rows: &mut Vec<CapabilityRow>) -> bool {
    match (requested, granted) {
        (true, true) => rows.push(CapabilityRow::granted("report", "send", "granted")),
        (true, false) => rows.push(CapabilityRow::denied("report", "send", "not granted")),
        (false, true) => rows.push(CapabilityRow::unused("report", "send")),
        (false, false) => {}
    }
    requested && granted
}

/// The manifest's limits, lowered by the operator's overrides.
fn limits(manifest: Limits, grant: &Grant) -> Limits {
    let o = grant.limits;
    Limits {
        memory_mb: o
            .memory_mb
            .map_or(manifest.memory_mb, |v| v.min(manifest.memory_mb)),
        timeout_s: o
            .timeout_s
            .map_or(manifest.timeout_s, |v| v.min(manifest.timeout_s)),
        max_output_kb: o
            .max_output_kb
            .map_or(manifest.max_output_kb, |v| v.min(manifest.max_output_kb)),
        component_mb: manifest.component_mb,
    }
}
