//! Whether a plugin folder's component is what its sources build now (docs/plugin-authors.md,
//! "Stale components"). A failed build (`guild build`, or a round of `guild dev`) leaves a marker next to the
//! component, `.COMPONENT.build-failed`, which the next successful build removes; so the marker
//! is never in a folder whose last build succeeded (and never in the bundle packed from it).
//! A component is stale when that marker is newer than it, or when a source file is. Only an
//! author's folder is judged: one with a `build.sh`. `guild task` warns about stale plugins;
//! `guild dev` refuses to run one.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use guild_host::Host;
use guild_host::manifest::Manifest;
use serde::{Deserialize, Serialize};

/// What the failure marker holds.
#[derive(Serialize, Deserialize)]
struct Marker {
    /// When the build failed, Unix seconds.
    failed_at: u64,
}

/// A plugin whose component is not what its sources build now.
#[derive(Debug)]
pub(crate) struct Stale {
    plugin: String,
    folder: PathBuf,
    component: PathBuf,
    reason: Reason,
}

#[derive(Debug)]
enum Reason {
    /// The last build failed (Unix seconds) after the component was written.
    Failed(u64),
    /// This source file changed after the component was written.
    Newer(PathBuf),
}

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let component = self.component.display();
        match &self.reason {
            Reason::Failed(at) => write!(
                f,
                "{}: the last build failed at {}; {component} is from an earlier build",
                self.plugin,
                guild_bundle::time::rfc3339(*at)
            )?,
            Reason::Newer(file) => write!(
                f,
                "{}: sources are newer than {component} ({} changed since it was built)",
                self.plugin,
                file.display()
            )?,
        }
        write!(f, "; run `guild build {}`", self.folder.display())
    }
}

/// The failure marker of the component `manifest` names in `dir`.
fn marker_path(dir: &Path, manifest: &Manifest) -> PathBuf {
    let component = dir.join(&manifest.plugin.component);
    let name = component
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    component.with_file_name(format!(".{name}.build-failed"))
}

/// Records the outcome of building `dir`: a failure writes the marker, a success removes it.
/// Best effort: a folder that cannot be written only loses the warning.
pub(crate) fn record(dir: &Path, manifest: &Manifest, succeeded: bool) {
    let marker = marker_path(dir, manifest);
    let result = if succeeded {
        match std::fs::remove_file(&marker) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    } else {
        let failed_at = unix_secs(SystemTime::now());
        serde_json::to_vec(&Marker { failed_at })
            .map_err(std::io::Error::other)
            .and_then(|bytes| std::fs::write(&marker, bytes))
    };
    if let Err(e) = result {
        tracing::warn!(marker = %marker.display(), "cannot record the build outcome: {e}");
    }
}

/// Whether the component of the plugin folder `dir` is stale; `None` when it is fresh, when the
/// folder has no `build.sh` (nothing to rebuild it with) or no component yet.
pub(crate) fn check(dir: &Path) -> Option<Stale> {
    if !dir.join("build.sh").is_file() {
        return None;
    }
    let manifest = Manifest::load(dir).ok()?;
    let component = dir.join(&manifest.plugin.component);
    let built = std::fs::metadata(&component).ok()?.modified().ok()?;
    let stale = |reason| Stale {
        plugin: manifest.plugin.name.to_string(),
        folder: dir.to_path_buf(),
        component: component.clone(),
        reason,
    };
    if let Some(failed_at) = failed_at(&marker_path(dir, &manifest))
        && failed_at >= unix_secs(built)
    {
        return Some(stale(Reason::Failed(failed_at)));
    }
    let skill_folders: Vec<PathBuf> = manifest
        .capabilities
        .skills
        .iter()
        .filter(|s| !s.contains(':'))
        .map(|s| dir.join(s))
        .collect();
    source_files(dir)
        .into_iter()
        .filter(|(file, modified)| {
            *modified > built && is_build_input(dir, file) && !in_any(file, &skill_folders)
        })
        .map(|(file, _)| file)
        .next()
        .map(|file| stale(Reason::Newer(file)))
}

