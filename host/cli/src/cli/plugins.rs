//! `guild plugins list | show NAME | check DIR`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use guild_host::{Config, Host};

use super::{print_json, render, start_host};

/// Plugin subcommands.
#[derive(Subcommand)]
pub(crate) enum PluginsCommand {
    /// Every loaded plugin, and the ones that failed to load.
    List,
    /// One plugin: requested vs granted vs denied capabilities, tools, status.
    Show {
        /// Plugin name or alias.
        name: String,
    },
    /// Validate a plugin folder (manifest, grant, component, world) without starting a host.
    Check {
        /// The plugin folder.
        dir: PathBuf,
    },
}

pub(crate) async fn run(
    config: &Path,
    cmd: PluginsCommand,
    json: bool,
) -> anyhow::Result<ExitCode> {
    match cmd {
        PluginsCommand::List => {
            let host = start_host(config).await?;
            let plugins = host.plugins();
            if json {
                let out = serde_json::json!({ "plugins": plugins, "errors": host.load_errors() });
                print_json(&out)?;
            } else {
                out!("{}", render::plugin_table(&plugins))?;
            }
            Ok(if host.load_errors().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            })
        }
        PluginsCommand::Show { name } => {
            let host = start_host(config).await?;
            let Some(info) = host.plugin(&name) else {
                let names: Vec<_> = host.plugins().into_iter().map(|p| p.name).collect();
                anyhow::bail!("no plugin named '{name}'; loaded: {}", names.join(", "));
            };
            if json {
                print_json(&info)?;
            } else {
                out!("{}", render::plugin_detail(&info))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        PluginsCommand::Check { dir } => check(config, &dir, json).await,
    }
}

/// Loads exactly one folder under the operator's grants (or none, if there is no config file)
/// and reports what a host would make of it.
async fn check(config_path: &Path, dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let mut config = if config_path.is_file() {
        Config::load(config_path)?
    } else {
        Config::default()
    };
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot open plugin folder {}", dir.display()))?;
    config.host.plugins_dir = None;
    config.host.plugins = vec![dir];
    config.host.compile_cache = false;
    let host = Host::new(config).await?;
    let errors = host.load_errors();
    if json {
        let out = serde_json::json!({ "ok": errors.is_empty(), "errors": errors, "plugins": host.plugins() });
        print_json(&out)?;
    } else if errors.is_empty() {
        for p in host.plugins() {
            outln!("ok: {}", render::plugin_detail(&p))?;
        }
    } else {
        for e in &errors {
            outln!("error: {}", guild_host::text::for_terminal(e))?;
        }
    }
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
