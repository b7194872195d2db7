//! The plugin-set check a host makes when it joins the database (docs/postgres.md#joining).
//!
//! Every host keeps its own plugin folders and compile cache, so nothing but this check keeps two
//! hosts from answering one specialist's name with different code. A host registers its plugin
//! set in its `guild_hosts` row: for each plugin name the sha256 of its component and of its
//! definition (`plugin.toml` and `prompt.md`, which make an agent specialist as much as its
//! shared component does). Joining compares that set with the sets of the live hosts (seen
//! within one lease); a name both have with different digests is a [`Mismatch`], and the join
//! is refused ([`PgError::PluginMismatch`]) unless the operator allows it. Names only one host
//! has are fine. Rows of hosts that have not joined yet (an empty set) are not compared.
//!
//! The comparison and the registration are one transaction under an advisory lock, so of two
//! hosts starting at once with different digests the second to take the lock sees the first's
//! set and is refused: they never both join.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{PgError, PgTaskStore};

/// Key of the advisory lock held while a host compares and registers its plugins ("GUILDJN").
const JOIN_LOCK: i64 = 0x0047_5549_4C44_4A4E;

/// What identifies one plugin's code: hex sha256 digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginDigest {
    /// Of the component file.
    pub component: String,
    /// Of the definition: `plugin.toml`, and `prompt.md` when the folder has one.
    pub definition: String,
}

/// A host's plugins by name.
pub type PluginSet = BTreeMap<String, PluginDigest>;

/// A plugin another live host runs with other digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The plugin's name.
    pub plugin: String,
    /// Its digests on this host.
    pub here: PluginDigest,
    /// Its digests on the other host.
    pub there: PluginDigest,
    /// The other host's name (machine and pid).
    pub host: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (here, there) = (&self.here, &self.there);
        write!(f, "plugin '{}' ", self.plugin)?;
        if here.component != there.component {
            write!(
                f,
                "has component sha256 {} here but {} on {}",
                here.component, there.component, self.host
            )?;
            if here.definition != there.definition {
                write!(f, " (and another plugin.toml/prompt.md)")?;
            }
            Ok(())
        } else {
            write!(
                f,
                "has the same component but another plugin.toml/prompt.md: definition sha256 {} \
                 here but {} on {}",
                here.definition, there.definition, self.host
            )
        }
    }
}

/// Every plugin of `mine` that a host of `others` (name, set) has with other digests, in the
/// order of `others`, then by plugin name.
pub fn mismatches(mine: &PluginSet, others: &[(String, PluginSet)]) -> Vec<Mismatch> {
    let mut found = Vec::new();
    for (host, theirs) in others {
        for (plugin, here) in mine {
            if let Some(there) = theirs.get(plugin).filter(|t| *t != here) {
                found.push(Mismatch {
                    plugin: plugin.clone(),
                    here: here.clone(),
                    there: there.clone(),
                    host: host.clone(),
                });
            }
        }
    }
    found
}

/// The set a `guild_hosts` row records; `None` for a host that has not joined yet (or a row
/// this build cannot read, which is then not compared).
fn recorded(text: &str) -> Option<PluginSet> {
    serde_json::from_str(text).ok()
}

/// The live hosts other than `me` that have joined, as (name, plugin set), oldest first.
fn joined_hosts(
    c: &mut impl postgres::GenericClient,
    me: &str,
    lease: Duration,
) -> Result<Vec<(String, PluginSet)>, postgres::Error> {
    let lease = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let rows = c.query(
        "SELECT name, plugins FROM guild_hosts WHERE id <> $1 AND plugins <> '' AND \
         last_seen > clock_timestamp() - $2::bigint * interval '1 millisecond' ORDER BY started",
        &[&me, &lease],
    )?;
    let mut hosts = Vec::new();
    for row in &rows {
        let (name, plugins): (String, String) = (row.try_get(0)?, row.try_get(1)?);
        if let Some(set) = recorded(&plugins) {
            hosts.push((name, set));
        }
    }
    Ok(hosts)
}

