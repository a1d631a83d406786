#!/usr/bin/env bash
# The durable-write benchmark, as `make bench-durable` runs it:
# ./bench/run-durable.sh BUILD_DIR. Builds nothing; uses BUILD_DIR/inputlayer-server,
# BUILD_DIR/inputlayer-fixture (bench/fixture_insert.c) and BUILD_DIR/fsync_probe.
# For each fixture (insert_single, insert_batch, writers):
#  1. a fresh data directory, and fsync_probe in it: the disk's floor, small writes into a
#     file preallocated as the log's segments are (posix_fallocate), each followed by
#     fdatasync, as the write-ahead log does;
#  2. inputlayer-server on that directory in `immediate` durability (a write is
#     acknowledged once its log record is fdatasync'ed), rate and connection limits off,
#     on a port the system chooses;
#  3. the fixture against it over /ws, every reply checked, with the server's PID for its
#     CPU figures; then the server is stopped and the probe runs again.
# Then Markdown: each figure beside its target, against the floor of that fixture (the
# mean of the probes' p50s before and after it), PASS or MISS, and the command line. The
# targets:
#  - insert_single ack p50 <= max(1.3 x floor p50, floor p50 + 100 µs);
#  - writers: N writers' facts/s >= 3 x a single writer's (median of the rounds' ratios);
#  - insert_batch, 1,000 facts per write: ack p50 <= floor p50 + 1 ms.
# Whether the targets are met is in the table, not in the exit status.
# Environment: BENCH_DURABLE_FIXTURES (insert_single insert_batch writers),
# BENCH_DURABLE_DIR: where the data directories (and so the probe) go ($TMPDIR, else
# /tmp), BENCH_SERVER_CPUS: `split` (default: the server and the probe on CPU 1, the
# fixture client on CPU 0), `shared` (all on CPU 0) or `none`; BENCH_DURABLE_ARGS: more
# arguments for every fixture run (e.g. "--writes 200"); BENCH_DURABLE_SMOKE=1: every
# fixture tiny, for correctness only (the figures mean nothing); BENCH_DURABLE_MODE: the
# server's durability mode (immediate; batched or async show what the sync costs, against
# targets that are for immediate).
# Exits 3 when a fixture saw a wrong reply or a wrong count of facts (the run is
# INVALID), 1 on any other failure.
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
BUILD_ARG=$1
SERVER=$BUILD/inputlayer-server
FIXTURE=$BUILD/inputlayer-fixture
PROBE=$BUILD/fsync_probe
FIXTURES=${BENCH_DURABLE_FIXTURES:-insert_single insert_batch writers}
CPUS=${BENCH_SERVER_CPUS:-split}
DATA_PARENT=${BENCH_DURABLE_DIR:-${TMPDIR:-/tmp}}
SMOKE=${BENCH_DURABLE_SMOKE:-}
# shellcheck disable=SC2206
EXTRA_ARGS=(${BENCH_DURABLE_ARGS:-})
PROBE_ARGS=(--count 2000 --bytes 128 --prealloc fallocate)
# Only for this run's own servers, which listen on 127.0.0.1 with fresh data directories.
API_KEY=bench-durable-key

bench_require "$SERVER" "$FIXTURE" "$PROBE"
bench_cpu_layout "$CPUS" "the server and the fsync probe" "the fixture client"
if [ ! -d "$DATA_PARENT" ] || [ ! -w "$DATA_PARENT" ]; then
    echo "$BENCH_SCRIPT: BENCH_DURABLE_DIR=$DATA_PARENT is not a writable directory" >&2
    exit 1
fi

# fixture_args NAME: the arguments of fixture NAME beyond the server's (smoke: tiny runs).
fixture_args() {
    if [ -z "$SMOKE" ]; then
        return 0
    fi
    case "$1" in
    insert_single) echo "--warmup 2 --writes 20" ;;
    insert_batch) echo "--warmup 1 --writes 3 --batch 1000" ;;
    writers) echo "--warmup 2 --writes 10 --rounds 1" ;;
    esac
}
[ -n "$SMOKE" ] && PROBE_ARGS[1]=100

