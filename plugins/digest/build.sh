#!/usr/bin/env bash
# Builds plugins/digest/digest.wasm (a guild:plugin `specialist` component) from app.py and
# digest.py with the Python SDK (sdk/python/componentize.sh: componentize-py, SDK bundled).
# Idempotent; run from anywhere. Skips the build when digest.wasm is newer than its inputs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../sdk/python/componentize.sh" "$here" app specialist "$here/digest.wasm"
