/* The background load of the interference fixture (docs/performance.md 3.4 in the
 * specification notes): while the probe agent's deltas are timed, one connection loops
 * the long join `?two_hop(X, Z), edge(Z, X)` (every answer checked against the rows
 * computed from the loaded edges, each timed: long_request_us) and a slow consumer sends
 * 8 large reads (`?two_hop(X, Z)`) and never reads their results. */
#ifndef IL_BENCH_FIXTURE_BACKGROUND_H
#define IL_BENCH_FIXTURE_BACKGROUND_H

#include <stddef.h>
#include <stdint.h>

#include "fixture_session.h"
#include "gen_graph.h"

typedef struct fx_background fx_background;

/* Computes the long join's answer from the sorted edges (which the fixture's writes must
 * not change), opens both connections to graph `perf` and starts the looping thread.
 * NULL with the reason in why. */
fx_background *fx_background_start(const fx_target *t, const gg_edge *edges, size_t n, char *why,
                                   size_t why_len);

/* Stops the loop (after the request in flight), closes both connections, and returns
 * FX_OK or the loop's failure (FX_INVALID: a wrong answer) with the reason in why. The
 * latencies in ns go to *samples (malloc'ed, the caller frees) and their count to *n. */
int fx_background_stop(fx_background *bg, uint64_t **samples, size_t *n, char *why, size_t why_len);

#endif
