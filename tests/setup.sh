#!/usr/bin/env bash
# Installs what `cargo test --workspace` needs besides Rust, so that the README's commands
# (`./plugins/build.sh && cargo test --workspace`, which runs this first) pass on a fresh machine:
#
#   - the official Python MCP client (`mcp`, pinned) in a virtual environment inside the checkout,
#     .venv/ (gitignored); host/cli/tests/mcp.rs runs its client script with .venv/bin/python;
#   - ssh-keygen (Debian's openssh-client): the bundle tests check Guild's SSH signatures against
#     it, both ways;
#   - PostgreSQL's server binaries (Debian's postgresql, without its default cluster): host/pg's
#     tests run initdb and postgres in a temporary folder (guild_pg::testing);
#   - the openssl command (Debian's openssl): host/pg's TLS tests make a throwaway CA and server
#     certificate with it;
#   - Node.js and npm (the JavaScript SDK's and scaffolds' unit tests), then the pinned JavaScript
#     and C plugin toolchains (sdk/js/setup.sh, sdk/c/setup.sh), and the official TypeScript MCP
#     client with its Tasks add-on and the MCP Inspector's CLI (pinned, host/cli/tests/mcp_ts/, which
#     mcp_extensions.rs and real_clients.rs run);
#   - LangChain's MCP adapter (pinned) in .venv/langchain, a virtual environment of its own since
#     it needs the 1.x Python SDK (real_clients.rs).
#
# System packages are installed with apt-get when running as root; otherwise a missing one is an
# error that names it. Idempotent, and quick when everything is there; run from anywhere.
set -euo pipefail

MCP_VERSION=2.3.0
# LangChain's MCP adapter needs the 1.x Python SDK: it lives in a virtual environment of its own.
LANGCHAIN_PINS=("langchain-mcp-adapters==0.3.2" "mcp==1.30.0" "langchain-core==1.8.3")

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"

die() {
    echo "tests/setup.sh: error: $*" >&2
    exit 1
}

# Installs Debian packages as root (the package lists are fetched only if an install needs them).
apt_install() {
    command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] ||
        die "needs the package(s) $*, which only root may install here: install them with your package manager (Debian: sudo apt-get install $*)"
    echo "tests/setup.sh: installing $* (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "$@" >/dev/null; } ||
        die "apt-get install $* failed"
    hash -r
}

# Exits 0 when the venv's python has mcp at the pinned version.
has_mcp() {
    "$venv/bin/python" - "$MCP_VERSION" 2>/dev/null <<'PY'
import importlib.metadata, sys
sys.exit(importlib.metadata.version("mcp") != sys.argv[1])
PY
}

if ! has_mcp; then
    command -v python3 >/dev/null || apt_install python3
    if [ ! -x "$venv/bin/python" ]; then
        echo "tests/setup.sh: creating the test virtual environment in .venv"
        # Debian's python3 makes venvs only with python3-venv (ensurepip) installed.
        if ! python3 -m venv "$venv" >/dev/null 2>&1; then
            rm -rf "$venv"
            apt_install python3-venv
            python3 -m venv "$venv" || die "python3 -m venv $venv failed"
        fi
    fi
    echo "tests/setup.sh: installing mcp==$MCP_VERSION into .venv (pip)"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" ||
        die "pip install mcp==$MCP_VERSION into $venv failed"
    has_mcp || die "mcp==$MCP_VERSION was installed but $venv/bin/python cannot import it"
fi

command -v ssh-keygen >/dev/null || apt_install openssh-client
command -v ssh-keygen >/dev/null || die "ssh-keygen is still not on PATH after installing openssh-client"
command -v openssl >/dev/null || apt_install openssl
command -v openssl >/dev/null || die "openssl is still not on PATH after installing openssl"

# initdb and postgres on PATH or where Debian puts them (what guild_pg::testing looks for).
has_postgres() {
    { command -v initdb && command -v postgres; } >/dev/null && return 0
    local bin
    for bin in /usr/lib/postgresql/*/bin; do
        [ -x "$bin/initdb" ] && [ -x "$bin/postgres" ] && return 0
    done
    return 1
}
if ! has_postgres; then
    # Debian's package creates and starts a "main" cluster on install unless told not to; the
    # tests start their own servers, so none is created (and the install takes seconds).
    if [ "$(id -u)" = 0 ]; then
        mkdir -p /etc/postgresql-common/createcluster.d
        echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/guild-tests.conf
    fi
    apt_install postgresql
    has_postgres || die "initdb/postgres are still missing after installing postgresql"
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    apt_install nodejs npm
fi
"$repo/sdk/js/setup.sh" || die "the JavaScript plugin toolchain could not be installed (sdk/js/setup.sh)"
"$repo/sdk/c/setup.sh" || die "the C plugin toolchain could not be installed (sdk/c/setup.sh)"

# The TypeScript MCP client: `npm ci` from its lock file, skipped while the copy of the lock kept
# in node_modules after the last install still matches.
ts="$repo/host/cli/tests/mcp_ts"
if ! cmp -s "$ts/package-lock.json" "$ts/node_modules/.guild-installed-lock.json"; then
    echo "tests/setup.sh: installing the TypeScript MCP client and the Inspector CLI (npm ci in host/cli/tests/mcp_ts)"
    (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error) ||
        die "npm ci failed in host/cli/tests/mcp_ts (see above)"
    cp "$ts/package-lock.json" "$ts/node_modules/.guild-installed-lock.json"
fi

# LangChain's MCP adapter, skipped while the pins recorded after the last install still match.
lc="$venv/langchain"
if [ "$(cat "$lc/.guild-pins" 2>/dev/null)" != "${LANGCHAIN_PINS[*]}" ]; then
    echo "tests/setup.sh: installing ${LANGCHAIN_PINS[*]} into .venv/langchain (pip)"
    [ -x "$lc/bin/python" ] || python3 -m venv "$lc" || die "python3 -m venv $lc failed"
    "$lc/bin/python" -m pip install --quiet --disable-pip-version-check "${LANGCHAIN_PINS[@]}" ||
        die "pip install ${LANGCHAIN_PINS[*]} into $lc failed"
    echo "${LANGCHAIN_PINS[*]}" >"$lc/.guild-pins"
fi
