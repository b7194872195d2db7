#!/usr/bin/env bash
# Builds every plugin: the Rust workspace here (one cargo build for all of them, which builds the
# Rust SDK in sdk/rust for wasm32-wasip2), then each plugin folder's own build.sh (non-Rust
# plugins: Python ones call sdk/python/componentize.sh, which bundles the Python SDK; JavaScript
# ones sdk/js/componentize.sh, which bundles the JavaScript SDK). Copies each component next to its plugin.toml as the file its `component` key
# names. Last, runs the SDK's tests and agent-loop's (on the host target: they are their own
# workspaces, so `cargo test --workspace` does not reach them). First, tests/setup.sh installs what the plugin
# builds and `cargo test --workspace` need besides Rust (the MCP test client in .venv/,
# ssh-keygen, Node.js, the JavaScript and C toolchains). Idempotent; run from anywhere.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target_dir="${CARGO_TARGET_DIR:-$here/target}"

fail() {
    echo "plugins/build.sh: error: $*" >&2
    exit 1
}

command -v cargo >/dev/null || fail "cargo not found; install Rust (rustup) first"
"$here/../tests/setup.sh" || fail "tests/setup.sh could not install what the builds and tests need (see above)"
if command -v rustup >/dev/null; then
    rustup target add wasm32-wasip2 >/dev/null 2>&1 ||
        fail "could not add the wasm32-wasip2 target (rustup target add wasm32-wasip2)"
fi

cargo build --quiet --release --target wasm32-wasip2 \
    --manifest-path "$here/Cargo.toml" --target-dir "$target_dir" ||
    fail "cargo build of the Rust plugins failed (see above)"

# The value of `key = "..."` in the first table of a TOML file that has it.
toml_string() {
    sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" "$1" | head -n 1
}

size_of() {
    wc -c <"$1" | tr -d ' '
}

# Rust plugins: every folder with both a Cargo.toml and a plugin.toml.
while IFS= read -r manifest; do
    dir="$(dirname "$manifest")"
    [[ -f "$dir/Cargo.toml" ]] || continue
    crate="$(toml_string "$dir/Cargo.toml" name)"
    component="$(toml_string "$manifest" component)"
    [[ -n "$crate" ]] || fail "no package name in $dir/Cargo.toml"
    [[ -n "$component" ]] || fail "no [plugin] component in $manifest"
    built="$target_dir/wasm32-wasip2/release/${crate//-/_}.wasm"
    [[ -f "$built" ]] || fail "cargo did not produce $built for $dir"
    # A component starts with \0asm, version 0x0d 0x00, layer 0x01 0x00; a core module would not
    # load as a plugin.
    magic="$(head -c 8 "$built" | od -An -tx1 | tr -d ' \n')"
    [[ "$magic" == "0061736d0d000100" ]] || fail "$built is not a WebAssembly component (magic $magic)"
    cp "$built" "$dir/$component.tmp"
    mv "$dir/$component.tmp" "$dir/$component"
    printf 'built %-28s %8s bytes\n' "${dir#"$here"/}/$component" "$(size_of "$dir/$component")"
done < <(find "$here" -path "$target_dir" -prune -o -name plugin.toml -print | sort)

# Shared components: Rust crates without a plugin.toml, copied next to their Cargo.toml as
# CRATE.wasm. agent-loop is the component every prompt-defined specialist copies into its own
# folder (their build.sh, run below).
for crate in agent-loop; do
    built="$target_dir/wasm32-wasip2/release/${crate//-/_}.wasm"
    [[ -f "$built" ]] || fail "cargo did not produce $built"
    cp "$built" "$here/$crate/$crate.wasm.tmp"
    mv "$here/$crate/$crate.wasm.tmp" "$here/$crate/$crate.wasm"
    printf 'built %-28s %8s bytes\n' "$crate/$crate.wasm" "$(size_of "$here/$crate/$crate.wasm")"
done

# Other languages: each plugin folder may bring its own build.sh.
for script in "$here"/*/build.sh "$here"/testing/*/build.sh; do
    [[ -f "$script" ]] || continue
    dir="$(dirname "$script")"
    echo "running ${dir#"$here"/}/build.sh"
    bash "$script" || fail "${dir#"$here"/}/build.sh failed"
    if [[ -f "$dir/plugin.toml" ]]; then
        component="$(toml_string "$dir/plugin.toml" component)"
        [[ -n "$component" && -f "$dir/$component" ]] ||
            fail "${dir#"$here"/}/build.sh did not produce ${component:-the component named in plugin.toml}"
        printf 'built %-28s %8s bytes\n' "${dir#"$here"/}/$component" "$(size_of "$dir/$component")"
    fi
done

# The SDK's tests and doctests (the examples plugin authors copy must keep compiling and
# passing), and the agent loop's logic against scripted models, natively.
echo "testing sdk/rust and plugins/agent-loop"
# (--lib and --doc: the example is a component and does not link natively.)
sdk_manifest="$here/../sdk/rust/Cargo.toml"
cargo test --quiet --lib --manifest-path "$sdk_manifest" --target-dir "$target_dir" &&
    cargo test --quiet --doc --manifest-path "$sdk_manifest" --target-dir "$target_dir" ||
    fail "the Rust SDK's tests failed (cargo test --lib / --doc --manifest-path sdk/rust/Cargo.toml)"
cargo test --quiet --manifest-path "$here/Cargo.toml" --target-dir "$target_dir" -p agent-loop ||
    fail "agent-loop's tests failed (cargo test --manifest-path plugins/Cargo.toml -p agent-loop)"
