#!/usr/bin/env bash
# Builds plugins/digest/digest.wasm (a guild:plugin `specialist` component) with componentize-py.
# Idempotent; run from anywhere. Skips the build when digest.wasm is newer than its inputs.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
wit_dir="$repo/wit"
out="$here/digest.wasm"

die() { echo "digest build: $*" >&2; exit 1; }

[ -f "$wit_dir/guild.wit" ] || die "WIT not found at $wit_dir/guild.wit"

size_line() {
    local bytes
    bytes=$(wc -c <"$out" | tr -d ' ')
    echo "digest.wasm: $bytes bytes ($((bytes / 1024)) KiB)$1"
}

up_to_date=1
if [ ! -f "$out" ]; then
    up_to_date=0
else
    for input in "$here"/*.py "$wit_dir"/*.wit "$here/build.sh"; do
        [ -e "$input" ] || continue
        case "$(basename "$input")" in test_*) continue ;; esac
        if [ "$input" -nt "$out" ]; then up_to_date=0; break; fi
    done
fi
if [ "$up_to_date" = 1 ]; then
    size_line " — up to date"
    exit 0
fi

if ! command -v componentize-py >/dev/null 2>&1; then
    echo "digest build: componentize-py not found; installing componentize-py==$COMPONENTIZE_PY_VERSION" >&2
    py=$(command -v python3 || command -v python) || die "python3 is required to install componentize-py"
    "$py" -m pip install --quiet "componentize-py==$COMPONENTIZE_PY_VERSION" \
        || die "pip install componentize-py==$COMPONENTIZE_PY_VERSION failed"
    hash -r
    if ! command -v componentize-py >/dev/null 2>&1; then
        # pip --user installs land in the user base's bin, which may not be on PATH.
        user_bin="$("$py" -m site --user-base 2>/dev/null)/bin"
        [ -x "$user_bin/componentize-py" ] && PATH="$user_bin:$PATH"
    fi
    command -v componentize-py >/dev/null 2>&1 || die "componentize-py installed but not found on PATH"
fi

# Only the guest sources go into the component: stage them in a temp dir so that neither the
# previous digest.wasm, the tests nor __pycache__ end up bundled, and nothing is written to the
# plugin folder except the final component.
work="$(mktemp -d "${TMPDIR:-/tmp}/guild-digest.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$here/app.py" "$here/digest.py" "$work/"

start=$(date +%s)
if ! (cd "$work" && componentize-py -d "$wit_dir" -w specialist componentize app -o "$work/digest.wasm") \
    >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    die "componentize-py failed (output above)"
fi
[ -s "$work/digest.wasm" ] || die "componentize-py produced no output"
mv -f "$work/digest.wasm" "$out"
size_line " — built in $(( $(date +%s) - start )) s"
