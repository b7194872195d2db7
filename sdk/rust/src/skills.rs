//! Skills the specialist declared, disclosed progressively: the catalog first, a skill's body
//! when needed, and one resource file at a time.

use crate::bindings::specialist::guild::plugin::skills as raw;
use crate::types::{HostError, SkillMeta};

/// Name and description of every skill visible to this specialist.
pub fn catalog() -> Vec<SkillMeta> {
    raw::catalog()
        .into_iter()
        .map(SkillMeta::from_raw)
        .collect()
}

/// The body of one skill, with a listing of its resource files.
pub fn load(name: &str) -> Result<String, HostError> {
    raw::load(name).map_err(HostError::from_raw)
}

/// One resource file of a skill, by path relative to the skill folder.
pub fn read(name: &str, path: &str) -> Result<Vec<u8>, HostError> {
    raw::read(name, path).map_err(HostError::from_raw)
}
