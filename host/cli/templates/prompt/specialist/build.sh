#!/usr/bin/env bash
# Builds {{name}}, a prompt-defined specialist: copies the shared agent-loop component into this
# folder as the file plugin.toml names (a plugin folder holds its own component). AGENT_LOOP
# names another agent-loop.wasm. Run from anywhere.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${AGENT_LOOP:-{{sdk_dir}}/agent-loop.wasm}"
[[ -f "$src" ]] || {
    echo "{{name}} build: $src not found: build the Guild plugins (plugins/build.sh in a Guild checkout) or set AGENT_LOOP" >&2
    exit 1
}
cp "$src" "$here/agent-loop.wasm.tmp"
mv "$here/agent-loop.wasm.tmp" "$here/agent-loop.wasm"
echo "built agent-loop.wasm ($(wc -c <"$here/agent-loop.wasm" | tr -d ' ') bytes)"
