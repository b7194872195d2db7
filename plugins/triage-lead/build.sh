#!/usr/bin/env bash
# Builds a prompt-defined specialist: copies the shared agent-loop component into this folder, as
# the file plugin.toml names (a plugin folder holds its own component; docs/plugin-authors.md,
# "Specialists without code"). AGENT_LOOP names another agent-loop.wasm. Run from anywhere.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${AGENT_LOOP:-$here/../agent-loop/agent-loop.wasm}"
[[ -f "$src" ]] || {
    echo "triage-lead build: $src not found: build plugins/agent-loop first (plugins/build.sh)" >&2
    exit 1
}
cp "$src" "$here/agent-loop.wasm.tmp"
mv "$here/agent-loop.wasm.tmp" "$here/agent-loop.wasm"
