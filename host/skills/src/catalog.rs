//! The catalog: every skill one caller may see, by name, with the rule for name collisions and
//! the diff the watcher reports.
//!
//! **Collision rule** (fixed): sources are ranked by kind — a plugin's own `skills/` folders,
//! then shared folders (`shared:NAME` or folders listed in `guild.toml`), then skill-loader
//! plugins — and within a kind by the order they are listed. The first skill of a name wins;
//! every later one is dropped with a warning naming both places. Within one folder, a skill
//! whose folder name matches its name wins over one that does not (a symlinked alias folder
//! cannot hide the skill's own folder). Names that differ but read the same after NFKC
//! normalisation (`my-skill`, fullwidth `ｍｙ-skill`) are both kept, with a warning naming both
//! folders ([`super::lookalike`]).
//!
//! Each entry's description is listed as one line of at most [`MAX_DESCRIPTION`] characters,
//! neutralized ([`listed_description`]), before the catalog's byte budget is applied: one
//! skill cannot crowd the others out.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::contents::{Contents, ResourceFile};
use super::format::{MAX_DESCRIPTION, Problem, Severity, SkillMeta, nfkc};
use super::safe_text::catalog_line;

/// Where a skill's body and resources come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum SkillLocation {
    /// A folder on disk.
    Folder {
        /// The skill folder (holding `SKILL.md`).
        dir: PathBuf,
    },
    /// A skill-loader plugin.
    Loader {
        /// The loader plugin's name.
        plugin: String,
    },
}

/// One skill in a catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillEntry {
    /// Name (catalog key).
    pub name: String,
    /// Description as the catalog lists it: one line, neutralized, at most
    /// [`MAX_DESCRIPTION`] characters ([`listed_description`]).
    pub description: String,
    /// The whole frontmatter.
    pub meta: SkillMeta,
    /// Where it lives.
    pub location: SkillLocation,
    /// The source it came from, as the caller declared it (`shared:team`, `loader:x`, ...).
    /// Shown to models instead of host paths.
    pub source: String,
    /// The folder's files besides `SKILL.md`, walked on first use ([`SkillEntry::resources`],
    /// [`SkillEntry::full_bytes`]); none for a skill a loader serves.
    #[serde(flatten)]
    pub contents: Contents,
    /// Size of `SKILL.md`, bytes (0 for loader skills: unknown until loaded).
    pub skill_md_bytes: u64,
    /// Changes whenever `SKILL.md` changes or the skill folder gains, loses or renames an
    /// entry (what the watcher re-scans on).
    pub fingerprint: String,
}

/// The catalog form of skill `name`'s description `raw` (see [`catalog_line`]), and a warning
/// naming the skill when it had to be cut. `file` is where the description was written.
pub(crate) fn listed_description(name: &str, raw: &str, file: &Path) -> (String, Option<Problem>) {
    let (line, cut) = catalog_line(raw, MAX_DESCRIPTION);
    let warning = cut.then(|| {
        Problem::new(
            file,
            "description",
            format!(
                "skill '{name}': the description has {} characters, over the specification's {MAX_DESCRIPTION}; the catalog lists its first {MAX_DESCRIPTION}",
                raw.chars().count()
            ),
            Severity::Warning,
        )
    });
    (line, warning)
}

/// How many skills a model is not shown because the catalog is over its byte budget, and
/// why: the machine-readable side of the last line of [`Catalog::render`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Omitted {
    /// Skills a model may see that the catalog leaves out (0: none).
    pub count: usize,
    /// `"catalog_max_bytes"` when some are left out, else `None`.
    pub reason: Option<&'static str>,
    /// The budget, bytes (`[skills] catalog_max_bytes`), when some are left out.
    pub limit_bytes: Option<usize>,
}

impl SkillEntry {
    /// True when the skill lives in a folder whose name is its name (after NFKC
    /// normalisation, as the folder-name check compares them).
    pub(crate) fn folder_matches(&self) -> bool {
        match &self.location {
            SkillLocation::Folder { dir } => dir
                .file_name()
                .is_some_and(|f| nfkc(&f.to_string_lossy()) == nfkc(&self.name)),
            SkillLocation::Loader { .. } => false,
        }
    }

    /// Resource files (folders only; a loader does not list its resources).
    pub fn resources(&self) -> &[ResourceFile] {
        &self.contents.get().resources
    }

    /// `SKILL.md` plus every resource, bytes: what pasting the whole skill would cost (0 for
    /// a loader's skill).
    pub fn full_bytes(&self) -> u64 {
        self.contents.get().full_bytes
    }
}

/// One line of the catalog as a caller sees it (level 1 of disclosure).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CatalogItem {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Source label.
    pub location: String,
}

