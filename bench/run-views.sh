#!/usr/bin/env bash
# The views benchmark (docs/performance.md 3.4 in ../shared/docs), as `make bench-views`
# runs it: ./bench/run-views.sh BUILD_DIR. Builds nothing; uses BUILD_DIR/inputlayer-server
# and BUILD_DIR/inputlayer-views (bench/views_fixture.c, which loads the hot chains through
# the server and checks every snapshot, read and delta against rows it computes itself).
# For each size and each phase it starts a fresh inputlayer-server (as run-fixtures.sh
# does), runs the phase against it with the server's PID for its CPU figures, stops it,
# and at the end prints Markdown tables: the idle reads, then the write phases.
# Environment:
#   BENCH_VIEWS_SIZES   edges, e.g. "10K 100K" (default: 10K 100K 1M)
#   BENCH_VIEWS_PHASES  phases, each NAME or NAMExSUBSCRIBERS (default: reads P0 P1 P2 P3
#                       P4x1 P4x10 P4x100 P4x1000 P5x1 P5x100 P6; P5x10 for P5x100 from 1M)
#   BENCH_VIEWS_WRITES  measured writes per write phase (default 2000: enough for p99s and
#                       a CPU figure above the noise)
#   BENCH_VIEWS_ARGS    more arguments for every run (e.g. "--subs-per-conn 64")
#   BENCH_VIEWS_SMOKE=1 a quick check that every phase runs and checks out: 10K edges,
#                       at most 10 subscribers, 5 writes, short idle and grace periods
#   BENCH_SERVER_CPUS   split (default), shared or none: see bench/server-lib.sh
# Exits 3 when a phase saw a wrong, missing or extra row (the run is INVALID), 1 on any
# other failure.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
VIEWS=$BUILD/inputlayer-views
CPUS=${BENCH_SERVER_CPUS:-split}
# shellcheck disable=SC2206
EXTRA_ARGS=(${BENCH_VIEWS_ARGS:-})
if [ "${BENCH_VIEWS_SMOKE:-0}" = 1 ]; then
    SIZES=${BENCH_VIEWS_SIZES:-10K}
    PHASES=${BENCH_VIEWS_PHASES:-reads P0 P1 P2x10 P3 P4x1 P4x10 P5x1 P5x10 P6}
    WRITES=${BENCH_VIEWS_WRITES:-5}
    EXTRA_ARGS+=(--reads 2 --idle-ms 100 --grace-ms 100 --fillers "5,10")
else
    SIZES=${BENCH_VIEWS_SIZES:-10K 100K 1M}
    PHASES=${BENCH_VIEWS_PHASES:-}
    WRITES=${BENCH_VIEWS_WRITES:-2000}
fi
# Only for this run's own servers, which listen on 127.0.0.1 with fresh data directories.
API_KEY=bench-views-key

bench_require "$SERVER" "$VIEWS"
bench_cpu_layout "$CPUS" "the server" "the views client"

SERVER_PID=""
CLIENT_PID=""
bench_scratch CLIENT_PID SERVER_PID

# The default phases at SIZE (10K, 1M, 250000 ...): the gate's subscriber counts, P5 with
# fewer from 1M edges.
default_phases() {
    local n=${1%[KkMm]} p5=100
    case "$1" in *[Kk]) n=$((n * 1000)) ;; *[Mm]) n=$((n * 1000000)) ;; esac
    [ "$n" -ge 1000000 ] && p5=10
    echo "reads P0 P1 P2 P3 P4x1 P4x10 P4x100 P4x1000 P5x1 P5x$p5 P6"
}

