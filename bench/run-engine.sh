#!/usr/bin/env bash
# The engine benchmarks, as `make bench-engine` runs them: ./bench/run-engine.sh BUILD_DIR
# [bench_engine args...]. Builds nothing; uses BUILD_DIR/inputlayer-client,
# BUILD_DIR/gen_graph_main and BUILD_DIR/bench_engine.
#  1. The in-process query benchmarks of BUILD_DIR/bench_engine.
#  2. Full transitive closure of the seed-42 random 2,000 / 4,000 graph (2,493,790 pairs,
#     docs/performance.md 3.2) as a whole `inputlayer-client --local --script` process,
#     against sqlite3 running bench/tc-sqlite.sql on the same edges (skipped when sqlite3
#     is not installed). BENCH_TC_RUNS (5) runs of each, alternated (inputlayer, sqlite3,
#     inputlayer, ...) so that both see the machine alike; the medians and their ratio.
# Prints Markdown that can be pasted into BENCHMARKS.md, the date and commit in every
# table's heading. Exits non-zero when a count is wrong or a program fails.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [bench_engine args...]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
shift
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLIENT=$BUILD/inputlayer-client
GEN=$BUILD/gen_graph_main
BENCH=$BUILD/bench_engine
RUNS=${BENCH_TC_RUNS:-5}
EXPECTED=2493790

for p in "$CLIENT" "$GEN" "$BENCH"; do
    if [ ! -x "$p" ]; then
        echo "run-engine.sh: $p is missing: build first (make build)" >&2
        exit 1
    fi
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Milliseconds (one decimal) that a command takes, its output discarded; fails with it.
time_ms() {
    local t0 t1
    t0=$(date +%s%N)
    if ! "$@" >/dev/null 2>&1; then
        echo "run-engine.sh: failed: $*" >&2
        return 1
    fi
    t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'
}

# The median of the numbers given as arguments.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# True when the file has EXPECTED as a whole number somewhere.
has_expected() {
    grep -Eq "(^|[^0-9])${EXPECTED}([^0-9]|\$)" "$1"
}

rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    rev="$rev (with uncommitted changes)"
fi
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
# In every table's heading: when and from what the figures come.
STAMP="$(date -u '+%Y-%m-%d %H:%M UTC'), $rev"

echo "## Engine benchmarks ($STAMP)"
echo
echo "Machine: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr)."
echo

# --- 1. In-process queries (first: on this machine, the full closure's memory traffic
# slows timings taken in the seconds after it) ----------------------------------------------------------

echo "### In-process queries (\`bench_engine $*\`; $STAMP)"
echo
echo '```'
"$BENCH" --no-memory "$@" | tee "$TMP/bench.txt"
echo '```'
echo
echo "| workload | rows | median µs | p10 µs | p90 µs | runs |"
echo "|---|---:|---:|---:|---:|---:|"
awk '/ median_us=/ {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        printf "| %s | %s | %s | %s | %s | %s |\n", $1, f["rows"], f["median_us"],
               f["p10_us"], f["p90_us"], f["runs"] }' "$TMP/bench.txt"
echo
awk '/^setup / {
        for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        printf "- setup %s: %s facts loaded and rules registered in %s ms\n", $2, f["facts"], f["ms"] }
     /^memory_/ {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        printf "- %s: %s bytes per fact resident (%s facts, %s bytes RSS growth, loaded in %s ms)\n",
               $1, f["bytes_per_fact"], f["facts"], f["rss_growth_bytes"], f["load_ms"] }' \
    "$TMP/bench.txt"
echo

# --- 2. Full closure, whole process -------------------------------------------------

# The script: a knowledge graph, the edges, the reach rules, the count and its query.
SCRIPT=$TMP/tc.iql
{
    echo ".kg create tc_bench"
    "$GEN" --iql random 2000 4000
    echo "+reach(X, Y) <- edge(X, Y)"
    echo "+reach(X, Z) <- reach(X, Y), edge(Y, Z)"
    echo "+n(count<X>) <- reach(X, Y)"
    echo "?n(C)"
} >"$SCRIPT"

