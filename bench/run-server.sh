#!/usr/bin/env bash
# The server benchmark, as `make bench-server` runs it: ./bench/run-server.sh BUILD_DIR.
# Builds nothing; uses BUILD_DIR/inputlayer-server, ws_echo_server, inputlayer-load,
# inputlayer-client and gen_graph_main.
#  1. Starts inputlayer-server (--port 0, a fresh data directory, rate and connection
#     limits off, a known bootstrap API key) and ws_echo_server, the transport floor: the
#     same libuv / http-parser / wslay machinery with nothing behind it.
#  2. Loads the seed-42 random 2,000 / 4,000 graph and the reach rules into knowledge
#     graph `perf` through the server (the cheap_query fixture, docs/performance.md 3.4
#     in ../shared/docs), and computes from the generated edges the rows `?edge(1, Y)`
#     must return.
#  3. Rounds of: 1 client timing REQUESTS round trips after WARMUP, then CLIENTS clients
#     timing CONCURRENT_REQUESTS each, against the echo server and the server in turn
#     (the order flips every round, so that drift of a shared machine hits both).
#     The echo client sends the server's execute frames byte for byte. Every reply is
#     checked.
#  4. Prints Markdown: medians over the rounds, and server / echo ratios, each the median
#     of the rounds' ratios (the two runs of a round are back to back): the serial p50
#     (target <= 1.5) and the concurrent rate (target >= 0.5) among them. Whether the
#     targets are met is in the table, not in the exit status.
# Environment: BENCH_SERVER_ROUNDS (5), BENCH_SERVER_WARMUP (500 per client),
# BENCH_SERVER_REQUESTS (5000), BENCH_SERVER_CLIENTS (8), BENCH_SERVER_CONCURRENT_REQUESTS
# (2000 per client), BENCH_SERVER_CPUS: `split` (default: the servers on CPU 1, the load
# client on CPU 0, as the perf gate keeps server and harness apart), `shared` (everything
# on CPU 0) or `none` (the scheduler decides).
# Exits 3 when a reply was wrong (the run is INVALID), 1 on any other failure.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
ECHO=$BUILD/ws_echo_server
LOAD=$BUILD/inputlayer-load
CLIENT=$BUILD/inputlayer-client
GEN=$BUILD/gen_graph_main
ROUNDS=${BENCH_SERVER_ROUNDS:-5}
WARMUP=${BENCH_SERVER_WARMUP:-500}
REQUESTS=${BENCH_SERVER_REQUESTS:-5000}
CLIENTS=${BENCH_SERVER_CLIENTS:-8}
CONCURRENT_REQUESTS=${BENCH_SERVER_CONCURRENT_REQUESTS:-2000}
CPUS=${BENCH_SERVER_CPUS:-split}
PROGRAM='?edge(1, Y)'
KG=perf
# Only for this run's own server, which listens on 127.0.0.1 with a fresh data directory.
API_KEY=bench-server-key

bench_require "$SERVER" "$ECHO" "$LOAD" "$CLIENT" "$GEN"
bench_cpu_layout "$CPUS" "the servers" "the load client"

SERVER_PID=""
ECHO_PID=""
LOAD_PID=""
bench_scratch LOAD_PID SERVER_PID ECHO_PID

# The port of the `... listening on: http://HOST:PORT` line in FILE, written by process
# PID once it listens; fails when it exits first or takes over STARTUP_SECS.
# --- 1. The servers ---------------------------------------------------------------------

bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
"${PIN_SERVER[@]}" "$ECHO" --port 0 >"$TMP/echo.out" 2>"$TMP/echo.out.err" &
ECHO_PID=$!
PORT=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
ECHO_PORT=$(bench_wait_listening "$TMP/echo.out" "$ECHO_PID" ws_echo_server "$STARTUP_SECS")

# --- 2. The data and the expected answer ------------------------------------------------

bench_load_reach_graph "$CLIENT" "$GEN" "$PORT" "$API_KEY" "$KG"
# Rows in the server's order: sorted, as the generator prints the edges.
EXPECT=$("$GEN" random 2000 4000 | awk '$1 == 1 { printf "%s[%s,%s]", n++ ? "," : "", $1, $2 }')
if [ -z "$EXPECT" ]; then
    echo "run-server.sh: node 1 has no edges in the generated graph" >&2
    exit 1
fi
EXPECT="[$EXPECT]"
expected_rows=$(grep -o '\[[0-9]*,[0-9]*\]' <<<"$EXPECT" | wc -l)

# --- 3. The rounds ----------------------------------------------------------------------

# run_load MODE CLIENTS REQUESTS: one inputlayer-load run; appends its JSON line to
# $TMP/MODE-CLIENTS.jsonl. Stops the script on a failure (exit 3 for a wrong reply).
run_load() {
    local mode=$1 clients=$2 requests=$3 rc=0 args pid name
    if [ "$mode" = server ]; then
        args=(server --url "ws://127.0.0.1:$PORT/ws?kg=$KG" --api-key "$API_KEY"
            --expect-rows "$EXPECT")
        pid=$SERVER_PID
        name=inputlayer-server
    else
        args=(echo --url "ws://127.0.0.1:$ECHO_PORT/ws")
        pid=$ECHO_PID
        name=ws_echo_server
    fi
    # In the background so that a signal to this script is handled at once (bash runs
    # traps only between commands, and `wait` is interruptible).
    "${PIN_CLIENT[@]}" "$LOAD" "${args[@]}" --program "$PROGRAM" --clients "$clients" \
        --warmup "$WARMUP" --requests "$requests" >"$TMP/run.out" 2>"$TMP/run.err" &
    LOAD_PID=$!
    wait "$LOAD_PID" || rc=$?
    LOAD_PID=""
    if [ "$rc" -ne 0 ]; then
        bench_client_failed "$rc" "the $name run with $clients client(s)" "$pid" "$name" \
            "$TMP/$mode.out.err"
    fi
    head -n 1 "$TMP/run.out" >>"$TMP/$mode-$clients.jsonl"
    echo "  $(tail -n 1 "$TMP/run.out")" >&2
}

