//! `guild build DIR`: runs the plugin folder's `build.sh`, then checks that the component it
//! produced loads as the `kind` its `plugin.toml` declares (a wrong world names the right kind).
//! The check runs against the configuration in use (`--config`, `GUILD_CONFIG` or
//! `./guild.toml`): the plugin's `[grants.NAME]` decide what it shows granted and denied, and the
//! component compiles into that configuration's compile cache with the engine options its host
//! uses ([`guild_host::engine_options`]), so the next `guild task`, `guild dev` or `guild serve`
//! runs it without compiling again. Without a configuration it says so, shows what the plugin
//! requests, and compiles without a cache. The outcome is recorded next to the component
//! ([`super::stale`]). See docs/plugin-authors.md.

mod requested;

use std::collections::{BTreeSet, VecDeque};
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, bail};
use clap::Args;
use guild_host::manifest::{Manifest, PluginKind};
use guild_host::{Config, GuildEngine, Host, PluginInfo};

use super::{print_json, render, stale};

/// How many of a failed build's last stderr lines the error shows.
const TAIL_LINES: usize = 20;

/// Arguments of `guild build`.
#[derive(Args)]
pub(crate) struct BuildArgs {
    /// The plugin folder (with `plugin.toml` and `build.sh`).
    dir: PathBuf,
}

pub(crate) async fn run(config: &Path, args: BuildArgs, json: bool) -> anyhow::Result<ExitCode> {
    let operator = operator_config(config);
    let info = build_and_check(&args.dir, operator.as_ref()).await?;
    let unchecked = format!(
        "no configuration found at {}, so no grants to check against",
        config.display()
    );
    if json {
        let mut value = serde_json::to_value(&info)?;
        if operator.is_none() {
            unchecked_json(&mut value, &unchecked);
        }
        value["config"] = serde_json::to_value(operator.as_ref().map(|c| &c.file))?;
        print_json(&value)?;
    } else if operator.is_some() {
        outln!("ok: {}", render::plugin_detail(&info))?;
    } else {
        let requested = render::requested_rows(&info.capabilities, &unchecked);
        outln!("ok: {}", render::plugin_detail_with(&info, &requested))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The configuration in use, when there is one that loads. Without one, says on stderr what
/// that means; a configuration that does not load is named with its error.
pub(crate) fn operator_config(config_path: &Path) -> Option<Config> {
    let without = "grants are not checked, and the component compiles in a temporary folder, \
                   so the first `guild task` compiles it again";
    if !config_path.is_file() {
        eprintln!(
            "note: no configuration found at {} (pass --config or set GUILD_CONFIG): {without}",
            config_path.display()
        );
        return None;
    }
    match Config::load(config_path) {
        Ok(config) => {
            if !config.host.compile_cache {
                eprintln!(
                    "note: {} turns the compile cache off ([host] compile_cache = false): \
                     `guild task` compiles the component again",
                    config_path.display()
                );
            }
            Some(config)
        }
        Err(e) => {
            eprintln!(
                "warning: {} does not load, so checking without it ({without}): {}",
                config_path.display(),
                guild_host::text::for_terminal(&e.to_string())
            );
            None
        }
    }
}

/// A build's JSON without a configuration: each requested capability is `unchecked` (no grants
/// to judge it by).
fn unchecked_json(value: &mut serde_json::Value, why: &str) {
    if let Some(rows) = value["capabilities"].as_array_mut() {
        rows.retain(|row| row["status"] != "unused");
        for row in rows {
            row["status"] = "unchecked".into();
            // A row without a target (limits) keeps its detail: what is requested.
            if row["target"] != "" {
                row["detail"] = why.into();
            }
        }
    }
}

/// Builds `dir` and checks the result loads; the loaded plugin's description, as `operator`
/// (the configuration in use) sees it. Records the outcome next to the component.
pub(crate) async fn build_and_check(
    dir: &Path,
    operator: Option<&Config>,
) -> anyhow::Result<PluginInfo> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot open plugin folder {}", dir.display()))?;
    let manifest = Manifest::load(&dir)?;
    let checked = async {
        build_component(&dir, &manifest, Purpose::Release)?;
        check_loads(&dir, &manifest, operator).await
    }
    .await;
    stale::record(&dir, &manifest, checked.is_ok());
    let (mut info, engine) = checked?;
    // The check loaded this plugin alone: the roster and the tools it names are judged against
    // the configuration's plugins, and not at all without one.
    info.unavailable = None;
    if let Some(operator) = operator {
        not_configured_note(&dir, operator);
        let warnings = match info.kind {
            PluginKind::Connector => unoffered_tools(&info, operator),
            PluginKind::Specialist => requested::unoffered(&manifest, operator, engine).await,
            PluginKind::SkillLoader => Vec::new(),
        };
        for warning in warnings {
            eprintln!("warning: {warning}");
        }
        info.unavailable = roster_check(&manifest, operator);
    }
    Ok(info)
}

/// For a connector: the tools of it that `operator`'s grants or its plugins' manifests name
/// but it does not offer (a typo on either side), each with where it is written and the
/// nearest tool it does offer. A specialist's own requests: [`requested::unoffered`].
fn unoffered_tools(info: &PluginInfo, operator: &Config) -> Vec<String> {
    let offered: Vec<String> = info
        .tools
        .iter()
        .map(|t| format!("{}.{}", info.name, t.name))
        .collect();
    let prefix = format!("{}.", info.name);
    let granted = operator.grants.iter().flat_map(|(plugin, grant)| {
        let place = format!("[grants.{plugin}] tools in {}", operator.file.display());
        grant.tools.iter().map(move |t| (t.clone(), place.clone()))
    });
    let requested = operator
        .plugin_folders()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|folder| Manifest::load(&folder).ok())
        .flat_map(|m| {
            let place = format!(
                "[capabilities] tools in {}",
                m.dir.join("plugin.toml").display()
            );
            m.capabilities
                .tools
                .into_iter()
                .map(move |t| (t, place.clone()))
        });
    granted
        .chain(requested)
        .filter(|(tool, _)| tool.starts_with(&prefix) && !offered.contains(tool))
        .map(|(tool, place)| {
            let why =
                guild_host::tool_names::unknown_tool(&tool, offered.iter().map(String::as_str));
            format!("{place} names `{tool}`, but {why}")
        })
        .collect()
}

