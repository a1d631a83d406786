#!/usr/bin/env bash
# Recursions that are not a full closure on several threads (src/exec/eval.c with
# src/exec/team.c), through the CLI in process: under ThreadSanitizer (a data race fails
# it) and on the normal build, with 1, 2 and 3 threads, the same rows each time. Walks
# with their length (the partitioned fixpoint), same generation and mutual recursion (the
# general rounds), strings made in a rule head (on helper threads, held by the
# statement). tests/threads/rounds.sh BUILD BUILD_TSAN
set -euo pipefail
BUILD=$(cd "$1" && pwd)
BUILD_TSAN=$(cd "$2" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
{
    echo ".kg create rounds"
    "$BUILD/gen_graph_main" --iql random 600 1200
    # p(child, parent): a tree of 2,000 nodes
    awk 'BEGIN { s = 7; for (i = 1; i < 2000; i++) { s = (s * 1103515245 + 12345) % 2147483648;
        printf "+p(%d, %d)\n", i, s % i } }'
    echo "+walk(X, Y, 1) <- edge(X, Y)"
    echo "+walk(X, Z, D) <- walk(X, Y, D0), edge(Y, Z), D = D0 + 1, D < 8"
    echo "+sg(X, X) <- p(X, _)"
    echo "+sg(X, Y) <- p(X, A), sg(A, B), p(Y, B)"
    echo "+odd(X, Y) <- edge(X, Y)"
    echo "+odd(X, Z) <- even(X, Y), edge(Y, Z)"
    echo "+even(X, Z) <- odd(X, Y), edge(Y, Z)"
    echo "+named(X, Y, S) <- edge(X, Y), S = concat(\"n\", \"\", \"\")"
    echo "+named(X, Z, S) <- named(X, Y, S0), edge(Y, Z), len(S0) < 8, S = concat(S0, \"x\", \"\")"
    echo "+nw(count<X>) <- walk(X, Y, D)"
    echo "?nw(C)"
    echo "+ns(count<X>) <- sg(X, Y)"
    echo "?ns(C)"
    echo "+ne(count<X>) <- even(X, Y)"
    echo "?ne(C)"
    echo "+nn(count<X>) <- named(X, Y, S)"
    echo "?nn(C)"
    # rows from everywhere in the results: their order and content, not only their size
    echo "?walk(X, Y, D), X < 5"
    echo "?sg(X, Y), X > 1990"
    echo "?even(X, Y), X < 5"
    echo "?named(X, Y, S), X > 590"
} >"$TMP/rounds.iql"
run() { # run CLIENT THREADS: the script's output
    (cd "$TMP" && TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
        "$1" --local --threads "$2" --mode csv --script rounds.iql 2>"$TMP/err" >"$TMP/raw") || {
        echo "rounds.sh: $1 --threads $2 failed:" >&2
        cat "$TMP/err" >&2
        exit 1
    }
    cat "$TMP/raw"
}
run "$BUILD/inputlayer-client" 1 >"$TMP/one.out"
for client in "$BUILD/inputlayer-client" "$BUILD_TSAN/inputlayer-client"; do
    for threads in 1 2 3; do
        [ "$client" = "$BUILD/inputlayer-client" ] && [ "$threads" = 1 ] && continue
        run "$client" "$threads" >"$TMP/many.out"
        cmp -s "$TMP/one.out" "$TMP/many.out" || {
            echo "rounds.sh: $client --threads $threads printed other rows than one thread" >&2
            diff "$TMP/one.out" "$TMP/many.out" | head -5 >&2
            exit 1
        }
    done
done
echo "rounds.sh: the same rows on 1, 2 and 3 threads, no data race"