# The server's durability is set here, whatever the caller's environment says.
MODE=${BENCH_DURABLE_MODE:-immediate}
case "$MODE" in
immediate | batched | async) ;;
*)
    echo "$BENCH_SCRIPT: BENCH_DURABLE_MODE must be immediate, batched or async, not '$MODE'" >&2
    exit 1
    ;;
esac
export INPUTLAYER_STORAGE__PERSIST__DURABILITY_MODE=$MODE

SERVER_PID=""
CLIENT_PID=""
TMPDIR=$DATA_PARENT bench_scratch CLIENT_PID SERVER_PID

# probe NAME WHEN: fsync_probe in the data directory of fixture NAME, WHEN (before or
# after) it runs; appends its JSON line, with those two, to $TMP/probes.jsonl.
probe() {
    if ! "${PIN_SERVER[@]}" "$PROBE" --dir "$TMP/server/data" "${PROBE_ARGS[@]}" >"$TMP/probe.out"; then
        echo "$BENCH_SCRIPT: fsync_probe failed in the data directory" >&2
        exit 1
    fi
    head -n 1 "$TMP/probe.out" | sed "s/^{/{\"fixture\":\"$1\",\"when\":\"$2\",/" >>"$TMP/probes.jsonl"
    echo "  $1, $2: $(tail -n 1 "$TMP/probe.out")" >&2
}

# run_fixture NAME: a fresh data directory, the fsync probe in it, a fresh server on it,
# the fixture, the server stopped, the probe again; appends the fixture's JSON line to
# $TMP/results.jsonl. Stops the script on a failure (exit 3 for INVALID).
run_fixture() {
    local name=$1 port args
    rm -rf "$TMP/server"
    mkdir -p "$TMP/server/data"
    probe "$name" before
    bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
    port=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
    # shellcheck disable=SC2207
    args=($(fixture_args "$name"))
    bench_run_client "$name" "$FIXTURE" "$name" --port "$port" --api-key "$API_KEY" \
        --server-pid "$SERVER_PID" "${args[@]}" "${EXTRA_ARGS[@]}"
    head -n 1 "$TMP/run.out" >>"$TMP/results.jsonl"
    echo "  $(tail -n 1 "$TMP/run.out")" >&2
    probe "$name" after
}

# The file system the data directories are on, for the report.
mkdir -p "$TMP/server"
FS_TYPE=$(df -P -T "$TMP/server" | awk 'NR == 2 { print $2 }')

# Other work on the machine shows in the figures: the load average is reported with them.
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "run-durable.sh: $FIXTURES; $LAYOUT; data on $FS_TYPE; load average $load_before" >&2
for name in $FIXTURES; do run_fixture "$name"; done
load_after=$(cut -d' ' -f1 /proc/loadavg)

# The value of numeric field FIELD in the JSON line of fixture NAME in FILE ("" when
# absent, "n/a" when null): field FILE NAME FIELD
field() {
    grep "\"fixture\":\"$2\"" "$1" | sed -n "s/.*\"$3\":\(null\|[0-9.]*\).*/\1/p" |
        sed 's/^null$/n\/a/'
}
result() { field "$TMP/results.jsonl" "$1" "$2"; }
# probed NAME WHEN FIELD: a figure of the probe before or after fixture NAME.
probed() { grep "\"when\":\"$2\"" "$TMP/probes.jsonl" | field /dev/stdin "$1" "$3"; }
# floor NAME: the fsync floor of fixture NAME, the mean of the p50s before and after it.
floor() {
    awk -v b="$(probed "$1" before p50_us)" -v a="$(probed "$1" after p50_us)" \
        'BEGIN { printf "%.1f", (a + b) / 2 }'
}
# floors NAME FIELD: FIELD of the probes before and after fixture NAME, in whole µs.
floors() { echo "$(us "$(probed "$1" before "$2")") / $(us "$(probed "$1" after "$2")")"; }

# us VALUE: whole microseconds ("" and n/a as they are).
us() {
    case "$1" in "" | n/a) echo "$1" ;; *) awk -v v="$1" 'BEGIN { printf "%.0f", v }' ;; esac
}

