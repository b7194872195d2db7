#!/usr/bin/env bash
# Builds plugins/recap-js/recap-js.wasm with the JavaScript SDK (sdk/js/componentize.sh: rolldown
# bundle + jco componentize, default StarlingMonkey engine). Skips the build when up to date.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../sdk/js/componentize.sh" "$here/recap.js" specialist "$here/recap-js.wasm"
