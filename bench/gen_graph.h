/* The benchmark datasets of docs/performance.md 3.2 (shared/docs): the SplitMix64
 * seed-42 random graph and the "hot chains" graph, as arrays of (src, dst) edges, and
 * their IQL bulk-insert statements (`+edge[(s, d), ...]`, `+label[(400i, "hot"), ...]`).
 * Linked into the benchmark programs; identical output to shared/tools/gen-graph.py. */
#ifndef IL_BENCH_GEN_GRAPH_H
#define IL_BENCH_GEN_GRAPH_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

typedef struct gg_edge {
    int64_t src, dst;
} gg_edge;

/* The next SplitMix64 output of the generator whose state is *state (the seed to start). */
uint64_t gg_splitmix64(uint64_t *state);

/* Tuples per bulk-insert statement. */
#define GG_CHUNK 5000

/* The random graph: exactly `edges` distinct directed edges over nodes 1..nodes, no
 * self-loops, sorted by (src, dst), drawn with SplitMix64 from `seed` (42 in the
 * benchmarks). Returns a malloc'ed array of `edges` edges, or NULL when the graph cannot
 * exist (edges > nodes * (nodes - 1)) or memory runs out. */
gg_edge *gg_random_graph(uint64_t nodes, size_t edges, uint64_t seed);

/* Hot chains for `edges` requested edges: chains = ceil(edges / 3); chain c has nodes
 * 4c..4c+3 and edges (4c,4c+1), (4c+1,4c+2), (4c+2,4c+3). */
size_t gg_chain_count(size_t edges);
/* The number of hot chain heads: ceil(chains / 100); hot head i is node 400 * i. */
size_t gg_hot_count(size_t chains);
/* Returns a malloc'ed array of 3 * gg_chain_count(edges) edges (sorted), NULL on OOM;
 * *n receives that count. */
gg_edge *gg_chains(size_t edges, size_t *n);

/* Receives one statement (NUL-terminated, `len` bytes, no newline); returns 0 to go on,
 * nonzero to stop (then returned by the emitter). */
typedef int (*gg_stmt_fn)(void *ctx, const char *stmt, size_t len);

/* Calls fn with `+rel[(s, d), ...]` statements of at most `chunk` tuples each, in the
 * order of the array. Returns 0, fn's nonzero value, or -1 on OOM. */
int gg_emit_edges(const char *rel, const gg_edge *edges, size_t n, size_t chunk, gg_stmt_fn fn,
                  void *ctx);
/* Calls fn with `+rel[(0, "label"), (400, "label"), ...]`: the `hot` heads 400 * i,
 * at most `chunk` tuples per statement. */
int gg_emit_hot_labels(const char *rel, const char *label, size_t hot, size_t chunk, gg_stmt_fn fn,
                       void *ctx);

/* A gg_stmt_fn that writes the statement and a newline to the FILE * ctx. */
int gg_write_stmt(void *ctx, const char *stmt, size_t len);

#endif
