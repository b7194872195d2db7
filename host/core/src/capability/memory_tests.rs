//! Memory rights: allowed and denied pairs for each right, the empty grant denying all, and
//! malformed entries refused when the files are read.

use std::path::Path;

use super::*;
use crate::config::Config;
use crate::manifest::Manifest;
use crate::memory_access::{MemoryAccess, Scope};

const MANIFEST: &str = r#"
[plugin]
name = "scribe"
version = "1.0.0"
kind = "specialist"
component = "scribe.wasm"

[capabilities]
memory = ["team:read", "team:write", "private:read"]
"#;

fn resolve_with(grant: &str) -> (Effective, Vec<CapabilityRow>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = Manifest::parse(MANIFEST, Path::new("/plugins/scribe")).expect("manifest");
    let config = Config::parse(grant, &dir.path().join("guild.toml"), dir.path()).expect("config");
    resolve(&manifest, &config).expect("resolves")
}

fn memory_rows(rows: &[CapabilityRow]) -> Vec<(String, RowStatus)> {
    rows.iter()
        .filter(|r| r.capability == "memory")
        .map(|r| (r.target.clone(), r.status.clone()))
        .collect()
}

#[test]
fn memory_rights_are_requested_and_granted() {
    let (eff, rows) = resolve_with(
        "[grants.scribe]\nmemory = [\"team:read\", \"private:read\", \"private:write\"]\n",
    );
    // Allowed: requested and granted.
    assert!(eff.memory.allows(Scope::Team, false));
    assert!(eff.memory.allows(Scope::Private, false));
    // Denied: requested, not granted.
    assert!(!eff.memory.allows(Scope::Team, true));
    // Denied: granted, not requested.
    assert!(!eff.memory.allows(Scope::Private, true));
    let granted = RowStatus::Granted("granted".into());
    assert_eq!(
        memory_rows(&rows),
        vec![
            ("team:read".to_owned(), granted.clone()),
            (
                "team:write".to_owned(),
                RowStatus::Denied("not granted".into())
            ),
            ("private:read".to_owned(), granted),
            ("private:write".to_owned(), RowStatus::Unused),
        ]
    );
}

#[test]
fn write_does_not_imply_read() {
    let (eff, _) = resolve_with("[grants.scribe]\nmemory = [\"team:write\"]\n");
    assert!(eff.memory.allows(Scope::Team, true));
    assert!(!eff.memory.allows(Scope::Team, false));
}

#[test]
fn empty_grant_denies_every_memory_right() {
    for grant in ["", "[grants.scribe]\n", "[grants.scribe]\nmemory = []\n"] {
        let (eff, rows) = resolve_with(grant);
        for a in MemoryAccess::ALL {
            let scope = match a {
                MemoryAccess::TeamRead | MemoryAccess::TeamWrite => Scope::Team,
                _ => Scope::Private,
            };
            let write = matches!(a, MemoryAccess::TeamWrite | MemoryAccess::PrivateWrite);
            assert!(!eff.memory.allows(scope, write), "{grant:?} allows {a}");
        }
        let rows = memory_rows(&rows);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows.iter().all(|(_, s)| matches!(s, RowStatus::Denied(_))));
    }
}

#[test]
fn memory_refusal_names_the_missing_side() {
    let (eff, _) = resolve_with("[grants.scribe]\nmemory = [\"private:write\"]\n");
    let not_granted = eff
        .memory
        .refusal("scribe", Scope::Team, true)
        .expect("team:write refused");
    assert!(
        not_granted.contains("add \"team:write\" to `[grants.scribe] memory` in guild.toml"),
        "{not_granted}"
    );
    let not_requested = eff
        .memory
        .refusal("scribe", Scope::Private, true)
        .expect("private:write refused");
    assert!(
        not_requested.contains("`[capabilities] memory` in the plugin.toml of plugin 'scribe'"),
        "{not_requested}"
    );
    assert!(eff.memory.refusal("scribe", Scope::Team, false).is_some());
}

#[test]
fn malformed_memory_rights_are_refused_when_the_files_are_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    for bad in ["team", "team:admin", "Team:Read", "shared:read", ""] {
        let text = format!("[grants.scribe]\nmemory = [{bad:?}]\n");
        let err = Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
            .expect_err("malformed memory grant accepted")
            .to_string();
        assert!(err.contains("memory"), "{bad:?}: {err}");
        let manifest = MANIFEST.replace("\"private:read\"", &format!("{bad:?}"));
        let err = Manifest::parse(&manifest, Path::new("/plugins/scribe"))
            .expect_err("malformed memory request accepted")
            .to_string();
        assert!(err.contains("memory"), "{bad:?}: {err}");
    }
}

#[test]
fn memory_owner_names_are_checked_when_the_config_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let parse = |t: &str| Config::parse(t, &dir.path().join("guild.toml"), dir.path());
    let ok = parse("[memory]\nworkspace = \"acme\"\nuser = \"ana@acme\"\n").expect("valid");
    assert_eq!(ok.memory.workspace.as_deref(), Some("acme"));
    assert_eq!(ok.memory.user.as_deref(), Some("ana@acme"));
    for bad in ["", "a b", "../x", "ü"] {
        let err = parse(&format!("[memory]\nworkspace = {bad:?}\n"))
            .expect_err("bad workspace accepted")
            .to_string();
        assert!(err.contains("memory.workspace"), "{bad:?}: {err}");
    }
    assert!(
        parse("[memory]\nteam = \"x\"\n").is_err(),
        "unknown keys are errors"
    );
}
