/* HNSW graphs (see hnsw.h).
 *
 * Layout: nodes in one growable array; the bottom layer's links of all nodes in another
 * ([count, 2M ids] per node, so a node's links are found from its id alone), and each
 * node above the bottom layer has a block for its upper layers ([count, M ids] each). A
 * hash table maps (key, vector) to the node, for removal and revival. Searches mark
 * visited nodes with a generation number per node, so no per-search clearing is needed.
 * Navigation uses the fast kernels' distances; only the nodes a search returns get the
 * exact one.
 *
 * The graph keeps its own copy of the vectors in bf16, one row per node in one array,
 * with their norms beside: a search is bound by memory once the rows outgrow the cache
 * (100,000 128-d rows take 25 MB in bf16, 51 MB in f32), and a row is found from the
 * node's id alone. The distances to all the neighbours of a node come from one call of a
 * kernel that loops over them (vecdist_bf16_rows), not a call per neighbour. The heaps
 * and the buffers of an insert are kept from one insert to the next.
 *
 * Revisions: a counter of changes (`stamp`); each node holds the stamp of the change that
 * added it and of the one that removed it (HNSW_ALIVE until then). A node removed while a
 * search at a revision may still hold the graph (it has more than one reference) is not
 * revived in place when added again, which would change what such a search sees, but
 * added anew; the old node stays a tombstone until the graph is rebuilt. A search at a
 * revision has its own scratch space (visited bits, heaps, a prepared query) and holds the
 * reader lock: the writer appends to arrays that move when they grow and rewrites
 * neighbour lists in place, both under the writer lock. A lock held for one search or one
 * node is simpler than arrays that never move plus lists published by pointer, and costs
 * an uncontended pair of atomic operations per change or search, a fraction of a percent
 * of an insert (docs/engine.md, "Vector search"). */
#include "exec/hnsw.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exec/vecdist.h"

/* The most links per node on the upper layers (`.index create ... m` allows up to it). */
#define HNSW_MAX_M 256
/* The removal stamp of a node present now. */
#define HNSW_ALIVE UINT64_MAX
/* The revision a search of the latest state reads: every node not removed. */
#define HNSW_LATEST (UINT64_MAX - 1)

typedef struct hnsw_node {
    val_t key, vec;
    const float *x;
    const val_vec_head *head;
    uint32_t *upper; /* the upper layers' links; NULL on level 0 */
    uint32_t level;
    uint64_t born; /* the stamp of the change that added it */
    uint64_t died; /* of the one that removed it; HNSW_ALIVE while present */
} hnsw_node;

/* A (distance, node) pair and binary heaps of them. */
typedef struct cand {
    double d;
    uint32_t id;
} cand;

typedef struct heap {
    cand *v;
    uint32_t n, cap;
    bool max; /* max-heap (results: the worst on top) or min-heap (candidates) */
} heap;

struct hnsw {
    hnsw_params p;
    atomic_uint refs;      /* references: the index's, and searches' at a revision */
    pthread_rwlock_t lock; /* readers: searches at a revision; writer: a change */
    uint64_t stamp;        /* changes made so far */
    uint32_t m0;           /* links on the bottom layer: 2M */
    double level_mult;
    uint64_t rng;
    uint32_t dim;
    hnsw_node *nodes;
    uint32_t n, cap;
    size_t dead;
    uint32_t entry;
    uint32_t top;    /* the entry's level */
    uint32_t *slots; /* (key, vec) -> node + 1; 0 is free */
    uint32_t mask;
    uint32_t *visited; /* per node: the generation that last visited it */
    uint32_t gen;
    size_t link_bytes; /* the upper layers' */
    uint32_t *links0;  /* the bottom layer's links, 1 + m0 words per node */
    uint32_t *rows;    /* the vectors in bf16 (vecdist_bf16_pack), `stride` words apart */
    double *norms;     /* their norms */
    uint32_t stride;
    /* working space of inserts and searches, kept between them */
    heap res, cands;
    cand *scratch;    /* ef_construction + m0 + 1 */
    uint32_t *chosen; /* m0 */
    float *pq[2];     /* prepared queries (vecdist_bf16_query): an insert's and a node's */
};

