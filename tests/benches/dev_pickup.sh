#!/usr/bin/env bash
# How long `guild dev` takes to pick up an edit: scaffolds a connector `notes` and a specialist
# `helper` calling its mutating tool (`guild new`, language LANG), runs
# `guild dev helper --with notes` in the background, then edits the specialist's report summary
# EDITS times and measures, per edit, the wall time from the file write until the task run by
# the rebuilt component prints the new summary. Prints each edit's phases (until `guild dev`
# sees the change; the specialist's build; from there to the run, i.e. the other folders' builds
# or skips and the host's start; the run) and the median pickup. docs/performance.md ("guild dev pickup") records its figures.
#
#   tests/benches/dev_pickup.sh rust|c|python|js [EDITS]      (default 5 edits)
#
# GUILD names the guild binary (default: target/debug/guild of this checkout). Rust scaffolds
# build in their own target folders, as an author's would; the first round (not timed) compiles
# the SDK's dependencies.
set -euo pipefail

lang="${1:?usage: tests/benches/dev_pickup.sh rust|c|python|js [EDITS]}"
edits="${2:-5}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
guild="${GUILD:-$root/target/debug/guild}"
[ -x "$guild" ] || { echo "no guild binary at $guild (cargo build -p guild-cli)" >&2; exit 1; }
case "$lang" in
    rust) source_file=helper/src/lib.rs ;;
    c) source_file=helper/app.c ;;
    python) source_file=helper/app.py ;;
    js) source_file=helper/app.js ;;
    *) echo "unknown language '$lang'" >&2; exit 1 ;;
esac

work="$(mktemp -d "${TMPDIR:-/tmp}/guild-dev-pickup.XXXXXX")"
dev_pid=""
cleanup() {
    if [ -n "$dev_pid" ]; then
        kill "$dev_pid" 2>/dev/null || true
        wait "$dev_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
"$guild" new connector notes --lang "$lang" >/dev/null
"$guild" new specialist helper --lang "$lang" --tool notes.save >/dev/null
grep -q ' answered' "$source_file" || { echo "no ' answered' summary in $source_file" >&2; exit 1; }

now() { date +%s.%N; }
"$guild" dev helper --with notes --brief "pickup" >log 2>&1 </dev/null &
dev_pid=$!

# Waits until the log has COUNT lines matching PATTERN and prints the time it saw the last one
# (the log is polled every 20 ms, in the order the lines come, so a stamp is that close).
wait_for() {
    local pattern="$1" count="$2" limit=$((SECONDS + 1800))
    while [ "$(grep -c -- "$pattern" log || true)" -lt "$count" ]; do
        if [ $SECONDS -ge $limit ] || ! kill -0 "$dev_pid" 2>/dev/null; then
            echo "gave up waiting for '$pattern' (#$count); the log ends:" >&2
            tail -20 log >&2
            return 1
        fi
        sleep 0.02
    done
    now
}
wait_for "watching .* for changes" 1 >/dev/null
echo "first round done; timing $edits edits of $source_file ($lang)"

since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
totals=()
printf '%-5s %8s %8s %8s %8s %8s\n' edit seen build load run total
for i in $(seq 1 "$edits"); do
    sleep 1
    start="$(now)"
    sed -i -E "s/ answered( v[0-9]+)?\"/ answered v$i\"/" "$source_file"
    seen="$(wait_for "change seen" "$i")"
    built="$(wait_for "built helper.wasm" $((i + 1)))"
    running="$(wait_for "running helper:" $((i + 1)))"
    done_at="$(wait_for "summary: notes.save answered v$i\$" 1)"
    wait_for "watching .* for changes" $((i + 1)) >/dev/null
    printf '%-5s %8s %8s %8s %8s %8s\n' "$i" "$(since "$start" "$seen")" "$(since "$seen" "$built")" \
        "$(since "$built" "$running")" "$(since "$running" "$done_at")" "$(since "$start" "$done_at")"
    totals+=("$(since "$start" "$done_at")")
done
printf '%s\n' "${totals[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "median pickup: %.2f s over %d edits\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, NR }'
