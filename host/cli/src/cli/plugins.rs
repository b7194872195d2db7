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
            let bundle = installed_from(&host, &info.name, &info.version);
            if json {
                let mut value = serde_json::to_value(&info)?;
                if let Some(obj) = value.as_object_mut() {
                    obj.insert("bundle".into(), serde_json::to_value(&bundle)?);
                }
                print_json(&value)?;
            } else {
                out!("{}", render::plugin_detail(&info))?;
                if let Some(b) = &bundle {
                    outln!(
                        "  installed from a signed bundle:\n{}",
                        render::bundle_signers(&b.signers, &b.digest)
                    )?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        PluginsCommand::Check { dir } => check(config, &dir, json).await,
    }
}

/// The ledger's record of the bundle `name@version` was installed from, if it was.
fn installed_from(
    host: &Host,
    name: &str,
    version: &str,
) -> Option<guild_host::bundle_install::InstallRecord> {
    if host.config().store.postgres_url().is_some() {
        let shared = guild_host::stores::open_shared_ledger(host.config()).ok()??;
        return guild_host::bundle_install::provenance(shared.as_ref(), name, version)
            .ok()
            .flatten();
    }
    let file = host
        .config()
        .data_dir()
        .join(guild_host::receipts::LEDGER_FILE);
    let ledger = guild_host::receipts::Ledger::open_read_only(file).ok()?;
    guild_host::bundle_install::provenance(&ledger, name, version)
        .ok()
        .flatten()
}

/// Loads exactly one folder under the operator's grants (or none, if there is no config file)
/// and reports what a host would make of it. The operator's data dir is never touched: the
/// host's ledger, task store and scratch state live in a temporary folder removed afterwards,
/// and nothing is compiled into the cache.
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
    // Declared before the host, so it is removed after the host closed its files.
    let scratch = tempfile::Builder::new()
        .prefix("guild-plugins-check-")
        .tempdir()
        .context("failed to create a temporary data folder for the check")?;
    config.host.data_dir = scratch.path().to_path_buf();
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

#[cfg(test)]
mod tests {
    //! `plugins check` run as the binary runs it, against a config with a data dir.

    use std::path::PathBuf;

    use clap::Parser;

    use crate::cli::{Cli, run};

    /// The probe test plugin under the repository's `plugins/`.
    fn probe() -> PathBuf {
        let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        loop {
            let candidate = dir.join("plugins").join("testing").join("probe");
            if candidate.join("probe.wasm").is_file() {
                return candidate;
            }
            assert!(
                dir.pop(),
                "plugins/testing/probe/probe.wasm is missing: run plugins/build.sh"
            );
        }
    }

    async fn guild(config: &std::path::Path, args: &[&str]) -> std::process::ExitCode {
        let config = config.display().to_string();
        let argv = ["guild", "--config", config.as_str()]
            .into_iter()
            .chain(args.iter().copied());
        let cli = Cli::try_parse_from(argv).expect("arguments parse");
        run(cli).await.expect("command runs")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn check_never_touches_the_data_dir_a_host_start_creates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("guild.toml");
        let probe = probe().display().to_string();
        std::fs::write(
            &config,
            format!("[host]\nplugins = [{probe:?}]\ndata_dir = \"data\"\n"),
        )
        .expect("write guild.toml");
        let data = dir.path().join("data");
        let code = guild(&config, &["plugins", "check", probe.as_str()]).await;
        assert_eq!(code, std::process::ExitCode::SUCCESS);
        assert!(!data.exists(), "plugins check created the data dir");
        let code = guild(&config, &["plugins", "list"]).await;
        assert_eq!(code, std::process::ExitCode::SUCCESS);
        assert!(
            data.join("receipts.db").is_file(),
            "a command that starts the host does create it"
        );
    }
}
