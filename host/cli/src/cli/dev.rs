//! `guild dev DIR [--brief TEXT] [--with DIR]... [--once]`: the author's loop. Builds the
//! plugin folder, loads it (with the `--with` folders, usually the connectors a specialist
//! calls) under a development grant of exactly what each manifest requests, runs the brief
//! (specialist) or shows the tools (connector, skill loader), then polls the folder's source
//! files and rebuilds and reruns on every change until ctrl-c.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use clap::Args;
use guild_host::Config;
use guild_host::manifest::{Manifest, PluginKind};

use super::{build, new, render, start_host_with, task};

/// How often the source files are checked for changes.
const POLL: Duration = Duration::from_millis(500);

/// How long a development host lets one component compile.
const DEV_COMPILE_TIMEOUT_S: u32 = 900;

/// The brief a specialist runs when `--brief` is not given.
const DEFAULT_BRIEF: &str = "hello from guild dev";

/// Arguments of `guild dev`.
#[derive(Args)]
pub(crate) struct DevArgs {
    /// The plugin folder.
    dir: PathBuf,
    /// The brief a specialist runs.
    #[arg(long)]
    brief: Option<String>,
    /// Another plugin folder to load beside it (e.g. a connector the specialist calls), built
    /// once at start when it has a build.sh. Repeatable.
    #[arg(long = "with", value_name = "DIR")]
    with: Vec<PathBuf>,
    /// Build and run once, then exit with the run's exit code (no watching).
    #[arg(long)]
    once: bool,
}

pub(crate) async fn run(args: DevArgs) -> anyhow::Result<ExitCode> {
    let dir = canonical(&args.dir)?;
    let mut others = Vec::new();
    for with in &args.with {
        let with = canonical(with)?;
        if with.join("build.sh").is_file() {
            eprintln!("building {}", with.display());
            build::run_build_script(&with)?;
        }
        others.push(with);
    }
    let scratch = std::env::temp_dir().join(format!(
        "guild-dev-{}",
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    let brief = args.brief.as_deref().unwrap_or(DEFAULT_BRIEF);
    loop {
        let code = match round(&dir, &others, &scratch, brief).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!(
                    "error: {}",
                    guild_host::text::for_terminal(&format!("{e:#}"))
                );
                ExitCode::FAILURE
            }
        };
        if args.once {
            return Ok(code);
        }
        eprintln!("watching {} for changes (ctrl-c to stop)", dir.display());
        let before = snapshot(&dir);
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => return Ok(ExitCode::SUCCESS),
                () = tokio::time::sleep(POLL) => {}
            }
            if snapshot(&dir) != before {
                break;
            }
        }
        eprintln!("change seen: rebuilding");
    }
}

fn canonical(dir: &Path) -> anyhow::Result<PathBuf> {
    dir.canonicalize()
        .with_context(|| format!("cannot open plugin folder {}", dir.display()))
}

/// One build + load + run; the exit code `guild task` would give the run.
async fn round(
    dir: &Path,
    others: &[PathBuf],
    scratch: &Path,
    brief: &str,
) -> anyhow::Result<ExitCode> {
    let manifest = Manifest::load(dir)?;
    build::run_build_script(dir)?;
    let config = dev_config(dir, others, scratch)?;
    let host = start_host_with(config).await?;
    let name = manifest.plugin.name.as_str();
    let Some(info) = host.plugin(name) else {
        let errors = host.load_errors();
        let hint = errors
            .iter()
            .map(|e| build::world_hint(e, &manifest, dir))
            .collect::<String>();
        anyhow::bail!("{name} did not load (see the warnings above){hint}");
    };
    if manifest.plugin.kind != PluginKind::Specialist {
        outln!("{}", render::plugin_detail(&info))?;
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("running {name}: {brief}");
    let result = host.task(name, brief).await?;
    out!("{}", render::task_result(&result))?;
    Ok(ExitCode::from(task::exit_code(&result)))
}

/// A config that loads `dir` and `others`, keeps its state in `scratch`, and grants each
/// plugin what its manifest requests (config values, secrets and fs mounts excepted: those
/// need the operator's values, and are named on stderr).
fn dev_config(dir: &Path, others: &[PathBuf], scratch: &Path) -> anyhow::Result<Config> {
    let folders: Vec<&Path> = std::iter::once(dir)
        .chain(others.iter().map(PathBuf::as_path))
        .collect();
    let quoted: Vec<String> = folders
        .iter()
        .map(|f| serde_json::to_string(&f.display().to_string()))
        .collect::<Result<_, _>>()?;
    // The author's own code: compiling a Python or JavaScript component on a busy machine may
    // take minutes, longer than a production host should wait.
    let mut text = format!(
        "[host]\nplugins = [{}]\ndata_dir = {}\ncompile_timeout_s = {DEV_COMPILE_TIMEOUT_S}\n\n",
        quoted.join(", "),
        serde_json::to_string(&scratch.display().to_string())?
    );
    for folder in &folders {
        let manifest = Manifest::load(folder)?;
        let missing = new::ungrantable(&manifest);
        if !missing.is_empty() {
            eprintln!(
                "warning: {} requests {}: guild dev does not grant those; run it with `guild task` and a guild.toml that grants them",
                manifest.plugin.name,
                missing.join(", ")
            );
        }
        text.push_str(&new::grant_toml(&manifest, false));
        text.push('\n');
    }
    let file = scratch.join("guild.toml");
    Config::parse(&text, &file, scratch)
        .with_context(|| format!("failed to make the development grant:\n{text}"))
}

/// Modification times of the folder's source files: everything but build outputs and
/// dependency folders.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, SystemTime> {
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
