//! Skill loader `{{name}}`: serves one built-in skill, `hello`, with one resource file. Replace
//! `SKILLS` with your own source (files compiled in, an HTTP API through the `http` capability,
//! ...).

use guild_sdk::{HostError, SkillLoader, SkillMeta};

/// One built-in skill.
struct Skill {
    name: &'static str,
    description: &'static str,
    /// The SKILL.md body.
    body: &'static str,
    /// Resource files: (path relative to the skill, contents).
    files: &'static [(&'static str, &'static str)],
}

const SKILLS: &[Skill] = &[Skill {
    name: "hello",
    description: "How to greet a new teammate.",
    body: "# Hello\n\nGreet by name, say what you work on, offer one next step.\n\
           Before the first meeting, go through `checklist.md`.\n",
    files: &[(
        "checklist.md",
        "- [ ] name\n- [ ] what you work on\n- [ ] one next step\n",
    )],
}];

struct Plugin;

impl SkillLoader for Plugin {
    fn list() -> Vec<SkillMeta> {
        SKILLS
            .iter()
            .map(|s| SkillMeta::new(s.name, s.description))
            .collect()
    }

    fn load(name: String) -> Result<String, HostError> {
        find(&name).map(|s| s.body.to_owned())
    }

    fn read(name: String, path: String) -> Result<Vec<u8>, HostError> {
        resource(&name, &path).map(|text| text.as_bytes().to_vec())
    }
}

/// The skill called `name`, or an error naming the skills there are.
fn find(name: &str) -> Result<&'static Skill, HostError> {
    SKILLS.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = SKILLS.iter().map(|s| s.name).collect();
        HostError::InvalidInput(format!("no skill `{name}`; skills: {}", names.join(", ")))
    })
}

/// Resource `path` of skill `name`, or an error naming the files it has.
fn resource(name: &str, path: &str) -> Result<&'static str, HostError> {
    let skill = find(name)?;
    match skill.files.iter().find(|(p, _)| *p == path) {
        Some((_, text)) => Ok(text),
        None => {
            let paths: Vec<&str> = skill.files.iter().map(|(p, _)| *p).collect();
            Err(HostError::InvalidInput(format!(
                "skill `{name}` has no resource `{path}`; it has: {}",
                paths.join(", ")
            )))
        }
    }
}

guild_sdk::export_skill_loader!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_skill_loads_with_its_resource() {
        assert!(find("hello").is_ok_and(|s| s.body.contains("# Hello")));
        assert!(resource("hello", "checklist.md").is_ok_and(|t| t.contains("next step")));
    }

    #[test]
    fn an_unknown_skill_or_resource_names_what_there_is() {
        assert!(matches!(find("nope"), Err(HostError::InvalidInput(m)) if m.contains("hello")));
        assert!(matches!(
            resource("hello", "absent.md"),
            Err(HostError::InvalidInput(m)) if m.contains("checklist.md")
        ));
    }
}