/* Which nodes a walk has visited: marked with a generation in the graph's own array
 * (serialized walks), or bits of a walk's own (searches at a revision). */
typedef struct visits {
    uint32_t *gen_of, gen;
    uint64_t *bits;
} visits;

/* A query as the navigation kernels take it. */
typedef struct nav_query {
    const float *q;  /* the f32 elements (manhattan) */
    const float *pq; /* prepared for the bf16 rows */
    double norm;
} nav_query;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fputs("inputlayer: out of memory in a vector index\n", stderr);
        abort();
    }
    return p;
}

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("inputlayer: out of memory in a vector index\n", stderr);
        abort();
    }
    return p;
}

static inline bool above(const heap *h, cand a, cand b) {
    return h->max ? a.d > b.d : a.d < b.d;
}

static void heap_push(heap *h, double d, uint32_t id) {
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->v = xrealloc(h->v, h->cap * sizeof *h->v);
    }
    uint32_t i = h->n++;
    cand c = {d, id};
    while (i > 0) {
        uint32_t up = (i - 1) / 2;
        if (!above(h, c, h->v[up])) break;
        h->v[i] = h->v[up];
        i = up;
    }
    h->v[i] = c;
}

/* Puts c in place of the top and restores the order below it. */
static void heap_replace_top(heap *h, cand c) {
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, best = i;
        cand bc = c;
        if (l < h->n && above(h, h->v[l], bc)) {
            best = l;
            bc = h->v[l];
        }
        if (r < h->n && above(h, h->v[r], bc)) best = r;
        if (best == i) break;
        h->v[i] = h->v[best];
        i = best;
    }
    h->v[i] = c;
}

static cand heap_pop(heap *h) {
    cand top = h->v[0], last = h->v[--h->n];
    if (h->n) heap_replace_top(h, last);
    return top;
}

bool hnsw_metric_parse(const char *name, hnsw_metric *out) {
    static const struct {
        const char *name;
        hnsw_metric m;
    } names[] = {{"cosine", HNSW_COSINE},   {"euclidean", HNSW_EUCLIDEAN},
                 {"l2", HNSW_EUCLIDEAN},    {"dot", HNSW_DOT},
                 {"dot_product", HNSW_DOT}, {"manhattan", HNSW_MANHATTAN},
                 {"l1", HNSW_MANHATTAN}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].m;
            return true;
        }
    return false;
}

const char *hnsw_metric_name(hnsw_metric m) {
    switch (m) {
    case HNSW_COSINE:
        return "cosine";
    case HNSW_EUCLIDEAN:
        return "euclidean";
    case HNSW_DOT:
        return "dot";
    case HNSW_MANHATTAN:
        return "manhattan";
    }
    return "cosine";
}

hnsw *hnsw_new(const hnsw_params *p) {
    hnsw *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    atomic_init(&h->refs, 1);
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    /* a stream of overlapping searches must not keep the writer out */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&h->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    h->p = *p;
    if (h->p.m < 2) h->p.m = 2;
    if (h->p.m > HNSW_MAX_M) h->p.m = HNSW_MAX_M;
    if (h->p.ef_construction < h->p.m) h->p.ef_construction = h->p.m;
    h->m0 = 2 * h->p.m;
    h->level_mult = 1.0 / log((double)h->p.m);
    h->rng = p->seed;
    h->res.max = true;
    h->scratch = xmalloc(((size_t)h->p.ef_construction + h->m0 + 1) * sizeof *h->scratch);
    h->chosen = xmalloc((size_t)h->m0 * sizeof *h->chosen);
    return h;
}

void hnsw_ref(hnsw *h) {
    atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
}

