//! Which `guild:plugin` version a component was built against, read from its export and import
//! names before anything of it is instantiated.
//!
//! From 0.2.0 on every world exports one interface, so the version is in the export name
//! (`guild:plugin/connector-api@0.2.0`) and in every `guild:plugin` import. 0.1.0 exported bare
//! functions (`describe`, `run`, ...): a component whose only `guild:plugin` names carry 0.1.0,
//! or that exports 0.1.0's bare functions and names no version at all, is a 0.1.0 component.

use std::collections::BTreeSet;

use guild_core::manifest::PluginKind;

use super::api::{Bindings, SUPPORTED};

const PACKAGE: &str = "guild:plugin/";

/// The versions this host loads, for error messages: `0.3.0, 0.2.0, 0.1.0`.
pub(crate) fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(|b| format!("guild:plugin@{}", b.version))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The bindings for the version a component with these export and import names was built
/// against, or a message naming what it was built against and what this host supports.
pub(crate) fn detect(
    kind: PluginKind,
    exports: &BTreeSet<String>,
    imports: &BTreeSet<String>,
) -> Result<&'static Bindings, String> {
    let mut versions = BTreeSet::new();
    for name in exports.iter().chain(imports) {
        let Some(rest) = name.strip_prefix(PACKAGE) else {
            continue;
        };
        match rest.split_once('@') {
            Some((_, version)) => versions.insert(version.to_owned()),
            None => {
                return Err(format!(
                    "it names `{name}` without a version; this host supports {}",
                    supported_list()
                ));
            }
        };
    }
    let version = match versions.len() {
        0 => {
            // No versioned name at all: 0.1.0's bare exports, or nothing of ours (then the
            // export check against the latest world says what is missing).
            let oldest_bare = SUPPORTED
                .iter()
                .rev()
                .find(|b| (b.exports)(kind).iter().any(|e| exports.contains(*e)));
            return Ok(oldest_bare.copied().unwrap_or(SUPPORTED[0]));
        }
        1 => versions.pop_first().unwrap_or_default(),
        _ => {
            let found: Vec<_> = versions.into_iter().collect();
            return Err(format!(
                "it mixes guild:plugin versions {}; build it against one of {}",
                found.join(", "),
                supported_list()
            ));
        }
    };
    SUPPORTED
        .iter()
        .find(|b| b.version == version)
        .copied()
        .ok_or_else(|| {
            format!(
                "it was built against guild:plugin@{version}, which this host does not support; \
                 this host supports {}: rebuild the plugin against one of those, or upgrade Guild",
                supported_list()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_version_is_read_from_export_and_import_names() {
        let v3 = detect(
            PluginKind::Specialist,
            &set(&["guild:plugin/specialist-api@0.3.0"]),
            &set(&["guild:plugin/llm@0.3.0", "guild:plugin/definition@0.3.0"]),
        );
        assert_eq!(v3.map(|b| b.version), Ok("0.3.0"));
        let v2 = detect(
            PluginKind::Connector,
            &set(&["guild:plugin/connector-api@0.2.0"]),
            &set(&["guild:plugin/types@0.2.0", "wasi:cli/stdout@0.2.6"]),
        );
        assert_eq!(v2.map(|b| b.version), Ok("0.2.0"));
        let v1 = detect(
            PluginKind::Connector,
            &set(&["tools", "call"]),
            &set(&["guild:plugin/types@0.1.0"]),
        );
        assert_eq!(v1.map(|b| b.version), Ok("0.1.0"));
        let bare = detect(
            PluginKind::Specialist,
            &set(&["describe", "run"]),
            &set(&[]),
        );
        assert_eq!(bare.map(|b| b.version), Ok("0.1.0"));
        let nothing = detect(PluginKind::Specialist, &set(&["other"]), &set(&[]));
        assert_eq!(nothing.map(|b| b.version), Ok("0.3.0"));
    }

    #[test]
    fn unknown_and_mixed_versions_are_refused_naming_the_supported_ones() {
        let Err(e) = detect(
            PluginKind::Connector,
            &set(&["guild:plugin/connector-api@0.9.0"]),
            &set(&[]),
        ) else {
            panic!("0.9.0 accepted");
        };
        assert!(e.contains("guild:plugin@0.9.0"), "{e}");
        assert!(
            e.contains("guild:plugin@0.3.0, guild:plugin@0.2.0, guild:plugin@0.1.0"),
            "{e}"
        );
        let Err(e) = detect(
            PluginKind::Connector,
            &set(&["guild:plugin/connector-api@0.2.0"]),
            &set(&["guild:plugin/log@0.1.0"]),
        ) else {
            panic!("mixed versions accepted");
        };
        assert!(
            e.contains("mixes guild:plugin versions 0.1.0, 0.2.0"),
            "{e}"
        );
    }
}
