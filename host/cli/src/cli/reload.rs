//! `guild reload`: asks the server running on this config's data dir to reload its plugins
//! (through its control socket), and prints what changed. Without a server there is nothing to
//! reload: every other command loads the plugins afresh.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use guild_host::Config;

use super::print_json;
use guild_serve::control::{self, Request};

pub(crate) async fn run(config_path: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let data_dir = data_dir(config_path)?;
    let Some(response) = control::call(&data_dir, &Request::Reload).await? else {
        anyhow::bail!(
            "no server running for {}: start one with `guild serve` (other commands load the \
             plugins afresh each time, so they need no reload)",
            data_dir.display()
        );
    };
    if json {
        print_json(&response.result)?;
    } else {
        out!("{}", guild_host::text::for_terminal(&response.text))?;
    }
    let failed = response
        .result
        .get("errors")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|e| !e.is_empty());
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The data dir `config_path` names.
pub(crate) fn data_dir(config_path: &Path) -> anyhow::Result<std::path::PathBuf> {
    let config = Config::load(config_path).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config_path.display()
        )
    })?;
    Ok(config.data_dir())
}
