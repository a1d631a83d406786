#!/usr/bin/env bash
# What one paced durable write costs on this machine, and how much of it is the machine's:
# ./bench/run-pacing.sh BUILD_DIR (make bench-pacing). Builds nothing.
#
# The standing-query fixtures write at a fixed pace (delta_keyed: one write every 5 ms for
# its CPU figure), and on a virtual machine a CPU left idle between two writes makes the
# next one dearer: the caches are cold and waking a halted virtual CPU is work. So for each
# interval in BENCH_PACING_INTERVALS_MS (1 5 10) it measures, at that pace:
#  - fsync_probe --interval-us: the log's own floor, a 128-byte write and fdatasync into a
#    preallocated file, with nothing else: its CPU per sync and its p50, and the write
#    requests the disk received per sync (from /sys/block: where a sync also writes the
#    file's inode, as ext4 without a journal does whenever its mtime moved, a paced sync
#    costs a request more than one back to back);
#  - ws_echo_server under `inputlayer-load echo --interval-us`: the transport's floor, one
#    WebSocket round trip: the echo server's CPU per request (from
#    /proc/PID/task/*/schedstat, net of its idle rate) and the round trip's p50;
#  - the same with --watchers BENCH_PACING_WATCHERS (300, delta_keyed's agents): each
#    request also pushed to one watcher in turn, as a keyed write's commit pushes its delta
#    to one agent's connection. Beside the log's floor, that is the least a keyed write can
#    cost here with nothing computed (the keyed floor), and its ratio to the floor says how
#    much of a target such as 1.3x the delta's send alone takes;
#  - inputlayer-server under delta_keyed with 1 agent and with 300 agents (300 is the
#    fixture's own): the server's CPU per write (the fixture's figure, net of the idle rate)
#    and the ack p50, every delta checked; and its ratio to the floor (the log's CPU per
#    sync plus the transport's per round trip) measured in the same run at that pace.
# BENCH_PACING_ROUNDS (1) rounds of the four at each interval, one row each, and with more
# than one a row of the ratios' medians: the floor moves from minute to minute, and each
# round's ratio is to the floor measured just before it.
# BENCH_PACING_WRITES (2000) writes, syncs or requests per measurement. Unpinned by default
# (BENCH_SERVER_CPUS: none, split or shared, as in run-fixtures.sh). Prints a Markdown table.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
FIXTURE=$BUILD/inputlayer-fixture
ECHO=$BUILD/ws_echo_server
LOAD=$BUILD/inputlayer-load
PROBE=$BUILD/fsync_probe
INTERVALS=${BENCH_PACING_INTERVALS_MS:-1 5 10}
WRITES=${BENCH_PACING_WRITES:-2000}
ROUNDS=${BENCH_PACING_ROUNDS:-1}
WATCHERS=${BENCH_PACING_WATCHERS:-300}
bench_positive BENCH_PACING_WATCHERS "$WATCHERS"
bench_positive BENCH_PACING_ROUNDS "$ROUNDS"
CPUS=${BENCH_SERVER_CPUS:-none}
API_KEY=bench-pacing-key

bench_require "$SERVER" "$FIXTURE" "$ECHO" "$LOAD" "$PROBE"
bench_cpu_layout "$CPUS" "the servers" "the clients"

SERVER_PID=""
CLIENT_PID=""
ECHO_PID=""
bench_scratch CLIENT_PID SERVER_PID ECHO_PID

# The CPU nanoseconds process PID's threads have run: cpu_ns PID
cpu_ns() {
    cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'
}

now_ns() { date +%s%N; }

# The value of numeric field FIELD in the JSON line FILE's first line: field FILE FIELD
field() {
    head -n 1 "$1" | sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p"
}

# The statistics file of the block device holding directory DIR, or nothing (a file system
# on no block device, such as tmpfs): disk_stat DIR
disk_stat() {
    local dev
    dev=$(findmnt -n -o SOURCE -T "$1" 2>/dev/null | sed 's|^/dev/||')
    if [ -n "$dev" ] && [ -r "/sys/class/block/$dev/stat" ]; then
        echo "/sys/class/block/$dev/stat"
    fi
}

# The log's floor at interval MS: sets PROBE_CPU (µs per sync), PROBE_P50 (µs) and
# PROBE_DISK (write requests the disk received per sync, or n/a).
probe() {
    mkdir -p "$TMP/probe"
    local stat before=""
    stat=$(disk_stat "$TMP/probe")
    [ -n "$stat" ] && before=$(awk '{ print $5 }' "$stat")
    "${PIN_SERVER[@]}" "$PROBE" --dir "$TMP/probe" --count "$WRITES" --prealloc zeros \
        --interval-us $(($1 * 1000)) >"$TMP/probe.out"
    PROBE_CPU=$(field "$TMP/probe.out" cpu_us_per_sync)
    PROBE_P50=$(field "$TMP/probe.out" p50_us)
    PROBE_DISK=n/a
    if [ -n "$before" ]; then
        PROBE_DISK=$(awk -v b="$before" -v n="$WRITES" '{ printf "%.2f", ($5 - b) / n }' "$stat")
    fi
}