impl PgTaskStore {
    /// Joins the database with `plugins`: compares them with the live hosts' sets and records
    /// them in this host's `guild_hosts` row, under a lock (see the module docs). A plugin
    /// another live host has with other digests refuses the join ([`PgError::PluginMismatch`],
    /// nothing recorded) unless `allow_mismatch`; then the join goes ahead and the mismatches
    /// are returned for the caller to log. Called again after a reload with the new set.
    pub fn join(
        &self,
        plugins: &PluginSet,
        allow_mismatch: bool,
    ) -> Result<Vec<Mismatch>, PgError> {
        let mine = plugins.clone();
        let text = serde_json::to_string(plugins).unwrap_or_else(|_| "{}".into());
        let (me, lease) = (self.identity().clone(), self.lease());
        let found = self.call("join the hosts on the database", move |c| {
            let mut tx = c.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&JOIN_LOCK])?;
            let found = mismatches(&mine, &joined_hosts(&mut tx, &me.id, lease)?);
            if found.is_empty() || allow_mismatch {
                tx.execute(
                    "INSERT INTO guild_hosts (id, name, plugins) VALUES ($1, $2, $3) \
                     ON CONFLICT (id) DO UPDATE SET plugins = $3, last_seen = clock_timestamp()",
                    &[&me.id, &me.name, &text],
                )?;
                tx.commit()?;
            }
            Ok(found)
        })?;
        if found.is_empty() || allow_mismatch {
            return Ok(found);
        }
        Err(PgError::PluginMismatch {
            target: self.target().to_owned(),
            mismatches: found,
        })
    }

    /// The mismatches `plugins` would have with the live hosts now (nothing is recorded).
    pub fn plugin_mismatches(&self, plugins: &PluginSet) -> Result<Vec<Mismatch>, PgError> {
        let mine = plugins.clone();
        let (me, lease) = (self.identity().id.clone(), self.lease());
        self.call("compare plugins with the other hosts", move |c| {
            Ok(mismatches(&mine, &joined_hosts(c, &me, lease)?))
        })
    }
}

/// The text of [`PgError::PluginMismatch`]: one line per mismatch.
pub(crate) fn render(mismatches: &[Mismatch]) -> String {
    mismatches
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(component: &str, definition: &str) -> PluginDigest {
        PluginDigest {
            component: component.into(),
            definition: definition.into(),
        }
    }

    fn set(entries: &[(&str, PluginDigest)]) -> PluginSet {
        entries
            .iter()
            .map(|(n, d)| ((*n).to_owned(), d.clone()))
            .collect()
    }

    #[test]
    fn only_a_shared_name_with_other_digests_mismatches() {
        let mine = set(&[("probe", digest("c1", "d1")), ("echo", digest("e1", "f1"))]);
        let cases = [
            ("same digests", set(&[("probe", digest("c1", "d1"))]), None),
            (
                "only the other host has it",
                set(&[("other", digest("x", "y"))]),
                None,
            ),
            (
                "another component",
                set(&[("probe", digest("c2", "d1"))]),
                Some("component sha256 c1 here but c2 on b"),
            ),
            (
                "another definition",
                set(&[("probe", digest("c1", "d2"))]),
                Some("definition sha256 d1 here but d2 on b"),
            ),
            (
                "both",
                set(&[("probe", digest("c2", "d2"))]),
                Some("component sha256 c1 here but c2 on b (and another"),
            ),
        ];
        for (what, theirs, want) in cases {
            let found = mismatches(&mine, &[("b".to_owned(), theirs)]);
            match want {
                None => assert!(found.is_empty(), "{what}: {found:?}"),
                Some(text) => {
                    assert_eq!(found.len(), 1, "{what}: {found:?}");
                    let shown = found[0].to_string();
                    assert!(shown.starts_with("plugin 'probe' "), "{what}: {shown}");
                    assert!(shown.contains(text), "{what}: {shown}");
                }
            }
        }
    }

    #[test]
    fn a_row_that_has_not_joined_is_not_compared() {
        assert_eq!(recorded(""), None);
        assert_eq!(recorded("not json"), None);
        assert_eq!(recorded("{}"), Some(PluginSet::new()));
        let s = set(&[("probe", digest("c", "d"))]);
        let text = serde_json::to_string(&s).expect("encode");
        assert_eq!(recorded(&text), Some(s));
    }
}
