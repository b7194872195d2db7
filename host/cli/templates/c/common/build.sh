#!/usr/bin/env bash
# Builds {{name}}.wasm, a guild:plugin `{{kind}}` component, from the C files in this folder
# (not test_*.c: those are the native unit tests that ./test.sh runs) with the Guild C SDK: its
# build.sh compiles them with clang for wasm32-wasi (reactor) against the SDK's checked-in
# bindings and guild.h, then adapts the module into a component with wasm-tools and the WASI
# preview1 adapter. The toolchain comes from the SDK's setup.sh.
# Run from anywhere.
set -euo pipefail

c_sdk="{{sdk_dir}}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "{{name}} build: $*" >&2; exit 1; }

[ -x "$c_sdk/build.sh" ] ||
    die "no Guild C SDK at $c_sdk: regenerate with 'guild new ... --sdk DIR' or edit c_sdk in build.sh (a Guild checkout's sdk/c)"
sources=()
for src in "$here"/*.c; do
    case "${src##*/}" in test_*.c) ;; *) sources+=("$src") ;; esac
done
"$c_sdk/build.sh" {{kind}} "$here/{{name}}.wasm" "${sources[@]}" ||
    die "the C build failed (see above; $c_sdk/setup.sh installs the toolchain)"
echo "built {{name}}.wasm ($(wc -c <"$here/{{name}}.wasm" | tr -d ' ') bytes)"
