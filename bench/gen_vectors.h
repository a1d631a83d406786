/* The vector benchmark's dataset: random f32 vectors drawn with SplitMix64 (components
 * uniform in [-1, 1]: next / 2^64 * 2 - 1), and their IQL bulk-insert statements
 * `+rel[(1, [..]), (2, [..]), ...]` with ids from 1. */
#ifndef IL_BENCH_GEN_VECTORS_H
#define IL_BENCH_GEN_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#include "gen_graph.h"

/* Vectors per bulk-insert statement (a 128-d vector is about 1.5 KB of text). */
#define GV_CHUNK 500

/* n vectors of dim components, row after row, drawn from one generator seeded with
 * `seed`. Each component is the f32 nearest to next / 2^64 * 2 - 1; it prints with %.9g
 * and reads back to the same f32, so the engine stores exactly these values. malloc'ed;
 * NULL on OOM. */
float *gv_random_vectors(size_t n, uint32_t dim, uint64_t seed);

/* Writes `[c0, c1, ...]` (each %.9g) into buf; returns the length, or -1 when cap is too
 * small. */
int gv_format_vector(char *buf, size_t cap, const float *v, uint32_t dim);

/* Calls fn with `+rel[(id, [..]), ...]` statements of at most `chunk` vectors, ids 1..n. */
int gv_emit_vectors(const char *rel, const float *v, size_t n, uint32_t dim, size_t chunk,
                    gg_stmt_fn fn, void *ctx);

#endif
