/* B+-trees of fixed-width word entries: the storage under relations (rel.c), with
 * snapshots by path copying.
 *
 * An entry is `width` words stored inline in a leaf; its first `klen` words are the key
 * (entries are unique by key, ordered by raw unsigned word order, lexicographically);
 * any words after the key are payload (a relation's derivation count). Inner nodes hold
 * child pointers and klen-word separators. Nodes come from a bt_pool that the caller
 * owns and that may be shared by several trees with the same node size; freeing the pool
 * frees every tree in it at once.
 *
 * Snapshots. Nodes are self-contained (no parent pointers, no sibling links: a scan
 * walks a bt_path of the inner nodes above its leaf), so a copy of a tree's root (a
 * btree struct) is a snapshot of it once the pool is told (bt_pool_pin). Every node
 * records the pool version it was made in; pinning records the current version as the
 * snapshot's tag and moves the pool to the next version. From then on the writer copies
 * each node older than the newest live snapshot before it changes it (and the nodes
 * above it, up to the root: path copying), and retires the original instead of freeing
 * it. A node made after the newest live snapshot is changed in place, so a writer with
 * no snapshot outstanding pays one compare per node it changes. A retired node is freed
 * once no live snapshot can reach it (none with born <= tag < died), when the last one
 * that could is unpinned.
 *
 * Threads. One writer thread owns the trees and the pool: it changes trees, allocates
 * and frees nodes, pins, clears and destroys. Any number of threads may read a pinned
 * copy of a tree (bt_find, bt_seek, bt_first, bt_next_leaf on it) without a lock while
 * the writer works: the writer never changes a node a live snapshot can reach. Handing
 * the copy to another thread must itself be a synchronizing operation (a mutex, a queue,
 * an atomic store with release). bt_pool_unpin and bt_pool_unref may run on any thread
 * (they take the pool's small mutex; nodes they free go back to the writer through an
 * atomic list). Without snapshots this is the old contract: any change to a tree
 * invalidates pointers into its leaves. */
#ifndef IL_EXEC_BTREE_H
#define IL_EXEC_BTREE_H

#include <pthread.h>
#include <stdatomic.h>
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
    uint64_t ver; /* the pool version it was made in (64 bits: never wraps) */
} bt_node;

/* A leaf: n entries of `width` words, strictly ascending by key. Never empty while
 * reachable from a root. */
typedef struct bt_leaf {
    bt_node h;
    val_t e[]; /* entries, lcap * width words */
} bt_leaf;

/* An inner node is the header, then icap child pointers, then icap - 1 separators of
 * klen words (see bt_inner_keys). Separator i bounds the children: every key under
 * child i is < separator i <= every key under child i + 1. */

/* A node the writer replaced while a snapshot could still reach it. */
typedef struct bt_retired {
    void *node;
    uint64_t born, died; /* visible to the snapshots tagged born <= tag < died */
} bt_retired;

/* Node memory for the trees of one relation: chunks carved into equal nodes, with a
 * free list, and the bookkeeping of the snapshots that share its nodes. */