void hnsw_free(hnsw *h) {
    if (!h || atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) != 1) return;
    pthread_rwlock_destroy(&h->lock);
    for (uint32_t i = 0; i < h->n; i++) free(h->nodes[i].upper);
    free(h->links0);
    free(h->res.v);
    free(h->cands.v);
    free(h->scratch);
    free(h->chosen);
    free(h->pq[0]);
    free(h->pq[1]);
    free(h->rows);
    free(h->norms);
    free(h->nodes);
    free(h->slots);
    free(h->visited);
    free(h);
}

uint32_t hnsw_dim(const hnsw *h) {
    return h->dim;
}
size_t hnsw_live(const hnsw *h) {
    return h->n - h->dead;
}
size_t hnsw_tombstones(const hnsw *h) {
    return h->dead;
}
size_t hnsw_bytes(const hnsw *h) {
    return h->link_bytes +
           (size_t)h->cap * (sizeof(hnsw_node) + sizeof(uint32_t) + sizeof(double) +
                             (size_t)h->stride * sizeof(uint32_t) + (1 + (size_t)h->m0) * 4) +
           (h->slots ? ((size_t)h->mask + 1) * sizeof(uint32_t) : 0);
}

/* ---- links ---- */

static inline uint32_t *layer(const hnsw *h, uint32_t id, uint32_t level) {
    if (level == 0) return h->links0 + (size_t)id * (1 + h->m0);
    return h->nodes[id].upper + (size_t)(level - 1) * (1 + h->p.m);
}

static inline uint32_t layer_cap(const hnsw *h, uint32_t level) {
    return level ? h->p.m : h->m0;
}

/* ---- distances ---- */

static inline void prefetch_row(const hnsw *h, uint32_t id) {
    const char *p = (const char *)(h->rows + (size_t)id * h->stride);
    for (size_t off = 0; off < (size_t)h->dim * sizeof *h->rows; off += 64)
        __builtin_prefetch(p + off);
}

/* The query q (of the graph's dimension) as the navigation kernels take it, prepared in
   buf (2 * vecdist_bf16_words(dim) floats). */
static nav_query nav_prepare(const hnsw *h, const float *q, double norm, float *buf) {
    if (h->p.metric != HNSW_MANHATTAN) vecdist_bf16_query(q, h->dim, buf);
    return (nav_query){q, buf, norm};
}

/* The navigation distances from nodes ids[0..n) (n <= 2 * HNSW_MAX_M + 1) to a query,
   into out. */
static void nav_dists(const hnsw *h, const uint32_t *ids, uint32_t n, const nav_query *nq,
                      double *out) {
    float f[2 * HNSW_MAX_M + 1];
    if (h->p.metric != HNSW_MANHATTAN)
        vecdist_bf16_rows(h->p.metric == HNSW_EUCLIDEAN, nq->pq, h->rows, h->stride, ids, n, h->dim,
                          f);
    switch (h->p.metric) {
    case HNSW_COSINE:
        for (uint32_t i = 0; i < n; i++) {
            double denom = h->norms[ids[i]] * nq->norm;
            out[i] = denom == 0.0 ? 0.0 : 1.0 - (double)f[i] / denom;
        }
        break;
    case HNSW_EUCLIDEAN:
        for (uint32_t i = 0; i < n; i++) out[i] = (double)f[i];
        break;
    case HNSW_DOT:
        for (uint32_t i = 0; i < n; i++) out[i] = -(double)f[i];
        break;
    case HNSW_MANHATTAN: /* no fast kernel: the exact sum over the f32 elements */
        for (uint32_t i = 0; i < n; i++)
            out[i] = vecdist_manhattan(h->nodes[ids[i]].x, nq->q, h->dim);
        break;
    }
}

static inline double nav_dist(const hnsw *h, uint32_t id, const nav_query *nq) {
    double d;
    nav_dists(h, &id, 1, nq, &d);
    return d;
}

