#!/usr/bin/env bash
# Builds {{name}}.wasm, a guild:plugin `{{kind}}` component, from this folder's Rust crate.
# Honours CARGO_TARGET_DIR (several plugins can share one). Run from anywhere.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target_dir="${CARGO_TARGET_DIR:-$here/target}"
die() { echo "{{name}} build: $*" >&2; exit 1; }

command -v cargo >/dev/null || die "cargo not found; install Rust with rustup (https://rustup.rs)"
if command -v rustup >/dev/null; then
    rustup target add wasm32-wasip2 >/dev/null 2>&1 ||
        die "could not add the wasm32-wasip2 target (rustup target add wasm32-wasip2)"
fi
cargo build --release --target wasm32-wasip2 \
    --manifest-path "$here/Cargo.toml" --target-dir "$target_dir" ||
    die "cargo build failed (see above)"
built="$target_dir/wasm32-wasip2/release/{{name_snake}}.wasm"
[ -f "$built" ] || die "cargo did not produce $built"
cp "$built" "$here/{{name}}.wasm.tmp"
mv "$here/{{name}}.wasm.tmp" "$here/{{name}}.wasm"
echo "built {{name}}.wasm ($(wc -c <"$here/{{name}}.wasm" | tr -d ' ') bytes)"
