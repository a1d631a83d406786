/* B+-trees of fixed-width word entries (see btree.h): search, insert with uneven
 * "append" splits for sorted loads, delete with merge/borrow, bottom-up bulk build,
 * and the node pool. */
#include "exec/btree.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/meter.h"

#define WB sizeof(val_t) /* bytes per word */

/* ---- pool ---------------------------------------------------------------------- */

/* A chunk's header takes one cache line so that the nodes after it stay aligned. */
struct bt_chunk {
    bt_chunk *next; /* older chunk */
    size_t bytes;   /* the chunk's size */
    uint64_t meter; /* the meter that counted it (base/meter.h), 0 when none */
};
#define CHUNK_HDR 64
_Static_assert(sizeof(bt_chunk) <= CHUNK_HDR, "a chunk's header fits its cache line");
/* Chunks grow with the pool (half its size each time, so at most a third of it is
 * ever carved-but-unused) up to this many bytes. */
#define CHUNK_MAX (256 * 1024)
/* A recycled pool keeps its first chunk up to this size: relations emptied for every
 * write (a view's changes, a statement's delta) would otherwise free it and allocate it
 * again, each write, through the allocator's aligned path. */
#define CHUNK_KEEP_MAX 4096

/* The sum of every pool's `held`. */
static _Atomic size_t snapshot_bytes;

size_t bt_snapshot_bytes(void) {
    return atomic_load_explicit(&snapshot_bytes, memory_order_relaxed);
}

/* Under p->mu: the pool's share of snapshot_bytes becomes `held`. */
static void set_held(bt_pool *p, size_t held) {
    if (held >= p->held)
        atomic_fetch_add_explicit(&snapshot_bytes, held - p->held, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&snapshot_bytes, p->held - held, memory_order_relaxed);
    p->held = held;
}

void bt_pool_init(bt_pool *p, size_t node_bytes) {
    memset(p, 0, sizeof *p);
    p->node_bytes = node_bytes;
    p->ver = 1;
    atomic_init(&p->bytes, 0);
    atomic_init(&p->shared_below, 0);
    atomic_init(&p->reclaimed, NULL);
    atomic_init(&p->refs, 1);
    pthread_mutex_init(&p->mu, NULL);
}

/* Frees the chunks but `keep` (NULL, or the oldest chunk), which the next nodes fill. */
static void pool_empty(bt_pool *p, bt_chunk *keep) {
    bt_chunk *c = p->chunks;
    while (c) {
        bt_chunk *next = c->next;
        il_meter_release(c->meter, c->bytes);
        if (c != keep) free(c);
        c = next;
    }
    p->free = NULL;
    p->cur = p->end = NULL;
    p->chunks = keep;
    if (keep) {
        keep->next = NULL;
        keep->meter = 0; /* under the kept bound, counted by no statement */
        p->cur = (char *)keep + CHUNK_HDR;
        p->end = p->cur + (keep->bytes - CHUNK_HDR) / p->node_bytes * p->node_bytes;
    }
    atomic_store_explicit(&p->bytes, keep ? keep->bytes : 0, memory_order_relaxed);
    p->nodes = 0;
    p->nretired = 0;
    atomic_store_explicit(&p->reclaimed, NULL, memory_order_relaxed);
}

void bt_pool_clear(bt_pool *p) {
    pool_empty(p, NULL);
}

void bt_pool_recycle(bt_pool *p) {
    bt_chunk *oldest = p->chunks;
    while (oldest && oldest->next) oldest = oldest->next;
    pool_empty(p, oldest && oldest->bytes <= CHUNK_KEEP_MAX ? oldest : NULL);
}

void bt_pool_destroy(bt_pool *p) {
    set_held(p, 0);
    bt_pool_clear(p);
    free(p->live);
    free(p->retired);
    pthread_mutex_destroy(&p->mu);
}

bt_pool *bt_pool_new(size_t node_bytes) {
    bt_pool *p = malloc(sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory (relation node pool)\n");
        abort();
    }
    bt_pool_init(p, node_bytes);
    return p;
}

void bt_pool_unref(bt_pool *p) {
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
    bt_pool_destroy(p);
    free(p);
}

void bt_pool_leave(bt_pool *p) {
    if (bt_pool_held(p)) {
        pthread_mutex_lock(&p->mu);
        p->left = true;
        set_held(p, bt_pool_bytes(p));
        pthread_mutex_unlock(&p->mu);
    }
    bt_pool_unref(p);
}

static void *grow(void *a, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return a;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    a = realloc(a, nc * elem);
    if (!a) {
        fprintf(stderr, "out of memory (snapshot bookkeeping)\n");
        abort();
    }
    *cap = nc;
    return a;
}

