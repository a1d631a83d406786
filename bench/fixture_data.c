/* The dataset of the delta fixtures; see fixture_data.h. */
#include "fixture_data.h"

#include <stdlib.h>

/* From the fixture definitions. */
enum { DELTA_NODES = 2500, DELTA_EDGES = 10000, DELTA_SEED = 42, PROBE_BASE = 2501 };

int64_t fx_probe_node(long k) {
    return PROBE_BASE + 2 * (int64_t)k;
}

gg_edge *fx_delta_graph(long probes, size_t *n) {
    gg_edge *random = gg_random_graph(DELTA_NODES, DELTA_EDGES, DELTA_SEED);
    if (!random) return NULL;
    *n = DELTA_EDGES + (size_t)probes;
    gg_edge *edges = realloc(random, *n * sizeof *edges);
    if (!edges) {
        free(random);
        return NULL;
    }
    /* Probe nodes lie above the random graph's, so the array stays sorted. */
    for (long k = 0; k < probes; k++)
        edges[DELTA_EDGES + k] = (gg_edge){fx_probe_node(k), fx_probe_node(k) + 1};
    return edges;
}

size_t fx_first_edge_from(const gg_edge *edges, size_t n, int64_t node) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (edges[mid].src < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

fx_row *fx_two_hop_rows(const gg_edge *edges, size_t n, size_t *nrows) {
    return fx_two_hop_rows_from(edges, n, FX_DELTA_SOURCE, nrows);
}

bool fx_has_edge(const gg_edge *edges, size_t n, int64_t src, int64_t dst) {
    for (size_t i = fx_first_edge_from(edges, n, src); i < n && edges[i].src == src; i++)
        if (edges[i].dst == dst) return true;
    return false;
}

fx_row *fx_two_hop_rows_from(const gg_edge *edges, size_t n, int64_t source, size_t *nrows) {
    size_t cap = 64;
    fx_row *rows = malloc(cap * sizeof *rows);
    *nrows = 0;
    for (size_t i = fx_first_edge_from(edges, n, source); rows && i < n && edges[i].src == source;
         i++) {
        for (size_t j = fx_first_edge_from(edges, n, edges[i].dst);
             j < n && edges[j].src == edges[i].dst; j++) {
            if (*nrows == cap) {
                fx_row *bigger = realloc(rows, (cap *= 2) * sizeof *rows);
                if (!bigger) {
                    free(rows);
                    return NULL;
                }
                rows = bigger;
            }
            rows[(*nrows)++] = (fx_row){source, edges[j].dst};
        }
    }
    if (rows) *nrows = fx_rows_sort_unique(rows, *nrows);
    return rows;
}
