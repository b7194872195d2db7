#!/usr/bin/env bash
# Builds {{name}}.wasm, a guild:plugin `{{kind}}` component, from app.py with componentize-py,
# against the WIT in ./wit. Installs componentize-py (pip) when it is missing. Run from anywhere.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "{{name}} build: $*" >&2; exit 1; }

if ! command -v componentize-py >/dev/null 2>&1; then
    py=$(command -v python3 || command -v python) || die "python3 is required to install componentize-py"
    echo "{{name}} build: installing componentize-py==$COMPONENTIZE_PY_VERSION (pip)" >&2
    "$py" -m pip install --quiet "componentize-py==$COMPONENTIZE_PY_VERSION" ||
        die "pip install componentize-py==$COMPONENTIZE_PY_VERSION failed"
    hash -r
    command -v componentize-py >/dev/null 2>&1 ||
        die "componentize-py installed but not on PATH (add \$(python3 -m site --user-base)/bin)"
fi

# Only the guest sources go into the component: stage them so that tests, caches and the
# previous build stay out.
work="$(mktemp -d "${TMPDIR:-/tmp}/guild-{{name}}.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$here/app.py" "$here/logic.py" "$work/"
(cd "$work" && componentize-py -d "$here/wit" -w {{kind}} componentize app -o "$work/out.wasm") ||
    die "componentize-py failed (see above)"
mv -f "$work/out.wasm" "$here/{{name}}.wasm"
echo "built {{name}}.wasm ($(wc -c <"$here/{{name}}.wasm" | tr -d ' ') bytes)"
