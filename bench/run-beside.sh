#!/usr/bin/env bash
# Reads and writes beside a long query, as `make bench-beside` runs it:
# ./bench/run-beside.sh BUILD_DIR. Builds nothing; uses BUILD_DIR/inputlayer-server,
# inputlayer-load, inputlayer-client and gen_graph_main.
#  1. Starts inputlayer-server (a fresh data directory, rate limits off, the default
#     admission.compute_permits: two on a 2-core machine) and loads the seed-42 random
#     2,000 / 4,000 graph and the reach rules into knowledge graph `perf`.
#  2. Idle: one client times `?edge(1, Y)` (cheap_query) REQUESTS times, one client times
#     REQUESTS single inserts `+side(<n>, 1)` (each a new fact, acknowledged once durable),
#     and 1 and 8 clients time `?reach(1, Y)` (bound_query, 1,582 rows).
#  3. Beside: one connection loops the long query
#     `?edge(A, B), edge(C, D), edge(E, F), A < 3, A + C + E = B + D + F` (seconds each,
#     15,218 rows), and meanwhile the cheap query and the inserts are timed again; the
#     long query must hold a worker before and after each of those runs (the metrics), or
#     the run fails.
#  4. Prints Markdown: p50 / p99 of each, idle and beside, and the 8-client / 1-client rate
#     of bound_query. Every reply is checked (the long query's rows too).
# Environment: BENCH_BESIDE_REQUESTS (2000), BENCH_BESIDE_WARMUP (200), BENCH_BESIDE_SERVER
# (another server binary, to measure an older one; with reads that wait for the long query,
# give it few requests).
# Exits 3 when a reply was wrong (the run is INVALID), 1 on any other failure.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=${BENCH_BESIDE_SERVER:-$BUILD/inputlayer-server}
LOAD=$BUILD/inputlayer-load
CLIENT=$BUILD/inputlayer-client
GEN=$BUILD/gen_graph_main
REQUESTS=${BENCH_BESIDE_REQUESTS:-2000}
WARMUP=${BENCH_BESIDE_WARMUP:-200}
KG=perf
API_KEY=bench-beside-key
LONG='?edge(A, B), edge(C, D), edge(E, F), A < 3, A + C + E = B + D + F'

bench_require "$SERVER" "$LOAD" "$CLIENT" "$GEN"
bench_cpu_layout none "the server" "the load clients"

SERVER_PID=""
LOAD_PID=""
LONG_PID=""
bench_scratch LOAD_PID LONG_PID SERVER_PID

bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
PORT=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
URL="ws://127.0.0.1:$PORT/ws?kg=$KG"

bench_load_reach_graph "$CLIENT" "$GEN" "$PORT" "$API_KEY" "$KG"

# The expected answers, from the generated edges.
"$GEN" random 2000 4000 >"$TMP/edges.txt"
awk '$1 == 1 { printf "%s[%s,%s]", n++ ? "," : "", $1, $2 } END { print "" }' \
    "$TMP/edges.txt" | sed 's/^/[/; s/$/]/' >"$TMP/cheap.json"
python3 - "$TMP/edges.txt" "$TMP" <<'PY'
import json, sys
from collections import defaultdict
edges = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
out = defaultdict(list)
for a, b in edges:
    out[a].append(b)
seen, todo = set(), [1]
while todo:
    x = todo.pop()
    for y in out[x]:
        if y not in seen:
            seen.add(y)
            todo.append(y)
json.dump([[1, y] for y in sorted(seen)], open(sys.argv[2] + "/bound.json", "w"))
# A + C + E = B + D + F: for each edge (A, B) with A < 3 and each (C, D), the edges
# (E, F) with E - F = (B - A) - (C - D).
by_diff = defaultdict(list)
for e, f in edges:
    by_diff[e - f].append((e, f))
rows = []
for a, b in edges:
    if a >= 3:
        continue
    for c, d in edges:
        for e, f in by_diff[(b - a) - (c - d)]:
            rows.append([a, b, c, d, e, f])
json.dump(sorted(rows), open(sys.argv[2] + "/long.json", "w"))
print("long query: %d rows" % len(rows), file=sys.stderr)
PY
echo '[["Inserted 1 fact(s) into '"'"'side'"'"'."]]' >"$TMP/insert.json"