# verdict VALUE OP LIMIT: PASS when VALUE OP LIMIT holds (OP <= or >=), else MISS; n/a
# without a value.
verdict() {
    case "$1" in "" | n/a)
        echo "n/a"
        return
        ;;
    esac
    awk -v v="$1" -v op="$2" -v l="$3" \
        'BEGIN { ok = (op == "<=") ? v <= l : v >= l; print ok ? "PASS" : "MISS" }'
}

has() { [[ " $FIXTURES " == *" $1 "* ]]; }

# steadiness NAME: "" when the probes before and after fixture NAME agree within 1.5x,
# else a warning for its verdict: the disk's speed changed meanwhile (other work on the
# machine), and so the verdict says little.
steadiness() {
    awk -v b="$(probed "$1" before p50_us)" -v a="$(probed "$1" after p50_us)" \
        'BEGIN { hi = a > b ? a : b; lo = a > b ? b : a
                 if (lo <= 0 || hi / lo > 1.5) printf " (unsteady floor: %.0f / %.0f)", b, a }'
}

bench_report_head "Durable writes over /ws"
echo "$load_before before the fixtures, $load_after after (1-minute; with the fixtures' own load)."
echo "Data directories on $FS_TYPE. Per fixture: \`fsync_probe\` in a fresh data directory"
echo "(${PROBE_ARGS[1]} writes of ${PROBE_ARGS[3]} bytes into a file preallocated with posix_fallocate as the"
echo "log's segments are, each followed by fdatasync), a fresh"
if [ "$MODE" = immediate ]; then
    echo "server on it in \`immediate\` durability (a write is acknowledged once its log record is"
    echo "fdatasync'ed), the fixture, every reply checked, the probe again. The floor of a"
else
    echo "server on it in \`$MODE\` durability (NOT immediate: the targets are for immediate,"
    echo "where a write is acknowledged once its log record is fdatasync'ed), the fixture, every"
    echo "reply checked, the probe again. The floor of a"
fi
echo "fixture: the mean of its two probes' p50s (\"unsteady\" beside a verdict: they differ by"
echo "more than 1.5x, the disk's speed changed meanwhile). Sync CPU: the probe's CPU time per"
echo "write and sync (mostly the kernel's, for the sync). Times in µs."
[ -n "$SMOKE" ] && echo "SMOKE RUN (BENCH_DURABLE_SMOKE): tiny fixtures, the figures mean nothing."
echo
echo "| figure | measured | fsync floor | target | verdict |"
echo "|---|---:|---:|---|---|"
if has insert_single; then
    f=$(floor insert_single)
    v=$(result insert_single ack_us_p50)
    limit=$(awk -v f="$f" 'BEGIN { a = 1.3 * f; b = f + 100; printf "%.1f", (a > b ? a : b) }')
    # shellcheck disable=SC2016 # the backquotes are Markdown, not a command
    printf '| `insert_single` ack p50, 1 fact per write (%s writes) | %s | %s | ≤ %s (1.3 × floor or floor + 100, the larger) | %s |\n' \
        "$(result insert_single writes)" "$(us "$v")" "$(us "$f")" "$(us "$limit")" \
        "$(verdict "$v" "<=" "$limit")$(steadiness insert_single)"
fi
if has writers; then
    f=$(floor writers)
    v=$(result writers ratio)
    # shellcheck disable=SC2016
    printf '| `writers` facts/s, %s writers / 1 writer (median of %s rounds) | %s (%s / %s) | %s | ≥ 3 | %s |\n' \
        "$(result writers writers)" "$(result writers rounds)" "$(awk -v v="$v" 'BEGIN { printf "%.2f", v }')" \
        "$(result writers concurrent_facts_per_sec)" "$(result writers single_facts_per_sec)" \
        "$(us "$f")" "$(verdict "$v" ">=" 3)$(steadiness writers)"
fi
if has insert_batch; then
    f=$(floor insert_batch)
    v=$(result insert_batch ack_us_p50)
    limit=$(awk -v f="$f" 'BEGIN { printf "%.1f", f + 1000 }')
    # shellcheck disable=SC2016
    printf '| `insert_batch` ack p50, %s facts per write (%s writes) | %s | %s | ≤ %s (floor + 1 ms) | %s |\n' \
        "$(result insert_batch facts_per_write)" "$(result insert_batch writes)" "$(us "$v")" \
        "$(us "$f")" "$(us "$limit")" "$(verdict "$v" "<=" "$limit")$(steadiness insert_batch)"