/// A set of skills by name, plus the problems found while building it.
///
/// What a model is shown ([`Catalog::render`], [`Catalog::items`]) leaves out skills marked
/// `disable-model-invocation: true` (they stay loadable by name) and lists, in name order,
/// every line that fits the byte budget (`[skills] catalog_max_bytes`), saying in a last line
/// how many it left out ([`Catalog::omitted`] says it as data).
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: BTreeMap<String, Arc<SkillEntry>>,
    /// Warnings and skipped skills, in the order found.
    pub problems: Vec<Problem>,
    /// Most bytes of the rendered catalog; `None`: no limit.
    budget: Option<usize>,
}

/// What changed between two catalogs, by skill name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CatalogDiff {
    /// New names.
    pub added: Vec<String>,
    /// Same name, different files or description.
    pub changed: Vec<String>,
    /// Names that are gone.
    pub removed: Vec<String>,
}

impl CatalogDiff {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

impl fmt::Display for CatalogDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (sign, names) in [
            ("+", &self.added),
            ("~", &self.changed),
            ("-", &self.removed),
        ] {
            parts.extend(names.iter().map(|n| format!("{sign}{n}")));
        }
        if parts.is_empty() {
            f.write_str("no change")
        } else {
            f.write_str(&parts.join(" "))
        }
    }
}

impl Catalog {
    /// One skill by name.
    pub fn get(&self, name: &str) -> Option<&Arc<SkillEntry>> {
        self.entries.get(name)
    }

