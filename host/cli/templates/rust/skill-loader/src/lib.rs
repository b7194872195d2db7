//! Skill loader `{{name}}`: serves one built-in skill, `hello`. Replace `SKILLS` with your own
//! source (files compiled in, an HTTP API through the `http` capability, ...).

use guild_sdk::{HostError, SkillLoader, SkillMeta};

/// The built-in skills: (name, description, SKILL.md body).
const SKILLS: &[(&str, &str, &str)] = &[(
    "hello",
    "How to greet a new teammate.",
    "# Hello\n\nGreet by name, say what you work on, offer one next step.\n",
)];

struct Plugin;

impl SkillLoader for Plugin {
    fn list() -> Vec<SkillMeta> {
        SKILLS
            .iter()
            .map(|(name, description, _)| SkillMeta::new(*name, *description))
            .collect()
    }

    fn load(name: String) -> Result<String, HostError> {
        find(&name).map(|(_, _, body)| (*body).to_owned())
    }

    fn read(name: String, path: String) -> Result<Vec<u8>, HostError> {
        find(&name)?;
        Err(HostError::InvalidInput(format!(
            "skill `{name}` has no resource `{path}`"
        )))
    }
}

/// The skill called `name`, or an error naming the skills there are.
fn find(name: &str) -> Result<&'static (&'static str, &'static str, &'static str), HostError> {
    SKILLS.iter().find(|(n, _, _)| *n == name).ok_or_else(|| {
        let names: Vec<&str> = SKILLS.iter().map(|(n, _, _)| *n).collect();
        HostError::InvalidInput(format!("no skill `{name}`; skills: {}", names.join(", ")))
    })
}

guild_sdk::export_skill_loader!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_skill_loads_and_an_unknown_one_names_the_others() {
        assert!(find("hello").is_ok());
        assert!(matches!(find("nope"), Err(HostError::InvalidInput(m)) if m.contains("hello")));
    }
}