# run_phase SIZE TOKEN: a fresh server, the phase, the server stopped; appends the JSON
# lines to $TMP/results.jsonl. Stops the script on a failure (exit 3 for INVALID).
run_phase() {
    local size=$1 token=$2 name=${2%%x*} port
    local args=(--edges "$size")
    [ "$name" != "$token" ] && args+=(--subscribers "${token#*x}")
    [ "$name" != reads ] && args+=(--writes "$WRITES")
    rm -rf "$TMP/server"
    bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
    port=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
    bench_run_client "$token at $size" "$VIEWS" "$name" --port "$port" --api-key "$API_KEY" \
        --server-pid "$SERVER_PID" "${args[@]}" "${EXTRA_ARGS[@]}"
    grep '^{' "$TMP/run.out" >>"$TMP/results.jsonl"
    grep -v '^{' "$TMP/run.out" | sed 's/^/  /' >&2
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "run-views.sh: sizes $SIZES; $WRITES writes per phase; $LAYOUT; load average $load_before" >&2
for size in $SIZES; do
    for token in ${PHASES:-$(default_phases "$size")}; do run_phase "$size" "$token"; done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

# The value of field NAME in the JSON line LINE ("" when absent, "n/a" when null).
field() {
    local v
    v=$(printf '%s' "$1" | sed -n "s/.*\"$2\":\(null\|\"[^\"]*\"\|[0-9.]*\).*/\1/p")
    case "$v" in null) echo "n/a" ;; \"*) v=${v#\"} && echo "${v%\"}" ;; *) echo "$v" ;; esac
}

# Microseconds as milliseconds with 2 decimals; "" and "n/a" stay as they are.

bench_report_head "Views benchmark"
echo "$load_before before, $load_after after (1-minute; with the benchmark's own load)."
echo "A fresh server per phase. Every snapshot, read and delta checked row for row. Times in"
echo "ms; server CPU per write is the server's CPU over the measured writes minus its idle"
echo "rate, divided by the writes (the ad-hoc read after each write included); n/a: too few"
echo "samples for the percentile (20 for a p50, 100 for a p99)."
if grep -q '"phase":"reads"' "$TMP/results.jsonl"; then
    echo
    echo "Idle reads: the first read of each query apart (it pays for plans and indexes that"
    echo "later reads reuse); the median of all; server CPU per read after the first."
    echo
    echo "| edges | query | rows | reads | first | median | min | max | server CPU per read |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    grep '"phase":"reads"' "$TMP/results.jsonl" | while IFS= read -r l; do
        # shellcheck disable=SC2016 # the backquotes are Markdown, not a command
        printf '| %s | `%s` | %s | %s | %s | %s | %s | %s | %s |\n' "$(field "$l" edges)" \
            "$(field "$l" query)" "$(field "$l" rows)" "$(field "$l" reps)" \
            "$(bench_ms "$(field "$l" latency_us_first)")" \
            "$(bench_ms "$(field "$l" latency_us_median)")" \
            "$(bench_ms "$(field "$l" latency_us_min)")" \
            "$(bench_ms "$(field "$l" latency_us_max)")" "$(field "$l" server_cpu_per_read_ms)"
    done
fi
if grep -qv '"phase":"reads"' "$TMP/results.jsonl"; then
    echo
    echo "| edges | phase | subscribers | writes | deltas | subscribe | ack p50 | ack p99 | read p50 | read p99 | delta p50 | delta p99 | last delta p99 | server CPU per write | frames per write | server RSS MiB |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    grep -v '"phase":"reads"' "$TMP/results.jsonl" | while IFS= read -r l; do
        phase=$(field "$l" phase)
        fillers=$(field "$l" fillers)
        [ -n "$fillers" ] && phase="$phase, $fillers fillers"
        query=$(field "$l" query)
        # shellcheck disable=SC2016 # the backquotes are Markdown, not a command
        [ -n "$query" ] && [ "$query" != n/a ] && phase="$phase \`$query\`"
        rss=$(field "$l" server_rss_kb)
        [ -n "$rss" ] && rss=$(awk -v v="$rss" 'BEGIN { printf "%.0f", v / 1024 }')
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
            "$(field "$l" edges)" "$phase" "$(field "$l" subscribers)" "$(field "$l" writes)" \
            "$(field "$l" events)" "$(field "$l" subscribe_ms)" \
            "$(bench_ms "$(field "$l" ack_us_p50)")" "$(bench_ms "$(field "$l" ack_us_p99)")" \
            "$(bench_ms "$(field "$l" read_us_p50)")" "$(bench_ms "$(field "$l" read_us_p99)")" \
            "$(bench_ms "$(field "$l" delta_us_p50)")" "$(bench_ms "$(field "$l" delta_us_p99)")" \
            "$(bench_ms "$(field "$l" last_delta_us_p99)")" "$(field "$l" server_cpu_per_write_ms)" \
            "$(field "$l" frames_per_write)" "$rss"
    done
fi
