# Sourced by the server benchmarks (run-server.sh, run-fixtures.sh, run-views.sh): the
# binaries they need, where the processes run, starting a benchmark server, waiting for
# it to listen, a client run's failure, and stopping processes. BENCH_SCRIPT names the
# calling script in error messages.
# shellcheck shell=bash
# The globals these functions set are the callers' (PIN_SERVER, PIN_CLIENT, LAYOUT, ...).
# shellcheck disable=SC2034

# bench_init "$@": the scripts' one argument, BUILD_DIR. Exits with the usage unless it is
# given; sets BUILD (it, absolute), REPO (this source tree), BENCH_SCRIPT (the calling
# script's name, for messages) and STARTUP_SECS (how long a server may take to listen).
bench_init() {
    if [ $# -ne 1 ]; then
        echo "usage: $0 BUILD_DIR" >&2
        exit 2
    fi
    BUILD=$(cd "$1" && pwd)
    REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    BENCH_SCRIPT=$(basename "$0")
    STARTUP_SECS=30
}

# bench_require BINARY...: exits with an error unless each is built.
bench_require() {
    local p
    for p in "$@"; do
        if [ ! -x "$p" ]; then
            echo "$BENCH_SCRIPT: $p is missing: build first (make build)" >&2
            exit 1
        fi
    done
}

# bench_positive NAME VALUE: exits with an error (status 2) unless VALUE, the setting
# NAME, is a positive integer.
bench_positive() {
    case $2 in
    '' | *[!0-9]* | 0) echo "$BENCH_SCRIPT: $1 must be a positive integer" >&2 && exit 2 ;;
    esac
}

# bench_report_head TITLE: the report's heading, with the date and the revision measured
# (of the repository REPO), and the start of its machine line, up to "load average"
# (the caller goes on with its load figures).
bench_report_head() {
    local rev cpu
    rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
        rev="$rev (with uncommitted changes)"
    fi
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
    echo "## $1 ($(date -u +%Y-%m-%d), $rev)"
    echo
    echo "Machine: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr); $LAYOUT; load average"
}

# bench_ms MICROSECONDS: the value in ms with two decimals ("" and n/a as they are).
bench_ms() {
    case "$1" in "" | n/a) echo "$1" ;; *) awk -v v="$1" 'BEGIN { printf "%.2f", v / 1000 }' ;; esac
}

# bench_scratch PID_VAR...: makes TMP, a scratch directory, and on exit (or a signal)
# stops the processes whose PIDs the named variables hold then, and removes TMP.
bench_scratch() {
    TMP=$(mktemp -d)
    BENCH_PID_VARS=("$@")
    trap bench_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

bench_cleanup() {
    local v
    for v in "${BENCH_PID_VARS[@]}"; do bench_stop_process "${!v}"; done
    rm -rf "$TMP"
}

# bench_client_failed STATUS WHAT PID NAME LOG: reports a client run that ended with
# STATUS (3: INVALID, a wrong reply) about WHAT, with the client's errors from
# $TMP/run.err and, when process PID (NAME) is gone, the end of its output LOG; exits 3
# for INVALID, else 1.
bench_client_failed() {
    local rc=$1 what=$2 pid=$3 name=$4 log=$5
    if [ "$rc" -eq 3 ]; then
        echo "$BENCH_SCRIPT: INVALID: $what saw a wrong, missing or extra reply:" >&2
    else
        echo "$BENCH_SCRIPT: $what failed (status $rc):" >&2
    fi
    head -n 20 "$TMP/run.err" >&2
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "$BENCH_SCRIPT: $name is gone; its output ends:" >&2
        tail -n 15 "$log" >&2
    fi
    [ "$rc" -eq 3 ] && exit 3
    exit 1
}

# bench_cpu_layout LAYOUT SERVER_WORDS CLIENT_WORDS: sets PIN_SERVER and PIN_CLIENT
# (command prefixes, possibly empty) and LAYOUT (a sentence for the report) from
# BENCH_SERVER_CPUS, or exits with an error:
#   split   the server(s) on CPU 1, the client on CPU 0 (needs 2 CPUs and taskset);
#   shared  everything on CPU 0;
#   none    no pinning.
bench_cpu_layout() {
    local layout=$1 servers=$2 client=$3
    case "$layout" in
    split)
        if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
            echo "$BENCH_SCRIPT: BENCH_SERVER_CPUS=split needs 2 CPUs and taskset" >&2
            exit 1
        fi
        PIN_SERVER=(taskset -c 1)
        PIN_CLIENT=(taskset -c 0)
        LAYOUT="$servers on CPU 1, $client on CPU 0"
        ;;
    shared)
        PIN_SERVER=(taskset -c 0)
        PIN_CLIENT=(taskset -c 0)
        LAYOUT="$servers and $client all on CPU 0"
        ;;
    none)
        PIN_SERVER=()
        PIN_CLIENT=()
        LAYOUT="no pinning (the scheduler places the processes)"
        ;;
    *)
        echo "$BENCH_SCRIPT: BENCH_SERVER_CPUS must be split, shared or none, not '$layout'" >&2
        exit 1
        ;;
    esac
}

