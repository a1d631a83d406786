#!/usr/bin/env bash
# Checks `inputlayer-load echo --watchers` against ws_echo_server (the keyed floor of
# bench/run-pacing.sh): every request echoed and pushed to one watcher, each push received
# exactly once, for one client and for two whose requests differ; and that a server which
# does not take watchers (inputlayer-server answers `watch` with an error) ends the run
# INVALID (exit 3) rather than measuring a floor with no pushes. Run by `make bench-smoke`.
#
#   bench/check-echo-push.sh BUILD_DIR
set -euo pipefail

# shellcheck source=bench/server-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
bench_init "$@"
SERVER=$BUILD/inputlayer-server
ECHO=$BUILD/ws_echo_server
LOAD=$BUILD/inputlayer-load
API_KEY=bench-push-key
bench_require "$SERVER" "$ECHO" "$LOAD"

# Stopped on exit by bench_scratch's cleanup, which reads them by name.
# shellcheck disable=SC2034
ECHO_PID=""
SERVER_PID=""
bench_scratch ECHO_PID SERVER_PID

"$ECHO" --port 0 >"$TMP/echo.out" 2>"$TMP/echo.err" &
ECHO_PID=$!
port=$(bench_wait_listening "$TMP/echo.out" "$ECHO_PID" ws_echo_server 10)

# Runs the load client against ws://127.0.0.1:ADDRESS (port and path) with the given
# options; its JSON line in $TMP/load.out.
load() {
    local at=$1
    shift
    "$LOAD" echo --url "ws://127.0.0.1:$at" --timeout-ms 5000 "$@" \
        >"$TMP/load.out" 2>"$TMP/load.err"
}

expect_pushes() {
    local want=$1
    shift
    local rc=0
    load "$port/" "$@" || rc=$?
    if [ $rc -ne 0 ] || ! grep -q "\"pushes\":$want}" "$TMP/load.out"; then
        echo "$BENCH_SCRIPT: echo $*: status $rc, not $want pushes" >&2
        cat "$TMP/load.out" "$TMP/load.err" >&2
        exit 1
    fi
}

expect_pushes 52 --warmup 2 --requests 50 --watchers 3
expect_pushes 104 --warmup 2 --requests 50 --clients 2 --program '+side({n})' --watchers 5
expect_pushes 0 --warmup 2 --requests 50

bench_start_server "$SERVER" "$TMP/server" "$API_KEY"
sport=$(bench_wait_listening "$TMP/server.out" "$SERVER_PID" inputlayer-server "$STARTUP_SECS")
rc=0
load "$sport/ws" --warmup 0 --requests 1 --watchers 1 || rc=$?
if [ $rc -ne 3 ] || ! grep -q "INVALID run: watcher 1: the server answered" "$TMP/load.err"; then
    echo "$BENCH_SCRIPT: watchers against inputlayer-server ended $rc, not 3 (INVALID)" >&2
    cat "$TMP/load.err" >&2
    exit 1
fi
echo "check-echo-push: every request pushed to one watcher and received once; a server without watchers is INVALID"
