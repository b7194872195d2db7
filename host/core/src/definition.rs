//! A plugin's definition beside its component (the WIT `definition` interface): its name, the
//! `prompt.md` in its folder and its manifest's `[agent]` table, read once at load. A
//! specialist defined by a prompt (one shared agent-loop component, many folders) reads them
//! at run time; an edit of `prompt.md` is a change of the plugin folder, so it reloads the
//! plugin like any other file.

use std::io::Read;
use std::path::PathBuf;

use crate::error::LoadError;
use crate::manifest::Manifest;

/// The prompt file's name inside a plugin folder.
pub const PROMPT_FILE: &str = "prompt.md";
/// Largest `prompt.md` read, bytes.
pub const MAX_PROMPT_BYTES: u64 = 64 * 1024;

/// What a plugin's folder defines beside its component.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Definition {
    /// `[plugin] name`.
    pub name: String,
    /// `prompt.md`, if the folder has one.
    pub prompt: Option<String>,
    /// The `[agent]` table as a JSON object (`{}` when there is none).
    pub settings: String,
}

impl Definition {
    /// Reads `prompt.md` (at most [`MAX_PROMPT_BYTES`], UTF-8) and the `[agent]` table of
    /// `manifest`. An oversized or non-UTF-8 prompt refuses the load naming the file.
    pub fn load(manifest: &Manifest) -> Result<Self, LoadError> {
        let file = manifest.dir.join(PROMPT_FILE);
        let err = |message: String| LoadError::Definition {
            plugin: manifest.name().to_owned(),
            file: file.clone(),
            message,
        };
        let prompt = match std::fs::symlink_metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(err(format!("cannot read: {e}"))),
            Ok(meta) if !meta.is_file() => {
                return Err(err(
                    "is not a regular file (a symbolic link is not followed)".to_owned(),
                ));
            }
            Ok(_) => Some(read_prompt(&file).map_err(err)?),
        };
        let settings = serde_json::to_string(&manifest.agent)
            .map_err(|e| err(format!("`[agent]` cannot be expressed as JSON: {e}")))?;
        Ok(Self {
            name: manifest.name().to_owned(),
            prompt,
            settings,
        })
    }
}

fn read_prompt(file: &PathBuf) -> Result<String, String> {
    let f = std::fs::File::open(file).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_PROMPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_PROMPT_BYTES {
        return Err(format!(
            "is larger than the limit of {MAX_PROMPT_BYTES} bytes; shorten the prompt"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "is not UTF-8 text (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn manifest(dir: &Path, agent: &str) -> Manifest {
        let text = format!(
            "[plugin]\nname = \"writer\"\nversion = \"1.0.0\"\nkind = \"specialist\"\n\
             component = \"w.wasm\"\n{agent}"
        );
        Manifest::parse(&text, dir).expect("manifest parses")
    }

    #[test]
    fn prompt_and_agent_settings_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(PROMPT_FILE), "You write.").expect("write");
        let m = manifest(dir.path(), "[agent]\nmodel = \"fast\"\nmax_turns = 4\n");
        let d = Definition::load(&m).expect("loads");
        assert_eq!(d.name, "writer");
        assert_eq!(d.prompt.as_deref(), Some("You write."));
        let settings: serde_json::Value = serde_json::from_str(&d.settings).expect("json");
        assert_eq!(
            settings,
            serde_json::json!({"model": "fast", "max_turns": 4})
        );
    }

    #[test]
    fn no_prompt_and_no_agent_table_are_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = Definition::load(&manifest(dir.path(), "")).expect("loads");
        assert_eq!(d.prompt, None);
        assert_eq!(d.settings, "{}");
    }

    #[test]
    fn an_oversized_or_binary_prompt_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let m = manifest(dir.path(), "");
        let file = dir.path().join(PROMPT_FILE);
        std::fs::write(&file, "x".repeat(MAX_PROMPT_BYTES as usize + 1)).expect("write");
        let e = Definition::load(&m).expect_err("too large").to_string();
        assert!(e.contains("prompt.md") && e.contains("larger than"), "{e}");
        std::fs::write(&file, b"ok \xff\xfe").expect("write");
        let e = Definition::load(&m).expect_err("not utf-8").to_string();
        assert!(e.contains("prompt.md") && e.contains("not UTF-8"), "{e}");
        std::fs::write(&file, "x".repeat(MAX_PROMPT_BYTES as usize)).expect("write");
        assert!(Definition::load(&m).is_ok(), "a prompt at the limit loads");
    }
}