    /// Every skill, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<SkillEntry>> {
        self.entries.values()
    }

    /// Every name, sorted.
    pub fn names(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// Number of skills.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no skill.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What pasting every skill whole (SKILL.md and resources) would cost, bytes.
    pub fn full_bytes(&self) -> u64 {
        self.entries.values().map(|e| e.full_bytes()).sum()
    }

    /// Adds `entry` unless its name is taken; a collision is a warning naming both places.
    pub(crate) fn insert_first_wins(&mut self, entry: Arc<SkillEntry>, context: &Path) {
        match self.entries.get_mut(&entry.name) {
            Some(winner) if takes_over(&entry, winner) => {
                let loser = std::mem::replace(winner, entry);
                let problem = Self::hidden(&loser, winner, context);
                self.problems.push(problem);
            }
            Some(winner) => self.problems.push(Self::hidden(&entry, winner, context)),
            None => {
                self.entries.insert(entry.name.clone(), entry);
            }
        }
    }

    /// [`Catalog::insert_first_wins`] for each of `entries` in order, into an empty catalog:
    /// the same entries and problems, with the map built in one pass from sorted entries
    /// instead of one search per skill (a cold scan of 10,000 skills).
    pub(crate) fn fill_first_wins(&mut self, entries: Vec<Arc<SkillEntry>>, context: &Path) {
        if !self.entries.is_empty() {
            for entry in entries {
                self.insert_first_wins(entry, context);
            }
            return;
        }
        let mut sorted: Vec<(usize, Arc<SkillEntry>)> = entries.into_iter().enumerate().collect();
        // Stable: entries of one name stay in the order given, so the first one wins.
        sorted.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        let mut hidden = Vec::new();
        let mut winners: Vec<(String, Arc<SkillEntry>)> = Vec::with_capacity(sorted.len());
        for (at, entry) in sorted {
            match winners.last_mut() {
                Some((name, winner)) if *name == entry.name => {
                    if takes_over(&entry, winner) {
                        let loser = std::mem::replace(winner, entry);
                        hidden.push((at, Self::hidden(&loser, winner, context)));
                    } else {
                        hidden.push((at, Self::hidden(&entry, winner, context)));
                    }
                }
                _ => winners.push((entry.name.clone(), entry)),
            }
        }
        hidden.sort_by_key(|(at, _)| *at);
        self.problems.extend(hidden.into_iter().map(|(_, p)| p));
        self.entries = winners.into_iter().collect();
    }

    /// Warns about every pair of names that read the same after NFKC normalisation; with
    /// `across_sources`, only pairs from different sources (a folder's scan warned about its
    /// own).
    pub(crate) fn warn_lookalikes(&mut self, across_sources: bool) {
        let found = super::lookalike::problems(&self.entries, across_sources);
        self.problems.extend(found);
    }

    /// The warning for `entry`, hidden by `winner` of the same name.
    fn hidden(entry: &SkillEntry, winner: &SkillEntry, context: &Path) -> Problem {
        let why = if entry.source == winner.source && winner.folder_matches() {
            "its folder's name is the skill's name"
        } else {
            "earlier source wins"
        };
        Problem::new(
            context,
            "name",
            format!(
                "skill '{}' from {} is hidden by the one from {} ({why})",
                entry.name,
                describe(entry),
                describe(winner)
            ),
            Severity::Warning,
        )
    }

    /// Merges catalogs given in precedence order: the first skill of each name wins.
    pub fn merge(layers: impl IntoIterator<Item = Catalog>) -> Catalog {
        let mut out = Catalog::default();
        for layer in layers {
            out.problems.extend(layer.problems);
            for entry in layer.entries.into_values() {
                let context = PathBuf::from(entry.source.clone());
                out.insert_first_wins(entry, &context);
            }
        }
        out.warn_lookalikes(true);
        out
    }

    /// Added, changed and removed names from `old` to `new`.
    pub fn diff(old: &Catalog, new: &Catalog) -> CatalogDiff {
        let mut diff = CatalogDiff::default();
        for (name, entry) in &new.entries {
            match old.entries.get(name) {
                None => diff.added.push(name.clone()),
                // The same `Arc` (a skill the re-scan reused) is unchanged without a look inside.
                Some(prev)
                    if !Arc::ptr_eq(prev, entry)
                        && (prev.fingerprint != entry.fingerprint || prev != entry) =>
                {
                    diff.changed.push(name.clone())
                }
                Some(_) => {}
            }
        }
        diff.removed = old
            .entries
            .keys()
            .filter(|n| !new.entries.contains_key(*n))
            .cloned()
            .collect();
        diff
    }

    /// The same catalog, rendered within `bytes` at most.
    pub fn with_budget(mut self, bytes: usize) -> Self {
        self.budget = Some(bytes);
        self
    }

    /// The byte budget of [`Catalog::render`], if any.
    pub fn budget(&self) -> Option<usize> {
        self.budget
    }

    /// Names a model may see listed (not `disable-model-invocation`), sorted.
    pub fn listed_names(&self) -> Vec<String> {
        self.listable().map(|e| e.name.clone()).collect()
    }

    fn listable(&self) -> impl Iterator<Item = &Arc<SkillEntry>> {
        self.entries
            .values()
            .filter(|e| !e.meta.disable_model_invocation)
    }

    /// The lines a model is shown, within the budget, and how many listable skills were left
    /// out for lack of room.
    fn lines(&self) -> (Vec<(&Arc<SkillEntry>, String)>, usize) {
        let budget = self.budget.unwrap_or(usize::MAX);
        let mut used = HEADER.len() + TRUNCATION_RESERVE;
        let mut lines = Vec::new();
        let mut omitted = 0;
        // Every line that fits, in name order: a long entry left out does not take the
        // shorter ones after it along.
        for e in self.listable() {
            if budget.saturating_sub(used) < SHORTEST_LINE {
                omitted += 1; // full: no need to format the rest
                continue;
            }
            let line = format!(
                "- {}: {} [{}]\n",
                e.name,
                one_line(&e.description),
                e.source
            );
            if used + line.len() <= budget {
                used += line.len();
                lines.push((e, line));
            } else {
                omitted += 1;
            }
        }
        (lines, omitted)
    }

    /// How many skills a model may see are left out of [`Catalog::render`] and
    /// [`Catalog::items`] for lack of room, and why.
    pub fn omitted(&self) -> Omitted {
        let count = self.lines().1;
        Omitted {
            count,
            reason: (count > 0).then_some("catalog_max_bytes"),
            limit_bytes: self.budget.filter(|_| count > 0),
        }
    }

    /// Level 1 as data: name, description and source of every skill a model may see, the
    /// same ones [`Catalog::render`] lists.
    pub fn items(&self) -> Vec<CatalogItem> {
        self.lines()
            .0
            .into_iter()
            .map(|(e, _)| CatalogItem {
                name: e.name.clone(),
                description: one_line(&e.description),
                location: e.source.clone(),
            })
            .collect()
    }

    /// Level 1 as text for a model: one line per skill, within the budget; when skills are
    /// left out, a last line says how many and why.
    pub fn render(&self) -> String {
        let (lines, omitted) = self.lines();
        if lines.is_empty() && omitted == 0 {
            return "No skills are available.\n".to_owned();
        }
        let mut out = String::from(HEADER);
        for (_, line) in lines {
            out.push_str(&line);
        }
        if omitted > 0 {
            // Writing to a String cannot fail.
            let _ = writeln!(
                out,
                "({omitted} more skill(s) not listed: the catalog is limited to {} bytes by [skills] catalog_max_bytes)",
                self.budget.unwrap_or_default()
            );
        }
        out
    }
}

const HEADER: &str =
    "Skills you can load (load one by name when the task matches its description):\n";
/// Bytes of the shortest catalog line (`- a: b [c]\n`).
const SHORTEST_LINE: usize = 11;
/// Room kept for the truncation line (its longest form is about 110 bytes).
const TRUNCATION_RESERVE: usize = 128;

/// True when `entry` should replace `winner` of the same name: within one source (one
/// folder), a skill whose folder is named for it over one that is not (an alias).
fn takes_over(entry: &SkillEntry, winner: &SkillEntry) -> bool {
    entry.source == winner.source && entry.folder_matches() && !winner.folder_matches()
}

pub(crate) fn describe(e: &SkillEntry) -> String {
    match &e.location {
        SkillLocation::Folder { dir } => format!("{} ({})", e.source, dir.display()),
        SkillLocation::Loader { .. } => e.source.clone(),
    }
}

/// Collapses whitespace runs (including newlines) so one skill is one catalog line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
