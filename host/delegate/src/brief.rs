//! A child task's brief, checked before the child exists. The parent writes it; the host
//! refuses one that breaks a rule, naming the rule, and the parent's model can fix it and try
//! again. What a checked brief guarantees: it names a specialist the parent may call, carries
//! an objective, a reason and at least one completion criterion, keeps every constraint of the
//! root anchor and of its parent (it may add its own), refers only to context its parent holds,
//! and asks for the `task` validation scope (added when missing).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::anchor::{MAX_ITEM, MAX_ITEMS, MAX_OBJECTIVE, RootAnchor, dedup};
use crate::text::{check_field, check_list, normalize};

/// Longest `context` or `parent_findings`, characters.
pub const MAX_CONTEXT: usize = 16_000;
/// The validation scope every child is checked in.
pub const TASK_SCOPE: &str = "task";

/// What a parent asks of a child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskBrief {
    /// The specialist to run (name; aliases are resolved by the host first).
    pub specialist: String,
    /// What the child is to achieve.
    pub objective: String,
    /// Why the parent needs it (how it serves the parent's goal).
    pub reason: String,
    /// How the child knows it is done; at least one.
    pub completion_criteria: Vec<String>,
    /// What the child should hand back.
    #[serde(default)]
    pub expected_outputs: Vec<String>,
    /// What the parent found so far that the child should know.
    #[serde(default)]
    pub parent_findings: String,
    /// Anything else the child needs: it sees nothing of its parent's thread.
    #[serde(default)]
    pub context: String,
    /// Constraints: the anchor's and the parent's (all of them), plus any the parent adds.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Context the child may read, by reference (artifacts, memory documents, receipts the
    /// parent holds and is granted on).
    #[serde(default)]
    pub context_refs: Vec<String>,
    /// Which validations the child's report goes through; `task` is always among them.
    #[serde(default)]
    pub validation_scopes: Vec<String>,
}

/// The parent's side of a brief check.
pub struct BriefParent<'a> {
    /// The tree's root anchor.
    pub anchor: &'a RootAnchor,
    /// The parent's own constraints (its brief's, which include the anchor's).
    pub constraints: &'a [String],
    /// The specialists the parent's `delegate` grant names.
    pub may_call: &'a [String],
    /// Whether the parent holds (and is granted on) a context reference.
    pub holds: &'a dyn Fn(&str) -> bool,
}

/// A brief that broke a rule; the message names the rule and the field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BriefError {
    /// A field is missing, empty or too large.
    #[error("brief refused: {0}")]
    Field(String),
    /// The specialist is not one the parent may delegate to.
    #[error(
        "brief refused: the delegate grant does not name specialist {specialist:?}; it names: {}",
        names(allowed)
    )]
    Specialist {
        /// Asked for.
        specialist: String,
        /// What the grant names.
        allowed: Vec<String>,
    },
    /// A constraint of the anchor or the parent is missing.
    #[error(
        "brief refused: constraints may only be added, never dropped; missing the {from}'s constraint {constraint:?}"
    )]
    DroppedConstraint {
        /// `root anchor` or `parent`.
        from: &'static str,
        /// The constraint as written there.
        constraint: String,
    },
    /// A context reference the parent does not hold.
    #[error(
        "brief refused: context_refs may name only what the parent holds and is granted on; it does not hold {0:?}"
    )]
    ContextRef(String),
    /// A validation scope name that is not a plain name.
    #[error(
        "brief refused: validation scope {0:?} is not a scope name ([a-z_], 1 to 32 characters)"
    )]
    Scope(String),
}

fn names(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".to_owned()
    } else {
        v.join(", ")
    }
}

/// A brief that passed every rule, normalized (trimmed, lists de-duplicated, `task` scope
/// present), with the hash the host dispatches it under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckedBrief {
    /// The brief as it will run.
    pub brief: TaskBrief,
    /// sha256 of its canonical JSON: an approved brief must be dispatched with this hash.
    pub hash: String,
}

