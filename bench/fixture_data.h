/* The dataset of the delta fixtures (delta_single, delta_fanout, delta_first of
 * docs/performance.md 3.4 in ../shared/docs) and the answer they start from: the seed-42
 * random graph of 2,500 nodes and 10,000 edges plus probe edges (P_k, P_k + 1), P_k =
 * 2501 + 2k, above the random graph's nodes; its `two_hop(1, Z)` rows (and those of
 * other sources, for the sessions fixture). */
#ifndef IL_BENCH_FIXTURE_DATA_H
#define IL_BENCH_FIXTURE_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fixture_rows.h"
#include "gen_graph.h"

/* The node the delta fixtures' queries start from: `?two_hop(1, Z)`, `+edge(1, P_k)`. */
enum { FX_DELTA_SOURCE = 1 };

/* P_k. */
int64_t fx_probe_node(long k);

/* The random graph plus `probes` probe edges, sorted; *n receives the edge count. NULL on
 * OOM. */
gg_edge *fx_delta_graph(long probes, size_t *n);

/* two_hop(FX_DELTA_SOURCE, Z) of the sorted edges: [1, Z] rows, sorted, without repeats.
 * NULL on OOM. */
fx_row *fx_two_hop_rows(const gg_edge *edges, size_t n, size_t *nrows);

/* The same from another source node: [source, Z] rows (the sessions fixture's keys). */
fx_row *fx_two_hop_rows_from(const gg_edge *edges, size_t n, int64_t source, size_t *nrows);

/* The index of the first edge with src >= node in the sorted edges (n when none). */
size_t fx_first_edge_from(const gg_edge *edges, size_t n, int64_t node);

/* Whether the sorted edges hold (src, dst). */
bool fx_has_edge(const gg_edge *edges, size_t n, int64_t src, int64_t dst);

#endif