/* Node `id` as a query, in the graph's second buffer. */
static nav_query node_query(hnsw *h, uint32_t id) {
    return nav_prepare(h, h->nodes[id].x, h->norms[id], h->pq[1]);
}

/* The builtin's value for the metric: what `cosine(V, Q)` and the others return. */
static double exact_dist(const hnsw *h, const float *x, const val_vec_head *hx, const float *q,
                         const val_vec_head *hq) {
    switch (h->p.metric) {
    case HNSW_COSINE:
        return vecdist_cosine_from(vecdist_dot_seq(x, q, h->dim), hx, hq);
    case HNSW_EUCLIDEAN:
        return sqrt((double)vecdist_sqdist_seq(x, q, h->dim));
    case HNSW_DOT:
        return -vecdist_dot_f64(x, q, h->dim);
    case HNSW_MANHATTAN:
        return vecdist_manhattan(x, q, h->dim);
    }
    return 0.0;
}

/* ---- the (key, vec) table ---- */

static inline uint32_t pair_hash(val_t key, val_t vec) {
    return (uint32_t)(val_hash(key) ^ (val_hash(vec) * 0x9E3779B97F4A7C15ull));
}

static uint32_t *slot_of(const hnsw *h, val_t key, val_t vec) {
    for (uint32_t i = pair_hash(key, vec) & h->mask;; i = (i + 1) & h->mask) {
        uint32_t s = h->slots[i];
        if (!s || (h->nodes[s - 1].key == key && h->nodes[s - 1].vec == vec)) return &h->slots[i];
    }
}

static void grow_slots(hnsw *h) {
    uint32_t old = h->slots ? h->mask + 1 : 0, cap = old ? old * 2 : 64;
    uint32_t *prev = h->slots;
    h->slots = calloc(cap, sizeof *h->slots);
    if (!h->slots) {
        fputs("inputlayer: out of memory in a vector index\n", stderr);
        abort();
    }
    h->mask = cap - 1;
    for (uint32_t i = 0; i < old; i++)
        if (prev[i]) {
            const hnsw_node *nd = &h->nodes[prev[i] - 1];
            *slot_of(h, nd->key, nd->vec) = prev[i];
        }
    free(prev);
}

/* ---- search within one layer ---- */

/* A new walk's marks in the graph's own array. */
static visits own_visits(hnsw *h) {
    if (++h->gen == 0) { /* wrapped: forget every mark */
        memset(h->visited, 0, (size_t)h->cap * sizeof *h->visited);
        h->gen = 1;
    }
    return (visits){h->visited, h->gen, NULL};
}

/* Marks `id` visited; false when it was already. `bits` says which kind v is (a constant
   where it is called, so that each walk's loop has one kind only). v is taken by value:
   its fields stay in registers across the marks' stores. */
static inline bool first_visit(visits v, uint32_t id, bool bits) {
    if (bits) {
        uint64_t bit = 1ull << (id & 63);
        if (v.bits[id >> 6] & bit) return false;
        v.bits[id >> 6] |= bit;
        return true;
    }
    if (v.gen_of[id] == v.gen) return false;
    v.gen_of[id] = v.gen;
    return true;
}

/* Whether node `id` is present at revision `at`. */
static inline bool present_at(const hnsw *h, uint32_t id, uint64_t at) {
    const hnsw_node *nd = &h->nodes[id];
    return nd->born <= at && at < nd->died;
}

/* Greedy descent on one layer from *cur (distance *dcur) towards q. */
static void greedy(const hnsw *h, const nav_query *nq, uint32_t level, uint32_t *cur,
                   double *dcur) {
    for (bool moved = true; moved;) {
        moved = false;
        const uint32_t *ls = layer(h, *cur, level);
        double ds[2 * HNSW_MAX_M];
        for (uint32_t i = 1; i <= ls[0]; i++) prefetch_row(h, ls[i]);
        nav_dists(h, ls + 1, ls[0], nq, ds);
        for (uint32_t i = 1; i <= ls[0]; i++) {
            double d = ds[i - 1];
            if (d < *dcur) {
                *dcur = d;
                *cur = ls[i];
                moved = true;
            }
        }
    }
}

