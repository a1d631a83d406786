#!/usr/bin/env bash
# Where a paced write's CPU goes on the server's I/O thread, phase by phase:
# ./bench/run-phases.sh BUILD_DIR (make bench-phases). Builds nothing.
#
# Runs delta_keyed (BENCH_PHASES_AGENTS agents, 300; one write every
# BENCH_PHASES_INTERVAL_MS, 5; BENCH_PHASES_WRITES writes, 2000) on a fresh server started
# with INPUTLAYER_PHASE_CPU=1 (src/base/phase.h); the fixture signals the server at the
# start and the end of its write phase (--phase-signals), and the script prints the
# server's table: the I/O thread's CPU per statement in each phase, read from its own CPU
# clock at each phase's end (a system call a reading, about 15 a write, included). Beside
# it, the fixture's own figure for the same write phase: the whole server's CPU per write,
# net of its idle rate, with the readings' cost in it too.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
FIXTURE=$BUILD/inputlayer-fixture
AGENTS=${BENCH_PHASES_AGENTS:-300}
INTERVAL=${BENCH_PHASES_INTERVAL_MS:-5}
WRITES=${BENCH_PHASES_WRITES:-2000}
bench_positive BENCH_PHASES_AGENTS "$AGENTS"
bench_positive BENCH_PHASES_INTERVAL_MS "$INTERVAL"
bench_positive BENCH_PHASES_WRITES "$WRITES"
API_KEY=bench-phases-key

bench_require "$SERVER" "$FIXTURE"
bench_cpu_layout "${BENCH_SERVER_CPUS:-none}" "the server" "the fixture"

SERVER_PID=""
CLIENT_PID=""
bench_scratch CLIENT_PID SERVER_PID

export INPUTLAYER_PHASE_CPU=1
bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
port=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
bench_run_client delta_keyed "$FIXTURE" delta_keyed --port "$port" --api-key "$API_KEY" \
    --server-pid "$SERVER_PID" --agents "$AGENTS" --writes "$WRITES" \
    --interval-ms "$INTERVAL" --phase-signals 1

# The server prints its table at the first request after SIGUSR2 (the agents' closing
# frames at the latest), and bench_run_client has stopped it since.
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
echo "delta_keyed, $AGENTS agents, $WRITES writes, one every $INTERVAL ms, recorded over the write"
echo "phase. The fixture's figure for the same phase (the whole server, net of its idle rate):"
echo "$(awk -v v="$cpu" 'BEGIN { printf "%.1f", v * 1000 }') us per write."
echo
echo "$table"
