/* B+-trees of fixed-width word entries: the storage under relations (rel.c).
 *
 * An entry is `width` words stored inline in a leaf; its first `klen` words are the key
 * (entries are unique by key, ordered by raw unsigned word order, lexicographically);
 * any words after the key are payload (a relation's derivation count). Inner nodes hold
 * child pointers and klen-word separators. Leaves are linked left to right so that a
 * scan is a pointer bump. Nodes come from a bt_pool that the caller owns and that may be
 * shared by several trees with the same node size; freeing the pool frees every tree in
 * it at once.
 *
 * Nodes are self-contained (no parent pointers, no back links), so a later version can
 * copy paths for snapshots. Not thread-safe. Any change to a tree invalidates pointers
 * into its leaves. */
#ifndef IL_EXEC_BTREE_H
#define IL_EXEC_BTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

/* Target node size. Measured with bench_rel on 1M 2-word tuples (256, 512, 768, 1024):
 * 1024 had the fastest random inserts, deletes and seeks (fewer levels miss the cache,
 * and a whole node is prefetched at once), the fastest scans and the least memory;
 * only ascending inserts were a little faster with 512. A tree with wide entries gets
 * bigger nodes so that a leaf holds at least BT_MIN_CAP entries and an inner node at
 * least BT_MIN_CAP children. */
#ifndef BT_NODE_BYTES
#define BT_NODE_BYTES 1024
#endif
#define BT_MIN_CAP 4
/* A tree of n entries with inner fan-out >= 2 is at most log2(n) + 1 high. */
#define BT_MAX_HEIGHT 64
/* Widest entry: REL_MAX_ARITY columns plus a count word. */
#define BT_MAX_WIDTH 65
/* Largest node any tree can ask for (a leaf of BT_MIN_CAP widest entries, rounded). */
#define BT_MAX_NODE_BYTES (BT_NODE_BYTES > 2112 ? BT_NODE_BYTES : 2112)

/* The header shared by leaves and inner nodes. */
typedef struct bt_node {
    uint16_t n;     /* leaf: entries; inner: children (always >= 2) */
    uint16_t level; /* 0 for a leaf; an inner node's children are at level - 1 */
    uint32_t pad_;
} bt_node;

/* A leaf: n entries of `width` words, strictly ascending by key. Never empty while
 * reachable from a root. */
typedef struct bt_leaf {
    bt_node h;
    struct bt_leaf *next; /* the leaf to the right, NULL for the last one */
    val_t e[];            /* entries, lcap * width words */
} bt_leaf;

/* An inner node is the header, then icap child pointers, then icap - 1 separators of
 * klen words (see bt_inner_keys). Separator i bounds the children: every key under
 * child i is < separator i <= every key under child i + 1. */

/* Node memory for the trees of one relation: chunks carved into equal nodes, with a
 * free list. */
typedef struct bt_chunk bt_chunk;
typedef struct bt_pool {
    size_t node_bytes; /* size of every node, a multiple of 64 */
    void *free;        /* freed nodes, linked through their first word */
    char *cur, *end;   /* unused tail of the newest chunk, carved node by node */
    bt_chunk *chunks;  /* every chunk, newest first */
    size_t bytes;      /* sum of the chunk sizes: what the pool holds from malloc */
    size_t nodes;      /* nodes carved so far (live or on the free list) */
} bt_pool;

typedef struct btree {
    bt_node *root;       /* NULL when the tree is empty */
    size_t count;        /* entries */
    uint32_t width;      /* words per entry, >= 1 */
    uint32_t klen;       /* key words, <= width */
    uint32_t lcap;       /* entries per leaf at most */
    uint32_t icap;       /* children per inner node at most */
    uint32_t lmin;       /* a non-root leaf below this is merged or refilled on delete */
    uint32_t imin;       /* the same for inner nodes; >= 2 */
    uint32_t height;     /* levels including the leaves; 0 when empty */
    uint32_t node_bytes; /* size of its nodes (the pool's), a multiple of 64 */
} btree;

/* The node size a tree of this shape needs from its pool. */
size_t bt_node_bytes(uint32_t width, uint32_t klen);

void bt_pool_init(bt_pool *p, size_t node_bytes);
/* Frees every chunk; every tree using the pool must be bt_reset (or dropped). */
void bt_pool_destroy(bt_pool *p);

/* node_bytes must be >= bt_node_bytes(width, klen) and match the pool's. */
void bt_init(btree *t, uint32_t width, uint32_t klen, size_t node_bytes);
/* Forgets every node (after the pool was destroyed, or to drop the tree wholesale). */
void bt_reset(btree *t);

/* The entry whose key equals key[0..klen), or NULL. */
val_t *bt_find(const btree *t, const val_t *key);
/* Inserts entry[0..width) unless its key is present. Returns the entry's slot (the
 * existing one when *added is false), valid until the tree changes. */
val_t *bt_insert(btree *t, bt_pool *p, const val_t *entry, bool *added);
/* Removes the entry with this key; false when absent. */
bool bt_delete(btree *t, bt_pool *p, const val_t *key);

/* The first entry whose first np words are >= prefix[0..np) (np <= klen): returns its
 * leaf and sets *pos, or returns NULL when there is none. */
const bt_leaf *bt_seek(const btree *t, const val_t *prefix, uint32_t np, uint32_t *pos);
const bt_leaf *bt_first(const btree *t);

/* Builds an empty tree from n entries sorted strictly ascending by key, with full
 * leaves and inner nodes (bottom-up, no splits). */
void bt_build(btree *t, bt_pool *p, const val_t *entries, size_t n);
/* bt_build over entries held in nparts consecutive runs: parts[i] holds counts[i] of
 * them, the runs in order (a result computed in pieces is loaded without joining them). */
void bt_build_parts(btree *t, bt_pool *p, const val_t *const *parts, const size_t *counts,
                    size_t nparts);

/* Checks every structural invariant (order, separators, fill, links, levels, count);
 * for tests. Returns false and prints the first violation to stderr. */
bool bt_check(const btree *t);

static inline int bt_cmp(const val_t *a, const val_t *b, uint32_t k) {
    for (uint32_t i = 0; i < k; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

#endif
