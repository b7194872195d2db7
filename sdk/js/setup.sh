#!/usr/bin/env bash
# Installs the pinned JavaScript plugin toolchain (jco 1.34.0, componentize-js 0.22.0) into
# sdk/js/node_modules with `npm ci` from package-lock.json, unless it is already there.
# Needs node and npm. Idempotent; run from anywhere.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "sdk/js/setup.sh: $*" >&2; exit 1; }

# After an install, a copy of the lock file is kept in node_modules: the install is current
# while it matches the checked-in one.
stamp="$here/node_modules/.guild-installed-lock.json"
if [ -x "$here/node_modules/.bin/jco" ] && cmp -s "$here/package-lock.json" "$stamp"; then
    exit 0
fi
command -v npm >/dev/null || die "npm not found; install Node.js 18 or newer (apt-get install nodejs npm)"
echo "sdk/js/setup.sh: installing jco and componentize-js (npm ci)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error) ||
    die "npm ci failed in sdk/js (see above)"
cp "$here/package-lock.json" "$stamp"