/* The beam search of one layer from `entry`: leaves in `res` (a max-heap) the ef nearest
 * nodes found, only those present at revision *at when `at` is given (the others still
 * route, and are not counted towards ef: the walk goes on until ef present ones are
 * found or nothing nearer is left). Inlined into search_layer once per kind of visits. */
static inline __attribute__((always_inline)) void
walk_layer(const hnsw *h, const nav_query *nq, uint32_t entry, double dentry, uint32_t ef,
           uint32_t level, const uint64_t *at, visits vs, bool bits, heap *res, heap *cands) {
    res->n = cands->n = 0;
    bool filter = at != NULL;
    uint64_t when = filter ? *at : 0;
    first_visit(vs, entry, bits);
    heap_push(cands, dentry, entry);
    if (!filter || present_at(h, entry, when)) heap_push(res, dentry, entry);
    while (cands->n) {
        cand c = heap_pop(cands);
        if (res->n >= ef && c.d > res->v[0].d) break;
        const uint32_t *ls = layer(h, c.id, level);
        /* the unvisited neighbours are gathered, then measured by one kernel call. Their
           rows are not prefetched: prefetch_row's loop compiles to nothing here with GCC 12
           at -O2 (as it does in greedy), so every figure of BENCHMARKS.md was measured
           without it; a prefetch that is emitted costs 7.7 % more instructions per insert
           at 128-d, and whether it pays in time is for a quiet machine to tell. */
        uint32_t todo[2 * HNSW_MAX_M], ntodo = 0;
        double ds[2 * HNSW_MAX_M];
        for (uint32_t i = 1; i <= ls[0]; i++) {
            uint32_t nb = ls[i];
            if (!first_visit(vs, nb, bits)) continue;
            todo[ntodo++] = nb;
        }
        nav_dists(h, todo, ntodo, nq, ds);
        for (uint32_t i = 0; i < ntodo; i++) {
            uint32_t nb = todo[i];
            double d = ds[i];
            if (res->n < ef || d < res->v[0].d) {
                heap_push(cands, d, nb);
                if (filter && !present_at(h, nb, when)) continue;
                if (res->n < ef)
                    heap_push(res, d, nb);
                else /* full: d beats the worst kept */
                    heap_replace_top(res, (cand){d, nb});
            }
        }
    }
}

static void search_layer(const hnsw *h, const nav_query *nq, uint32_t entry, double dentry,
                         uint32_t ef, uint32_t level, const uint64_t *at, visits *vs, heap *res,
                         heap *cands) {
    if (vs->bits)
        walk_layer(h, nq, entry, dentry, ef, level, at, *vs, true, res, cands);
    else
        walk_layer(h, nq, entry, dentry, ef, level, at, *vs, false, res, cands);
}

/* hnswlib's neighbour heuristic: from candidates sorted nearest first, keep one only if
 * it is nearer to the base than to every one kept, up to `max`. Writes the kept ids to
 * out and returns their number. */
static uint32_t select_neighbours(hnsw *h, const cand *sorted, uint32_t n, uint32_t max,
                                  uint32_t *out) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n && kept < max; i++) {
        bool good = true;
        nav_query nq;
        if (kept) nq = node_query(h, sorted[i].id);
        for (uint32_t j = 0; j < kept && good; j++) good = nav_dist(h, out[j], &nq) >= sorted[i].d;
        if (good) out[kept++] = sorted[i].id;
    }
    return kept;
}