typedef struct bt_chunk bt_chunk;
typedef struct bt_pool {
    size_t node_bytes;    /* size of every node, a multiple of 64 */
    void *free;           /* freed nodes, linked through their first word (writer) */
    char *cur, *end;      /* unused tail of the newest chunk, carved node by node */
    bt_chunk *chunks;     /* every chunk, newest first */
    _Atomic size_t bytes; /* sum of the chunk sizes: what the pool holds from malloc */
    size_t nodes;         /* nodes carved so far (live or on the free list) */
    uint64_t ver;         /* writer: the version stamped on nodes made now; >= 1 */
    uint64_t below;       /* writer: shared_below as of the change in progress */
    /* Nodes with a version below this may be reachable from a live snapshot (the newest
     * live tag + 1); 0 when none is live. Lowered by unpins on any thread (release),
     * read by the writer at the start of each change (acquire). */
    _Atomic uint64_t shared_below;
    _Atomic(void *) reclaimed; /* nodes freed by unpins, for the writer's free list */
    _Atomic uint32_t refs;     /* bt_pool_new's owner plus one per pin */
    pthread_mutex_t mu;        /* guards the two arrays below */
    uint64_t *live;            /* tags of the live snapshots, ascending (each unique) */
    size_t nlive, live_cap;
    bt_retired *retired; /* nodes waiting for the snapshots that can reach them */
    size_t nretired, retired_cap;
    /* Bytes only snapshots keep (under mu): the retired nodes, and all of the pool once
       its owner left it while pinned (bt_pool_leave); counted in bt_snapshot_bytes. */
    size_t held;
    bool left;
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
/* Frees every chunk and what the pool holds; every tree using it must be bt_reset (or
 * dropped), and no snapshot may be live. */
void bt_pool_destroy(bt_pool *p);
/* Frees every chunk and keeps the pool usable (writer; only while !bt_pool_held). */
void bt_pool_clear(bt_pool *p);
/* The same, but a small first chunk (at most 4 KiB) stays, its room for the next nodes:
 * for a pool emptied to be filled again soon. */
void bt_pool_recycle(bt_pool *p);

/* A pool on the heap with one reference, its owner's (the writer). The last
 * bt_pool_unref (the owner's or a snapshot's unpin, on any thread) destroys it. */
bt_pool *bt_pool_new(size_t node_bytes);
void bt_pool_unref(bt_pool *p);
/* The owner's bt_pool_unref (writer): a pool still pinned is from then on memory that
 * only its snapshots keep, and counted so. */
void bt_pool_leave(bt_pool *p);
/* Bytes of node memory in the process that only snapshots keep: nodes the writers
 * replaced while a snapshot could reach them, and pools left while pinned (any thread;
 * the bound on old versions, docs/engine.md "Concurrency"). */
size_t bt_snapshot_bytes(void);
/* Writer: registers a snapshot of the trees as they are now (the caller copies their
 * btree structs) and takes a reference for it; returns its tag. */
uint64_t bt_pool_pin(bt_pool *p);
/* Any thread: ends the snapshot `tag` (no reader may use its copies any more), frees the
 * retired nodes no live snapshot can reach any more, and drops its reference (which may
 * destroy a pool its owner already left). */
void bt_pool_unpin(bt_pool *p, uint64_t tag);
/* Whether a snapshot may share nodes with the trees (writer). */
static inline bool bt_pool_pinned(bt_pool *p) {
    return atomic_load_explicit(&p->shared_below, memory_order_acquire) != 0;
}
/* Whether a snapshot still holds the pool: pinned, or its unpin not finished (writer;
 * bt_pool_clear only when not). */
static inline bool bt_pool_held(bt_pool *p) {
    return atomic_load_explicit(&p->refs, memory_order_acquire) > 1;
}
/* Bytes the pool holds from malloc (any thread; a snapshot's may lag the writer). */
static inline size_t bt_pool_bytes(const bt_pool *p) {
    return atomic_load_explicit(&p->bytes, memory_order_relaxed);
}
/* Nodes retired and still reachable from a live snapshot, for tests and statistics. */
size_t bt_pool_retired(bt_pool *p);

/* node_bytes must be >= bt_node_bytes(width, klen) and match the pool's. */
void bt_init(btree *t, uint32_t width, uint32_t klen, size_t node_bytes);
/* Forgets every node (after the pool was destroyed, or to drop the tree wholesale). */
void bt_reset(btree *t);

/* The entry whose key equals key[0..klen), or NULL. Read only: write through
 * bt_update's slot instead. */
val_t *bt_find(const btree *t, const val_t *key);
/* The entry with this key in a leaf the writer may change (its path is copied first if a
 * snapshot shares it), or NULL. For changing the payload words. */
val_t *bt_update(btree *t, bt_pool *p, const val_t *key);
/* Inserts entry[0..width) unless its key is present. Returns the entry's slot (the
 * existing one when *added is false, read only as for bt_find), valid until the tree
 * changes. */
val_t *bt_insert(btree *t, bt_pool *p, const val_t *entry, bool *added);
/* Removes the entry with this key; false when absent. */
bool bt_delete(btree *t, bt_pool *p, const val_t *key);

/* The inner nodes above a leaf and the child taken in each, root first, so that a scan
 * can step to the next leaf. A seek does not record it (that cost point lookups more than
 * it saves the ranges that leave their first leaf): a path left unknown (valid false) is
 * found again from the leaf's last key by the first step (one descent); in a tree higher
 * than BT_PATH_MAX + 1 levels every step is a descent. */
/* Overridable (-DBT_PATH_MAX=1) to test the stepping of trees higher than it. */
#ifndef BT_PATH_MAX
#define BT_PATH_MAX 20
#endif
typedef struct bt_path {
    const bt_node *node[BT_PATH_MAX];
    uint16_t at[BT_PATH_MAX];
    uint8_t depth; /* inner levels recorded */
    bool valid;
} bt_path;

/* The first entry whose first np words are >= prefix[0..np) (np <= klen): returns its
 * leaf and sets *pos, or returns NULL when there is none. */
const bt_leaf *bt_seek(const btree *t, const val_t *prefix, uint32_t np, uint32_t *pos);
/* The leftmost leaf, with its path when path is not NULL. */
const bt_leaf *bt_first(const btree *t, bt_path *path);
/* The leaf after l (reached through path, which is updated), or NULL after the last. */
const bt_leaf *bt_next_leaf(const btree *t, const bt_leaf *l, bt_path *path);

static inline const bt_node *bt_child(const bt_node *n, uint32_t i) {
    return ((const bt_node *const *)(n + 1))[i];
}
/* bt_next_leaf with its common case inline: the next child of the same parent (a scan
 * takes this step once a leaf, and the call would cost as much as the step). */
static inline const bt_leaf *bt_next_leaf_fast(const btree *t, const bt_leaf *l, bt_path *path) {
    if (path->valid && path->depth) {
        uint32_t d = path->depth - 1u;
        const bt_node *parent = path->node[d];
        uint32_t i = path->at[d] + 1u;
        if (i < parent->n) {
            path->at[d] = (uint16_t)i;
            return (const bt_leaf *)bt_child(parent, i);
        }
    }
    return bt_next_leaf(t, l, path);
}
/* The leaf a step from a known path will reach when it is under the same parent, for
 * prefetching; NULL otherwise. */
static inline const bt_node *bt_path_peek(const bt_path *path) {
    if (!path->valid || !path->depth) return NULL;
    const bt_node *parent = path->node[path->depth - 1];
    uint32_t i = path->at[path->depth - 1] + 1u;
    return i < parent->n ? bt_child(parent, i) : NULL;
}

/* Builds an empty tree from n entries sorted strictly ascending by key, with full
 * leaves and inner nodes (bottom-up, no splits). */
void bt_build(btree *t, bt_pool *p, const val_t *entries, size_t n);
/* bt_build over entries held in nparts consecutive runs: parts[i] holds counts[i] of
 * them, the runs in order (a result computed in pieces is loaded without joining them). */
void bt_build_parts(btree *t, bt_pool *p, const val_t *const *parts, const size_t *counts,
                    size_t nparts);

/* Checks every structural invariant (order, separators, fill, levels, count);
 * for tests. Returns false and prints the first violation to stderr. */
bool bt_check(const btree *t);

static inline int bt_cmp(const val_t *a, const val_t *b, uint32_t k) {
    for (uint32_t i = 0; i < k; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

#endif
