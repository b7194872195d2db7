//! Embeds the plugin templates (`templates/<lang>/<kind>/…`) and the WIT a scaffold builds
//! against (`wit/*.wit` at the repository root) into the binary, as tables of (path, bytes)
//! that `guild new` writes out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let templates = manifest_dir.join("templates");
    let wit = manifest_dir.join("..").join("..").join("wit");
    println!("cargo:rerun-if-changed={}", templates.display());
    println!("cargo:rerun-if-changed={}", wit.display());

    let mut files = Vec::new();
    collect(&templates, &templates, &mut files);
    let mut wit_files: Vec<PathBuf> = std::fs::read_dir(&wit)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "wit"))
                .collect()
        })
        .unwrap_or_default();
    wit_files.sort();

    let mut out = String::new();
    out.push_str("/// Template files: (path under `templates/`, contents).\n");
    out.push_str("pub(crate) static TEMPLATES: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &files {
        writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .expect("write to a string");
    }
    out.push_str("];\n/// The current WIT package: (file name, contents).\n");
    out.push_str("pub(crate) static WIT: &[(&str, &str)] = &[\n");
    for path in &wit_files {
        let name = path
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("write to a string");
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("templates.rs");
    std::fs::write(dest, out).expect("write templates.rs");
}

/// Every file under `dir`, as (path relative to `root` with `/` separators, absolute path),
/// sorted. Editor and build leftovers (`target/`, `*.wasm`, `__pycache__`) are skipped.
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "target" || name == "__pycache__" || name.ends_with(".wasm") {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let abs = path.canonicalize().unwrap_or(path.clone());
            files.push((rel.join("/"), abs));
        }
    }
}