# load NAME CLIENTS EXPECT_FILE PROGRAM [extra args]: one timed run, its JSON line to
# $TMP/NAME.json.
load() {
    local name=$1 clients=$2 expect=$3 program=$4 rc=0
    shift 4
    "$LOAD" server --url "$URL" --api-key "$API_KEY" --program "$program" \
        --expect-rows-file "$expect" --clients "$clients" --warmup "$WARMUP" \
        --requests "$REQUESTS" "$@" >"$TMP/run.out" 2>"$TMP/run.err" &
    LOAD_PID=$!
    wait "$LOAD_PID" || rc=$?
    LOAD_PID=""
    if [ "$rc" -ne 0 ]; then
        bench_client_failed "$rc" "the $name run" "$SERVER_PID" inputlayer-server \
            "$TMP/server.out.err"
    fi
    head -n 1 "$TMP/run.out" >"$TMP/$name.json"
    echo "  $name: $(tail -n 1 "$TMP/run.out")" >&2
}

field() {
    sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$TMP/$1.json"
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "run-beside.sh: idle" >&2
load cheap_idle 1 "$TMP/cheap.json" '?edge(1, Y)'
load insert_idle 1 "$TMP/insert.json" '+side({n}, 1)' --serial-base 0
load bound_1 1 "$TMP/bound.json" '?reach(1, Y)'
load bound_8 8 "$TMP/bound.json" '?reach(1, Y)'

echo "run-beside.sh: beside the long query" >&2
"$LOAD" server --url "$URL" --api-key "$API_KEY" --program "$LONG" \
    --expect-rows-file "$TMP/long.json" --clients 1 --warmup 0 --requests 1000000 \
    --timeout-ms 600000 >"$TMP/long.out" 2>"$TMP/long.err" &
LONG_PID=$!
# running: a worker of the interactive lane is busy (the long query: nothing else runs)
long_running() {
    curl -s -H "Authorization: Bearer $API_KEY" "http://127.0.0.1:$PORT/metrics/prometheus" |
        awk '/^inputlayer_admission_lane_running\{lane="interactive"\}/ { print ($2 >= 1) }'
}
sleep 2 # the long query runs
for phase in cheap insert; do
    if [ "$(long_running)" != 1 ]; then
        echo "run-beside.sh: the long query was not running before the $phase run" >&2
        exit 1
    fi
    if [ "$phase" = cheap ]; then
        load cheap_beside 1 "$TMP/cheap.json" '?edge(1, Y)'
    else
        load insert_beside 1 "$TMP/insert.json" '+side({n}, 1)' --serial-base 500000000
    fi
    if [ "$(long_running)" != 1 ]; then
        echo "run-beside.sh: the long query ended during the $phase run: measure again" >&2
        exit 1
    fi
done
if ! kill -0 "$LONG_PID" 2>/dev/null; then
    echo "run-beside.sh: the long query's client stopped early:" >&2
    cat "$TMP/long.out" "$TMP/long.err" >&2
    exit 1
fi
bench_stop_process "$LONG_PID"
LONG_PID=""
load_after=$(cut -d' ' -f1 /proc/loadavg)

bench_report_head "Reads and writes beside a long query"
echo " $load_before before, $load_after after. \`make bench-beside\`; $REQUESTS timed requests"
echo "per run after $WARMUP untimed; admission.compute_permits default ($(nproc) cores)."
echo
echo "| what | idle p50 / p99 µs | beside the long query p50 / p99 µs |"
echo "|---|---:|---:|"
printf '| cheap_query `?edge(1, Y)` | %s / %s | %s / %s |\n' \
    "$(field cheap_idle p50_us)" "$(field cheap_idle p99_us)" \
    "$(field cheap_beside p50_us)" "$(field cheap_beside p99_us)"
printf '| single insert, acknowledged durable | %s / %s | %s / %s |\n' \
    "$(field insert_idle p50_us)" "$(field insert_idle p99_us)" \
    "$(field insert_beside p50_us)" "$(field insert_beside p99_us)"
echo
r1=$(field bound_1 rate_per_sec)
r8=$(field bound_8 rate_per_sec)
echo "| bound_query \`?reach(1, Y)\` | 1 client | 8 clients | 8 / 1 |"
echo "|---|---:|---:|---:|"
printf '| queries per second | %.0f | %.0f | %.2f |\n' "$r1" "$r8" \
    "$(awk -v a="$r8" -v b="$r1" 'BEGIN { print (b > 0 ? a / b : 0) }')"
