#!/usr/bin/env bash
# A million facts loaded by a script through the server at its DEFAULT limits:
# ./bench/run-million.sh BUILD_DIR (make bench-million; part of make bench). Builds nothing.
#
# A fresh inputlayer-server with its defaults (100 messages a second per connection, 100
# HTTP requests a second per address, default durability), started in an empty directory
# so that no config.toml is picked up. `inputlayer-client --server URL --script` loads
# BENCH_MILLION_BATCHES (1000) statements of BENCH_MILLION_BATCH (1000) facts each, paced
# by the server's answers (a statement refused for load is sent again); then a count
# through the client must find every fact. Prints the load's wall time, the facts per
# second and the server's refusals by its limits; exits 1 when a fact is missing or a
# statement failed.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
CLIENT=$BUILD/inputlayer-client
BATCHES=${BENCH_MILLION_BATCHES:-1000}
BATCH=${BENCH_MILLION_BATCH:-1000}
API_KEY=bench-million-key
TOTAL=$((BATCHES * BATCH))

bench_require "$SERVER" "$CLIENT"

SERVER_PID=""
CLIENT_PID=""
bench_scratch CLIENT_PID SERVER_PID

# The script: batch b holds the integers b*BATCH .. b*BATCH+BATCH-1.
awk -v batches="$BATCHES" -v batch="$BATCH" 'BEGIN {
    for (b = 0; b < batches; b++) {
        line = "+million["
        for (i = 0; i < batch; i++) line = line (i ? ", " : "") "(" b * batch + i ")"
        print line "]"
    }
}' >"$TMP/load.iql"

mkdir -p "$TMP/server"
(
    cd "$TMP/server" || exit 1
    export INPUTLAYER_BOOTSTRAP_API_KEY=$API_KEY
    exec "$SERVER" --port 0 --data-dir "$TMP/server/data"
) >"$TMP/server.out" 2>"$TMP/server.out.err" &
SERVER_PID=$!
PORT=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
URL=http://127.0.0.1:$PORT

export INPUTLAYER_API_KEY=$API_KEY
start=$(date +%s%N)
rc=0
"$CLIENT" --server "$URL" --script "$TMP/load.iql" >"$TMP/run.out" 2>"$TMP/run.err" &
CLIENT_PID=$!
wait "$CLIENT_PID" || rc=$?
CLIENT_PID=""
end=$(date +%s%N)
if [ "$rc" -ne 0 ]; then
    bench_client_failed "$rc" "the load" "$SERVER_PID" inputlayer-server "$TMP/server.out.err"
fi
summary=$(grep -o '[0-9]* statement(s) run, [0-9]* failed; [0-9]* fact(s) written' "$TMP/run.err" || true)

printf 'million_count(count<X>) <- million(X)\n?million_count(N)\n' |
    "$CLIENT" --server "$URL" --mode csv --script - >"$TMP/count.out" 2>"$TMP/run.err" || {
    bench_client_failed $? "the count" "$SERVER_PID" inputlayer-server "$TMP/server.out.err"
}
stored=$(tail -n 1 "$TMP/count.out")

metrics=$(curl -s -H "Authorization: Bearer $API_KEY" "$URL/metrics/prometheus" || true)
refused=$(echo "$metrics" |
    sed -n -e 's/^inputlayer_rejections_total{reason="\([a-z_]*\)"} \([1-9][0-9]*\)$/\1 \2/p' \
        -e 's/^inputlayer_ws_errors_total{code="\(rate_limited\|overloaded\)"} \([1-9][0-9]*\)$/ws \1 \2/p' |
    paste -sd, - | sed 's/,/, /g')
bench_stop_process "$SERVER_PID"
SERVER_PID=""

secs=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.2f", ns / 1e9 }')
rate=$(awk -v n="$TOTAL" -v ns=$((end - start)) 'BEGIN { printf "%.0f", n / (ns / 1e9) }')
echo "million: $BATCHES batches of $BATCH facts through the server at its default limits" \
    "with inputlayer-client --script: $secs s ($rate facts/s); client: ${summary:-no summary};" \
    "stored: $stored of $TOTAL; the server's refusals by its limits: ${refused:-none}"
if [ "$stored" != "$TOTAL" ] || [ "$summary" != "$BATCHES statement(s) run, 0 failed; $TOTAL fact(s) written" ]; then
    echo "$BENCH_SCRIPT: FAIL: $TOTAL facts sent, $stored stored" >&2
    exit 1
fi
