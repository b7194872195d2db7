//! The folder the MCP tests serve: the probe and echo components, a supervisor skill with a
//! text and a binary resource, and a second configuration that adds the kb specialist.

use super::plugin;

/// A folder with `guild.toml` (probe and echo; probe may call `echo.guarded`, which needs
/// approval; `extra` appended), `reloaded.toml` (the same plus the kb specialist) and a
/// supervisor skill with a text and a binary resource.
pub(crate) fn setup_with(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = |plugins: &[&str]| {
        let list: Vec<String> = plugins.iter().map(|p| format!("{:?}", plugin(p))).collect();
        format!(
            "[host]\nplugins = [{}]\ndata_dir = \"data\"\n\n[grants.probe]\nreport = true\ntools = [\"echo.guarded\"]\n\n[skills]\nsupervisor = [\"skills\"]\n{extra}",
            list.join(", ")
        )
    };
    let write = |rel: &str, bytes: &[u8]| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
    };
    write(
        "guild.toml",
        config(&["testing/probe", "testing/echo"]).as_bytes(),
    );
    write(
        "reloaded.toml",
        config(&["testing/probe", "testing/echo", "kb"]).as_bytes(),
    );
    write(
        "skills/release-notes/SKILL.md",
        b"---\nname: release-notes\ndescription: How to write release notes for a Guild release.\n---\n\nWrite the notes from the template in template.md.\n",
    );
    write(
        "skills/release-notes/template.md",
        b"# Release X.Y\n\n## Changes\n",
    );
    write(
        "skills/release-notes/logo.bin",
        &[0x89, 0x00, 0xff, 0xfe, 0x10],
    );
    dir
}

/// The usual setup, with the workspace `acme` and user `ann` named for memory.
pub(crate) fn setup() -> tempfile::TempDir {
    setup_with("\n[memory]\nworkspace = \"acme\"\nuser = \"ann\"\n")
}
