#!/usr/bin/env bash
# Builds {{name}}.wasm, a guild:plugin `{{kind}}` component, from app.js with jco's default
# (StarlingMonkey) engine, against the WIT in ./wit. The pinned toolchain (jco 1.34.0,
# componentize-js 0.22.0) comes from the Guild JS SDK folder, installed there by its setup.sh.
# Run from anywhere.
set -euo pipefail

js_sdk="{{sdk_dir}}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "{{name}} build: $*" >&2; exit 1; }

[ -x "$js_sdk/setup.sh" ] ||
    die "no JS toolchain folder at $js_sdk: regenerate with 'guild new ... --sdk DIR' or edit js_sdk in build.sh"
"$js_sdk/setup.sh" || die "the JavaScript toolchain could not be installed ($js_sdk/setup.sh)"
work="$(mktemp -d "${TMPDIR:-/tmp}/guild-{{name}}.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$js_sdk/node_modules/.bin/jco" componentize "$here/app.js" --wit "$here/wit" -n {{kind}} \
    -o "$work/out.wasm" || die "jco componentize failed (see above)"
mv -f "$work/out.wasm" "$here/{{name}}.wasm"
echo "built {{name}}.wasm ($(wc -c <"$here/{{name}}.wasm" | tr -d ' ') bytes)"