# bench_start_server BINARY DIR API_KEY: inputlayer-server in the empty directory DIR (so
# that no config.toml is picked up) with a fresh data directory, on a port the system
# chooses, pinned by PIN_SERVER, its output in DIR.out and DIR.out.err; sets SERVER_PID.
# Rate and connection limits are off, and so are heartbeat pings: the benchmark clients
# block for the next text frame, and a ping alone would leave them waiting.
bench_start_server() {
    local binary=$1 dir=$2 key=$3
    mkdir -p "$dir"
    # Emptied here, not only by the background redirection below: that may run after
    # bench_wait_listening first reads the file, which would then find the listening line
    # (and port) of the server started before this one in the same place.
    : >"$dir.out"
    : >"$dir.out.err"
    (
        cd "$dir" || exit 1
        export INPUTLAYER_BOOTSTRAP_API_KEY=$key
        export INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC=0
        export INPUTLAYER_HTTP__RATE_LIMIT__PER_IP_MAX_RPS=0
        export INPUTLAYER_HTTP__RATE_LIMIT__MAX_CONNECTIONS=0
        export INPUTLAYER_HTTP__RATE_LIMIT__MAX_WS_CONNECTIONS=0
        export INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_PREAUTH_PER_IP=0
        export INPUTLAYER_HTTP__WS_PING_INTERVAL_MS=0
        exec "${PIN_SERVER[@]}" "$binary" --port 0 --data-dir "$dir/data"
    ) >"$dir.out" 2>"$dir.out.err" &
    SERVER_PID=$!
}

# bench_wait_listening FILE PID NAME SECS: prints the port the process PID reports in its
# listening line in FILE, or fails (with the end of its output) when it exits first or
# does not listen within SECS seconds.
bench_wait_listening() {
    local file=$1 pid=$2 name=$3 secs=$4 port
    for _ in $(seq $((secs * 10))); do
        port=$(sed -n 's|.*listening on: http://[^:]*:\([0-9][0-9]*\).*|\1|p' "$file")
        if [ -n "$port" ]; then
            echo "$port"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "$BENCH_SCRIPT: $name exited before listening; its output ends:" >&2
            tail -n 15 "$file" "$file.err" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "$BENCH_SCRIPT: $name did not listen within $secs s" >&2
    return 1
}

# bench_stop_process PID: SIGTERM, up to 5 s to exit, then SIGKILL.
bench_stop_process() {
    local pid=$1
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# bench_run_client WHAT CMD...: runs the client CMD (pinned by PIN_CLIENT) against the
# server SERVER_PID, in the background so that a signal to the script is handled at once,
# its output in $TMP/run.out and $TMP/run.err; when it fails, reports WHAT's failure and
# exits (bench_client_failed); then stops the server.
bench_run_client() {
    local what=$1 rc=0
    shift
    "${PIN_CLIENT[@]}" "$@" >"$TMP/run.out" 2>"$TMP/run.err" &
    CLIENT_PID=$!
    wait "$CLIENT_PID" || rc=$?
    CLIENT_PID=""
    if [ "$rc" -ne 0 ]; then
        bench_client_failed "$rc" "$what" "$SERVER_PID" inputlayer-server "$TMP/server.out.err"
    fi
    bench_stop_process "$SERVER_PID"
    SERVER_PID=""
}

# bench_load_reach_graph CLIENT GEN PORT KEY KG: loads the seed-42 random 2,000 / 4,000
# graph and the two `reach` rules into knowledge graph KG through the server on PORT
# (the client CLIENT, the generator GEN); exits with the end of the client's output when
# that fails or the server took fewer edges or rules. Uses $TMP.
bench_load_reach_graph() {
    local client=$1 gen=$2 port=$3 key=$4 kg=$5 inserted rules
    {
        echo ".kg create $kg"
        "$gen" --iql random 2000 4000
        echo "+reach(X, Y) <- edge(X, Y)"
        echo "+reach(X, Z) <- reach(X, Y), edge(Y, Z)"
    } >"$TMP/load.iql"
    if ! timeout 600 "$client" --server "http://127.0.0.1:$port" --api-key "$key" \
        --script "$TMP/load.iql" >"$TMP/load.out" 2>&1; then
        echo "$BENCH_SCRIPT: loading the graph through the server failed; the output ends:" >&2
        tail -n 15 "$TMP/load.out" | cut -c1-300 >&2
        exit 1
    fi
    inserted=$(awk '/^Inserted [0-9]+ fact\(s\) into .edge.\.$/ { n += $2 } END { print n + 0 }' \
        "$TMP/load.out")
    rules=$(grep -c "^Rule 'reach' registered\.$" "$TMP/load.out" || true)
    if [ "$inserted" != 4000 ] || [ "$rules" != 2 ]; then
        echo "$BENCH_SCRIPT: the server took $inserted of 4000 edges and $rules of 2 rules:" >&2
        grep -v '^> ' "$TMP/load.out" | cut -c1-300 | tail -n 15 >&2
        exit 1
    fi
}
