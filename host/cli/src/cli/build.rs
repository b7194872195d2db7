//! `guild build DIR`: runs the plugin folder's `build.sh`, then checks that the component it
//! produced loads as the `kind` its `plugin.toml` declares (a wrong world names the right kind).
//! With a config file at hand, the check compiles into that config's compile cache, so the next
//! `guild task` starts without compiling the component again.

use std::collections::VecDeque;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, bail};
use clap::Args;
use guild_host::manifest::Manifest;
use guild_host::{Config, Host, PluginInfo};

use super::{print_json, render};

/// How many of a failed build's last stderr lines the error shows.
const TAIL_LINES: usize = 20;

/// Arguments of `guild build`.
#[derive(Args)]
pub(crate) struct BuildArgs {
    /// The plugin folder (with `plugin.toml` and `build.sh`).
    dir: PathBuf,
}

pub(crate) async fn run(config: &Path, args: BuildArgs, json: bool) -> anyhow::Result<ExitCode> {
    let info = build_and_check(&args.dir, operator_cache(config).as_ref()).await?;
    if json {
        print_json(&info)?;
    } else {
        outln!("ok: {}", render::plugin_detail(&info))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The operator's config file, when it is there, loads and has `compile_cache` on: the check
/// then compiles into its cache (`DATA_DIR/cache`) with its compile limits. A missing or broken
/// config is not `guild build`'s business: the check then compiles into a throwaway folder.
fn operator_cache(config_path: &Path) -> Option<Config> {
    if !config_path.is_file() {
        return None;
    }
    match Config::load(config_path) {
        Ok(config) => config.host.compile_cache.then_some(config),
        Err(e) => {
            tracing::debug!("not sharing a compile cache: {e}");
            None
        }
    }
}

/// Builds `dir` and checks the result loads; the loaded plugin's description. With `operator`,
/// the check leaves the compiled component in that config's compile cache.
pub(crate) async fn build_and_check(
    dir: &Path,
    operator: Option<&Config>,
) -> anyhow::Result<PluginInfo> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot open plugin folder {}", dir.display()))?;
    let manifest = Manifest::load(&dir)?;
    run_build_script(&dir)?;
    let component = dir.join(&manifest.plugin.component);
    if !component.is_file() {
        bail!(
            "{}/build.sh succeeded but did not produce {} (the `component` key of {}/plugin.toml)",
            dir.display(),
            component.display(),
            dir.display()
        );
    }
    check_loads(&dir, &manifest, operator).await
}

/// Runs `dir/build.sh` with `bash`, its output on stderr; a failure shows its last stderr lines.
pub(crate) fn run_build_script(dir: &Path) -> anyhow::Result<()> {
    let script = dir.join("build.sh");
    if !script.is_file() {
        bail!(
            "{} has no build.sh: `guild build` runs DIR/build.sh, which must produce the \
             component plugin.toml names (`guild new` writes one for each language)",
            dir.display()
        );
    }
    let mut child = Command::new("bash")
        .arg(&script)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::io::stderr()))
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("failed to run bash {}", script.display()))?;
    let mut tail = VecDeque::with_capacity(TAIL_LINES);
    if let Some(stderr) = child.stderr.take() {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            eprintln!("{}", guild_host::text::for_terminal(&line));
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
    let status = child
        .wait()
        .with_context(|| format!("failed to wait for {}", script.display()))?;
    if !status.success() {
        let lines: Vec<String> = tail.into_iter().collect();
        bail!(
            "{} failed ({status}); its last stderr lines:\n{}",
            script.display(),
            guild_host::text::for_terminal(&lines.join("\n"))
        );
    }
    Ok(())
}

/// Loads exactly `dir` in a throwaway host (nothing granted; compiled into the compile cache of
/// `operator` when given, else not cached) and returns what the host made of it, or its load
/// error with a hint when the world does not match `kind`.
async fn check_loads(
    dir: &Path,
    manifest: &Manifest,
    operator: Option<&Config>,
) -> anyhow::Result<PluginInfo> {
    let mut config = Config::default();
    config.host.plugins_dir = None;
    config.host.plugins = vec![dir.to_path_buf()];
    // Declared before the host, so it is removed after the host closed its files.
    let scratch = tempfile::Builder::new()
        .prefix("guild-build-check-")
        .tempdir()
        .context("failed to create a temporary data folder for the load check")?;
    config.host.data_dir = scratch.path().to_path_buf();
    // The throwaway host keeps its cache in DATA_DIR/cache: that entry points at the shared one.
    config.host.compile_cache = match operator {
        Some(operator) => {
            config.host.compile_timeout_s = operator.host.compile_timeout_s;
            config.host.compile_memory_mb = operator.host.compile_memory_mb;
            let shared = operator.data_dir().join("cache");
            link_cache(&shared, &scratch.path().join("cache"))?
        }
        None => false,
    };
    // Compiles in a child process of this binary, as every command does (see `start_host_with`).
    if cfg!(not(test)) {
        config.host.compile_helper = std::env::current_exe().ok();
    }
    let host = Host::new(config).await?;
    if let Some(error) = host.load_errors().into_iter().next() {
        let hint = world_hint(&error, manifest, dir);
        bail!("the built component does not load: {error}{hint}");
    }
    host.plugin(&manifest.plugin.name).with_context(|| {
        format!(
            "the host loaded no plugin named `{}` from {}",
            manifest.plugin.name,
            dir.display()
        )
    })
}

/// Makes `link` point at the compile cache `shared` (created when missing); false where
/// symbolic links are not available, so the check compiles without a cache.
fn link_cache(shared: &Path, link: &Path) -> anyhow::Result<bool> {
    std::fs::create_dir_all(shared)
        .with_context(|| format!("failed to create the compile cache {}", shared.display()))?;
    #[cfg(unix)]
    {
        let shared = shared
            .canonicalize()
            .with_context(|| format!("failed to resolve {}", shared.display()))?;
        std::os::unix::fs::symlink(&shared, link).with_context(|| {
            format!("failed to link {} to {}", link.display(), shared.display())
        })?;
        Ok(true)
    }
    #[cfg(not(unix))]
    {
        let _ = link;
        Ok(false)
    }
}

/// For a load error about missing exports: which world the component does implement, and the
/// `kind` to set for it.
pub(crate) fn world_hint(error: &str, manifest: &Manifest, dir: &Path) -> String {
    let Some((_, exported)) = error.split_once("it exports:") else {
        return String::new();
    };
    let found = [
        ("specialist-api", "specialist"),
        ("connector-api", "connector"),
        ("skill-loader-api", "skill-loader"),
    ]
    .into_iter()
    .find(|(api, _)| exported.contains(api));
    match found {
        Some((_, kind)) if kind != manifest.plugin.kind.to_string() => format!(
            "\nhint: the component implements the `{kind}` world, but {}/plugin.toml says \
             kind = \"{}\": set `kind = \"{kind}\"` there, or build for the `{}` world",
            dir.display(),
            manifest.plugin.kind,
            manifest.plugin.kind
        ),
        _ => String::new(),
    }
}