/// Warns on stderr about every stale plugin `host` loaded (`guild task`, `guild batch`).
pub(crate) fn warn(host: &Host) {
    for plugin in host.plugins() {
        if let Some(stale) = check(&plugin.dir) {
            eprintln!(
                "warning: {}",
                guild_host::text::for_terminal(&stale.to_string())
            );
        }
    }
}

/// When the marker at `path` says the build failed, Unix seconds.
fn failed_at(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice::<Marker>(&bytes)
        .ok()
        .map(|m| m.failed_at)
}

fn unix_secs(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Whether a changed `file` means the component must be built again: not the manifest (read at
/// load), documentation, or unit tests (the scaffolds' builds leave `test_*` files out).
fn is_build_input(dir: &Path, file: &Path) -> bool {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let top_level_manifest = file == dir.join(guild_host::manifest::MANIFEST_FILE);
    !(top_level_manifest
        || name.ends_with(".md")
        || name.starts_with("test_")
        || name.contains(".test."))
}

fn in_any(file: &Path, folders: &[PathBuf]) -> bool {
    folders.iter().any(|f| file.starts_with(f))
}

/// Modification times of the folder's source files: everything but hidden files, build outputs
/// and dependency folders (`guild dev` watches these).
pub(crate) fn source_files(dir: &Path) -> BTreeMap<PathBuf, SystemTime> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.')
                || matches!(name.as_str(), "target" | "node_modules" | "__pycache__")
                || name.ends_with(".wasm")
                || name.ends_with(".tmp")
            {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(path);
            } else if let Ok(modified) = meta.modified() {
                files.insert(path, modified);
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("plugin.toml"),
            "[plugin]\nname = \"demo\"\nversion = \"0.1.0\"\nkind = \"connector\"\n\
             description = \"d\"\ncomponent = \"demo.wasm\"\n",
        )
        .expect("write manifest");
        std::fs::write(dir.path().join("build.sh"), "true\n").expect("write build.sh");
        dir
    }

    fn set_mtime(file: &Path, secs: u64) {
        let time = UNIX_EPOCH + std::time::Duration::from_secs(secs);
        std::fs::File::options()
            .write(true)
            .open(file)
            .and_then(|f| f.set_modified(time))
            .expect("set mtime");
    }

    #[test]
    fn a_newer_source_file_makes_the_component_stale_and_a_test_or_doc_does_not() {
        let dir = folder();
        let root = dir.path();
        for file in ["build.sh", "plugin.toml"] {
            set_mtime(&root.join(file), 1_000);
        }
        std::fs::write(root.join("demo.wasm"), b"component").expect("write");
        set_mtime(&root.join("demo.wasm"), 2_000);
        for (file, secs) in [
            ("app.py", 1_500),
            ("test_app.py", 3_000),
            ("README.md", 3_000),
        ] {
            std::fs::write(root.join(file), b"x").expect("write");
            set_mtime(&root.join(file), secs);
        }
        assert!(check(root).is_none(), "{:?}", check(root));
        set_mtime(&root.join("app.py"), 2_500);
        let stale = check(root).expect("stale").to_string();
        assert!(
            stale.starts_with("demo: sources are newer than ") && stale.contains("app.py"),
            "{stale}"
        );
    }

    #[test]
    fn a_failed_build_is_stale_until_a_build_succeeds() {
        let dir = folder();
        let root = dir.path();
        let manifest = Manifest::load(root).expect("manifest");
        std::fs::write(root.join("demo.wasm"), b"component").expect("write");
        for file in ["build.sh", "plugin.toml", "demo.wasm"] {
            set_mtime(&root.join(file), 1_000);
        }
        record(root, &manifest, false);
        let stale = check(root).expect("stale").to_string();
        assert!(
            stale.contains("demo: the last build failed at ")
                && stale.contains("demo.wasm is from an earlier build"),
            "{stale}"
        );
        record(root, &manifest, true);
        assert!(!marker_path(root, &manifest).exists());
        assert!(check(root).is_none());
        // Without a build.sh the folder is not an author's: never judged.
        record(root, &manifest, false);
        std::fs::remove_file(root.join("build.sh")).expect("rm");
        assert!(check(root).is_none());
    }
}
