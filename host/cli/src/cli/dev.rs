//! `guild dev DIR [--brief TEXT] [--with DIR]... [--once]`: the author's loop. Builds the
//! plugin folder and the `--with` folders (usually the connectors a specialist calls), loads
//! them under a development grant of exactly what each manifest requests, runs the brief
//! (specialist) or shows the tools (connector, skill loader), then polls the folders' source
//! files and rebuilds and reruns on every change until ctrl-c. After the first round only the
//! folders that changed (or whose component is stale) are built again, so an edit to the
//! specialist does not wait for its connector's build. A folder whose build failed is stale
//! ([`super::stale`]): the round refuses to run it instead of running its old component.
//! With a configuration in use (`--config`, `GUILD_CONFIG`, `./guild.toml`) the components
//! compile into its compile cache, so `guild build`, `guild dev` and `guild task` compile each
//! component once (docs/plugin-authors.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use clap::Args;
use guild_host::manifest::{Manifest, PluginKind};
use guild_host::{Config, EngineOptions, GuildEngine, HostError};
use guild_serve::start::{start_host_on, use_compile_helper};

use super::{build, new, render, stale, task};

/// How often the source files are checked for changes (a walk of the folders' file times, not
/// of `target/` or `node_modules/`: well under a millisecond for a scaffold).
const POLL: Duration = Duration::from_millis(200);

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
    /// in every round when it has a build.sh and watched like DIR. Repeatable.
    #[arg(long = "with", value_name = "DIR")]
    with: Vec<PathBuf>,
    /// Build and run once, then exit with the run's exit code (no watching).
    #[arg(long)]
    once: bool,
}

/// What every round of one `guild dev` shares.
struct Session {
    /// The plugin folder, then the `--with` folders.
    folders: Vec<PathBuf>,
    /// Host state of the development host (ledger, memory; its cache when `shared_cache` is
    /// `None`).
    scratch: PathBuf,
    /// The compile cache of the configuration in use, when there is one with a cache.
    shared_cache: Option<PathBuf>,
    brief: String,
}

pub(crate) async fn run(config: &Path, args: DevArgs) -> anyhow::Result<ExitCode> {
    let dir = canonical(&args.dir)?;
    let mut folders = vec![dir.clone()];
    for with in &args.with {
        folders.push(canonical(with)?);
    }
    let scratch = std::env::temp_dir().join(format!(
        "guild-dev-{}",
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    let session = Session {
        folders,
        scratch,
        shared_cache: shared_cache(config),
        brief: args.brief.unwrap_or_else(|| DEFAULT_BRIEF.to_owned()),
    };
    // Which folders this round builds: every one in the first round, then those that changed.
    let mut rebuild = vec![true; session.folders.len()];
    loop {
        let code = match round(&session, &rebuild).await {
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
        // After the round, so what the builds wrote (a lock file, a bundle) is not a change.
        let before = snapshots(&session.folders);
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => return Ok(ExitCode::SUCCESS),
                () = tokio::time::sleep(POLL) => {}
            }
            let now = snapshots(&session.folders);
            if now != before {
                rebuild = now.iter().zip(&before).map(|(a, b)| a != b).collect();
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

/// The compile cache of the configuration at `config_path` (`DATA_DIR/cache`), when it loads
/// and caches; `guild dev` works without one, so a missing or broken file is only logged.
fn shared_cache(config_path: &Path) -> Option<PathBuf> {
    if !config_path.is_file() {
        return None;
    }
    match Config::load(config_path) {
        Ok(config) => {
            let options = guild_host::engine_options(&config);
            if let Some(cache) = &options.cache_dir {
                eprintln!(
                    "compiling into the compile cache of {} ({})",
                    config_path.display(),
                    cache.display()
                );
            }
            options.cache_dir
        }
        Err(e) => {
            tracing::debug!("not sharing a compile cache: {e}");
            None
        }
    }
}

/// One build + load + run; the exit code `guild task` would give the run. `rebuild[i]` says
/// whether folder `i` changed since the last round.
async fn round(session: &Session, rebuild: &[bool]) -> anyhow::Result<ExitCode> {
    let dir = &session.folders[0];
    let manifest = Manifest::load(dir)?;
    build_all(&session.folders, rebuild)?;
    let config = dev_config(&session.folders, &session.scratch)?;
    let host = start_host_on(config.clone(), engine(config, session)?).await?;
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
    eprintln!("running {name}: {}", session.brief);
    let result = host.task(name, &session.brief).await?;
    out!("{}", render::task_result(&result))?;
    Ok(ExitCode::from(task::exit_code(&result)))
}

/// Builds the plugin folder and every other folder with a `build.sh` that changed since the
/// last round (`rebuild`) or whose component is stale, recording each outcome. When one fails,
/// refuses to run: its component is stale, and the error names each failed plugin with the
/// time of its failure (docs/plugin-authors.md, "Stale components").
fn build_all(folders: &[PathBuf], rebuild: &[bool]) -> anyhow::Result<()> {
    let mut refused = Vec::new();
    for (i, folder) in folders.iter().enumerate() {
        // The plugin folder is always built (without a build.sh that is the error).
        if i > 0 && !folder.join("build.sh").is_file() {
            continue;
        }
        if !rebuild.get(i).copied().unwrap_or(true) && stale::check(folder).is_none() {
            eprintln!("unchanged since its last build: {}", folder.display());
            continue;
        }
        eprintln!("building {}", folder.display());
        let built = Manifest::load(folder)
            .map_err(anyhow::Error::from)
            .and_then(|manifest| build::build_recorded(folder, &manifest));
        if let Err(e) = built {
            eprintln!(
                "error: {}",
                guild_host::text::for_terminal(&format!("{e:#}"))
            );
            refused.push(match stale::check(folder) {
                Some(stale) => stale.to_string(),
                None => format!("{}: the build failed (see above)", folder.display()),
            });
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "not running: a build failed, so its component is stale or missing:\n  {}",
        guild_host::text::for_terminal(&refused.join("\n  "))
    )
}

/// The engine of the development host: the engine options of `config`, compiling into the
/// configuration's compile cache when there is one.
fn engine(mut config: Config, session: &Session) -> anyhow::Result<GuildEngine> {
    use_compile_helper(&mut config, super::compile_helper());
    let options = guild_host::engine_options(&config);
    let options = match &session.shared_cache {
        Some(cache) => EngineOptions {
            cache_dir: Some(cache.clone()),
            ..options
        },
        None => options,
    };
    Ok(GuildEngine::new(options).map_err(HostError::Engine)?)
}

/// A config that loads `folders`, keeps its state in `scratch`, and grants each plugin what
/// its manifest requests (config values, secrets and fs mounts excepted: those need the
/// operator's values, and are named on stderr).
fn dev_config(folders: &[PathBuf], scratch: &Path) -> anyhow::Result<Config> {
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
    for folder in folders {
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

/// Modification times of each folder's source files ([`stale::source_files`]).
fn snapshots(folders: &[PathBuf]) -> Vec<BTreeMap<PathBuf, SystemTime>> {
    folders.iter().map(|f| stale::source_files(f)).collect()
}
