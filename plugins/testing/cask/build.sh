#!/usr/bin/env bash
# Builds plugins/testing/cask/cask.wasm (a guild:plugin `specialist` component) from C with
# sdk/c/build.sh (clang for wasm32-wasi, the checked-in bindings, the preview1 adapter; the
# toolchain comes from sdk/c/setup.sh). Skips the build when cask.wasm is newer than its
# sources. Run from anywhere.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sdk="$here/../../../sdk/c"
out="$here/cask.wasm"
if [ -f "$out" ] && [ -z "$(find "$here" "$sdk/guild.c" "$sdk/guild_llm.c" "$sdk/guild.h" "$sdk/bindings" \
    -newer "$out" \( -name '*.c' -o -name '*.h' -o -name '*.o' \) -print -quit)" ]; then
    exit 0
fi
exec "$sdk/build.sh" specialist "$out" "$here/cask.c"