static int cand_cmp(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Links `from` to `to` on a layer, shrinking to.links with the heuristic when full. */
static void link_back(hnsw *h, uint32_t to, uint32_t from, uint32_t level, cand *scratch) {
    uint32_t *ls = layer(h, to, level);
    uint32_t cap = layer_cap(h, level);
    for (uint32_t i = 1; i <= ls[0]; i++)
        if (ls[i] == from) return;
    if (ls[0] < cap) {
        ls[++ls[0]] = from;
        return;
    }
    uint32_t ids[2 * HNSW_MAX_M + 1], n = ls[0] + 1;
    memcpy(ids, ls + 1, ls[0] * sizeof *ids);
    ids[n - 1] = from;
    double ds[2 * HNSW_MAX_M + 1];
    nav_query nq = node_query(h, to);
    nav_dists(h, ids, n, &nq, ds);
    for (uint32_t i = 0; i < n; i++) scratch[i] = (cand){ds[i], ids[i]};
    qsort(scratch, n, sizeof *scratch, cand_cmp);
    ls[0] = select_neighbours(h, scratch, n, cap, ls + 1);
}

static uint32_t random_level(hnsw *h) {
    h->rng += 0x9E3779B97F4A7C15ull;
    uint64_t z = h->rng;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = ((double)(z >> 11) + 1.0) * 0x1p-53; /* (0, 1] */
    double l = -log(u) * h->level_mult;
    return l > 30 ? 30 : (uint32_t)l;
}

/* Whether a search at a revision may hold the graph: some reference besides the index's.
   (Such a reference is taken only from another, so one seen alone stays alone.) */
static bool shared(const hnsw *h) {
    return atomic_load_explicit(&((hnsw *)h)->refs, memory_order_acquire) > 1;
}

static bool add_locked(hnsw *h, val_t key, val_t vec) {
    if (val_type_of(vec) != VT_VEC) return false;
    uint32_t dim;
    const val_vec_head *head;
    const float *x = val_get_vec_f32_head(vec, &dim, &head);
    if (dim == 0 || !head->finite || (h->dim && dim != h->dim)) return false;
    if (!h->slots || (uint64_t)(h->n + 1) * 2 > (uint64_t)h->mask + 1) grow_slots(h);
    uint32_t *slot = slot_of(h, key, vec);
    if (*slot) {
        hnsw_node *nd = &h->nodes[*slot - 1];
        if (nd->died == HNSW_ALIVE) return true;
        if (!shared(h)) { /* revived: no search can tell */
            nd->born = h->stamp;
            nd->died = HNSW_ALIVE;
            h->dead--;
            return true;
        }
        /* a search at a revision may see it removed, or present before: added anew, the
           old node staying a tombstone (*slot moves to the new one) */
    }
    if (!h->dim) {
        h->dim = dim;
        /* rows start on 64-byte boundaries of the array */
        h->stride = (vecdist_bf16_words(dim) + 15) & ~15u;
        for (int i = 0; i < 2; i++)
            h->pq[i] = xmalloc(2 * (size_t)vecdist_bf16_words(dim) * sizeof(float));
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 256;
        h->nodes = xrealloc(h->nodes, (size_t)h->cap * sizeof *h->nodes);
        h->rows = xrealloc(h->rows, (size_t)h->cap * h->stride * sizeof *h->rows);
        h->norms = xrealloc(h->norms, (size_t)h->cap * sizeof *h->norms);
        h->visited = xrealloc(h->visited, (size_t)h->cap * sizeof *h->visited);
        h->links0 = xrealloc(h->links0, (size_t)h->cap * (1 + h->m0) * sizeof *h->links0);
        memset(h->visited + h->n, 0, (size_t)(h->cap - h->n) * sizeof *h->visited);
    }
    uint32_t id = h->n++;
    *slot = id + 1;
    hnsw_node *nd = &h->nodes[id];
    nd->key = key;
    nd->vec = vec;
    nd->x = x;
    nd->head = head;
    nd->born = h->stamp;
    nd->died = HNSW_ALIVE;
    vecdist_bf16_pack(x, dim, h->rows + (size_t)id * h->stride);
    h->norms[id] = head->norm;
    nd->level = random_level(h);
    layer(h, id, 0)[0] = 0;
    nd->upper = NULL;
    if (nd->level) {
        size_t words = (size_t)nd->level * (1 + h->p.m);
        nd->upper = xmalloc(words * sizeof *nd->upper);
        for (uint32_t l = 1; l <= nd->level; l++) layer(h, id, l)[0] = 0;
        h->link_bytes += words * sizeof *nd->upper;
    }
    if (id == 0) {
        h->entry = 0;
        h->top = nd->level;
        return true;
    }
    uint32_t cur = h->entry;
    nav_query nq = nav_prepare(h, x, head->norm, h->pq[0]);
    double dcur = nav_dist(h, cur, &nq);
    for (uint32_t l = h->top; l > nd->level; l--) greedy(h, &nq, l, &cur, &dcur);
    heap *res = &h->res;
    cand *scratch = h->scratch;
    uint32_t *chosen = h->chosen;
    for (uint32_t l = nd->level < h->top ? nd->level : h->top;; l--) {
        visits vs = own_visits(h);
        search_layer(h, &nq, cur, dcur, h->p.ef_construction, l, NULL, &vs, res, &h->cands);
        uint32_t n = 0;
        while (res->n) scratch[n++] = heap_pop(res);
        qsort(scratch, n, sizeof *scratch, cand_cmp);
        /* the next layer down starts from the nearest found here */
        cur = scratch[0].id;
        dcur = scratch[0].d;
        uint32_t kept = select_neighbours(h, scratch, n, h->p.m, chosen);
        uint32_t *ls = layer(h, id, l);
        ls[0] = kept;
        memcpy(ls + 1, chosen, kept * sizeof *chosen);
        for (uint32_t i = 0; i < kept; i++) link_back(h, chosen[i], id, l, scratch);
        if (l == 0) break;
    }
    if (nd->level > h->top) {
        h->top = nd->level;
        h->entry = id;
    }
    return true;
}

bool hnsw_add(hnsw *h, val_t key, val_t vec) {
    pthread_rwlock_wrlock(&h->lock);
    h->stamp++;
    bool ok = add_locked(h, key, vec);
    pthread_rwlock_unlock(&h->lock);
    return ok;
}

bool hnsw_remove(hnsw *h, val_t key, val_t vec) {
    if (!h->slots) return false;
    pthread_rwlock_wrlock(&h->lock);
    uint32_t *slot = slot_of(h, key, vec);
    bool found = *slot && h->nodes[*slot - 1].died == HNSW_ALIVE;
    if (found) {
        h->nodes[*slot - 1].died = ++h->stamp;
        h->dead++;
    }
    pthread_rwlock_unlock(&h->lock);
    return found;
}

/* Orders hits by distance, then key, then vector: a total order, so results do not
 * depend on the graph's shape when distances tie. */
static int hit_cmp(const void *a, const void *b) {
    const hnsw_hit *x = a, *y = b;
    if (x->dist != y->dist) return x->dist < y->dist ? -1 : 1;
    int c = val_cmp(x->key, y->key);
    return c ? c : val_cmp(x->vec, y->vec);
}

/* Node `id` as a hit for the query q, with the builtin's distance. */
static hnsw_hit exact_hit(const hnsw *h, uint32_t id, const float *q, const val_vec_head *hq) {
    const hnsw_node *nd = &h->nodes[id];
    return (hnsw_hit){nd->key, nd->vec, exact_dist(h, nd->x, nd->head, q, hq)};
}

/* The k best of n hits into out, in hit_cmp's order; frees `all`. */
static size_t best_hits(hnsw_hit *all, size_t n, uint32_t k, hnsw_hit *out) {
    qsort(all, n, sizeof *all, hit_cmp);
    if (n > k) n = k;
    memcpy(out, all, n * sizeof *out);
    free(all);
    return n;
}

/* The space a search works in: the graph's own for its serialized searches, a search's
 * own at a revision. */
typedef struct search_space {
    visits vs;
    heap *res, *cands;
    float *pq; /* the prepared query */
} search_space;

static size_t search_exact(const hnsw *h, uint64_t at, const float *q, const val_vec_head *hq,
                           uint32_t k, hnsw_hit *out) {
    size_t n = 0;
    hnsw_hit *all = xmalloc((h->n ? h->n : 1) * sizeof *all);
    for (uint32_t i = 0; i < h->n; i++)
        if (present_at(h, i, at)) all[n++] = exact_hit(h, i, q, hq);
    return best_hits(all, n, k, out);
}

/* The k nearest to q present at revision `at`: the graph walk, or every node with exact. */
static size_t search(const hnsw *h, uint64_t at, const float *q, const val_vec_head *hq, uint32_t k,
                     uint32_t ef, bool exact, search_space *sp, hnsw_hit *out) {
    if (exact) return search_exact(h, at, q, hq, k, out);
    if (ef < k) ef = k;
    uint32_t cur = h->entry;
    nav_query nq = nav_prepare(h, q, hq->norm, sp->pq);
    double dcur = nav_dist(h, cur, &nq);
    for (uint32_t l = h->top; l > 0; l--) greedy(h, &nq, l, &cur, &dcur);
    heap *res = sp->res;
    search_layer(h, &nq, cur, dcur, ef, 0, &at, &sp->vs, res, sp->cands);
    size_t n = 0;
    hnsw_hit *all = xmalloc((res->n ? res->n : 1) * sizeof *all);
    while (res->n) all[n++] = exact_hit(h, heap_pop(res).id, q, hq);
    return best_hits(all, n, k, out);
}

size_t hnsw_search(const hnsw *hc, val_t qv, uint32_t k, uint32_t ef, bool exact, hnsw_hit *out) {
    /* the visit marks are scratch space: a search changes nothing a caller can see */
    hnsw *h = (hnsw *)hc;
    if (k == 0 || hnsw_live(h) == 0 || val_type_of(qv) != VT_VEC) return 0;
    uint32_t dim;
    const val_vec_head *hq;
    const float *q = val_get_vec_f32_head(qv, &dim, &hq);
    if (dim != h->dim || !hq->finite) return 0;
    search_space sp = {.res = &h->res, .cands = &h->cands, .pq = h->pq[0]};
    if (!exact) sp.vs = own_visits(h);
    return search(h, HNSW_LATEST, q, hq, k, ef, exact, &sp, out);
}

hnsw_rev hnsw_now(const hnsw *h) {
    return (hnsw_rev){h->stamp, hnsw_live(h)};
}

size_t hnsw_search_at(const hnsw *h, const hnsw_rev *at, val_t qv, uint32_t k, uint32_t ef,
                      bool exact, hnsw_hit *out) {
    if (k == 0 || at->live == 0 || val_type_of(qv) != VT_VEC) return 0;
    uint32_t dim;
    const val_vec_head *hq;
    const float *q = val_get_vec_f32_head(qv, &dim, &hq);
    pthread_rwlock_rdlock((pthread_rwlock_t *)&h->lock);
    size_t n = 0;
    /* the dimension is fixed by the first node, which the revision has (it has some) */
    if (dim == h->dim && hq->finite) {
        heap res = {.max = true}, cands = {0};
        search_space sp = {.res = &res, .cands = &cands};
        if (!exact) {
            sp.pq = xmalloc(2 * (size_t)vecdist_bf16_words(dim) * sizeof(float));
            sp.vs.bits = calloc(((size_t)h->n + 63) / 64 + 1, sizeof *sp.vs.bits);
            if (!sp.vs.bits) abort();
        }
        n = search(h, at->stamp, q, hq, k, ef, exact, &sp, out);
        free(sp.pq);
        free(sp.vs.bits);
        free(res.v);
        free(cands.v);
    }
    pthread_rwlock_unlock((pthread_rwlock_t *)&h->lock);
    return n;
}