fi
echo
echo "| fixture | floor p50 before / after | floor p99 before / after | sync CPU before / after | ack p50 | ack p99 | facts/s | server CPU ms per write |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for name in insert_single insert_batch; do
    has "$name" || continue
    # shellcheck disable=SC2016
    printf '| `%s` | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$(floors "$name" p50_us)" \
        "$(floors "$name" p99_us)" "$(floors "$name" cpu_us_per_sync)" \
        "$(us "$(result "$name" ack_us_p50)")" \
        "$(us "$(result "$name" ack_us_p99)")" "$(result "$name" facts_per_sec)" \
        "$(result "$name" server_cpu_per_write_ms)"
done
if has writers; then
    for phase in single concurrent; do
        label="1 writer"
        [ "$phase" = concurrent ] && label="$(result writers writers) writers"
        # shellcheck disable=SC2016
        printf '| `writers`, %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" \
            "$(floors writers p50_us)" "$(floors writers p99_us)" \
            "$(floors writers cpu_us_per_sync)" \
            "$(us "$(result writers "${phase}_ack_us_p50")")" \
            "$(us "$(result writers "${phase}_ack_us_p99")")" \
            "$(result writers "${phase}_facts_per_sec")" \
            "$(result writers "${phase}_server_cpu_per_write_ms")"
    done
    echo
    echo "writers per round (facts/s alone, together, ratio):" \
        "$(grep -o '"single_facts_per_sec_rounds":\[[^]]*\]' "$TMP/results.jsonl" | sed 's/.*\[\(.*\)\]/\1/')" \
        "/ $(grep -o '"concurrent_facts_per_sec_rounds":\[[^]]*\]' "$TMP/results.jsonl" | sed 's/.*\[\(.*\)\]/\1/')" \
        "/ $(grep -o '"ratio_rounds":\[[^]]*\]' "$TMP/results.jsonl" | sed 's/.*\[\(.*\)\]/\1/')"
fi
# A write acknowledged well under the disk's sync time (the lower of the two probes: the
# disk's speed drifts with other work) was not synced: the figures would not be those of
# durable writes.
if has insert_single && [ "$MODE" = immediate ]; then
    awk -v a="$(result insert_single ack_us_p50)" -v b="$(probed insert_single before p50_us)" \
        -v f="$(probed insert_single after p50_us)" \
        'BEGIN { if (b < f) f = b; if (a != "" && a < f / 2) print "\nWARNING: insert_single acks come faster than the disk syncs: are the writes synced?" }'
fi
echo
settings=""
[ -n "${BENCH_DURABLE_FIXTURES:-}" ] && settings+="BENCH_DURABLE_FIXTURES='$FIXTURES' "
[ "$CPUS" != split ] && settings+="BENCH_SERVER_CPUS=$CPUS "
[ -n "${BENCH_DURABLE_DIR:-}" ] && settings+="BENCH_DURABLE_DIR=DIR "
[ -n "${BENCH_DURABLE_ARGS:-}" ] && settings+="BENCH_DURABLE_ARGS='${BENCH_DURABLE_ARGS}' "
[ -n "$SMOKE" ] && settings+="BENCH_DURABLE_SMOKE=$SMOKE "
[ "$MODE" != immediate ] && settings+="BENCH_DURABLE_MODE=$MODE "
# The servers inherit the environment: a setting that changes their figures is shown.
[ "${INPUTLAYER_HTTP__BUSY_POLL_US:-0}" != 0 ] &&
    settings+="INPUTLAYER_HTTP__BUSY_POLL_US=$INPUTLAYER_HTTP__BUSY_POLL_US "
echo "Command: \`${settings}./bench/run-durable.sh $BUILD_ARG\`$([ -z "$settings" ] && [ "$BUILD_ARG" = build ] && echo " (= \`make bench-durable\`)")"
