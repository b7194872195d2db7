#!/usr/bin/env bash
# Runs a C plugin's unit tests natively (not wasm): compiles the given sources (the plugin's and
# its test file with main()) with the machine's C compiler against the same headers as the wasm
# build (sdk/c/guild.h, sdk/c/bindings/WORLD/WORLD.h), links them with the SDK's guild.c, the
# fake host (sdk/c/testing/fake_host.c, API in guild_test.h) and the helper functions of the
# generated bindings (their `*_free` and `*_string_*` functions, cut from WORLD.c; the rest of
# WORLD.c is canonical-ABI glue for wasm, which the fake host replaces), runs the program and
# exits with its status. Run from anywhere.
#
#   sdk/c/testing/test.sh WORLD SOURCE.c...     WORLD: specialist | connector | skill-loader
#
# The compiler is $CC (default cc); extra flags may be passed in CFLAGS, e.g.
# CFLAGS='-fsanitize=address,undefined' to catch leaks and overruns; the program runs under
# GUILD_TEST_RUNNER when set, e.g. GUILD_TEST_RUNNER='valgrind --error-exitcode=1 --leak-check=full'.
set -euo pipefail

testing="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sdk="$(dirname "$testing")"
die() { echo "sdk/c/testing/test.sh: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: sdk/c/testing/test.sh specialist|connector|skill-loader SOURCE.c..."
world="$1"
shift
case "$world" in
    specialist | connector | skill-loader) ;;
    *) die "unknown world '$world': pick specialist, connector or skill-loader (plugin.toml's kind)" ;;
esac
c_world="${world//-/_}"
bindings="$sdk/bindings/$world"
cc="${CC:-cc}"
command -v "$cc" >/dev/null ||
    die "no C compiler '$cc' found: install one (e.g. apt-get install gcc, or clang) or set CC"
[ -f "$bindings/$c_world.c" ] ||
    die "no C bindings for '$world' in $bindings (regenerate them with $sdk/bindings.sh)"
for src in "$@"; do
    [ -f "$src" ] || die "source file $src does not exist"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/guild-c-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The generated helpers: from "// Helper Functions" up to "// Component Adapters".
helpers="$work/${c_world}_helpers.c"
{
    echo "#include \"$c_world.h\""
    echo "#include <stdlib.h>"
    echo "#include <string.h>"
    echo "void *cabi_realloc(void *ptr, size_t old_size, size_t align, size_t new_size);"
    awk '/^\/\/ Helper Functions$/ { on = 1 } /^\/\/ Component Adapters$/ { on = 0 } on' \
        "$bindings/$c_world.c"
} >"$helpers"
grep -q "_free(" "$helpers" ||
    die "found no helper functions in $bindings/$c_world.c (its section comments changed?)"

define="-DGUILD_WORLD_$(echo "$c_world" | tr '[:lower:]' '[:upper:]')"
includes=(-I "$testing" -I "$sdk" -I "$bindings")
# The same warnings as the wasm build, as errors. The fake host must define the header's
# imports exactly: -Wmissing-prototypes turns an import renamed in the WIT into an error.
flags=(-std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -g)
# shellcheck disable=SC2086 # CFLAGS is a list of flags
"$cc" "${flags[@]}" -Wmissing-prototypes ${CFLAGS:-} "$define" "${includes[@]}" \
    -c "$testing/fake_host.c" -o "$work/fake_host.o" ||
    die "the fake host does not compile against $bindings/$c_world.h (see above)"
# shellcheck disable=SC2086
"$cc" "${flags[@]}" ${CFLAGS:-} "$define" "${includes[@]}" \
    "$@" "$sdk/guild.c" "$sdk/guild_llm.c" "$helpers" "$work/fake_host.o" -o "$work/test" ||
    die "the native test build failed (see above)"
# shellcheck disable=SC2086 # GUILD_TEST_RUNNER is a command line
${GUILD_TEST_RUNNER:-} "$work/test"
