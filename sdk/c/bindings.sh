#!/usr/bin/env bash
# Regenerates the checked-in C bindings (sdk/c/bindings/WORLD/) of the three worlds of wit/
# with wit-bindgen's C generator, and records what they were generated from in
# sdk/c/bindings/SOURCE: the generator's version and the sha256 of every wit/*.wit file. The
# test command recomputes those hashes and fails with "C bindings are stale" when wit/ changed.
#
# For maintainers: plugin authors and CI never need wit-bindgen (the bindings are checked in).
# Install the generator once with
#   cargo install wit-bindgen-cli@0.63.0 --no-default-features --features c
# (or put it on PATH as WIT_BINDGEN=/path/to/wit-bindgen). Run from anywhere.
set -euo pipefail

sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$sdk/../.." && pwd)"
bindgen="${WIT_BINDGEN:-wit-bindgen}"
die() { echo "sdk/c/bindings.sh: $*" >&2; exit 1; }

command -v "$bindgen" >/dev/null ||
    die "wit-bindgen not found: cargo install wit-bindgen-cli@0.63.0 --no-default-features --features c"
version="$("$bindgen" --version)"

out="$sdk/bindings"
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
for world in specialist connector skill-loader; do
    "$bindgen" c "$repo/wit" --world "$world" --out-dir "$out.tmp/$world" >/dev/null ||
        die "wit-bindgen c failed for world $world"
done
{
    echo "# What the C bindings in this folder were generated from (by sdk/c/bindings.sh)."
    echo "generator: $version"
    (cd "$repo" && sha256sum wit/*.wit)
} >"$out.tmp/SOURCE"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "sdk/c/bindings.sh: generated $out with $version"
