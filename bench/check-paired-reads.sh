#!/usr/bin/env bash
# Checks `inputlayer-fixture paired_reads` (bench/fixture_paired.c) against two fresh
# servers: with each server's right rows it measures and reports both arms with their
# paired ratio; with a wrong row expected of the second server it must end INVALID
# (exit 3), so that a candidate answering wrongly fails the perf gate. Run by
# `make gate-smoke`.
#
#   bench/check-paired-reads.sh BUILD_DIR
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
FIXTURE=$BUILD/inputlayer-fixture
API_KEY=bench-paired-key
bench_require "$SERVER" "$FIXTURE"
bench_cpu_layout none "the servers" "the client"

# Stopped on exit by bench_scratch's cleanup, which reads them by name.
# shellcheck disable=SC2034
SERVER_A=""
SERVER_B=""
bench_scratch SERVER_A SERVER_B

# Two servers, each with graph `perf` holding event(1, 1) .. event(5, 5) (written by
# insert_single, which creates the graph and checks its own replies).
PORTS=()
for arm in a b; do
    bench_start_server "$SERVER" "$TMP/server$arm" "$API_KEY"
    # shellcheck disable=SC2034
    if [ $arm = a ]; then SERVER_A=$SERVER_PID; else SERVER_B=$SERVER_PID; fi
    port=$(bench_wait_listening "$TMP/server$arm.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
    PORTS+=("$port")
    "$FIXTURE" insert_single --port "$port" --api-key "$API_KEY" --warmup 0 --writes 5 \
        >"$TMP/load.out" 2>&1 || { cat "$TMP/load.out" >&2; exit 1; }
done
echo '[[2,2]]' >"$TMP/right.json"
echo '[[2,3]]' >"$TMP/wrong.json"

paired() {
    "$FIXTURE" paired_reads --port "${PORTS[0]}" --pair-port "${PORTS[1]}" --api-key "$API_KEY" \
        --program '?event(2, X)' --expect-rows-file "$TMP/right.json" --warmup 2 \
        --queries 30 "$@" >"$TMP/run.out" 2>"$TMP/run.err"
}

rc=0
paired || rc=$?
if [ $rc -ne 0 ] || [ "$(grep -c '"paired_latency_ratio_p50"' "$TMP/run.out")" -ne 2 ]; then
    echo "$BENCH_SCRIPT: paired_reads with the right rows: status $rc" >&2
    cat "$TMP/run.out" "$TMP/run.err" >&2
    exit 1
fi
rc=0
paired --pair-expect-rows-file "$TMP/wrong.json" || rc=$?
if [ $rc -ne 3 ] || ! grep -q 'INVALID run: paired_reads: server B' "$TMP/run.err"; then
    echo "$BENCH_SCRIPT: paired_reads with a wrong row expected ended $rc, not 3 (INVALID)" >&2
    cat "$TMP/run.err" >&2
    exit 1
fi
echo "check-paired-reads: both arms measured pair by pair; a wrong row is INVALID"