impl TaskBrief {
    /// Checks this brief against its parent and the anchor (module docs), first broken rule
    /// first.
    pub fn check(&self, parent: &BriefParent<'_>) -> Result<CheckedBrief, BriefError> {
        self.check_fields()?;
        if !parent.may_call.iter().any(|s| s == &self.specialist) {
            return Err(BriefError::Specialist {
                specialist: self.specialist.clone(),
                allowed: parent.may_call.to_vec(),
            });
        }
        let own: std::collections::BTreeSet<String> =
            self.constraints.iter().map(|c| normalize(c)).collect();
        let inherited = parent
            .anchor
            .constraints
            .iter()
            .map(|c| ("root anchor", c))
            .chain(parent.constraints.iter().map(|c| ("parent", c)));
        for (from, constraint) in inherited {
            if !own.contains(&normalize(constraint)) {
                return Err(BriefError::DroppedConstraint {
                    from,
                    constraint: constraint.clone(),
                });
            }
        }
        if let Some(r) = self.context_refs.iter().find(|r| !(parent.holds)(r)) {
            return Err(BriefError::ContextRef(r.clone()));
        }
        let mut scopes = dedup(&self.validation_scopes);
        if let Some(bad) = scopes.iter().find(|s| !scope_name(s)) {
            return Err(BriefError::Scope(bad.clone()));
        }
        if !scopes.iter().any(|s| s == TASK_SCOPE) {
            scopes.insert(0, TASK_SCOPE.to_owned());
        }
        let brief = TaskBrief {
            specialist: self.specialist.trim().to_owned(),
            objective: self.objective.trim().to_owned(),
            reason: self.reason.trim().to_owned(),
            completion_criteria: dedup(&self.completion_criteria),
            expected_outputs: dedup(&self.expected_outputs),
            parent_findings: self.parent_findings.trim().to_owned(),
            context: self.context.trim().to_owned(),
            constraints: dedup(&self.constraints),
            context_refs: dedup(&self.context_refs),
            validation_scopes: scopes,
        };
        let hash = brief.hash();
        Ok(CheckedBrief { brief, hash })
    }

    fn check_fields(&self) -> Result<(), BriefError> {
        let field = BriefError::Field;
        check_field("specialist", &self.specialist, 64).map_err(field)?;
        check_field("objective", &self.objective, MAX_OBJECTIVE).map_err(field)?;
        check_field("reason", &self.reason, MAX_ITEM).map_err(field)?;
        check_list(
            "completion_criteria",
            &self.completion_criteria,
            1,
            MAX_ITEMS,
            MAX_ITEM,
        )
        .map_err(field)?;
        check_list(
            "expected_outputs",
            &self.expected_outputs,
            0,
            MAX_ITEMS,
            MAX_ITEM,
        )
        .map_err(field)?;
        // Inherited constraints count too: twice the anchor's room.
        check_list("constraints", &self.constraints, 0, 2 * MAX_ITEMS, MAX_ITEM).map_err(field)?;
        check_list("context_refs", &self.context_refs, 0, MAX_ITEMS, MAX_ITEM).map_err(field)?;
        check_list("validation_scopes", &self.validation_scopes, 0, 8, 32).map_err(field)?;
        for (name, text) in [
            ("context", &self.context),
            ("parent_findings", &self.parent_findings),
        ] {
            let chars = text.chars().count();
            if chars > MAX_CONTEXT {
                return Err(field(format!(
                    "`{name}` has {chars} characters, over the limit of {MAX_CONTEXT}"
                )));
            }
        }
        Ok(())
    }

    /// sha256 of the brief's canonical JSON (fields in declaration order), hex.
    pub fn hash(&self) -> String {
        use sha2::Digest as _;
        let json = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(sha2::Sha256::digest(json))
    }
}

fn scope_name(s: &str) -> bool {
    (1..=32).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}
