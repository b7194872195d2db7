//! Skills the way the skills protocol intends (docs/skills.md): the catalog goes into the system
//! prompt, and the model loads a body (`load_skill`) or one resource file
//! (`read_skill_resource`) when it needs it. Each body is fetched from the host once per run; a
//! second load answers that it is already in the conversation.

use std::collections::BTreeSet;

use guild_sdk::SkillMeta;
use guild_sdk::agent::refusal;
use guild_sdk::llm::ToolDefinition;
use serde_json::{Value, json};

use crate::env::Env;

/// The tool that loads a skill's body.
pub(crate) const LOAD: &str = "load_skill";
/// The tool that reads one resource file of a skill.
pub(crate) const READ: &str = "read_skill_resource";
/// The most of one resource file the model is shown, bytes.
const MAX_RESOURCE_BYTES: usize = 64 * 1024;

/// The two skill tools, as the model sees them.
pub(crate) fn definitions(catalog: &[SkillMeta]) -> Vec<ToolDefinition> {
    let names: Vec<&str> = catalog.iter().map(|s| s.name.as_str()).collect();
    vec![
        ToolDefinition::new(
            LOAD,
            "Loads the instructions of one skill from the catalog. Load a skill before doing the \
             kind of work it describes; some tools answer only after their skill is loaded.",
            &json!({
                "type": "object",
                "properties": { "name": { "type": "string", "enum": names } },
                "required": ["name"],
                "additionalProperties": false,
            }),
        ),
        ToolDefinition::new(
            READ,
            "Reads one resource file a loaded skill lists, by its path relative to the skill.",
            &json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "enum": names },
                    "path": { "type": "string" },
                },
                "required": ["name", "path"],
                "additionalProperties": false,
            }),
        ),
    ]
}

/// The skills loaded in this run.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    names: BTreeSet<String>,
}

impl Loaded {
    /// Runs `load_skill` or `read_skill_resource`; returns what the model reads.
    pub(crate) fn call(&mut self, env: &mut dyn Env, tool: &str, arguments: &Value) -> String {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str);
        let Some(name) = text("name") else {
            return refusal(&format!(
                "`{tool}` needs a string `name` from the skills catalog"
            ));
        };
        match tool {
            LOAD => self.load(env, name),
            READ => match text("path") {
                Some(path) => read(env, name, path),
                None => refusal("`read_skill_resource` needs a string `path`"),
            },
            other => refusal(&format!("no tool named `{other}` is available to you")),
        }
    }

    fn load(&mut self, env: &mut dyn Env, name: &str) -> String {
        if self.names.contains(name) {
            return json!({
                "skill": name,
                "note": "already loaded earlier in this conversation; its instructions are unchanged",
            })
            .to_string();
        }
        match env.load_skill(name) {
            Ok(body) => {
                self.names.insert(name.to_owned());
                env.progress(&format!("loaded skill {name}"));
                json!({ "skill": name, "instructions": body }).to_string()
            }
            Err(err) => refusal(&format!("skill `{name}` could not be loaded: {err}")),
        }
    }

    /// The skills loaded so far, in name order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

fn read(env: &mut dyn Env, name: &str, path: &str) -> String {
    match env.read_skill(name, path) {
        Ok(bytes) => match std::str::from_utf8(&bytes) {
            Ok(text) if text.len() <= MAX_RESOURCE_BYTES => {
                json!({ "skill": name, "path": path, "content": text }).to_string()
            }
            Ok(_) => refusal(&format!(
                "`{path}` of skill `{name}` is {} bytes, more than the {MAX_RESOURCE_BYTES} shown",
                bytes.len()
            )),
            Err(_) => refusal(&format!(
                "`{path}` of skill `{name}` is a binary file of {} bytes; it cannot be shown",
                bytes.len()
            )),
        },
        Err(err) => refusal(&format!(
            "`{path}` of skill `{name}` could not be read: {err}"
        )),
    }
}
