#!/usr/bin/env bash
# A full closure searched on several threads (src/exec/closure.c), through the CLI in
# process: under ThreadSanitizer (a data race fails it) and on the normal build, with 1, 2
# and 3 threads, written left- and right-recursively (searched backwards), the same rows
# each time. tests/threads/closure.sh BUILD BUILD_TSAN
set -euo pipefail
BUILD=$(cd "$1" && pwd)
BUILD_TSAN=$(cd "$2" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
script() { # script RECURSIVE_RULE
    echo ".kg create tc"
    "$BUILD/gen_graph_main" --iql random 2000 4000
    echo "+reach(X, Y) <- edge(X, Y)"
    echo "$1"
    echo "+n(count<X>) <- reach(X, Y)"
    echo "?n(C)"
    # rows from everywhere in the result: its order and content, not only its size
    echo "?reach(X, Y), X < 20"
    echo "?reach(X, Y), X > 1990"
}
script "+reach(X, Z) <- reach(X, Y), edge(Y, Z)" >"$TMP/left.iql"
script "+reach(X, Z) <- edge(X, Y), reach(Y, Z)" >"$TMP/right.iql"
run() { # run CLIENT THREADS SCRIPT: the script's output, but the recursive rule's echo
    (cd "$TMP" && TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
        "$1" --local --threads "$2" --mode csv --script "$3" 2>"$TMP/err" >"$TMP/raw") || {
        echo "closure.sh: $1 --threads $2 $3 failed:" >&2
        cat "$TMP/err" >&2
        exit 1
    }
    grep -v '^> +reach(X, Z) <- ' "$TMP/raw"
}
run "$BUILD/inputlayer-client" 1 left.iql >"$TMP/one.out"
grep -q '^2493790$' "$TMP/one.out" || {
    echo "closure.sh: the closure is not 2,493,790 pairs" >&2
    exit 1
}
for tc in left.iql right.iql; do
    for client in "$BUILD/inputlayer-client" "$BUILD_TSAN/inputlayer-client"; do
        for threads in 1 2 3; do
            [ "$tc" = left.iql ] && [ "$threads" = 1 ] && continue
            run "$client" "$threads" "$tc" >"$TMP/many.out"
            cmp -s "$TMP/one.out" "$TMP/many.out" || {
                echo "closure.sh: $client --threads $threads $tc printed other rows than" \
                    "one thread left-recursively" >&2
                diff "$TMP/one.out" "$TMP/many.out" | head -5 >&2
                exit 1
            }
        done
    done
done
echo "closure.sh: the same rows on 1, 2 and 3 threads, left and right recursion, no data race"
