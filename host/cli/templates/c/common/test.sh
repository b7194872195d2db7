#!/usr/bin/env bash
# Runs the unit tests of {{name}} (test_*.c) natively, outside wasm: the Guild C SDK's
# testing/test.sh compiles them with this folder's other C files, the SDK's guild.c and its fake
# host (testing/guild_test.h: set tool answers and config, read back calls and log lines) with
# the machine's C compiler (cc, or $CC), runs them and fails naming the check that failed.
# Run from anywhere.
set -euo pipefail

c_sdk="{{sdk_dir}}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "{{name}} test: $*" >&2; exit 1; }

[ -x "$c_sdk/testing/test.sh" ] ||
    die "no Guild C SDK with testing/test.sh at $c_sdk: regenerate with 'guild new ... --sdk DIR' or edit c_sdk in test.sh (a Guild checkout's sdk/c)"
"$c_sdk/testing/test.sh" {{kind}} "$here"/*.c || die "the unit tests failed (see above)"