/// What a build is for, told to `build.sh` in `GUILD_BUILD` (`release` or `dev`).
#[derive(Clone, Copy)]
pub(crate) enum Purpose {
    /// `guild build`: the component to ship.
    Release,
    /// A `guild dev` round: a build.sh may trade size for build time (the Rust scaffold's
    /// `guild-dev` profile: no LTO, parallel and incremental codegen).
    Dev,
}

impl Purpose {
    fn as_env(self) -> &'static str {
        match self {
            Purpose::Release => "release",
            Purpose::Dev => "dev",
        }
    }
}

/// Runs `dir/build.sh` and checks it produced the component `plugin.toml` names. The caller
/// records the outcome ([`stale::record`]).
fn build_component(dir: &Path, manifest: &Manifest, purpose: Purpose) -> anyhow::Result<()> {
    run_build_script(dir, purpose)?;
    let component = dir.join(&manifest.plugin.component);
    if !component.is_file() {
        bail!(
            "{}/build.sh succeeded but did not produce {} (the `component` key of {}/plugin.toml)",
            dir.display(),
            component.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Builds `dir` for a `guild dev` round, as [`build_and_check`] does without the load check
/// (`guild dev` loads it itself), and records the outcome.
pub(crate) fn build_recorded(dir: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let built = build_component(dir, manifest, Purpose::Dev);
    stale::record(dir, manifest, built.is_ok());
    built
}

/// Runs `dir/build.sh` with `bash` and `GUILD_BUILD` set to `purpose`, its output on stderr; a
/// failure shows its last stderr lines.
pub(crate) fn run_build_script(dir: &Path, purpose: Purpose) -> anyhow::Result<()> {
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
        .env("GUILD_BUILD", purpose.as_env())
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

/// Loads exactly `dir` in a throwaway host and returns what the host made of it, or its load
/// error with a hint when the world does not match `kind`. With `operator`, the host has its
/// settings and grants and compiles into its compile cache (state and ledger stay in a
/// temporary folder); without, nothing is granted and nothing cached.
async fn check_loads(
    dir: &Path,
    manifest: &Manifest,
    operator: Option<&Config>,
) -> anyhow::Result<(PluginInfo, GuildEngine)> {
    let mut config = operator.cloned().unwrap_or_default();
    config.host.plugins_dir = None;
    config.host.plugins = vec![dir.to_path_buf()];
    // Compiles in a child process of this binary, as every command does (see `start_host_with`).
    if cfg!(not(test)) {
        config.host.compile_helper = std::env::current_exe().ok();
    }
    let engine = match operator {
        Some(operator) => {
            // The engine `guild task` builds for this configuration: same cache, key and limits.
            let mut settings = operator.clone();
            settings.host.compile_helper = config.host.compile_helper.clone();
            GuildEngine::new(guild_host::engine_options(&settings))?
        }
        None => {
            config.host.compile_cache = false;
            GuildEngine::new(guild_host::engine_options(&config))?
        }
    };
    // Declared before the host, so it is removed after the host closed its files.
    let scratch = tempfile::Builder::new()
        .prefix("guild-build-check-")
        .tempdir()
        .context("failed to create a temporary data folder for the load check")?;
    config.host.data_dir = scratch.path().to_path_buf();
    let host = Host::with_engine(config, engine).await?;
    if let Some(error) = host.load_errors().into_iter().next() {
        let hint = world_hint(&error, manifest, dir);
        bail!("the built component does not load: {error}{hint}");
    }
    let info = host.plugin(&manifest.plugin.name).with_context(|| {
        format!(
            "the host loaded no plugin named `{}` from {}",
            manifest.plugin.name,
            dir.display()
        )
    })?;
    Ok((info, host.engine().clone()))
}

/// Why the specialist `manifest` describes would not be on the roster of `operator`'s host:
/// its `[requires] connectors` against the connectors among the configured plugin folders (the
/// load check itself loads this plugin alone).
fn roster_check(manifest: &Manifest, operator: &Config) -> Option<String> {
    if manifest.plugin.kind != PluginKind::Specialist {
        return None;
    }
    let requirement = manifest.requires.connectors.as_ref()?;
    let connectors: BTreeSet<String> = operator
        .plugin_folders()
        .unwrap_or_default()
        .iter()
        .filter_map(|folder| Manifest::load(folder).ok())
        .filter(|m| m.plugin.kind == PluginKind::Connector)
        .map(|m| m.plugin.name.to_string())
        .collect();
    requirement.check(&connectors).err()
}

/// Says on stderr when `dir` is not among `operator`'s plugin folders: its host will not load
/// what was just built.
fn not_configured_note(dir: &Path, operator: &Config) {
    let configured = operator
        .plugin_folders()
        .unwrap_or_default()
        .iter()
        .any(|folder| folder.canonicalize().is_ok_and(|f| f == dir));
    if !configured {
        eprintln!(
            "note: {} is not among the plugins of {} (`[host] plugins` or `plugins_dir`): \
             `guild task` will not load it",
            dir.display(),
            operator.file.display()
        );
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
