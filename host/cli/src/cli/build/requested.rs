//! `guild build` of a specialist: the tools its `plugin.toml` requests that no connector of the
//! configuration in use offers. A warning, not a failure (the connector may come later), naming
//! the file, the key `[capabilities] tools`, the tool and the nearest offered one: a typo found
//! here costs one build, where at run time it is a refusal in the middle of a task
//! (docs/plugin-authors.md, "guild build"). A malformed name never gets here: the manifest
//! refuses it with the key and the naming rule when it loads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use guild_host::manifest::{Manifest, PluginKind};
use guild_host::tool_names::unknown_tool;
use guild_host::{Config, GuildEngine, Host};

/// One warning per tool `manifest` requests that the connectors among `operator`'s plugins do
/// not offer, and one note per configured connector whose tools could not be read (so its names
/// are not judged). Loads those connectors in a throwaway host on `engine` (the configuration's
/// compile cache, so a built connector is not compiled again).
pub(super) async fn unoffered(
    manifest: &Manifest,
    operator: &Config,
    engine: GuildEngine,
) -> Vec<String> {
    if manifest.capabilities.tools.is_empty() {
        return Vec::new();
    }
    let folders = connector_folders(operator);
    let offered = match offered_tools(operator, &folders, engine).await {
        Ok(offered) => offered,
        Err(e) => {
            return vec![format!(
                "the tools requested in {} are not checked: {e:#}",
                manifest.dir.join("plugin.toml").display()
            )];
        }
    };
    judge(manifest, &folders, &offered, &operator.file)
}

/// What to say about each requested tool, given the configured connectors (by name) and the
/// tools of those that loaded (by connector name; a connector that did not load is absent).
fn judge(
    manifest: &Manifest,
    configured: &BTreeMap<String, PathBuf>,
    offered: &BTreeMap<String, Vec<String>>,
    config_file: &Path,
) -> Vec<String> {
    let place = format!(
        "[capabilities] tools in {}",
        manifest.dir.join("plugin.toml").display()
    );
    let all: Vec<&str> = offered.values().flatten().map(String::as_str).collect();
    let mut warnings = Vec::new();
    for tool in &manifest.capabilities.tools {
        let connector = tool.split_once('.').map_or(tool.as_str(), |(c, _)| c);
        match (offered.get(connector), configured.get(connector)) {
            (Some(tools), _) if tools.contains(tool) => {}
            (None, Some(folder)) => warnings.push(format!(
                "{place} names `{tool}`, but connector '{connector}' ({}) did not load here, \
                 so its tools are not checked",
                folder.display()
            )),
            _ => warnings.push(format!(
                "{place} names `{tool}`, but {} (the connectors of {})",
                unknown_tool(tool, all.iter().copied()),
                config_file.display()
            )),
        }
    }
    warnings
}

/// The configured plugin folders that hold a connector, by the connector's name.
fn connector_folders(operator: &Config) -> BTreeMap<String, PathBuf> {
    operator
        .plugin_folders()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|folder| Manifest::load(&folder).ok())
        .filter(|m| m.plugin.kind == PluginKind::Connector)
        .map(|m| (m.plugin.name.to_string(), m.dir.clone()))
        .collect()
}

/// Loads `folders` with `operator`'s settings in a throwaway host and returns each loaded
/// connector's tools as `connector.tool`. Connectors that do not load are left out.
async fn offered_tools(
    operator: &Config,
    folders: &BTreeMap<String, PathBuf>,
    engine: GuildEngine,
) -> anyhow::Result<BTreeMap<String, Vec<String>>> {
    if folders.is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut config = operator.clone();
    config.host.plugins_dir = None;
    config.host.plugins = folders.values().cloned().collect();
    if cfg!(not(test)) {
        config.host.compile_helper = std::env::current_exe().ok();
    }
    // Declared before the host, so it is removed after the host closed its files.
    let scratch = tempfile::Builder::new()
        .prefix("guild-build-tools-")
        .tempdir()
        .context("failed to create a temporary data folder to load the connectors")?;
    config.host.data_dir = scratch.path().to_path_buf();
    let host = Host::with_engine(config, engine).await?;
    Ok(host
        .plugins()
        .into_iter()
        .filter(|p| p.kind == PluginKind::Connector)
        .map(|p| {
            let tools = p.tools.iter().map(|t| format!("{}.{}", p.name, t.name));
            (p.name.clone(), tools.collect())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specialist(dir: &Path, tools: &[&str]) -> Manifest {
        let list: Vec<String> = tools.iter().map(|t| format!("{t:?}")).collect();
        std::fs::write(
            dir.join("plugin.toml"),
            format!(
                "[plugin]\nname = \"helper\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
                 component = \"helper.wasm\"\n\n[capabilities]\ntools = [{}]\n",
                list.join(", ")
            ),
        )
        .expect("write plugin.toml");
        Manifest::load(dir).expect("manifest loads")
    }

    #[test]
    fn an_offered_tool_passes_and_a_typo_names_the_file_the_key_and_the_nearest_tool() {
        let dir = tempfile::tempdir().expect("tempdir");
        let configured = BTreeMap::from([
            ("weather".to_owned(), dir.path().join("weather")),
            ("mail".to_owned(), dir.path().join("mail")),
        ]);
        let offered = BTreeMap::from([(
            "weather".to_owned(),
            vec!["weather.lookup".to_owned(), "weather.alerts".to_owned()],
        )]);
        let config = Path::new("/etc/guild.toml");

        let ok = specialist(dir.path(), &["weather.lookup"]);
        assert!(judge(&ok, &configured, &offered, config).is_empty());

        let typo = specialist(dir.path(), &["weather.lokup", "notes.save", "mail.send"]);
        let warnings = judge(&typo, &configured, &offered, config);
        let file = dir.path().join("plugin.toml");
        assert_eq!(warnings.len(), 3, "{warnings:#?}");
        assert!(
            warnings[0].starts_with(&format!(
                "[capabilities] tools in {} names `weather.lokup`, but no loaded connector \
                 offers `weather.lokup`; did you mean `weather.lookup`?",
                file.display()
            )) && warnings[0].ends_with("(the connectors of /etc/guild.toml)"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[1].contains("no loaded connector offers `notes.save`.")
                && !warnings[1].contains("did you mean"),
            "{}",
            warnings[1]
        );
        assert!(
            warnings[2].contains("connector 'mail' (")
                && warnings[2].contains("did not load here, so its tools are not checked"),
            "{}",
            warnings[2]
        );
    }
}