/* Under mu: whether a live snapshot is tagged in [born, died). */
static bool seen_by_live(const bt_pool *p, uint64_t born, uint64_t died) {
    size_t lo = 0, hi = p->nlive;
    while (lo < hi) { /* the first live tag >= born */
        size_t mid = (lo + hi) / 2;
        if (p->live[mid] < born)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nlive && p->live[lo] < died;
}

static void publish_below(bt_pool *p) {
    uint64_t below = p->nlive ? p->live[p->nlive - 1] + 1 : 0;
    atomic_store_explicit(&p->shared_below, below, memory_order_release);
}

uint64_t bt_pool_pin(bt_pool *p) {
    pthread_mutex_lock(&p->mu);
    uint64_t tag = p->ver++;
    p->live = grow(p->live, &p->live_cap, p->nlive + 1, sizeof *p->live);
    p->live[p->nlive++] = tag; /* tags only grow: the array stays sorted */
    publish_below(p);
    pthread_mutex_unlock(&p->mu);
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return tag;
}

void bt_pool_unpin(bt_pool *p, uint64_t tag) {
    void *head = NULL, *tail = NULL;
    pthread_mutex_lock(&p->mu);
    size_t i = 0;
    while (i < p->nlive && p->live[i] != tag) i++;
    assert(i < p->nlive);
    if (i < p->nlive) {
        memmove(p->live + i, p->live + i + 1, (p->nlive - i - 1) * sizeof *p->live);
        p->nlive--;
    }
    publish_below(p);
    /* Collect what no live snapshot reaches any more into a chain for the writer. */
    for (size_t j = 0; j < p->nretired;) {
        bt_retired *rt = &p->retired[j];
        if (seen_by_live(p, rt->born, rt->died)) {
            j++;
            continue;
        }
        *(void **)rt->node = head;
        head = rt->node;
        if (!tail) tail = head;
        *rt = p->retired[--p->nretired];
        if (!p->left) set_held(p, p->held - p->node_bytes);
    }
    pthread_mutex_unlock(&p->mu);
    if (head) {
        void *old = atomic_load_explicit(&p->reclaimed, memory_order_relaxed);
        do *(void **)tail = old;
        while (!atomic_compare_exchange_weak_explicit(&p->reclaimed, &old, head,
                                                      memory_order_release, memory_order_relaxed));
    }
    bt_pool_unref(p);
}

size_t bt_pool_retired(bt_pool *p) {
    pthread_mutex_lock(&p->mu);
    size_t n = p->nretired;
    pthread_mutex_unlock(&p->mu);
    return n;
}

static void *pool_alloc(bt_pool *p) {
    if (!p->free && atomic_load_explicit(&p->reclaimed, memory_order_relaxed))
        p->free = atomic_exchange_explicit(&p->reclaimed, NULL, memory_order_acquire);
    if (p->free) {
        void *n = p->free;
        p->free = *(void **)n;
        return n;
    }
    if (p->cur == p->end) {
        size_t ns = p->node_bytes;
        size_t want = p->nodes / 2, max = CHUNK_MAX / ns;
        if (want < 1) want = 1;
        if (want > max) want = max > 0 ? max : 1;
        size_t bytes = CHUNK_HDR + want * ns;
        bt_chunk *c = aligned_alloc(64, bytes);
        if (!c) {
            fprintf(stderr, "out of memory (relation node chunk of %zu bytes)\n", bytes);
            abort();
        }
        c->next = p->chunks;
        c->bytes = bytes;
        /* the nodes of relations built while a statement evaluates are its working data */
        c->meter = il_meter_charge(bytes);
        p->chunks = c;
        atomic_store_explicit(&p->bytes,
                              atomic_load_explicit(&p->bytes, memory_order_relaxed) + bytes,
                              memory_order_relaxed);
        p->cur = (char *)c + CHUNK_HDR;
        p->end = p->cur + want * ns;
    }
    void *n = p->cur;
    p->cur += p->node_bytes;
    p->nodes++;
    return n;
}

static void pool_free(bt_pool *p, void *n) {
    *(void **)n = p->free;
    p->free = n;
}

/* A new node, stamped with the version being written. */
static void *node_new(bt_pool *p) {
    bt_node *n = pool_alloc(p);
    n->ver = p->ver;
    n->pad_ = 0;
    return n;
}

/* A node the writer unlinked: freed now unless a live snapshot may reach it. */
static void node_drop(bt_pool *p, void *node) {
    bt_node *n = node;
    if (n->ver >= p->below) {
        pool_free(p, n);
        return;
    }
    pthread_mutex_lock(&p->mu);
    /* p->below may be stale (an unpin since); ask the live tags themselves */
    if (seen_by_live(p, n->ver, p->ver)) {
        p->retired = grow(p->retired, &p->retired_cap, p->nretired + 1, sizeof *p->retired);
        p->retired[p->nretired++] = (bt_retired){n, n->ver, p->ver};
        set_held(p, p->held + p->node_bytes);
        n = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (n) pool_free(p, n);
}

/* Starts a change: which nodes a snapshot may share (see btree.h). */
static inline void begin_change(bt_pool *p) {
    p->below = atomic_load_explicit(&p->shared_below, memory_order_acquire);
}

/* ---- node layout --------------------------------------------------------------- */

static inline bt_node **in_child(const bt_node *n) {
    return (bt_node **)(n + 1);
}

static inline val_t *in_keys(const btree *t, const bt_node *n) {
    return (val_t *)((char *)(n + 1) + t->icap * sizeof(bt_node *));
}

static inline val_t *entry_at(const bt_leaf *l, uint32_t w, uint32_t i) {
    return (val_t *)l->e + (size_t)i * w;
}

static size_t round64(size_t x) {
    return (x + 63) & ~(size_t)63;
}

size_t bt_node_bytes(uint32_t width, uint32_t klen) {
    size_t leaf = sizeof(bt_leaf) + (size_t)BT_MIN_CAP * width * WB;
    size_t inner =
        sizeof(bt_node) + BT_MIN_CAP * sizeof(bt_node *) + (size_t)(BT_MIN_CAP - 1) * klen * WB;
    size_t ns = BT_NODE_BYTES;
    if (leaf > ns) ns = leaf;
    if (inner > ns) ns = inner;
    return round64(ns);
}

void bt_init(btree *t, uint32_t width, uint32_t klen, size_t node_bytes) {
    assert(width >= 1 && width <= BT_MAX_WIDTH && klen <= width);
    assert(node_bytes >= bt_node_bytes(width, klen) && node_bytes <= BT_MAX_NODE_BYTES);
    memset(t, 0, sizeof *t);
    t->width = width;
    t->klen = klen;
    t->node_bytes = (uint32_t)node_bytes;
    t->lcap = (uint32_t)((node_bytes - sizeof(bt_leaf)) / (width * WB));
    t->icap =
        (uint32_t)((node_bytes - sizeof(bt_node) + klen * WB) / (sizeof(bt_node *) + klen * WB));
    t->lmin = t->lcap / 3 > 1 ? t->lcap / 3 : 1;
    t->imin = t->icap / 3 > 2 ? t->icap / 3 : 2;
}

void bt_reset(btree *t) {
    t->root = NULL;
    t->count = 0;
    t->height = 0;
}

/* ---- search -------------------------------------------------------------------- */

/* Asks for every cache line of a node at once: a binary search would otherwise take
 * its misses one after the other (a 1024-byte node is 16 lines; a search touches 4-5).
 * Only for trees too big to stay in cache: in a small tree the 15 prefetches per level
 * cost more instructions (measured with callgrind: ~240 per seek) than they save. */
enum { PREFETCH_MIN_ENTRIES = 1u << 16 };

static inline void prefetch_node(const btree *t, const void *n) {
    if (t->count < PREFETCH_MIN_ENTRIES) return;
    for (uint32_t off = 64; off < t->node_bytes; off += 64)
        __builtin_prefetch((const char *)n + off);
}

/* a[0..k) < b[0..k) (or <= when le), lexicographically. The early exit is a well
 * predicted branch (the first words differ, nearly always), after which the answer is
 * one compare the caller can turn into a conditional move. */
static inline __attribute__((always_inline)) bool key_before(const val_t *a, const val_t *b,
                                                             uint32_t k, bool le) {
    for (uint32_t i = 0; i < k; i++)
        if (a[i] != b[i]) return a[i] < b[i];
    return le;
}

/* The number of entries among e[0..n) (stride words apart, ascending) whose first k
 * words are < key (or <= key when le). Branch-free halving: the loop always runs
 * log2(n) times and each step is an add, not a jump, because in a B+-tree node the
 * direction of each step is a coin toss the branch predictor would lose. */
static inline __attribute__((always_inline)) uint32_t
count_below_k(const val_t *e, uint32_t stride, uint32_t n, const val_t *key, uint32_t k, bool le) {
    if (n == 0) return 0;
    /* Ascending loads and appends land past the last entry at every level: settle that
     * with one well predicted compare. */
    if (key_before(e + (size_t)(n - 1) * stride, key, k, le)) return n;
    uint32_t base = 0;
    while (n > 1) {
        uint32_t half = n / 2;
        base += key_before(e + (size_t)(base + half) * stride, key, k, le) ? half : 0;
        n -= half;
    }
    return base + key_before(e + (size_t)base * stride, key, k, le);
}

/* Short keys (the usual arities) get a copy of the search with k fixed. */
static inline __attribute__((always_inline)) uint32_t
count_below(const val_t *e, uint32_t stride, uint32_t n, const val_t *key, uint32_t k, bool le) {
    switch (k) {
    case 1:
        return count_below_k(e, stride, n, key, 1, le);
    case 2:
        return count_below_k(e, stride, n, key, 2, le);
    case 3:
        return count_below_k(e, stride, n, key, 3, le);
    default:
        return count_below_k(e, stride, n, key, k, le);
    }
}

/* First entry in the leaf whose first k words are >= key. */
static inline uint32_t leaf_lb(const bt_leaf *l, uint32_t w, const val_t *key, uint32_t k) {
    return count_below(l->e, w, l->h.n, key, k, false);
}

/* The child that holds `key` if it is present: the number of separators <= key. */
static inline uint32_t inner_ub(const btree *t, const bt_node *n, const val_t *key) {
    return count_below(in_keys(t, n), t->klen, n->n - 1u, key, t->klen, true);
}

/* The leftmost child that may hold an entry whose first np words are >= prefix: the
 * number of separators whose first np words are < prefix. (For np < klen a separator
 * equal on the prefix does not exclude the child to its left.) */
static inline uint32_t inner_lb(const btree *t, const bt_node *n, const val_t *prefix,
                                uint32_t np) {
    return count_below(in_keys(t, n), t->klen, n->n - 1u, prefix, np, false);
}

/* The leaf that holds `key` if it is present, recording the inner nodes passed and the
 * child taken in each (for the splits and merges that follow). */
static bt_leaf *descend(const btree *t, const val_t *key, bt_node **path, uint32_t *idx,
                        uint32_t *depth) {
    uint32_t d = 0;
    bt_node *nd = t->root;
    for (;;) {
        prefetch_node(t, nd);
        if (!nd->level) break;
        uint32_t i = inner_ub(t, nd, key);
        path[d] = nd;
        idx[d++] = i;
        nd = in_child(nd)[i];
    }
    *depth = d;
    return (bt_leaf *)nd;
}

/* The node itself when the writer may change it, else a copy (stamped with the version
 * being written) that replaces it, the original retired. The caller relinks the copy. */
static bt_node *own(const btree *t, bt_pool *p, bt_node *n) {
    if (n->ver >= p->below) return n;
    bt_node *c = node_new(p);
    uint64_t ver = c->ver;
    size_t bytes = n->level ? t->node_bytes : sizeof(bt_leaf) + (size_t)n->n * t->width * WB;
    memcpy(c, n, bytes);
    c->ver = ver;
    node_drop(p, n);
    return c;
}

/* Makes the nodes of a descent (path[0..d) and the leaf) changeable, copying top down
 * those a snapshot may share: path copying. Returns the leaf to change. */
static bt_leaf *own_path(btree *t, bt_pool *p, bt_node **path, const uint32_t *idx, uint32_t d,
                         bt_leaf *l) {
    if (!p->below) return l;
    bt_node **slot = &t->root;
    for (uint32_t i = 0; i < d; i++) {
        path[i] = *slot = own(t, p, path[i]);
        slot = &in_child(path[i])[idx[i]];
    }
    return (bt_leaf *)(*slot = own(t, p, &l->h));
}

val_t *bt_find(const btree *t, const val_t *key) {
    const bt_node *n = t->root;
    if (!n) return NULL;
    for (;;) {
        prefetch_node(t, n);
        if (!n->level) break;
        n = in_child(n)[inner_ub(t, n, key)];
    }
    const bt_leaf *l = (const bt_leaf *)n;
    uint32_t pos = leaf_lb(l, t->width, key, t->klen);
    if (pos < l->h.n && bt_cmp(entry_at(l, t->width, pos), key, t->klen) == 0)
        return entry_at(l, t->width, pos);
    return NULL;
}

val_t *bt_update(btree *t, bt_pool *p, const val_t *key) {
    if (!t->root) return NULL;
    begin_change(p);
    bt_node *path[BT_MAX_HEIGHT];
    uint32_t idx[BT_MAX_HEIGHT];
    uint32_t d;
    bt_leaf *l = descend(t, key, path, idx, &d);
    uint32_t pos = leaf_lb(l, t->width, key, t->klen);
    if (pos == l->h.n || bt_cmp(entry_at(l, t->width, pos), key, t->klen) != 0) return NULL;
    l = own_path(t, p, path, idx, d, l);
    return entry_at(l, t->width, pos);
}

static const bt_leaf *leftmost(const bt_node *n) {
    while (n->level) n = in_child(n)[0];
    return (const bt_leaf *)n;
}

const bt_leaf *bt_seek(const btree *t, const val_t *prefix, uint32_t np, uint32_t *pos) {
    const bt_node *n = t->root;
    if (!n) return NULL;
    if (np > t->klen) np = t->klen;
    for (;;) {
        prefetch_node(t, n);
        if (!n->level) break;
        n = in_child(n)[np == t->klen ? inner_ub(t, n, prefix) : inner_lb(t, n, prefix, np)];
    }
    const bt_leaf *l = (const bt_leaf *)n;
    uint32_t p = leaf_lb(l, t->width, prefix, np);
    if (p == l->h.n) { /* everything here is below the prefix: the answer starts the next leaf */
        bt_path path = {.valid = false};
        l = bt_next_leaf(t, l, &path);
        p = 0;
    }
    *pos = p;
    return l;
}

const bt_leaf *bt_first(const btree *t, bt_path *path) {
    const bt_node *n = t->root;
    if (!n) return NULL;
    if (!path) return leftmost(n);
    uint32_t d = 0;
    path->valid = n->level <= BT_PATH_MAX;
    while (n->level) {
        if (d < BT_PATH_MAX) {
            path->node[d] = n;
            path->at[d++] = 0;
        }
        n = in_child(n)[0];
    }
    path->depth = (uint8_t)d;
    return (const bt_leaf *)n;
}

/* The next leaf through a known path: up to the nearest ancestor with a child to the
 * right of the one taken, then down its leftmost edge. */
static const bt_leaf *path_step(bt_path *pa) {
    uint32_t d = pa->depth;
    while (d > 0) {
        const bt_node *n = pa->node[d - 1];
        uint32_t i = pa->at[d - 1] + 1u;
        if (i < n->n) {
            pa->at[d - 1] = (uint16_t)i;
            const bt_node *c = in_child(n)[i];
            while (c->level) {
                pa->node[d] = c;
                pa->at[d++] = 0;
                c = in_child(c)[0];
            }
            return (const bt_leaf *)c;
        }
        d--;
    }
    pa->depth = 0; /* past the last leaf; stays there */
    return NULL;
}

const bt_leaf *bt_next_leaf(const btree *t, const bt_leaf *l, bt_path *pa) {
    if (pa->valid) return path_step(pa);
    /* Find l again by its last key (the tree has not changed), recording the path when it
     * fits, and the nearest subtree to the right of the descent otherwise. */
    const val_t *key = entry_at(l, t->width, l->h.n - 1u);
    const bt_node *n = t->root, *right = NULL;
    uint32_t d = 0;
    bool fits = n->level <= BT_PATH_MAX;
    while (n->level) {
        uint32_t i = inner_ub(t, n, key);
        if (fits) {
            pa->node[d] = n;
            pa->at[d++] = (uint16_t)i;
        } else if (i + 1u < n->n)
            right = in_child(n)[i + 1];
        n = in_child(n)[i];
    }
    assert(n == &l->h);
    if (fits) {
        pa->depth = (uint8_t)d;
        pa->valid = true;
        return path_step(pa);
    }
    return right ? leftmost(right) : NULL;
}

/* ---- insert -------------------------------------------------------------------- */

/* Inserts separator `sep` and its right child `child` into path[d - 1] next to the
 * child path[d - 1] descended through, splitting upward as needed. */
static void insert_up(btree *t, bt_pool *p, bt_node **path, const uint32_t *idx, uint32_t d,
                      const val_t *sep, bt_node *child) {
    uint32_t k = t->klen, icap = t->icap;
    bt_node *tmpc[BT_MAX_NODE_BYTES / sizeof(bt_node *) + 1];
    val_t tmpk[BT_MAX_NODE_BYTES / WB + BT_MAX_WIDTH];
    val_t sepbuf[BT_MAX_WIDTH];
    for (;;) {
        if (d == 0) { /* the root split: grow a level */
            bt_node *r = node_new(p);
            r->n = 2;
            r->level = (uint16_t)(t->root->level + 1);
            in_child(r)[0] = t->root;
            in_child(r)[1] = child;
            memcpy(in_keys(t, r), sep, k * WB);
            t->root = r;
            t->height++;
            return;
        }
        d--;
        bt_node *nd = path[d];
        uint32_t n = nd->n, ci = idx[d] + 1; /* new child's position; its separator's is ci - 1 */
        bt_node **c = in_child(nd);
        val_t *ks = in_keys(t, nd);
        if (n < icap) {
            memmove(c + ci + 1, c + ci, (n - ci) * sizeof *c);
            c[ci] = child;
            memmove(ks + (size_t)ci * k, ks + (size_t)(ci - 1) * k, (size_t)(n - ci) * k * WB);
            memcpy(ks + (size_t)(ci - 1) * k, sep, k * WB);
            nd->n++;
            return;
        }
        /* Full: lay out the n + 1 children and n separators, then cut. */
        memcpy(tmpc, c, ci * sizeof *c);
        tmpc[ci] = child;
        memcpy(tmpc + ci + 1, c + ci, (n - ci) * sizeof *c);
        memcpy(tmpk, ks, (size_t)(ci - 1) * k * WB);
        memcpy(tmpk + (size_t)(ci - 1) * k, sep, k * WB);
        memcpy(tmpk + (size_t)ci * k, ks + (size_t)(ci - 1) * k, (size_t)(n - ci) * k * WB);
        uint32_t total = n + 1;
        /* A split at the right (left) edge comes from ascending (descending) loads: keep
         * the old node full so such loads leave full nodes behind. */
        uint32_t m = ci == n ? icap - 1 : ci == 1 ? 2 : total / 2;
        bt_node *r = node_new(p);
        r->level = nd->level;
        r->n = (uint16_t)(total - m);
        memcpy(in_child(r), tmpc + m, (total - m) * sizeof *c);
        memcpy(in_keys(t, r), tmpk + (size_t)m * k, (size_t)(total - 1 - m) * k * WB);
        nd->n = (uint16_t)m;
        memcpy(c, tmpc, m * sizeof *c);
        memcpy(ks, tmpk, (size_t)(m - 1) * k * WB);
        memcpy(sepbuf, tmpk + (size_t)(m - 1) * k, k * WB);
        sep = sepbuf;
        child = r;
    }
}

val_t *bt_insert(btree *t, bt_pool *p, const val_t *entry, bool *added) {
    uint32_t w = t->width, k = t->klen;
    begin_change(p);
    if (!t->root) {
        bt_leaf *l = node_new(p);
        l->h.n = 1;
        l->h.level = 0;
        memcpy(l->e, entry, w * WB);
        t->root = &l->h;
        t->height = 1;
        t->count = 1;
        *added = true;
        return l->e;
    }
    bt_node *path[BT_MAX_HEIGHT];
    uint32_t idx[BT_MAX_HEIGHT];
    uint32_t d;
    bt_leaf *l = descend(t, entry, path, idx, &d);
    uint32_t n = l->h.n, pos = leaf_lb(l, w, entry, k);
    if (pos < n && bt_cmp(entry_at(l, w, pos), entry, k) == 0) {
        *added = false;
        return entry_at(l, w, pos);
    }
    *added = true;
    t->count++;
    l = own_path(t, p, path, idx, d, l);
    if (n < t->lcap) {
        memmove(entry_at(l, w, pos + 1), entry_at(l, w, pos), (size_t)(n - pos) * w * WB);
        memcpy(entry_at(l, w, pos), entry, w * WB);
        l->h.n++;
        return entry_at(l, w, pos);
    }
    /* Split the n + 1 entries into l (the first m) and a new right sibling r. Inserting
     * past the last (before the first) entry keeps l full (holding just the new one),
     * which is what makes ascending (descending) loads fill their leaves. */
    uint32_t m = pos == n ? n : pos == 0 ? 1 : (n + 1) / 2;
    bt_leaf *r = node_new(p);
    r->h.level = 0;
    r->h.n = (uint16_t)(n + 1 - m);
    val_t *slot;
    if (pos < m) {
        memcpy(r->e, entry_at(l, w, m - 1), (size_t)(n - m + 1) * w * WB);
        memmove(entry_at(l, w, pos + 1), entry_at(l, w, pos), (size_t)(m - 1 - pos) * w * WB);
        memcpy(entry_at(l, w, pos), entry, w * WB);
        slot = entry_at(l, w, pos);
    } else {
        memcpy(r->e, entry_at(l, w, m), (size_t)(pos - m) * w * WB);
        memcpy(entry_at(r, w, pos - m), entry, w * WB);
        memcpy(entry_at(r, w, pos - m + 1), entry_at(l, w, pos), (size_t)(n - pos) * w * WB);
        slot = entry_at(r, w, pos - m);
    }
    l->h.n = (uint16_t)m;
    insert_up(t, p, path, idx, d, r->e, &r->h);
    return slot;
}

/* ---- delete -------------------------------------------------------------------- */

/* Removes separator s and child s + 1 of an inner node. */
static void inner_remove(const btree *t, bt_node *nd, uint32_t s) {
    uint32_t k = t->klen, n = nd->n;
    bt_node **c = in_child(nd);
    val_t *ks = in_keys(t, nd);
    memmove(c + s + 1, c + s + 2, (n - s - 2) * sizeof *c);
    memmove(ks + (size_t)s * k, ks + (size_t)(s + 1) * k, (size_t)(n - 2 - s) * k * WB);
    nd->n--;
}

/* Rebalances path[d], an inner node that just lost a child, and its ancestors. */
static void fix_inner(btree *t, bt_pool *p, bt_node **path, const uint32_t *idx, uint32_t d) {
    uint32_t k = t->klen;
    for (;;) {
        bt_node *nd = path[d];
        if (d == 0) {
            while (t->root->level && t->root->n == 1) {
                bt_node *old = t->root;
                t->root = in_child(old)[0];
                node_drop(p, old);
                t->height--;
            }
            return;
        }
        if (nd->n >= t->imin) return;
        bt_node *g = path[d - 1];
        uint32_t s = idx[d - 1] > 0 ? idx[d - 1] - 1 : 0;
        /* path[d] is changeable already; the sibling is copied if a snapshot shares it */
        bt_node *L = in_child(g)[s] = own(t, p, in_child(g)[s]);
        bt_node *R = in_child(g)[s + 1];
        val_t *gk = in_keys(t, g) + (size_t)s * k;
        val_t *lk = in_keys(t, L), *rk = in_keys(t, R);
        uint32_t ln = L->n, rn = R->n;
        if (ln + rn <= t->icap) { /* merge R into L, pulling the separator down */
            memcpy(lk + (size_t)(ln - 1) * k, gk, k * WB);
            memcpy(lk + (size_t)ln * k, rk, (size_t)(rn - 1) * k * WB);
            memcpy(in_child(L) + ln, in_child(R), rn * sizeof(bt_node *));
            L->n = (uint16_t)(ln + rn);
            node_drop(p, R);
            inner_remove(t, g, s);
            d--;
            continue;
        }
        /* Borrow: share the children evenly, rotating through the separator. */
        R = in_child(g)[s + 1] = own(t, p, R);
        rk = in_keys(t, R);
        bt_node *tmpc[2 * (BT_MAX_NODE_BYTES / sizeof(bt_node *))];
        val_t tmpk[2 * (BT_MAX_NODE_BYTES / WB) + BT_MAX_WIDTH];
        uint32_t total = ln + rn, m = total / 2;
        memcpy(tmpc, in_child(L), ln * sizeof(bt_node *));
        memcpy(tmpc + ln, in_child(R), rn * sizeof(bt_node *));
        memcpy(tmpk, lk, (size_t)(ln - 1) * k * WB);
        memcpy(tmpk + (size_t)(ln - 1) * k, gk, k * WB);
        memcpy(tmpk + (size_t)ln * k, rk, (size_t)(rn - 1) * k * WB);
        memcpy(in_child(L), tmpc, m * sizeof(bt_node *));
        memcpy(lk, tmpk, (size_t)(m - 1) * k * WB);
        memcpy(gk, tmpk + (size_t)(m - 1) * k, k * WB);
        memcpy(in_child(R), tmpc + m, (total - m) * sizeof(bt_node *));
        memcpy(rk, tmpk + (size_t)m * k, (size_t)(total - m - 1) * k * WB);
        L->n = (uint16_t)m;
        R->n = (uint16_t)(total - m);
        return;
    }
}

bool bt_delete(btree *t, bt_pool *p, const val_t *key) {
    uint32_t w = t->width, k = t->klen;
    if (!t->root) return false;
    begin_change(p);
    bt_node *path[BT_MAX_HEIGHT];
    uint32_t idx[BT_MAX_HEIGHT];
    uint32_t d;
    bt_leaf *l = descend(t, key, path, idx, &d);
    uint32_t n = l->h.n, pos = leaf_lb(l, w, key, k);
    if (pos == n || bt_cmp(entry_at(l, w, pos), key, k) != 0) return false;
    l = own_path(t, p, path, idx, d, l);
    memmove(entry_at(l, w, pos), entry_at(l, w, pos + 1), (size_t)(n - pos - 1) * w * WB);
    l->h.n = (uint16_t)--n;
    t->count--;
    if (d == 0) { /* the root leaf */
        if (n == 0) {
            node_drop(p, l);
            bt_reset(t);
        }
        return true;
    }
    if (n >= t->lmin) return true;
    /* Under-full: merge with or borrow from a sibling under the same parent (an inner
     * node always has two children, so there is one). */
    bt_node *g = path[d - 1];
    uint32_t s = idx[d - 1] > 0 ? idx[d - 1] - 1 : 0;
    /* l is changeable already; the sibling is copied if a snapshot shares it */
    bt_leaf *L = (bt_leaf *)(in_child(g)[s] = own(t, p, in_child(g)[s]));
    bt_leaf *R = (bt_leaf *)in_child(g)[s + 1];
    uint32_t ln = L->h.n, rn = R->h.n;
    if (ln + rn <= t->lcap) {
        memcpy(entry_at(L, w, ln), R->e, (size_t)rn * w * WB);
        L->h.n = (uint16_t)(ln + rn);
        node_drop(p, R);
        inner_remove(t, g, s);
        fix_inner(t, p, path, idx, d - 1);
        return true;
    }
    R = (bt_leaf *)(in_child(g)[s + 1] = own(t, p, &R->h));
    uint32_t nl = (ln + rn) / 2;
    if (ln < nl) {
        uint32_t mv = nl - ln;
        memcpy(entry_at(L, w, ln), R->e, (size_t)mv * w * WB);
        memmove(R->e, entry_at(R, w, mv), (size_t)(rn - mv) * w * WB);
    } else {
        uint32_t mv = ln - nl;
        memmove(entry_at(R, w, mv), R->e, (size_t)rn * w * WB);
        memcpy(R->e, entry_at(L, w, nl), (size_t)mv * w * WB);
    }
    L->h.n = (uint16_t)nl;
    R->h.n = (uint16_t)(ln + rn - nl);
    memcpy(in_keys(t, g) + (size_t)s * k, R->e, k * WB);
    return true;
}

/* ---- bulk build ---------------------------------------------------------------- */

/* Size of node i of `nodes` holding `items` at `cap` each; only the last two are
 * evened out when the last would fall below `min`. */
static uint32_t build_share(size_t items, size_t nodes, uint32_t cap, uint32_t min, size_t i) {
    size_t last = items - (nodes - 1) * cap;
    if (nodes > 1 && last < min && i >= nodes - 2) {
        size_t pair = cap + last;
        return (uint32_t)(i == nodes - 1 ? pair / 2 : pair - pair / 2);
    }
    return (uint32_t)(i == nodes - 1 ? last : cap);
}

void bt_build(btree *t, bt_pool *p, const val_t *entries, size_t n) {
    bt_build_parts(t, p, &entries, &n, 1);
}

void bt_build_parts(btree *t, bt_pool *p, const val_t *const *parts, const size_t *counts,
                    size_t nparts) {
    assert(!t->root);
    size_t n = 0;
    for (size_t i = 0; i < nparts; i++) n += counts[i];
    if (n == 0) return;
    uint32_t w = t->width, k = t->klen;
    size_t cnt = (n + t->lcap - 1) / t->lcap;
    /* The nodes of the level being built and the smallest key under each. */
    bt_node **nodes = malloc(cnt * sizeof *nodes);
    const val_t **mins = malloc(cnt * sizeof *mins);
    if (!nodes || !mins) {
        fprintf(stderr, "out of memory (index build)\n");
        abort();
    }
    size_t part = 0, used = 0; /* the next entry: parts[part][used] */
    for (size_t i = 0; i < cnt; i++) {
        uint32_t m = build_share(n, cnt, t->lcap, t->lmin, i);
        bt_leaf *l = node_new(p);
        l->h.n = (uint16_t)m;
        l->h.level = 0;
        for (uint32_t filled = 0; filled < m;) {
            while (used == counts[part]) {
                part++;
                used = 0;
            }
            size_t take = counts[part] - used;
            if (take > m - filled) take = m - filled;
            memcpy(l->e + (size_t)filled * w, parts[part] + used * w, take * w * WB);
            filled += (uint32_t)take;
            used += take;
        }
        nodes[i] = &l->h;
        mins[i] = l->e;
    }
    uint16_t level = 0;
    while (cnt > 1) {
        size_t up = (cnt + t->icap - 1) / t->icap, j = 0;
        level++;
        for (size_t i = 0; i < up; i++) {
            uint32_t m = build_share(cnt, up, t->icap, t->imin, i);
            bt_node *nd = node_new(p);
            nd->n = (uint16_t)m;
            nd->level = level;
            val_t *ks = in_keys(t, nd);
            for (uint32_t c = 0; c < m; c++) {
                in_child(nd)[c] = nodes[j + c];
                if (c) memcpy(ks + (size_t)(c - 1) * k, mins[j + c], k * WB);
            }
            const val_t *lo = mins[j]; /* read before slot i (<= j) is overwritten */
            nodes[i] = nd;
            mins[i] = lo;
            j += m;
        }
        cnt = up;
    }
    t->root = nodes[0];
    t->height = level + 1u;
    t->count = n;
    free(nodes);
    free(mins);
}

/* ---- checking ------------------------------------------------------------------ */

typedef struct check_state {
    const btree *t;
    const bt_leaf *prev; /* the leaf visited last, whose next must be the current one */
    const bt_leaf *walk; /* the leaf reached by stepping from the first */
    bt_path path;        /* walk's */
    size_t count;        /* entries seen */
    bool ok;
} check_state;

static void fail(check_state *st, const char *what) {
    if (st->ok) fprintf(stderr, "bt_check: %s\n", what);
    st->ok = false;
}

/* Every key under n must be >= lo (if lo) and < hi (if hi). */
static void check_node(check_state *st, const bt_node *n, uint32_t level, const val_t *lo,
                       const val_t *hi, bool root) {
    const btree *t = st->t;
    uint32_t k = t->klen;
    if (!st->ok) return;
    if (n->level != level) return fail(st, "level mismatch");
    if (level == 0) {
        const bt_leaf *l = (const bt_leaf *)n;
        if (n->n < 1 || n->n > t->lcap) return fail(st, "leaf size");
        for (uint32_t i = 0; i < n->n; i++) {
            const val_t *e = entry_at(l, t->width, i);
            if (lo && bt_cmp(e, lo, k) < 0) return fail(st, "leaf entry below its bound");
            if (hi && bt_cmp(e, hi, k) >= 0) return fail(st, "leaf entry above its bound");
            if (i && bt_cmp(entry_at(l, t->width, i - 1), e, k) >= 0)
                return fail(st, "leaf entries out of order");
        }
        /* the stepping a scan does (by path, and by key from an unknown path) */
        if (st->prev) st->walk = bt_next_leaf(t, st->walk, &st->path);
        if (st->walk != l) return fail(st, st->prev ? "next leaf" : "first leaf");
        if (st->prev) {
            bt_path fresh = {.valid = false};
            if (bt_next_leaf(t, st->prev, &fresh) != l) return fail(st, "next leaf by key");
        }
        st->prev = l;
        st->count += n->n;
        return;
    }
    if (n->n < 2 || n->n > t->icap) return fail(st, root ? "root size" : "inner size");
    const val_t *ks = in_keys(t, n);
    for (uint32_t i = 0; i + 1 < n->n; i++) {
        const val_t *s = ks + (size_t)i * k;
        if (lo && bt_cmp(s, lo, k) < 0) return fail(st, "separator below its bound");
        if (hi && bt_cmp(s, hi, k) >= 0) return fail(st, "separator above its bound");
        if (i && bt_cmp(ks + (size_t)(i - 1) * k, s, k) >= 0)
            return fail(st, "separators out of order");
    }
    for (uint32_t i = 0; i < n->n; i++) {
        const val_t *clo = i ? ks + (size_t)(i - 1) * k : lo;
        const val_t *chi = i + 1 < n->n ? ks + (size_t)i * k : hi;
        check_node(st, in_child(n)[i], level - 1, clo, chi, false);
    }
}

bool bt_check(const btree *t) {
    check_state st = {.t = t, .ok = true};
    st.walk = bt_first(t, &st.path);
    if (!t->root) {
        if (t->count || t->height) fail(&st, "empty tree with a count or height");
        return st.ok;
    }
    if (t->height != t->root->level + 1u) fail(&st, "height");
    check_node(&st, t->root, t->root->level, NULL, NULL, true);
    if (st.ok && bt_next_leaf(t, st.walk, &st.path)) fail(&st, "a leaf after the last");
    if (st.ok && st.count != t->count) fail(&st, "count");
    return st.ok;
}
