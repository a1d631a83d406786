/* HNSW (hierarchical navigable small world) graphs over f32 vectors, in the style of
 * hnswlib: a node per vector, M links per node on the upper layers and 2M on the bottom
 * one, neighbours chosen by the diversity heuristic, a greedy descent from the top layer
 * and a beam search (ef) on the bottom one.
 *
 * Nodes are added one at a time (no rebuild) and removed by a tombstone: a removed node
 * still routes searches but is never returned; adding the same (key, vector) again
 * revives it. Each node carries two values of its caller's choosing, the vector (an
 * interned f32 vector value, which stays valid for the life of the process) and a key
 * (the tuple's id). Searches navigate with the fast SIMD kernels (exec/vecdist.h) over
 * the graph's own bf16 copies of the vectors (half the memory of f32, which is what a
 * search of a large graph waits for) and report the exact distances of the vector
 * builtins (cosine, euclidean, manhattan, and the negated dot product for `dot`) from
 * the f32 vectors, so a distance equals what `cosine(V, Q)` gives.
 *
 * Revisions: every change is stamped, a node with the change that added it and a
 * tombstone with the change that removed it, so that a search may ask for the graph as
 * it was at an earlier revision (hnsw_now, hnsw_search_at): only the nodes present then
 * are returned, while every node, older or newer, still routes the walk.
 *
 * Threads: the changes (hnsw_add, hnsw_remove) and the searches of the latest state
 * (hnsw_search) come from one thread at a time (the engine's serialized statements).
 * Searches at a revision (hnsw_search_at) may run on any threads beside them: each holds
 * the graph's reader lock for one search, each change its writer lock for one node, so
 * a reader waits at most one node's insert and a change at most one search (the lock
 * prefers writers). A graph is counted: hnsw_ref takes a reference, hnsw_free drops one
 * and frees the graph with the last. */
#ifndef IL_EXEC_HNSW_H
#define IL_EXEC_HNSW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

typedef enum hnsw_metric {
    HNSW_COSINE,
    HNSW_EUCLIDEAN,
    HNSW_DOT,
    HNSW_MANHATTAN,
} hnsw_metric;

typedef struct hnsw_params {
    hnsw_metric metric;
    uint32_t m;               /* links per node on the upper layers (>= 2) */
    uint32_t ef_construction; /* beam width while inserting */
    uint64_t seed;            /* the level generator's, for reproducible graphs */
} hnsw_params;

typedef struct hnsw hnsw;

/* A revision of a graph, as a search at it needs it (hnsw_now). */
typedef struct hnsw_rev {
    uint64_t stamp; /* the last change it includes */
    size_t live;    /* the nodes present at it */
} hnsw_rev;

/* One search result. */
typedef struct hnsw_hit {
    val_t key, vec;
    double dist; /* the builtin's exact distance */
} hnsw_hit;

/* A metric by name (cosine, euclidean or l2, dot, manhattan or l1); false when unknown. */
bool hnsw_metric_parse(const char *name, hnsw_metric *out);
const char *hnsw_metric_name(hnsw_metric m);

hnsw *hnsw_new(const hnsw_params *p);
/* Takes a reference (any thread holding one); hnsw_free drops one (any thread) and frees
 * the graph with the last. */
void hnsw_ref(hnsw *h);
void hnsw_free(hnsw *h);

/* Adds (key, vec); vec must be an f32 vector of the graph's dimension (fixed by the first
 * vector added) with finite elements. Returns false, adding nothing, otherwise. Adding
 * a pair that is present does nothing; adding one that was removed revives it. */
bool hnsw_add(hnsw *h, val_t key, val_t vec);
/* Tombstones (key, vec); false when it is not present. */
bool hnsw_remove(hnsw *h, val_t key, val_t vec);

/* The k nearest live nodes to q (an f32 vector of the graph's dimension), nearest
 * first, ties by key; `ef` is the beam width (raised to k). `exact` scans every live
 * node instead of the graph. Returns how many were written to out (at most k; 0 when q
 * does not fit). */
size_t hnsw_search(const hnsw *h, val_t q, uint32_t k, uint32_t ef, bool exact, hnsw_hit *out);

/* The graph's latest revision (on the changes' thread). */
hnsw_rev hnsw_now(const hnsw *h);
/* hnsw_search as of revision `at`: the k nearest of the nodes present then (added at or
 * before it and not removed at or before it), however the graph changed since. Any
 * thread, beside the changes and other searches. */
size_t hnsw_search_at(const hnsw *h, const hnsw_rev *at, val_t q, uint32_t k, uint32_t ef,
                      bool exact, hnsw_hit *out);

uint32_t hnsw_dim(const hnsw *h);      /* 0 until the first vector */
size_t hnsw_live(const hnsw *h);       /* nodes not removed */
size_t hnsw_tombstones(const hnsw *h); /* removed nodes still in the graph */
size_t hnsw_bytes(const hnsw *h);      /* memory held by nodes and links */

#endif
