/* The check of the perf gate's `why` fixture (bench/README.md): the proof trees of a
 * `.why ?two_hop(..)` or `.why ?reach(..)` answer, against the generated graph. */
#ifndef IL_BENCH_GATE_WHY_H
#define IL_BENCH_GATE_WHY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "gen_graph.h"

/* Whether `trees` (the result's proof_trees) holds one DAG per row of `rows`, in order,
 * each proving its row: every derivation (a rule node or an alternative) an instance of a
 * clause of
 *   two_hop(X, Z) <- edge(X, Y), edge(Y, Z)
 *   reach(X, Y) <- edge(X, Y)          reach(X, Z) <- reach(X, Y), edge(Y, Z)
 * whose children are facts of the graph (edges, sorted by source) or conclusions proved in
 * turn. False with the first fault in why. */
bool gw_check_proofs(const json_t *trees, const json_t *rows, const gg_edge *edges, size_t n,
                     char *why, size_t why_len);

#endif
