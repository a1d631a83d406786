#!/usr/bin/env bash
# The headline figures of BENCHMARKS.md from this tree in one command, as `make
# bench-report` runs them: ./bench/run-report.sh BUILD_DIR. Builds nothing, needs no
# network.
#  1. Every fixture of the perf gate's `gate` group once against BUILD_DIR's server, client
#     and in-process benchmark (`inputlayer-bench run`, one arm, BENCH_REPORT_PROFILE,
#     default small), every answer checked.
#  2. The engine suite (bench/run-engine.sh): the in-process queries, the full closure
#     against sqlite3 (BENCH_TC_RUNS, default 5, alternated runs of each, medians), memory.
# Prints Markdown, the date and the commit in every table's heading. Exits non-zero when a
# fixture failed or returned a wrong answer.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFILE=${BENCH_REPORT_PROFILE:-small}

for p in inputlayer-bench inputlayer-server inputlayer-client inputlayer-inproc; do
    if [ ! -x "$BUILD/$p" ]; then
        echo "run-report.sh: $BUILD/$p is missing: build first (make build)" >&2
        exit 1
    fi
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    rev="$rev (with uncommitted changes)"
fi
started=$(date -u '+%Y-%m-%d %H:%M UTC')

echo "# Benchmark report ($started, $rev)"
echo

# --- 1. The perf gate's fixtures, one arm -----------------------------------------------
status=0
"$BUILD/inputlayer-bench" run --server "$BUILD/inputlayer-server" --profile "$PROFILE" \
    --fixtures gate --json "$TMP/gate.json" --markdown "$TMP/gate.md" >/dev/null \
    2>"$TMP/gate.err" || status=$?
echo "## The perf gate's fixtures, one arm (\`inputlayer-bench run --profile $PROFILE --fixtures gate\`; $started, $rev)"
echo
# The run's own heading is replaced by the one above; its details and table follow.
tail -n +2 "$TMP/gate.md"
echo
if [ "$status" -ne 0 ]; then
    echo "run-report.sh: inputlayer-bench run exited with $status:" >&2
    grep -v ' ok$' "$TMP/gate.err" >&2 || true
    exit "$status"
fi

# --- 2. The engine suite and the closure against sqlite3 --------------------------------
"$REPO/bench/run-engine.sh" "$BUILD"
