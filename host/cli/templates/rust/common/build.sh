#!/usr/bin/env bash
# Builds {{name}}.wasm, a guild:plugin `{{kind}}` component, from this folder's Rust crate.
# Honours CARGO_TARGET_DIR (several plugins can share one). Run from anywhere. `guild dev` runs
# it with GUILD_BUILD=dev: then the crate builds with the `guild-dev` profile of Cargo.toml (no
# LTO, incremental: a larger component, built in about a third of the time); otherwise with
# `release` (small, optimised: what `guild build` and a bundle ship).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target_dir="${CARGO_TARGET_DIR:-$here/target}"
die() { echo "{{name}} build: $*" >&2; exit 1; }

command -v cargo >/dev/null || die "cargo not found; install Rust with rustup (https://rustup.rs)"
if command -v rustup >/dev/null; then
    rustup target add wasm32-wasip2 >/dev/null 2>&1 ||
        die "could not add the wasm32-wasip2 target (rustup target add wasm32-wasip2)"
fi
profile=release
if [ "${GUILD_BUILD:-}" = dev ]; then
    profile=guild-dev
    export CARGO_INCREMENTAL=1   # the dev profile's point: rebuild only what the edit touched
fi
cargo build --profile "$profile" --target wasm32-wasip2 \
    --manifest-path "$here/Cargo.toml" --target-dir "$target_dir" ||
    die "cargo build failed (see above)"
built="$target_dir/wasm32-wasip2/$profile/{{name_snake}}.wasm"
[ -f "$built" ] || die "cargo did not produce $built"
cp "$built" "$here/{{name}}.wasm.tmp"
mv "$here/{{name}}.wasm.tmp" "$here/{{name}}.wasm"
echo "built {{name}}.wasm ($(wc -c <"$here/{{name}}.wasm" | tr -d ' ') bytes)"
