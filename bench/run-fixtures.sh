#!/usr/bin/env bash
# The standing-query fixtures, as `make bench-fixtures` runs them:
# ./bench/run-fixtures.sh BUILD_DIR. Builds nothing; uses BUILD_DIR/inputlayer-server and
# BUILD_DIR/inputlayer-fixture (bench/fixtures.c, which loads each fixture's dataset through
# the server and checks every delta).
# For each fixture it starts a fresh inputlayer-server (--port 0, a fresh data directory,
# rate and connection limits off, a known bootstrap API key), runs the fixture against it
# with the server's PID for its CPU figures, stops it, and at the end prints a Markdown
# table with the load average before and after.
# Environment: BENCH_FIXTURES (delta_single delta_fanout delta_first delta_keyed), BENCH_SERVER_CPUS:
# `split` (default: the server on CPU 1, the fixture client on CPU 0), `shared` (both on
# CPU 0) or `none`; BENCH_FIXTURE_ARGS: more arguments for every fixture run (e.g.
# "--writes 20" for a short run; delta_first takes it as its number of cycles).
# Exits 3 when a fixture saw a wrong, missing or extra row (the run is INVALID), 1 on any
# other failure.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
FIXTURE=$BUILD/inputlayer-fixture
FIXTURES=${BENCH_FIXTURES:-delta_single delta_fanout delta_first delta_keyed}
CPUS=${BENCH_SERVER_CPUS:-split}
# shellcheck disable=SC2206
EXTRA_ARGS=(${BENCH_FIXTURE_ARGS:-})
# Only for this run's own servers, which listen on 127.0.0.1 with fresh data directories.
API_KEY=bench-fixture-key

bench_require "$SERVER" "$FIXTURE"
bench_cpu_layout "$CPUS" "the server" "the fixture client"

SERVER_PID=""
CLIENT_PID=""
bench_scratch CLIENT_PID SERVER_PID

# The port of the `... listening on: http://HOST:PORT` line in FILE, written by process
# PID once it listens; fails when it exits first or takes over STARTUP_SECS.
# run_fixture NAME: a fresh server, the fixture, the server stopped; appends the fixture's
# JSON line to $TMP/results.jsonl. Stops the script on a failure (exit 3 for INVALID).
run_fixture() {
    local name=$1 port
    rm -rf "$TMP/server"
    bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
    port=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
    bench_run_client "$name" "$FIXTURE" "$name" --port "$port" --api-key "$API_KEY" \
        --server-pid "$SERVER_PID" "${EXTRA_ARGS[@]}"
    head -n 1 "$TMP/run.out" >>"$TMP/results.jsonl"
    echo "  $(tail -n 1 "$TMP/run.out")" >&2
}

# Other work on the machine shows in the figures: the load average is reported with them.
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "run-fixtures.sh: $FIXTURES; $LAYOUT; load average $load_before" >&2
for name in $FIXTURES; do run_fixture "$name"; done
load_after=$(cut -d' ' -f1 /proc/loadavg)

# The value of numeric field FIELD in the JSON line of fixture NAME, "" when absent, "n/a"
# when null (too few samples): field NAME FIELD
field() {
    grep "\"fixture\":\"$1\"" "$TMP/results.jsonl" |
        sed -n "s/.*\"$2\":\(null\|[0-9.]*\).*/\1/p" | sed 's/^null$/n\/a/'
}

# Microseconds as milliseconds with 2 decimals ("" and "n/a" stay as they are): ms VALUE_US

bench_report_head "Standing-query fixtures"
echo "$load_before before the fixtures, $load_after after (1-minute; with the fixtures' own load)."
echo "Every delta of every agent checked row for row. Times in ms; server CPU per write is the"
echo "server's CPU over the write phase minus its idle rate, divided by the writes."
echo
# delta_first measures other things: a table of its own below.
STREAMS=$(for f in $FIXTURES; do [ "$f" = delta_first ] || echo "$f"; done)
[ -n "$STREAMS" ] && echo "| fixture | agents | writes | events | delta p50 | delta p99 | last agent p99 | ack p50 | ack p99 | subscribe p50 | server CPU ms per write | writes per server CPU s |"
[ -n "$STREAMS" ] && echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for name in $STREAMS; do
    # shellcheck disable=SC2016 # the backquotes are Markdown, not a command
    printf '| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" \
        "$(field "$name" agents)" "$(field "$name" writes)" "$(field "$name" events)" \
        "$(bench_ms "$(field "$name" delta_us_p50)")" \
        "$(bench_ms "$(field "$name" delta_us_p99)")" \
        "$(bench_ms "$(field "$name" last_agent_us_p99)")" \
        "$(bench_ms "$(field "$name" ack_us_p50)")" \
        "$(bench_ms "$(field "$name" ack_us_p99)")" \
        "$(bench_ms "$(field "$name" subscribe_us_p50)")" \
        "$(field "$name" server_cpu_per_write_ms)" "$(field "$name" writes_per_server_cpu_sec)"
done
if [[ " $FIXTURES " == *" delta_first "* ]]; then
    echo
    echo "delta_first: each cycle a fresh agent subscribes, a write follows at once (first delta),"
    echo "then another after the quiet period (warm delta); from the write's send to the delta."
    echo
    echo "| fixture | cycles | first delta p50 | first delta max | warm delta p50 | warm delta max | subscribe p50 |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    # shellcheck disable=SC2016 # the backquotes are Markdown, not a command
    printf '| `delta_first` | %s | %s | %s | %s | %s | %s |\n' "$(field delta_first cycles)" \
        "$(bench_ms "$(field delta_first first_delta_us_p50)")" \
        "$(bench_ms "$(field delta_first first_delta_us_max)")" \
        "$(bench_ms "$(field delta_first warm_delta_us_p50)")" \
        "$(bench_ms "$(field delta_first warm_delta_us_max)")" \
        "$(bench_ms "$(field delta_first subscribe_us_p50)")"
fi
