#!/usr/bin/env bash
# Builds plugins/testing/jsfetch/jsfetch.wasm (a guild:plugin `specialist` component) with jco's
# default StarlingMonkey engine, whose fetch() imports wasi:http. Installs the pinned JavaScript
# toolchain (sdk/js, `npm ci`) when it is missing. Idempotent; run from anywhere. Skips the
# build when jsfetch.wasm is newer than its inputs (a build takes ~40 s of CPU).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
js="$repo/sdk/js"
out="$here/jsfetch.wasm"

die() { echo "jsfetch build: $*" >&2; exit 1; }

up_to_date=1
if [ ! -f "$out" ]; then
    up_to_date=0
else
    for input in "$here"/*.js "$repo"/wit/*.wit "$here/build.sh" "$js/package-lock.json"; do
        if [ "$input" -nt "$out" ]; then up_to_date=0; break; fi
    done
fi
if [ "$up_to_date" = 1 ]; then
    echo "jsfetch.wasm: up to date"
    exit 0
fi

"$js/setup.sh" || die "the JavaScript toolchain could not be installed (sdk/js/setup.sh)"

work="$(mktemp -d "${TMPDIR:-/tmp}/guild-jsfetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
if ! "$js/node_modules/.bin/jco" componentize "$here/fetch.js" --wit "$repo/wit" -n specialist \
    -o "$work/jsfetch.wasm" >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    die "jco componentize failed (output above)"
fi
[ -s "$work/jsfetch.wasm" ] || die "jco componentize produced no output"
mv -f "$work/jsfetch.wasm" "$out"
echo "jsfetch.wasm: built in $(( $(date +%s) - start )) s"