# The transport's floor at interval MS, each request also pushed to one of WATCHERS other
# connections (0: none): sets ECHO_CPU (µs per round trip) and ECHO_P50.
echo_floor() {
    local port idle0 idle1 t0 t1 c0 c1 watchers=$2
    "${PIN_SERVER[@]}" "$ECHO" --port 0 >"$TMP/echo.out" 2>"$TMP/echo.out.err" &
    ECHO_PID=$!
    port=$(bench_wait_listening "$TMP/echo.out" "$ECHO_PID" ws_echo_server "$STARTUP_SECS")
    idle0=$(cpu_ns "$ECHO_PID")
    t0=$(now_ns)
    sleep 0.5
    idle1=$(cpu_ns "$ECHO_PID")
    t1=$(now_ns)
    local idle_rate
    idle_rate=$(awk -v c=$((idle1 - idle0)) -v t=$((t1 - t0)) 'BEGIN { print c / t }')
    c0=$(cpu_ns "$ECHO_PID")
    t0=$(now_ns)
    "${PIN_CLIENT[@]}" "$LOAD" echo --url "ws://127.0.0.1:$port/" --warmup 1 \
        --requests "$WRITES" --interval-us $(($1 * 1000)) --watchers "$watchers" \
        >"$TMP/load.out" 2>"$TMP/load.err" || {
        echo "$BENCH_SCRIPT: inputlayer-load echo failed: $(cat "$TMP/load.err")" >&2
        exit 1
    }
    c1=$(cpu_ns "$ECHO_PID")
    t1=$(now_ns)
    ECHO_CPU=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v r="$idle_rate" -v n=$((WRITES + 1)) \
        'BEGIN { printf "%.1f", (c - r * t) / n / 1000 }')
    ECHO_P50=$(field "$TMP/load.out" p50_us)
    bench_stop_process "$ECHO_PID"
    ECHO_PID=""
}

# delta_keyed with AGENTS agents at interval MS: sets DK_CPU (µs per write), DK_ACK (µs).
keyed() {
    local agents=$1 ms=$2 port
    rm -rf "$TMP/server"
    bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
    port=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
    bench_run_client "delta_keyed" "$FIXTURE" delta_keyed --port "$port" --api-key "$API_KEY" \
        --server-pid "$SERVER_PID" --agents "$agents" --writes "$WRITES" --interval-ms "$ms"
    DK_CPU=$(awk -v v="$(field "$TMP/run.out" server_cpu_per_write_ms)" 'BEGIN { printf "%.0f", v * 1000 }')
    DK_ACK=$(field "$TMP/run.out" ack_us_p50)
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
rows=()
# The median of the numbers given: median N...
median() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for ms in $INTERVALS; do
    one_ratios=() dk_ratios=() keyed_ratios=()
    for round in $(seq "$ROUNDS"); do
        echo "run-pacing.sh: one every $ms ms, round $round of $ROUNDS" >&2
        probe "$ms"
        echo_floor "$ms" "$WATCHERS"
        push_cpu=$ECHO_CPU
        echo_floor "$ms" 0
        keyed 1 "$ms"
        one_cpu=$DK_CPU one_ack=$DK_ACK
        keyed 300 "$ms"
        # The server's CPU per write over the floor measured just before it, at the same
        # pace: the one figure comparable from run to run on a machine whose floor moves.
        floor=$(awk -v p="$PROBE_CPU" -v e="$ECHO_CPU" 'BEGIN { printf "%.1f", p + e }')
        one_ratio=$(awk -v c="$one_cpu" -v f="$floor" 'BEGIN { printf "%.2f", (f > 0 ? c / f : 0) }')
        dk_ratio=$(awk -v c="$DK_CPU" -v f="$floor" 'BEGIN { printf "%.2f", (f > 0 ? c / f : 0) }')
        keyed_floor=$(awk -v p="$PROBE_CPU" -v e="$push_cpu" 'BEGIN { printf "%.1f", p + e }')
        keyed_ratio=$(awk -v k="$keyed_floor" -v f="$floor" 'BEGIN { printf "%.2f", (f > 0 ? k / f : 0) }')
        one_ratios+=("$one_ratio")
        dk_ratios+=("$dk_ratio")
        keyed_ratios+=("$keyed_ratio")
        rows+=("| $ms | $PROBE_CPU | $PROBE_DISK | $ECHO_CPU | $floor | $push_cpu | $keyed_floor (${keyed_ratio}x) | $one_cpu (${one_ratio}x) | $DK_CPU (${dk_ratio}x) | $PROBE_P50 | $ECHO_P50 | $one_ack | $DK_ACK |")
    done
    if [ "$ROUNDS" -gt 1 ]; then
        rows+=("| $ms, median of $ROUNDS rounds | | | | | | $(median "${keyed_ratios[@]}")x | $(median "${one_ratios[@]}")x | $(median "${dk_ratios[@]}")x | | | | |")
    fi
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

bench_report_head "Paced writes: the machine's floor and the server"
echo "$load_before before, $load_after after (1-minute)."
echo
echo "$WRITES per measurement. CPU in µs per write (sync, round trip): the log's floor is"
echo "fsync_probe's write and fdatasync alone; the transport's is ws_echo_server's per round"
echo "trip; delta_keyed's is the server's, net of its idle rate, every delta checked. The floor"
echo "is the two added (one sync and one round trip per write), measured in the same run at"
echo "the same pace; each delta_keyed CPU is followed by its ratio to that floor. Disk"
echo "writes: the write requests the log's disk received per probe sync (/sys/block). Echo +"
echo "push: the echo server's CPU per round trip when each request is also pushed to one of"
echo "$WATCHERS watchers; the keyed floor is the log's floor plus that, the least a keyed write"
echo "costs with nothing computed, and its ratio to the floor."
echo
echo "| one every (ms) | log floor CPU | disk writes per sync | echo CPU | floor CPU | echo + push CPU | keyed floor CPU | delta_keyed 1 agent CPU | delta_keyed 300 agents CPU | log floor p50 | echo p50 | 1 agent ack p50 | 300 agents ack p50 |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
