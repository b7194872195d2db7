#!/usr/bin/env bash
# Builds a Python Guild plugin into a component with componentize-py, bundling the Python SDK
# (sdk/python/guild_sdk) next to the plugin's modules.
#
#   sdk/python/componentize.sh PLUGIN_DIR APP_MODULE WORLD OUT.wasm
#
# Only PLUGIN_DIR's *.py (without test_*.py) and the SDK (without its test double) go into the
# component. Installs the
# pinned componentize-py when it is missing. Skips the build when OUT.wasm is newer than every
# input. Run from anywhere.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1
[ $# -eq 4 ] || { echo "usage: $0 PLUGIN_DIR APP_MODULE WORLD OUT.wasm" >&2; exit 2; }
dir="$(cd "$1" && pwd)"
app="$2"
world="$3"
out="$4"
sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wit_dir="$(cd "$sdk/../../wit" && pwd)"
name="$(basename "$out")"

die() { echo "$name build: $*" >&2; exit 1; }

[ -f "$dir/$app.py" ] || die "no $app.py in $dir (the module that exports the plugin)"
[ -f "$wit_dir/guild.wit" ] || die "WIT not found at $wit_dir/guild.wit"

size_line() {
    local bytes
    bytes=$(wc -c <"$out" | tr -d ' ')
    echo "$name: $bytes bytes ($((bytes / 1024)) KiB)$1"
}

sources() {
    for f in "$dir"/*.py; do
        case "$(basename "$f")" in test_*) ;; *) echo "$f" ;; esac
    done
}

sdk_sources() {
    for f in "$sdk"/guild_sdk/*.py; do
        [ "$(basename "$f")" = testing.py ] || echo "$f"
    done
}

up_to_date=1
if [ ! -f "$out" ]; then
    up_to_date=0
else
    while IFS= read -r input; do
        if [ "$input" -nt "$out" ]; then up_to_date=0; break; fi
    done < <(sources; sdk_sources; ls "$wit_dir"/*.wit "$sdk/componentize.sh" "$dir/build.sh" 2>/dev/null)
fi
if [ "$up_to_date" = 1 ]; then
    size_line " — up to date"
    exit 0
fi

if ! command -v componentize-py >/dev/null 2>&1; then
    echo "$name build: componentize-py not found; installing componentize-py==$COMPONENTIZE_PY_VERSION" >&2
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

# Stage the sources in a temp dir so that neither the previous component, the tests nor
# __pycache__ end up bundled, and nothing is written to the plugin folder but the component.
work="$(mktemp -d "${TMPDIR:-/tmp}/guild-py.XXXXXX")"
trap 'rm -rf "$work"' EXIT
while IFS= read -r f; do cp "$f" "$work/"; done < <(sources)
mkdir "$work/guild_sdk"
while IFS= read -r f; do cp "$f" "$work/guild_sdk/"; done < <(sdk_sources)

start=$(date +%s)
if ! (cd "$work" && componentize-py -d "$wit_dir" -w "$world" componentize "$app" -o "$work/out.wasm") \
    >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    die "componentize-py failed (output above)"
fi
[ -s "$work/out.wasm" ] || die "componentize-py produced no output"
mv -f "$work/out.wasm" "$out"
size_line " — built in $(( $(date +%s) - start )) s"
