#!/usr/bin/env bash
# Builds {{name}}.wasm, a guild:plugin `{{kind}}` component, from app.js with the Guild
# JavaScript SDK's componentize.sh: it bundles app.js with the SDK (`import ... from
# "guild-sdk"`) and runs jco's default (StarlingMonkey) build, with the pinned toolchain (jco
# 1.34.0, componentize-js 0.22.0) its setup.sh installs. Skips the build when the component is
# newer than every source. Run from anywhere.
set -euo pipefail

# The Guild JavaScript SDK this plugin was scaffolded with (`guild new --sdk DIR` picks another).
js_sdk="{{sdk_dir}}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "{{name}} build: $*" >&2; exit 1; }

[ -x "$js_sdk/componentize.sh" ] ||
    die "no Guild JavaScript SDK at $js_sdk: set js_sdk in build.sh to the sdk/js folder of a Guild checkout"
exec "$js_sdk/componentize.sh" "$here/app.js" {{kind}} "$here/{{name}}.wasm"
