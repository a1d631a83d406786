/* The perf gate's headline fixtures that run an arm's own client or in-process benchmark
 * rather than its server (bench/README.md): `closure` (the whole `inputlayer-client
 * --local --script` process of the full transitive closure: wall time and peak RSS),
 * `first_read` (the first unbound read of a maintained recursive view and the first write
 * after it), `reach_bound_inproc` and `hot_reach_inproc` (warm in-process reads through
 * inputlayer-inproc). Every answer is checked against one computed here from the
 * generated graph. */
#ifndef IL_BENCH_GATE_HEADLINE_H
#define IL_BENCH_GATE_HEADLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "gate_fixtures.h"
#include "gate_report.h"
#include "gen_graph.h"

/* One fixture's run on one arm, in its own scratch directory. */
typedef struct gh_run {
    const gf_context *ctx;
    const gf_arm *arm;
    const char *dir;
    gr_result *res;
} gh_run;

void gh_closure(const gh_run *r);
void gh_first_read(const gh_run *r);
/* `maintained_write`: with `n(count<X>) <- reach(X, Y)` maintained by a first read, one
 * inserted edge followed by `?n(C)`, timed together (in process). */
void gh_maintained_write(const gh_run *r);
void gh_reach_bound_inproc(const gh_run *r);
void gh_hot_reach_inproc(const gh_run *r);

/* The number of pairs (x, y) with y reachable from x in one or more steps over the edges
 * (the full closure's size), the nodes reachable from `from`, and the nodes that reach
 * `to` or are `to` (the rows `?reach(X, t)` gains when an edge (to, t) to a new node t is
 * added). False when memory runs out. */
typedef struct gh_closure_counts {
    long pairs, from, into;
} gh_closure_counts;
bool gh_count_closure(const gg_edge *edges, size_t n, int64_t from, int64_t to,
                      gh_closure_counts *out);

#endif
