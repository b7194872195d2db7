#!/usr/bin/env bash
# Dispatch cost before and after a change, measured in one run on one machine.
#
# Checks REV out into a temporary git worktree, builds its plugins (plugins/build.sh there) and
# its dispatch bench in release, builds this work tree's dispatch bench, then runs the two
# alternately (REV, this tree, REV, this tree, …) so that noise from other work on the machine
# falls on both evenly. Each run stops after the bench's first section (the single-task rows).
# Prints the median of the task rows per round and overall, and the ratio this tree / REV.
#
# Usage: tests/benches/compare.sh REV [ROUNDS]        (3 rounds unless given)
#
# Environment:
#   CARGO_TARGET_DIR        host build folder for both builds (default: target/ of this tree).
#                           The two trees' own crates get different hashes there, so they do not
#                           overwrite each other, and dependencies are built once for both.
#   COMPARE_REV_TARGET_DIR  a separate build folder for REV instead.
#   GUILD_BENCH_ITERS       tasks per row (the bench's own default: 2000).
#   COMPARE_KEEP=1          keep the temporary worktree (its path is printed).
#
# No timing is asserted: this prints figures for people to read.
set -euo pipefail

fail() {
    echo "compare.sh: error: $*" >&2
    exit 1
}

[[ $# -ge 1 && $# -le 2 ]] || fail "usage: tests/benches/compare.sh REV [ROUNDS]"
rev="$1"
rounds="${2:-3}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || fail "ROUNDS must be a positive number, not \"$rounds\""

root="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
commit="$(git -C "$root" rev-parse --verify --quiet "$rev^{commit}")" ||
    fail "\"$rev\" is not a commit in $root"
target="${CARGO_TARGET_DIR:-$root/target}"
rev_target="${COMPARE_REV_TARGET_DIR:-$target}"

# The rows compared: the bench's single-task rows, as both old and new benches name them.
rows=(
    "guild task: fresh specialist + fresh connector instance"
    "  same, mutating tool (intent + outcome receipt, fsync)"
)
labels=("read-only tool call" "mutating tool call")
# The first line after the single-task section; a run is stopped there.
section_end="== batch throughput"

work="$(mktemp -d "${TMPDIR:-/tmp}/guild-compare.XXXXXX")"
old="$work/rev"
cleanup() {
    if [[ "${COMPARE_KEEP:-}" == 1 ]]; then
        echo "kept $old"
    else
        git -C "$root" worktree remove --force "$old" >/dev/null 2>&1 || true
        rm -rf "$work"
    fi
}
trap cleanup EXIT
# Interrupted or killed, the worktree is still removed (bash runs no EXIT trap on a bare signal).
trap "exit 130" INT TERM

echo "checking out ${commit:0:12} into $old"
git -C "$root" worktree add --detach --quiet "$old" "$commit"

# Seed REV's plugin build folder from this tree's: cargo then rebuilds only what differs.
if [[ -d "$root/plugins/target" ]]; then
    cp -a "$root/plugins/target" "$old/plugins/target"
fi
echo "building REV's plugins"
(unset CARGO_TARGET_DIR && nice -n 10 "$old/plugins/build.sh") >"$work/plugins.log" 2>&1 ||
    fail "REV's plugins/build.sh failed; see the end of its output:
$(tail -n 20 "$work/plugins.log")"

# Builds the dispatch bench of the tree at $1 into $2; prints the executable's path.
build_bench() {
    local tree="$1" dir="$2" exe
    exe="$(cd "$tree" && CARGO_TARGET_DIR="$dir" nice -n 10 cargo bench -p guild-tests \
        --bench dispatch --no-run --message-format=json 2>"$work/build.log" |
        jq -r 'select(.reason == "compiler-artifact" and .target.name == "dispatch"
                      and .executable != null) | .executable' | tail -n 1)" ||
        true
    [[ -n "$exe" && -x "$exe" ]] ||
        fail "building the dispatch bench in $tree failed; see the end of its output:
$(tail -n 20 "$work/build.log")"
    echo "$exe"
}

echo "building REV's dispatch bench (release, $rev_target)"
bench_old="$(build_bench "$old" "$rev_target")"
echo "building this tree's dispatch bench (release, $target)"
bench_new="$(build_bench "$root" "$target")"

# Runs bench $1 from its tree $2 until its single-task section is printed; prints that output.
run_once() {
    local exe="$1" tree="$2" out="$work/run.out" pid
    : >"$out"
    (cd "$tree/tests" && exec "$exe") >"$out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && ! grep -q "^$section_end" "$out"; do
        sleep 0.2
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    grep -q "^$section_end" "$out" ||
        fail "$exe ended before its single-task rows; its output:
$(tail -n 20 "$out")"
    cat "$out"
}

# The median (µs) of row $1 in output $2, or "-" when that bench has no such row.
median_of() {
    awk -v name="$1" 'index($0, name) == 1 {
        for (i = 1; i <= NF; i++) if ($i == "µs") { print $(i - 1); found = 1; exit }
    } END { if (!found) print "-" }' <<<"$2"
}

declare -A seen
echo
echo "load before: $(uptime)"
printf '%-7s %-8s' round side
for label in "${labels[@]}"; do printf ' %22s' "$label (µs)"; done
echo
for ((r = 1; r <= rounds; r++)); do
    for side in before after; do
        if [[ "$side" == before ]]; then
            output="$(run_once "$bench_old" "$old")"
        else
            output="$(run_once "$bench_new" "$root")"
        fi
        printf '%-7s %-8s' "$r" "$side"
        for i in "${!rows[@]}"; do
            value="$(median_of "${rows[$i]}" "$output")"
            seen["$side,$i"]+="$value "
            printf ' %22s' "$value"
        done
        echo
    done
done
echo "load after:  $(uptime)"

# The median of the numbers in $1 (space separated), or "-" if there are none.
median() {
    tr ' ' '\n' <<<"$1" | grep -E '^[0-9.]+$' | sort -g |
        awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "-"; exit }
            if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
        }'
}

echo
echo "overall (median of the $rounds rounds' medians), REV = ${commit:0:12}, after = this tree"
printf '%-24s %12s %12s %10s\n' row "before µs" "after µs" ratio
for i in "${!rows[@]}"; do
    before="$(median "${seen["before,$i"]}")"
    after="$(median "${seen["after,$i"]}")"
    ratio="-"
    if [[ "$before" != - && "$after" != - ]]; then
        ratio="$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", a / b }')"
    fi
    printf '%-24s %12s %12s %10s\n' "${labels[$i]}" "$before" "$after" "$ratio"
done
