#!/usr/bin/env bash
# Builds {{name}}.wasm, a guild:plugin `{{kind}}` component, from app.py with the Guild Python
# SDK's componentize.sh (componentize-py, pinned and installed by it when missing), which bundles
# the SDK (guild_sdk) next to this folder's modules; test_*.py stay out. Skips the build when
# the component is newer than every source. Run from anywhere.
set -euo pipefail

# The Guild Python SDK this plugin was scaffolded with (`guild new --sdk DIR` picks another).
py_sdk="{{sdk_dir}}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "{{name}} build: $*" >&2; exit 1; }

[ -x "$py_sdk/componentize.sh" ] ||
    die "no Guild Python SDK at $py_sdk: set py_sdk in build.sh to the sdk/python folder of a Guild checkout"
exec "$py_sdk/componentize.sh" "$here" app {{kind}} "$here/{{name}}.wasm"
