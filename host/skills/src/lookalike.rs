//! Look-alike skill names: names that differ as written but read the same after NFKC
//! normalisation (`my-skill`, fullwidth `ｍｙ-skill`, mathematical bold `𝐦𝐲-skill`). The
//! folder-name check compares names in that form, so a look-alike passes it; a model shown
//! both cannot tell them apart. Both stay in the catalog (neither name is wrong on its own);
//! the operator is warned, with both folders named.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use super::catalog::{SkillEntry, SkillLocation, describe};
use super::format::{Problem, SKILL_FILE, Severity, nfkc};

/// One warning per name that reads like another in `entries`. The name already in NFKC form
/// (or else the first, by name) is the one the others are said to look like. With
/// `across_sources`, pairs from the same source are skipped (its own scan warned about them).
pub(crate) fn problems(
    entries: &BTreeMap<String, Arc<SkillEntry>>,
    across_sources: bool,
) -> Vec<Problem> {
    // An ASCII name is its own NFKC form: two of them collide only when equal (one key), so
    // only names with a non-ASCII character start a group. Most catalogs have none.
    let mut groups: HashMap<String, Vec<&Arc<SkillEntry>>> = HashMap::new();
    for e in entries.values().filter(|e| !e.name.is_ascii()) {
        groups.entry(nfkc(&e.name)).or_default().push(e);
    }
    let mut out = Vec::new();
    let mut forms: Vec<(String, Vec<&Arc<SkillEntry>>)> = groups.into_iter().collect();
    forms.sort_by(|a, b| a.0.cmp(&b.0));
    for (form, mut group) in forms {
        let canonical = match entries.get(&form) {
            Some(e) if e.name.is_ascii() => e,
            Some(e) => {
                group.retain(|g| g.name != e.name);
                e
            }
            None => group.remove(0),
        };
        for other in group {
            if across_sources && other.source == canonical.source {
                continue;
            }
            out.push(Problem::new(
                &file_of(other),
                "name",
                format!(
                    "skill '{}' from {} looks like skill '{}' from {}: both read '{form}' after NFKC normalisation; rename one, a model cannot tell them apart",
                    other.name,
                    describe(other),
                    canonical.name,
                    describe(canonical)
                ),
                Severity::Warning,
            ));
        }
    }
    out
}

fn file_of(e: &SkillEntry) -> PathBuf {
    match &e.location {
        SkillLocation::Folder { dir } => dir.join(SKILL_FILE),
        SkillLocation::Loader { .. } => PathBuf::from(&e.source).join(&e.name),
    }
}
