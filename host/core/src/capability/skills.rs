//! Skill sources: the manifest's `[capabilities] skills` ∩ the operator's `[grants.NAME] skills`.
//!
//! Both lists are parsed into [`SourceRequest`]s (the grant when `guild.toml` is read, the
//! request here, at load), so `"skills"` and `"skills/"` name the same folder. A requested
//! source the grant lacks is invisible to the specialist: its catalog never scans that folder
//! and never runs that loader. The plugin's own bundled folder needs a grant like any other.

use super::report::CapabilityRow;
use crate::skill_sources::SourceRequest;

/// The effective sources, in the manifest's order, plus one row per requested or granted entry.
pub(super) fn resolve(
    requested: &[String],
    granted: &[SourceRequest],
    rows: &mut Vec<CapabilityRow>,
) -> Result<Vec<SourceRequest>, String> {
    let mut effective = Vec::new();
    let mut seen = Vec::new();
    for entry in requested {
        let request = SourceRequest::parse(entry)
            .map_err(|e| format!("key `capabilities.skills` of plugin.toml: {e}"))?;
        if seen.contains(&request) {
            continue;
        }
        seen.push(request.clone());
        if granted.contains(&request) {
            rows.push(CapabilityRow::granted(
                "skills",
                &request.to_string(),
                "granted",
            ));
            effective.push(request);
        } else {
            rows.push(CapabilityRow::denied(
                "skills",
                &request.to_string(),
                "not granted",
            ));
        }
    }
    for grant in granted {
        if !seen.contains(grant) {
            seen.push(grant.clone());
            rows.push(CapabilityRow::unused("skills", &grant.to_string()));
        }
    }
    Ok(effective)
}