# Other work on the machine shows in the figures: the load average is reported with them.
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "run-server.sh: $ROUNDS rounds; $LAYOUT; load average $load_before" >&2
for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then order="echo server"; else order="server echo"; fi
    echo "round $round:" >&2
    for mode in $order; do run_load "$mode" 1 "$REQUESTS"; done
    for mode in $order; do run_load "$mode" "$CLIENTS" "$CONCURRENT_REQUESTS"; done
done

# --- 4. The report ----------------------------------------------------------------------

load_after=$(cut -d' ' -f1 /proc/loadavg)

# The values of a numeric JSON field, one per run, from FILE.
values() {
    sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$1"
}

# The median of the numbers given as arguments, printed with the printf format FMT:
# median FMT NUMBER...
median() {
    local fmt=$1
    shift
    printf '%s\n' "$@" | sort -g | awk -v fmt="$fmt\n" '{ v[NR] = $1 } END {
        printf fmt, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# median_of MODE CLIENTS FIELD FMT
median_of() {
    # shellcheck disable=SC2046
    median "$4" $(values "$TMP/$1-$2.jsonl" "$3")
}

# The list "a, b, c" of FIELD over the rounds of MODE with CLIENTS: per_round MODE CLIENTS FIELD
per_round() {
    values "$TMP/$1-$2.jsonl" "$3" | paste -sd, | sed 's/,/, /g'
}

# A table row: label, clients, requests timed, medians, and the per-round p50s and rates.
table_row() {
    local mode=$1 clients=$2 label=$3 timed=$4
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$clients" "$timed" \
        "$(median_of "$mode" "$clients" p50_us %.1f)" "$(median_of "$mode" "$clients" p99_us %.1f)" \
        "$(median_of "$mode" "$clients" rate_per_sec %.0f)" "$(per_round "$mode" "$clients" p50_us)" \
        "$(per_round "$mode" "$clients" rate_per_sec)"
}

# Server over echo of FIELD with CLIENTS, for each round (the two runs of a round are
# back to back, so a ratio within a round is little touched by drift): round_ratios
# CLIENTS FIELD
round_ratios() {
    paste -d' ' <(values "$TMP/server-$1.jsonl" "$2") <(values "$TMP/echo-$1.jsonl" "$2") |
        awk '{ printf "%.2f\n", ($2 > 0 ? $1 / $2 : 0) }'
}

# A ratio row: the median of the per-round ratios, the target, and the ratios. Prints
# the row; ratio_row LABEL CLIENTS FIELD [OP LIMIT]
ratio_row() {
    local label=$1 clients=$2 field=$3 op=${4:-} limit=${5:-} med target=""
    # shellcheck disable=SC2046
    med=$(median %.2f $(round_ratios "$clients" "$field"))
    if [ -n "$op" ]; then
        target=$(awk -v v="$med" -v op="$op" -v l="$limit" 'BEGIN {
            ok = op == "<=" ? v <= l : v >= l; print ok ? "met" : "NOT met" }')
        target="$([ "$op" = "<=" ] && echo "≤" || echo "≥") $limit: $target"
    fi
    printf '| %s | %s | %s | %s |\n' "$label" "$med" "$target" \
        "$(round_ratios "$clients" "$field" | paste -sd, | sed 's/,/, /g')"
}

req_bytes=$(values "$TMP/server-1.jsonl" request_bytes | head -n 1)
reply_bytes=$(values "$TMP/server-1.jsonl" reply_bytes | head -n 1)
echo_bytes=$(values "$TMP/echo-1.jsonl" reply_bytes | head -n 1)

bench_report_head "Server benchmark"
echo "$load_before before the rounds, $load_after after (1-minute; with the benchmark's own load)."
echo
echo "\`$PROGRAM\` ($expected_rows rows) on the seed-42 random 2,000 / 4,000 graph over \`/ws\`"
echo "($req_bytes-byte requests, $reply_bytes-byte replies; the echo server returns the"
echo "$echo_bytes-byte request). Warm-up $WARMUP requests per client; median of $ROUNDS rounds,"
echo "every reply checked."
echo
echo "| target | clients | timed requests | p50 µs | p99 µs | requests/s | p50 µs per round | requests/s per round |"
echo "|---|---:|---:|---:|---:|---:|---|---|"
table_row echo 1 "ws_echo_server" "$REQUESTS"
table_row server 1 "inputlayer-server" "$REQUESTS"
table_row echo "$CLIENTS" "ws_echo_server" "$CLIENTS × $CONCURRENT_REQUESTS"
table_row server "$CLIENTS" "inputlayer-server" "$CLIENTS × $CONCURRENT_REQUESTS"
echo
echo "| server / echo | median of the rounds' ratios | target | per round |"
echo "|---|---:|---|---|"
ratio_row "serial p50" 1 p50_us "<=" 1.5
ratio_row "$CLIENTS-client rate" "$CLIENTS" rate_per_sec ">=" 0.5
ratio_row "serial p99" 1 p99_us
ratio_row "serial rate" 1 rate_per_sec
ratio_row "$CLIENTS-client p50" "$CLIENTS" p50_us
ratio_row "$CLIENTS-client p99" "$CLIENTS" p99_us
