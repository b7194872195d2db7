#!/usr/bin/env bash
# Builds a JavaScript or TypeScript Guild plugin into a component: bundles ENTRY with the
# JavaScript SDK (sdk/js/guild-sdk, imported as "guild-sdk") into one ES module with rolldown,
# handing the SDK the world's WIT imports, appends the table mapping the bundle's lines back to the
# sources (sdk/js/line-table.mjs, for stack traces), then runs `jco componentize` on it.
#
#   sdk/js/componentize.sh ENTRY WORLD OUT.wasm [extra jco componentize flags...]
#
# ENTRY exports the world's interface (`export const specialistApi = specialist({...})`). The
# default engine is StarlingMonkey, whose fetch() goes out through wasi:http (the host's guarded
# client); pass `-d http -d fetch-event` for a plugin that does not use fetch. Installs the
# pinned toolchain (sdk/js/setup.sh) when missing. Skips the build when OUT.wasm is newer than
# every input. Run from anywhere.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 ENTRY WORLD OUT.wasm [jco flags...]" >&2; exit 2; }
entry="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
world="$2"
out="$3"
shift 3
js="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sdk="$js/guild-sdk"
wit_dir="$(cd "$js/../../wit" && pwd)"
dir="$(dirname "$entry")"
name="$(basename "$out")"

die() { echo "$name build: $*" >&2; exit 1; }
[ -f "$entry" ] || die "no entry module $entry"

case "$world" in
specialist) imports="log config http tools progress skills memory llm definition"; export_name=specialistApi ;;
connector) imports="log config http"; export_name=connectorApi ;;
skill-loader) imports="log config http"; export_name=skillLoaderApi ;;
*) die "unknown world '$world': specialist, connector or skill-loader" ;;
esac

up_to_date=1
if [ ! -f "$out" ]; then
    up_to_date=0
else
    while IFS= read -r input; do
        if [ "$input" -nt "$out" ]; then up_to_date=0; break; fi
    done < <(find "$dir" -maxdepth 1 \( -name '*.js' -o -name '*.ts' -o -name '*.mjs' -o -name build.sh \);
             ls "$sdk"/*.js "$wit_dir"/*.wit "$js/componentize.sh" "$js/line-table.mjs" "$js/package-lock.json")
fi
if [ "$up_to_date" = 1 ]; then
    echo "$name: $(wc -c <"$out" | tr -d ' ') bytes — up to date"
    exit 0
fi

"$js/setup.sh" || die "the JavaScript toolchain could not be installed (sdk/js/setup.sh)"

work="$(mktemp -d "${TMPDIR:-/tmp}/guild-js.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The entry module the component is built from: the world's imports handed to the SDK, then
# the plugin's exports.
{
    for i in $imports; do echo "import * as $i from \"guild:plugin/$i@0.3.0\";"; done
    echo "import { installBindings } from \"guild-sdk\";"
    echo "installBindings({ $(echo "$imports" | sed 's/ /, /g') });"
    echo "export { $export_name } from $(node -e 'console.log(JSON.stringify(process.argv[1]))' "$entry");"
} >"$work/entry.js"
cat >"$work/rolldown.config.mjs" <<CONFIG
export default {
  input: "$work/entry.js",
  external: [/^guild:/, /^wasi:/],
  platform: "neutral",
  resolve: { alias: { "guild-sdk": "$sdk/index.js" } },
  output: { file: "$work/bundle.js", format: "esm", sourcemap: true },
};
CONFIG
start=$(date +%s)
if ! (cd "$js" && ./node_modules/.bin/rolldown -c "$work/rolldown.config.mjs") >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    die "bundling $entry with the SDK failed (output above)"
fi
# Stack traces name bundle.js lines: append the table that maps them to the author's files.
node "$js/line-table.mjs" "$work/bundle.js" "$work/bundle.js.map" "$dir" ||
    die "could not map the bundle's lines to its sources (sdk/js/line-table.mjs failed)"
if ! "$js/node_modules/.bin/jco" componentize "$work/bundle.js" --wit "$wit_dir" -n "$world" "$@" \
    -o "$work/out.wasm" >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    die "jco componentize failed (output above)"
fi
[ -s "$work/out.wasm" ] || die "jco componentize produced no output"
mv -f "$work/out.wasm" "$out"
echo "$name: $(wc -c <"$out" | tr -d ' ') bytes — built in $(( $(date +%s) - start )) s"
