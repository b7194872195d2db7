#!/usr/bin/env bash
# Builds plugins/recap-py/recap-py.wasm with the Python SDK (sdk/python/componentize.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../sdk/python/componentize.sh" "$here" app specialist "$here/recap-py.wasm"
