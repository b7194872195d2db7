//! Loading one plugin folder, in two steps. [`stage`] does everything cheap: the folder
//! check, the manifest, the grant, the skill sources, the definition, reading and hashing the
//! component, and the comparison with the version serving from the same folder. [`finish`]
//! does what may cost seconds: compiling (cache first), linking, and asking the plugin once
//! what it is (a specialist's `describe`, a connector's `tools`). A host loads a staged plugin
//! at once when its code is cached or unchanged, and otherwise may queue it for its
//! background loader (`deferred`), which calls [`finish`] later.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use guild_core::capability::{self, CapabilityRow, Effective};
use guild_core::config::Config;
use guild_core::definition::Definition;
use guild_core::error::LoadError;
use guild_core::manifest::{ConnectorRequirement, Manifest, PluginKind, parse_tool_name};
use guild_core::types::ToolSpec;
use guild_runtime::{Compiler, ComponentFile, Failure, PrepareError, Runtime};
use guild_skills::Skills;

use crate::registry::LoadedPlugin;
use crate::skills::SkillSource;

/// A plugin folder read and checked, its component read and hashed, nothing compiled yet.
pub(crate) struct Staged {
    manifest: Manifest,
    manifest_text: String,
    effective: Effective,
    rows: Vec<CapabilityRow>,
    skill_sources: Vec<SkillSource>,
    definition: Definition,
    component: ComponentFile,
    /// The version serving from this folder when nothing of it changed: it is kept.
    unchanged: Option<Arc<LoadedPlugin>>,
}

impl Staged {
    /// The plugin's name.
    pub(crate) fn name(&self) -> &str {
        self.manifest.name()
    }

    /// The plugin's aliases.
    pub(crate) fn aliases(&self) -> &[String] {
        &self.manifest.plugin.aliases
    }

    /// The plugin's kind.
    pub(crate) fn kind(&self) -> PluginKind {
        self.manifest.plugin.kind
    }

    /// Bytes of its component.
    pub(crate) fn size(&self) -> usize {
        self.component.size()
    }

    /// The component file, to ask the runtime whether its code is cached.
    pub(crate) fn component(&self) -> &ComponentFile {
        &self.component
    }

    /// The other plugins a task on this one uses (see [`needs`]).
    pub(crate) fn needs(&self) -> Vec<String> {
        needs(&self.manifest, &self.effective, &self.skill_sources)
    }

    /// What makes it this version of this folder (a reload staging a queued plugin again
    /// compares them).
    pub(crate) fn version(&self) -> Version {
        Version {
            dir: self.manifest.dir.clone(),
            manifest_text: self.manifest_text.clone(),
            sha256: self.component.sha256(),
            definition: self.definition.clone(),
            effective: self.effective.clone(),
            rows: self.rows.clone(),
        }
    }
}

/// A staged plugin's folder, `plugin.toml` text, component digest, definition and effective
/// grant: two loads with equal versions load the same thing.
#[derive(Clone, PartialEq)]
pub(crate) struct Version {
    dir: PathBuf,
    manifest_text: String,
    sha256: String,
    definition: Definition,
    effective: Effective,
    rows: Vec<CapabilityRow>,
}

/// The other plugins a task on a plugin uses: the connectors of its granted tools and of its
/// `[requires]`, and the skill loaders its skill sources name. A task waits for those still
/// queued before it starts, as for the plugin itself.
pub(crate) fn needs(
    manifest: &Manifest,
    effective: &Effective,
    skill_sources: &[SkillSource],
) -> Vec<String> {
    let mut names = BTreeSet::new();
    for tool in &effective.tools {
        if let Ok((connector, _)) = parse_tool_name(tool) {
            names.insert(connector.to_owned());
        }
    }
    match &manifest.requires.connectors {
        Some(ConnectorRequirement::All(list) | ConnectorRequirement::Any(list)) => {
            names.extend(list.iter().cloned());
        }
        None => {}
    }
    for source in skill_sources {
        if let SkillSource::Loader { plugin } = source {
            names.insert(plugin.clone());
        }
    }
    names.remove(manifest.name());
    names.into_iter().collect()
}

