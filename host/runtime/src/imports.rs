//! What to tell an author whose component imports something this host does not link: which
//! import, and what to do about it (rebuild against the host's WIT, target WASI 0.2, disable a
//! toolchain feature, remove the import).

/// The message for a component whose imports the linker refused with `linker_error`;
/// `imports` are the component's import names. Names the refused import when the error or
/// the list identifies it.
pub(crate) fn unprovided<'a>(imports: impl Iterator<Item = &'a str>, linker_error: &str) -> String {
    let imports: Vec<&str> = imports.collect();
    let named = imports
        .iter()
        .find(|i| linker_error.contains(&format!("`{i}`")))
        .or_else(|| {
            imports
                .iter()
                .find(|i| !i.starts_with("wasi:") && !i.starts_with("guild:plugin/"))
        });
    match named {
        Some(import) => format!(
            "imports `{import}`, which this host does not provide: {} (linker: {linker_error})",
            hint(import)
        ),
        None => format!("imports something this host does not provide: {linker_error}"),
    }
}

/// What to do about one unprovided import, by its namespace and version.
fn hint(import: &str) -> &'static str {
    let (path, version) = import.split_once('@').unwrap_or((import, ""));
    if path.starts_with("guild:plugin/") {
        "it is another version of the Guild WIT; rebuild the plugin against this host's wit/ folder"
    } else if path.starts_with("wasi:") && !version.is_empty() && !version.starts_with("0.2.") {
        "this host provides WASI 0.2 (0.2.0 to 0.2.12); build for WASI preview 2 \
         (Rust: --target wasm32-wasip2)"
    } else if path.starts_with("wasi:http/") {
        "of wasi:http this host provides only `types` and `outgoing-handler` (outbound requests, \
         under the plugin's `http` grant); build without the rest"
    } else if path.starts_with("wasi:") {
        "this host provides the WASI 0.2 interfaces of wasi:cli, clocks, filesystem, io, random \
         and sockets (each off unless granted) plus wasi:http's outgoing-handler; remove the \
         import, or stub WASI out (componentize-py: --stub-wasi)"
    } else {
        "a plugin may import only guild:plugin interfaces and WASI 0.2; remove the import (or \
         the library that brings it in)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINKER: &str = "component imports instance `guild:testing/missing`, but a matching \
                          implementation was not found in the linker";

    #[test]
    fn names_the_import_the_linker_refused_and_what_to_do() {
        let imports = [
            "wasi:io/poll@0.2.12",
            "guild:testing/missing",
            "guild:plugin/log@0.1.0",
        ];
        let message = unprovided(imports.into_iter(), LINKER);
        assert!(
            message.starts_with("imports `guild:testing/missing`"),
            "{message}"
        );
        assert!(message.contains("remove the import"), "{message}");
    }

    #[test]
    fn hints_follow_the_namespace_and_version() {
        assert!(hint("guild:plugin/log@9.0.0").contains("wit/ folder"));
        assert!(hint("wasi:http/types@0.3.0").contains("WASI 0.2"));
        assert!(hint("wasi:http/incoming-handler@0.2.3").contains("outgoing-handler"));
        assert!(hint("wasi:keyvalue/store@0.2.0").contains("stub WASI"));
    }

    #[test]
    fn without_a_name_keeps_the_linker_text() {
        let message = unprovided(["wasi:io/poll@0.2.12"].into_iter(), "something else");
        assert_eq!(
            message,
            "imports something this host does not provide: something else"
        );
    }
}
