//! Effective capabilities: what a plugin requested ∩ what the operator granted.
//!
//! This is the one place where the intersection is computed. It is pure (no wasm, no I/O except
//! checking that granted host folders exist and reading secret values), so `guild plugins check`
//! and `guild plugins show` use it directly. Each capability area lives in its own sub-module
//! with its own `resolve` and table tests; per-instance state is built from [`Effective`] by the
//! runtime.

mod decision;
mod fs;
mod report;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

pub use decision::{denied, trace_decision};
pub use fs::FsMount;
pub use report::{CapabilityRow, RowStatus};

use crate::config::{Config, Grant};
use crate::error::LoadError;
use crate::http::{AllowList, EgressPolicy, SecretHeader};
use crate::manifest::{Limits, Manifest};

/// What one plugin may do, after intersecting request and grant.
#[derive(Debug, Clone)]
pub struct Effective {
    /// Filesystem preopens.
    pub fs: Vec<FsMount>,
    /// Outbound HTTP policy (empty allowlists deny everything).
    pub http: EgressPolicy,
    /// Granted config values.
    pub config: BTreeMap<String, String>,
    /// Granted connector tools, `connector.tool`.
    pub tools: BTreeSet<String>,
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
            report: false,
            limits,
        }
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
    let fs = fs::resolve(&req.fs, &grant.fs, config, &mut rows).map_err(grant_err)?;

    // Tools: exact names in both lists.
    let granted_tools: BTreeSet<&str> = grant.tools.iter().map(String::as_str).collect();
    let mut tools = BTreeSet::new();
    for tool in &req.tools {
        if granted_tools.contains(tool.as_str()) {
            tools.insert(tool.clone());
            rows.push(CapabilityRow::granted("tools", tool, "granted"));
        } else {
            rows.push(CapabilityRow::denied("tools", tool, "not granted"));
        }
    }
    for tool in &grant.tools {
        if !req.tools.contains(tool) {
            rows.push(CapabilityRow::unused("tools", tool));
        }
    }

    // Config values.
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

    // HTTP: a URL must match a requested AND a granted pattern.
    let requested = AllowList::parse(&req.http).map_err(|e| grant_err(e.to_string()))?;
    let granted =
        AllowList::parse(&grant.http).map_err(|e| grant_err(format!("key `http`: {e}")))?;
    for pattern in &req.http {
        let status = if grant.http.is_empty() {
            RowStatus::Denied("not granted".to_owned())
        } else {
            RowStatus::Granted(format!("where also granted: {}", grant.http.join(", ")))
        };
        rows.push(CapabilityRow::new("http", pattern, status));
    }
    if req.http.is_empty() {
        for pattern in &grant.http {
            rows.push(CapabilityRow::unused("http", pattern));
        }
    }

    // Secrets: requested with hosts, valued by the operator.
    let mut secrets = Vec::new();
    for secret in &req.secrets {
        match grant.secrets.get(&secret.name) {
            Some(source) => {
                let value = source
                    .read(&config.base_dir)
                    .map_err(|e| grant_err(format!("key `secrets.{}`: {e}", secret.name)))?;
                let hosts =
                    AllowList::parse(&secret.hosts).map_err(|e| grant_err(e.to_string()))?;
                secrets.push(
                    SecretHeader::new(
                        &secret.name,
                        &secret.header,
                        &secret.format.replacen("{}", &value, 1),
                        hosts,
                    )
                    .map_err(|e| grant_err(format!("key `secrets.{}`: {e}", secret.name)))?,
                );
                rows.push(CapabilityRow::granted(
                    "secrets",
                    &secret.name,
                    &format!(
                        "attached as {} to {}",
                        secret.header,
                        secret.hosts.join(", ")
                    ),
                ));
            }
            None => rows.push(CapabilityRow::denied(
                "secrets",
                &secret.name,
                "no value granted",
            )),
        }
    }
    for name in grant.secrets.keys() {
        if !req.secrets.iter().any(|s| &s.name == name) {
            rows.push(CapabilityRow::unused("secrets", name));
        }
    }

    // Capabilities this host version does not implement yet are reported, never granted.
    // Skill sources are the specialist's own declaration (never inherited); what they may
    // contain is checked when the catalog is built. Loaders must be loaded plugins.
    for source in &req.skills {
        let detail = if source.starts_with("loader:") || source.starts_with("shared:") {
            "declared source (served when the loader or shared folder exists)"
        } else {
            "the plugin's own skill folder"
        };
        rows.push(CapabilityRow::granted("skills", source, detail));
    }
    for doc in &req.memory {
        rows.push(CapabilityRow::denied(
            "memory",
            doc,
            "not supported by this host version",
        ));
    }
    if req.llm {
        rows.push(CapabilityRow::denied(
            "llm",
            "",
            "not supported by this host version",
        ));
    }
    let report = req.report && grant.report;
    match (req.report, grant.report) {
        (true, true) => rows.push(CapabilityRow::granted("report", "send", "granted")),
        (true, false) => rows.push(CapabilityRow::denied("report", "send", "not granted")),
        (false, true) => rows.push(CapabilityRow::unused("report", "send")),
        (false, false) => {}
    }

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
        granted,
        secrets,
    };
    Ok((
        Effective {
            fs,
            http,
            config: values,
            tools,
            report,
            limits,
        },
        rows,
    ))
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