/// The cheap part of a load: checks the folder, parses the manifest, resolves the grant and
/// the skill sources, loads the definition, reads the component and hashes it (unless all
/// else is as `serving` and the file's stamp shows nobody wrote it since). When `serving`
/// (the version loaded from this folder before) has the same `plugin.toml` text, component
/// sha256, definition (`prompt.md`, `[agent]`) and effective grant, [`finish`] keeps it.
pub(crate) async fn stage(
    skills: &Skills,
    config: &Config,
    dir: &Path,
    serving: Option<&Arc<LoadedPlugin>>,
) -> Result<Staged, LoadError> {
    config
        .check_plugin_folder(dir)
        .map_err(|message| LoadError::Folder {
            dir: dir.to_owned(),
            message,
        })?;
    let (manifest, manifest_text) = Manifest::load_with_text(dir)?;
    let (effective, rows) = capability::resolve(&manifest, config)?;
    let skill_sources = skills
        .sources_for(manifest.name(), &manifest.dir, &effective.skills)
        .map_err(|e| LoadError::Grant {
            plugin: manifest.name().to_owned(),
            message: format!("key `capabilities.skills`: {e}"),
        })?;
    let name = manifest.name().to_owned();
    let file = manifest.component_path();
    let component_err = |message: String| LoadError::Component {
        plugin: name.clone(),
        file: file.clone(),
        message,
    };
    let path = manifest.component_file().map_err(component_err)?;
    manifest
        .check_component_size(config.host.max_component_mb)
        .map_err(component_err)?;
    let definition = Definition::load(&manifest)?;
    // The version serving, when everything but the component is as it was.
    let candidate = serving.filter(|old| {
        old.manifest_text == manifest_text
            && **old.runtime.definition() == definition
            && **old.runtime.effective() == effective
            && old.rows == rows
    });
    // When the file's stamp is as the candidate's too, its digest is taken instead of hashing
    // the bytes again (guild_runtime's `component_file`).
    let known =
        candidate.and_then(|old| Some((old.component_stamp?, old.runtime.sha256().to_owned())));
    // Read (and hashed) once, off the async workers: compared with the version serving, and
    // compiled from these very bytes if it differs.
    let component = tokio::task::spawn_blocking(move || {
        let known = known
            .as_ref()
            .map(|(stamp, sha256)| (*stamp, sha256.as_str()));
        ComponentFile::read_since(&path, known)
    })
    .await
    .map_err(|e| component_err(format!("reading task failed: {e}")))?
    .map_err(|e| component_err(e.to_string()))?;
    let unchanged = candidate
        .filter(|old| old.runtime.sha256() == component.sha256())
        .cloned();
    Ok(Staged {
        manifest,
        manifest_text,
        effective,
        rows,
        skill_sources,
        definition,
        component,
        unchanged,
    })
}

/// The costly part of a load: compiles the staged component (cache first) and links it, or
/// reopens the unchanged version serving ([`Runtime::reopen`]: nothing compiled, linked or
/// run, only its granted folders opened and measured again); then asks a new version what it
/// is.
pub(crate) async fn finish(runtime: &Runtime, staged: Staged) -> Result<LoadedPlugin, LoadError> {
    let Staged {
        manifest,
        manifest_text,
        effective,
        rows,
        skill_sources,
        definition,
        component,
        unchanged,
    } = staged;
    let name = manifest.name().to_owned();
    let file: PathBuf = manifest.component_path();
    let component_err = |message: String| LoadError::Component {
        plugin: name.clone(),
        file: file.clone(),
        message,
    };
    let kind = manifest.plugin.kind;
    let ident = format!("{}@{}", name, manifest.plugin.version);
    let component_stamp = component.stamp();
    let started = std::time::Instant::now();
    let prepared = match &unchanged {
        Some(old) => runtime.reopen(&old.runtime).await,
        None => {
            runtime
                .prepare_component(
                    &name,
                    &ident,
                    kind,
                    component,
                    Arc::new(effective),
                    Arc::new(definition),
                )
                .await
        }
    };
    let prepared = prepared.map_err(|e| match e {
        PrepareError::WrongWorld(message) => LoadError::WrongWorld {
            plugin: name.clone(),
            file: file.clone(),
            kind,
            message,
        },
        PrepareError::Mount(message) => LoadError::Grant {
            plugin: name.clone(),
            message,
        },
        other => component_err(other.to_string()),
    })?;

    if unchanged.is_none() && prepared.compiler() == Compiler::Baseline {
        tracing::info!(
            "{name} usable (baseline) in {} ms; compiling its optimized code in the background",
            started.elapsed().as_millis()
        );
    }
    if let Some(old) = unchanged {
        tracing::debug!(plugin = %ident, "plugin unchanged: kept");
        return Ok(LoadedPlugin {
            ident: old.ident.clone(),
            name: old.name.clone(),
            description: old.description.clone(),
            manifest,
            manifest_text,
            rows,
            runtime: prepared,
            tools: old.tools.clone(),
            skill_sources,
            component_stamp,
        });
    }
    let mut plugin = LoadedPlugin {
        ident: ident.as_str().into(),
        name: name.as_str().into(),
        description: manifest.plugin.description.clone().unwrap_or_default(),
        manifest,
        manifest_text,
        rows,
        runtime: prepared,
        tools: Vec::new(),
        skill_sources,
        component_stamp,
    };
    let describe_err = |what: &str, e: Failure| LoadError::Component {
        plugin: name.clone(),
        file: file.clone(),
        message: format!("{what} {e}"),
    };
    match kind {
        PluginKind::Specialist => {
            let description = runtime
                .describe(&plugin.runtime)
                .await
                .map_err(|e| describe_err("describe()", e))?;
            if plugin.description.is_empty() {
                plugin.description = first_line(&description);
            }
        }
        PluginKind::Connector => {
            let tools = runtime
                .connector_tools(&plugin.runtime)
                .await
                .map_err(|e| describe_err("tools()", e))?;
            check_tools(&tools).map_err(|m| describe_err("tools()", Failure::WrongKind(m)))?;
            plugin.tools = tools;
        }
        PluginKind::SkillLoader => {}
    }
    tracing::info!(
        plugin = %plugin.ident,
        kind = %kind,
        source = ?plugin.runtime.compile_source(),
        "plugin loaded"
    );
    Ok(plugin)
}