# Each run in a fresh directory, so that nothing a run leaves behind is seen by the next.
run_client() {
    local dir
    dir=$(mktemp -d "$TMP/run.XXXXXX")
    (cd "$dir" && "$CLIENT" --local --script "$SCRIPT")
}

# Check the answer once (not timed).
if ! run_client >"$TMP/tc.out" 2>"$TMP/tc.err" || ! has_expected "$TMP/tc.out"; then
    echo "run-engine.sh: the full-closure script did not print $EXPECTED; its output ends:" >&2
    tail -n 15 "$TMP/tc.out" "$TMP/tc.err" >&2
    exit 1
fi
SQL=$REPO/bench/tc-sqlite.sql
sqlite=""
if ! command -v sqlite3 >/dev/null; then
    sq_note="sqlite3 peer skipped: sqlite3 is not installed"
else
    # tc-sqlite.sql imports edges.csv ("src,dst" lines) from the current directory.
    mkdir "$TMP/sqlite"
    "$GEN" random 2000 4000 | tr ' ' ',' >"$TMP/sqlite/edges.csv"
    run_sqlite() { (cd "$TMP/sqlite" && sqlite3 :memory: <"$SQL"); }
    got=$(run_sqlite)
    if [ "$got" != "$EXPECTED" ]; then
        echo "run-engine.sh: sqlite3 printed '$got', expected $EXPECTED" >&2
        exit 1
    fi
    sqlite=1
    sq_note="sqlite3 $(sqlite3 --version | awk '{ print $1 }')"
fi

# Alternated: a slower stretch of the machine then costs both alike.
il_times=()
sq_times=()
for _ in $(seq "$RUNS"); do
    t=$(time_ms run_client) || exit 1
    il_times+=("$t")
    if [ -n "$sqlite" ]; then
        t=$(time_ms run_sqlite) || exit 1
        sq_times+=("$t")
    fi
done
il_med=$(median "${il_times[@]}")
sq_med=""
if [ -n "$sqlite" ]; then sq_med=$(median "${sq_times[@]}"); fi

echo "### Full transitive closure, random 2,000 nodes / 4,000 edges ($EXPECTED pairs; $STAMP)"
echo
echo "Whole process, load + rules + \`?n(C)\` with \`+n(count<X>) <- reach(X, Y)\`;"
echo "median of $RUNS runs of each, alternated."
echo
echo "| system | median ms | runs ms |"
echo "|---|---:|---|"
echo "| \`inputlayer-client --local --script\` | $il_med | ${il_times[*]} |"
if [ -n "$sq_med" ]; then
    echo "| $sq_note, \`tc-sqlite.sql\` (recursive CTE) | $sq_med | ${sq_times[*]} |"
    echo
    awk -v a="$il_med" -v b="$sq_med" 'BEGIN {
        r = a / b
        printf "Ratio inputlayer / sqlite3: %.3f (", r
        if (r <= 1) printf "inputlayer %.1fx faster)\n", 1 / r
        else printf "inputlayer %.1fx slower)\n", r }'
else
    echo
    echo "($sq_note.)"
fi
echo

# --- 3. Memory, last: loading a million facts disturbs timings taken after it ----------

echo "### Memory (\`bench_engine --only memory_chains1m\`; $STAMP)"
echo
"$BENCH" --only memory_chains1m | tee "$TMP/memory.txt"
echo
awk '/^memory_/ {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        printf "- %s: %s bytes per fact resident (%s facts, %s bytes RSS growth, loaded in %s ms)\n",
               $1, f["bytes_per_fact"], f["facts"], f["rss_growth_bytes"], f["load_ms"] }' \
    "$TMP/memory.txt"
