#!/usr/bin/env bash
# Where a paced write's CPU goes on the server's I/O thread, phase by phase:
# ./bench/run-phases.sh BUILD_DIR (make bench-phases). Builds nothing.
#
# Runs delta_keyed (BENCH_PHASES_AGENTS agents, 300; one write every
# BENCH_PHASES_INTERVAL_MS, 5; BENCH_PHASES_WRITES writes, 4000) on a fresh server started
# with INPUTLAYER_PHASE_CPU=1 (src/base/phase.h). Once the writes run at their pace (the
# server's write system calls, /proc/PID/io, at least one per write for two seconds in a
# row), it records BENCH_PHASES_SECS seconds (5) between SIGUSR1 and SIGUSR2 and prints the
# server's table: the I/O thread's CPU per statement in each phase, read from its own CPU
# clock at each phase's end (a system call a reading, about 15 a write, included). Beside it, the
# fixture's own figure: the whole server's CPU per write over the whole write phase, net
# of its idle rate, with the readings' cost in it too.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
FIXTURE=$BUILD/inputlayer-fixture
AGENTS=${BENCH_PHASES_AGENTS:-300}
INTERVAL=${BENCH_PHASES_INTERVAL_MS:-5}
WRITES=${BENCH_PHASES_WRITES:-4000}
SECS=${BENCH_PHASES_SECS:-5}
for v in AGENTS INTERVAL WRITES SECS; do
    case ${!v} in
    '' | *[!0-9]* | 0) echo "$BENCH_SCRIPT: BENCH_PHASES_$v must be a positive integer" >&2 && exit 2 ;;
    esac
done
API_KEY=bench-phases-key

bench_require "$SERVER" "$FIXTURE"
bench_cpu_layout "${BENCH_SERVER_CPUS:-none}" "the server" "the fixture"

SERVER_PID=""
CLIENT_PID=""
bench_scratch CLIENT_PID SERVER_PID

writes_done() {
    awk '/^syscw/ { print $2 }' /proc/"$SERVER_PID"/io
}

export INPUTLAYER_PHASE_CPU=1
bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
port=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
"${PIN_CLIENT[@]}" "$FIXTURE" delta_keyed --port "$port" --api-key "$API_KEY" \
    --server-pid "$SERVER_PID" --agents "$AGENTS" --writes "$WRITES" \
    --interval-ms "$INTERVAL" >"$TMP/run.out" 2>"$TMP/run.err" &
CLIENT_PID=$!

per_sec=$((1000 / INTERVAL))
[ "$per_sec" -gt 0 ] || per_sec=1
prev=$(writes_done) paced=0
while [ "$paced" -lt 2 ]; do
    sleep 1
    kill -0 "$CLIENT_PID" 2>/dev/null || {
        echo "$BENCH_SCRIPT: the fixture ended before its writes ran at their pace" >&2
        wait "$CLIENT_PID" || bench_client_failed $? delta_keyed "$SERVER_PID" inputlayer-server "$TMP/server.out.err"
        exit 1
    }
    cur=$(writes_done)
    if [ $((cur - prev)) -ge "$per_sec" ]; then paced=$((paced + 1)); else paced=0; fi
    prev=$cur
done
kill -USR1 "$SERVER_PID"
sleep "$SECS"
if ! kill -0 "$CLIENT_PID" 2>/dev/null; then
    echo "$BENCH_SCRIPT: the fixture ended within the recording: raise BENCH_PHASES_WRITES" >&2
    exit 1
fi
kill -USR2 "$SERVER_PID"
rc=0
wait "$CLIENT_PID" || rc=$?
CLIENT_PID=""
[ "$rc" -eq 0 ] || bench_client_failed "$rc" delta_keyed "$SERVER_PID" inputlayer-server "$TMP/server.out.err"
bench_stop_process "$SERVER_PID"
SERVER_PID=""

table=$(sed -n '/^phase CPU of the I\/O thread/,/^| all |/p' "$TMP/server.out.err")
if [ -z "$table" ]; then
    echo "$BENCH_SCRIPT: the server printed no phases; its errors end:" >&2
    tail -n 15 "$TMP/server.out.err" >&2
    exit 1
fi
cpu=$(sed -n 's/.*"server_cpu_per_write_ms":\([0-9.]*\).*/\1/p' "$TMP/run.out" | head -n 1)

bench_report_head "Where a paced write's CPU goes"
echo "$(cut -d' ' -f1 /proc/loadavg) (1-minute)."
echo
echo "delta_keyed, $AGENTS agents, one write every $INTERVAL ms, $SECS s recorded in the write"
echo "phase. The fixture's figure for the same run (the whole server, the whole write phase,"
echo "net of its idle rate): $(awk -v v="$cpu" 'BEGIN { printf "%.1f", v * 1000 }') us per write."
echo
echo "$table"