fn first_line(s: &str) -> String {
    s.lines()
        .next()
        .unwrap_or("")
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// A connector's tool list must be well-formed: valid unique names, JSON schemas, and
/// receipt type and operation on every mutating tool.
fn check_tools(tools: &[ToolSpec]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for t in tools {
        if parse_tool_name(&format!("x.{}", t.name)).is_err() {
            // The usual mistake: the connector's name written into the tool's own.
            let dotted = match t.name.rsplit_once('.') {
                Some((_, own)) => format!(" (name it {own:?}: callers add the connector's name)"),
                None => String::new(),
            };
            return Err(format!(
                "returned an invalid tool name {:?}{dotted}; {}",
                t.name,
                guild_core::tool_names::TOOL_NAME_RULE
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(format!("returned tool {:?} twice", t.name));
        }
        // Strictly: a schema that repeats a key would be checked with one value while the
        // supervisor reads it with another.
        if let Err(e) = guild_core::strict_json::parse(&t.input_schema) {
            return Err(format!("tool {:?}: input schema is {e}", t.name));
        }
        // A schema the validator cannot use would refuse every call: refuse the connector now.
        if let Some(problem) = guild_core::schema::schema_problem(&t.input_schema) {
            return Err(format!(
                "tool {:?}: input schema is not a usable JSON Schema: {problem}",
                t.name
            ));
        }
        if t.mutating && (t.receipt_type.is_none() || t.operation.is_none()) {
            return Err(format!(
                "tool {:?} is mutating but has no receipt type or operation",
                t.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(schema: &str) -> ToolSpec {
        let mut t = ToolSpec::new("lookup", "Looks something up.");
        t.input_schema = schema.to_owned();
        t
    }

    #[test]
    fn a_dotted_tool_name_is_refused_with_the_naming_rule() {
        let mut t = spec("{}");
        t.name = "weather.lookup".into();
        let e = check_tools(&[t]).expect_err("a dot in a tool's own name");
        assert!(
            e.starts_with(r#"returned an invalid tool name "weather.lookup" (name it "lookup": callers add the connector's name); a tool is called as `connector.tool`"#),
            "{e}"
        );
        let mut t = spec("{}");
        t.name = "Look Up".into();
        let e = check_tools(&[t]).expect_err("capitals and a space");
        assert!(
            e.starts_with(r#"returned an invalid tool name "Look Up"; a tool"#),
            "{e}"
        );
    }

    #[test]
    fn a_tool_whose_schema_cannot_check_anything_refuses_the_connector() {
        for usable in [
            r#"{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z]+$"}}}"#,
            r##"{"$defs":{"q":{"type":"string"}},"properties":{"q":{"$ref":"#/$defs/q"}}}"##,
            "{}",
        ] {
            assert_eq!(check_tools(&[spec(usable)]), Ok(()), "{usable}");
        }
        for (unusable, why) in [
            (r#"{"type":"mystery"}"#, "not a usable JSON Schema"),
            (
                r#"{"properties":{"q":{"pattern":"(unclosed"}}}"#,
                "not a usable JSON Schema",
            ),
            (
                r#"{"$ref":"https://example.com/schema.json"}"#,
                "not a usable JSON Schema",
            ),
            (r#"{"type":"object","type":"string"}"#, "more than once"),
        ] {
            let e = check_tools(&[spec(unusable)]).expect_err(unusable);
            assert!(e.contains("lookup") && e.contains(why), "{unusable}: {e}");
        }
    }
}
