# Sourced by the server benchmarks: where the server and its client run, from
# BENCH_SERVER_CPUS. `bench_cpu_layout SCRIPT LAYOUT SERVER_WORDS CLIENT_WORDS` sets
# PIN_SERVER and PIN_CLIENT (command prefixes, possibly empty) and LAYOUT (a sentence for
# the report), or exits with an error naming SCRIPT:
#   split   the server(s) on CPU 1, the client on CPU 0 (needs 2 CPUs and taskset);
#   shared  everything on CPU 0;
#   none    no pinning.
# shellcheck shell=bash
bench_cpu_layout() {
    local script=$1 layout=$2 servers=$3 client=$4
    case "$layout" in
    split)
        if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
            echo "$script: BENCH_SERVER_CPUS=split needs 2 CPUs and taskset" >&2
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
        echo "$script: BENCH_SERVER_CPUS must be split, shared or none, not '$layout'" >&2
        exit 1
        ;;
    esac
}
