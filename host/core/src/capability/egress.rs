//! Outbound HTTP and secrets: what a plugin may reach and which secret headers the host
//! attaches, from the manifest's request and the operator's grant (docs/security.md,
//! "Outbound HTTP" and "Secrets").
//!
//! A URL must match a requested **and** a granted pattern: the policy enforces the pairwise
//! intersections, and the report rows print the same list. A secret is requested by the
//! manifest but valued and aimed by the operator: the manifest may only ask for hosts inside
//! the grant's.

use super::origins;
use super::report::{CapabilityRow, RowStatus};
use crate::config::{Config, Grant};
use crate::manifest::Requested;
use guild_http::{AllowList, HostPattern, SecretHeader};

/// The requested allow-list and the effective (requested ∩ granted) patterns.
pub(super) fn http(
    req: &Requested,
    grant: &Grant,
    rows: &mut Vec<CapabilityRow>,
) -> Result<(AllowList, Vec<HostPattern>), String> {
    let requested = AllowList::parse(&req.http).map_err(|e| e.to_string())?;
    let granted = AllowList::parse(&grant.http).map_err(|e| format!("key `http`: {e}"))?;
    let mut allowed = Vec::new();
    for (pattern, both) in origins::effective(&requested, &granted) {
        let status = if both.is_empty() {
            RowStatus::Denied("not granted".to_owned())
        } else {
            RowStatus::Granted(join(&both))
        };
        rows.push(CapabilityRow::new("http", &pattern.to_string(), status));
        allowed.extend(both);
    }
    for pattern in granted.patterns() {
        if !requested
            .patterns()
            .iter()
            .any(|r| origins::intersect(r, pattern).is_some())
        {
            rows.push(CapabilityRow::unused("http", &pattern.to_string()));
        }
    }
    Ok((requested, allowed))
}

/// The secret headers of plugin `name`: each requested secret the operator granted a value
/// for, aimed only at the grant's hosts.
pub(super) fn secrets(
    name: &str,
    req: &Requested,
    grant: &Grant,
    config: &Config,
    rows: &mut Vec<CapabilityRow>,
) -> Result<Vec<SecretHeader>, String> {
    let mut secrets = Vec::new();
    for secret in &req.secrets {
        let Some(secret_grant) = grant.secrets.get(&secret.name) else {
            rows.push(CapabilityRow::denied(
                "secrets",
                &secret.name,
                "no value granted",
            ));
            continue;
        };
        let key = format!("`[grants.{name}.secrets.{}] hosts`", secret.name);
        let hosts = AllowList::parse(&secret_grant.hosts).map_err(|e| format!("{key}: {e}"))?;
        let asked = AllowList::parse(&secret.hosts).map_err(|e| e.to_string())?;
        let outside: Vec<_> = asked
            .patterns()
            .iter()
            .filter(|a| !hosts.patterns().iter().any(|h| origins::covers(h, a)))
            .collect();
        if !outside.is_empty() {
            return Err(format!(
                "the manifest asks to send secret {} to {} (`capabilities.secrets` hosts), \
                 outside {key} = [{}]; the operator's grant decides where a secret goes: \
                 widen the grant or fix the manifest",
                secret.name,
                join(outside),
                join(hosts.patterns())
            ));
        }
        let value = secret_grant
            .source
            .read(&config.base_dir)
            .map_err(|e| format!("key `secrets.{}`: {e}", secret.name))?;
        rows.push(CapabilityRow::granted(
            "secrets",
            &secret.name,
            &format!(
                "attached as {} to {}",
                secret.header,
                join(hosts.patterns())
            ),
        ));
        secrets.push(
            SecretHeader::new(
                &secret.name,
                &secret.header,
                &secret.format.replacen("{}", &value, 1),
                hosts,
            )
            .map_err(|e| format!("key `secrets.{}`: {e}", secret.name))?
            .with_granted_value(&value),
        );
    }
    for name in grant.secrets.keys() {
        if !req.secrets.iter().any(|s| &s.name == name) {
            rows.push(CapabilityRow::unused("secrets", name));
        }
    }
    Ok(secrets)
}

fn join<'a>(patterns: impl IntoIterator<Item = &'a HostPattern>) -> String {
    patterns
        .into_iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
