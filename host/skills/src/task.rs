//! Per-task skill state: which skills a task loaded, the bytes each disclosure level returned,
//! and the two gates the tool-call path asks before calling a connector.
//!
//! **requires-skill**: a tool whose spec names `requires-skill = "X"` answers
//! `load skill 'X' first` until X is loaded in the same task.
//!
//! **strict allowed-tools** (off by default, per specialist): while any loaded skill has an
//! `allowed-tools` field, a tool call must match an entry of at least one such skill. Entries
//! map to connector tools as: `connector.tool` (exact) or `connector.*` (every tool of that
//! connector). Other spellings (e.g. `Read`, `Bash(git:*)` from other hosts) match no connector
//! tool; a skill listing only those therefore allows no tool at all in strict mode.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use super::disclose::approx_tokens;

/// What one task has loaded and been served. Shared by every host call of the task.
#[derive(Debug, Default)]
pub struct TaskSkills {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    catalog_calls: u64,
    catalog_bytes: u64,
    /// Full size of every skill in the last catalog served: what pasting them all would cost.
    visible_full_bytes: u64,
    notes_bytes: u64,
    skills: BTreeMap<String, Loaded>,
    /// Bytes served per (skill, path). Reading a resource does not load its skill.
    resources: BTreeMap<(String, String), u64>,
}

#[derive(Debug, Default, Clone)]
struct Loaded {
    body_bytes: u64,
    full_bytes: u64,
    allowed_tools: Option<Vec<String>>,
}

/// Per-task totals, for `guild skills stats` and task results.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TaskSkillStats {
    /// Catalog calls served.
    pub catalog_calls: u64,
    /// Bytes of catalogs served.
    pub catalog_bytes: u64,
    /// Bytes of bodies served.
    pub body_bytes: u64,
    /// Bytes of resources served.
    pub resource_bytes: u64,
    /// Bytes of "already loaded" notes.
    pub notes_bytes: u64,
    /// Everything returned.
    pub returned_bytes: u64,
    /// `returned_bytes` / 4.
    pub returned_tokens: u64,
    /// Skills loaded, sorted.
    pub loaded: Vec<String>,
    /// SKILL.md + resources of the loaded skills, bytes.
    pub loaded_full_bytes: u64,
    /// SKILL.md + resources of every skill in the catalog served, bytes.
    pub visible_full_bytes: u64,
    /// `visible_full_bytes - returned_bytes`: what progressive disclosure saved.
    pub saved_bytes: u64,
}

impl TaskSkills {
    /// An empty tracker for a new task.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock means a panic mid-update of plain counters: still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `skill` is loaded in this task.
    pub fn is_loaded(&self, skill: &str) -> bool {
        self.state().skills.contains_key(skill)
    }

    /// Loaded skills, sorted.
    pub fn loaded(&self) -> Vec<String> {
        self.state().skills.keys().cloned().collect()
    }

    /// Records a catalog served (`full_bytes`: what the whole skills would have cost).
    pub fn record_catalog(&self, bytes: u64, full_bytes: u64) {
        let mut s = self.state();
        s.catalog_calls += 1;
        s.catalog_bytes += bytes;
        s.visible_full_bytes = s.visible_full_bytes.max(full_bytes);
    }

    /// Records a body served; returns false (and records nothing) if it was already loaded.
    pub fn record_body(
        &self,
        skill: &str,
        bytes: u64,
        full_bytes: u64,
        allowed_tools: Option<Vec<String>>,
    ) -> bool {
        let mut s = self.state();
        if s.skills.contains_key(skill) {
            return false;
        }
        s.skills.insert(
            skill.to_owned(),
            Loaded {
                body_bytes: bytes,
                full_bytes,
                allowed_tools,
            },
        );
        true
    }

    /// Records an "already loaded" note served.
    pub fn record_note(&self, bytes: u64) {
        self.state().notes_bytes += bytes;
    }

    /// Records a resource served.
    pub fn record_resource(&self, skill: &str, path: &str, bytes: u64) {
        *self
            .state()
            .resources
            .entry((skill.to_owned(), path.to_owned()))
            .or_default() += bytes;
    }

    /// Totals so far.
    pub fn stats(&self) -> TaskSkillStats {
        let s = self.state();
        let body_bytes = s.skills.values().map(|l| l.body_bytes).sum();
        let resource_bytes = s.resources.values().sum();
        let returned = s.catalog_bytes + body_bytes + resource_bytes + s.notes_bytes;
        TaskSkillStats {
            catalog_calls: s.catalog_calls,
            catalog_bytes: s.catalog_bytes,
            body_bytes,
            resource_bytes,
            notes_bytes: s.notes_bytes,
            returned_bytes: returned,
            returned_tokens: approx_tokens(returned),
            loaded: s.skills.keys().cloned().collect(),
            loaded_full_bytes: s.skills.values().map(|l| l.full_bytes).sum(),
            visible_full_bytes: s.visible_full_bytes,
            saved_bytes: s.visible_full_bytes.saturating_sub(returned),
        }
    }

    /// The requires-skill gate: `Some(message)` when `required` is set and not loaded yet.
    /// The message is what the tool call answers, verbatim: `load skill 'X' first`.
    pub fn requires_skill_gate(&self, required: Option<&str>) -> Option<String> {
        let skill = required?;
        if self.is_loaded(skill) {
            None
        } else {
            Some(format!("load skill '{skill}' first"))
        }
    }

    /// The strict allowed-tools gate for a call of `tool` (`connector.tool`): `Some(message)`
    /// when `strict` is on, some loaded skill has `allowed-tools`, and no such skill allows
    /// `tool`. Always `None` when `strict` is off.
    pub fn allowed_tools_gate(&self, tool: &str, strict: bool) -> Option<String> {
        if !strict {
            return None;
        }
        let s = self.state();
        let active: Vec<(&String, &Vec<String>)> = s
            .skills
            .iter()
            .filter_map(|(n, l)| l.allowed_tools.as_ref().map(|a| (n, a)))
            .collect();
        if active.is_empty()
            || active
                .iter()
                .any(|(_, list)| list.iter().any(|p| tool_matches(p, tool)))
        {
            return None;
        }
        let lists: Vec<String> = active
            .iter()
            .map(|(n, list)| format!("'{n}' allows: {}", join_or_none(list)))
            .collect();
        Some(format!(
            "tool '{tool}' is refused: strict allowed-tools mode is on and no active skill allows it ({})",
            lists.join("; ")
        ))
    }
}

/// Whether an `allowed-tools` entry allows `tool` (`connector.tool`): exact, or `connector.*`.
pub fn tool_matches(pattern: &str, tool: &str) -> bool {
    if pattern == tool {
        return true;
    }
    match (pattern.strip_suffix(".*"), tool.split_once('.')) {
        (Some(connector), Some((c, _))) => !connector.is_empty() && connector == c,
        _ => false,
    }
}

fn join_or_none(list: &[String]) -> String {
    if list.is_empty() {
        "nothing".to_owned()
    } else {
        list.join(" ")
    }
}
