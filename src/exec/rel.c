/* Relations (rel.h): a primary B+-tree in natural column order plus up to
 * REL_MAX_INDEXES - 1 secondary trees, each holding every tuple permuted into its
 * column order, all kept in step; derivation counts for counted relations; prefix
 * cursors; bulk construction of indexes added to a populated relation; snapshots (a
 * copy of the struct whose trees the pool keeps, exec/btree.h). */
#include "exec/rel.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "exec/btree.h"

typedef struct rel_idx {
    btree bt;        /* the tuples in this index's order; entries are arity words, plus
                        the count word (last) in a counted relation's primary index */
    uint32_t *order; /* order[i] = natural column stored at position i; a permutation */
} rel_idx;

struct rel {
    uint32_t arity;               /* columns, <= REL_MAX_ARITY (0 is allowed) */
    bool counted;                 /* primary entries carry a signed count word */
    bool snap;                    /* a snapshot: read only, pinned at tag */
    uint64_t tag;                 /* a snapshot's, from bt_pool_pin */
    int nidx;                     /* indexes in use; idx[0] is the primary */
    bt_pool *pool;                /* nodes of every tree below, shared with snapshots */
    rel_idx idx[REL_MAX_INDEXES]; /* all hold exactly the present tuples */
    btree neg;                    /* counted only: tuples whose count is negative, not
                                     present, entries as in the primary */
    uint64_t changes;             /* tuples that appeared or vanished, and clears */
};

/* The primary index's order, shared by every relation. */
static const uint32_t natural_order[REL_MAX_ARITY] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
    44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

/* A nullary relation still stores one (dummy) word per entry: trees need width >= 1. */
static uint32_t primary_width(uint32_t arity, bool counted) {
    uint32_t w = arity + (counted ? 1 : 0);
    return w ? w : 1;
}

static rel_t *rel_make(uint32_t arity, bool counted) {
    if (arity > REL_MAX_ARITY) return NULL;
    rel_t *r = xmalloc(sizeof *r);
    memset(r, 0, sizeof *r);
    r->arity = arity;
    r->counted = counted;
    uint32_t pw = primary_width(arity, counted), sw = arity ? arity : 1;
    /* One node size for all trees so that they share one pool. */
    size_t ns = bt_node_bytes(pw, arity);
    if (bt_node_bytes(sw, arity) > ns) ns = bt_node_bytes(sw, arity);
    if (bt_node_bytes(arity + 1, arity) > ns) ns = bt_node_bytes(arity + 1, arity);
    r->pool = bt_pool_new(ns);
    bt_init(&r->idx[0].bt, pw, arity, ns);
    r->idx[0].order = (uint32_t *)natural_order;
    r->nidx = 1;
    bt_init(&r->neg, arity + 1, arity, ns);
    return r;
}

rel_t *rel_new(uint32_t arity) {
    return rel_make(arity, false);
}
rel_t *rel_new_counted(uint32_t arity) {
    return rel_make(arity, true);
}

void rel_free(rel_t *r) {
    if (!r) return;
    if (r->snap) return rel_snapshot_release(r);
    bt_pool_leave(r->pool); /* live snapshots keep it */
    for (int i = 1; i < r->nidx; i++) free(r->idx[i].order);
    free(r);
}

/* Empties r; `recycle` keeps a small first chunk of node memory for the next tuples. */
static void empty(rel_t *r, bool recycle) {
    assert(!r->snap);
    r->changes++;
    if (bt_pool_held(r->pool)) { /* the snapshots keep the old nodes; start anew */
        size_t ns = r->pool->node_bytes;
        bt_pool_leave(r->pool);
        r->pool = bt_pool_new(ns);
    } else if (recycle) {
        bt_pool_recycle(r->pool);
    } else {
        bt_pool_clear(r->pool);
    }
    for (int i = 0; i < r->nidx; i++) bt_reset(&r->idx[i].bt);
    bt_reset(&r->neg);
}

void rel_clear(rel_t *r) {
    empty(r, true);
}

const rel_t *rel_snapshot(rel_t *r) {
    assert(!r->snap);
    /* the index orders travel with the snapshot: the relation may be freed first */
    size_t orders = r->nidx > 1 ? (size_t)(r->nidx - 1) * r->arity * sizeof(uint32_t) : 0;
    rel_t *s = xmalloc(sizeof *s + orders);
    *s = *r;
    uint32_t *o = (uint32_t *)(s + 1);
    for (int i = 1; i < r->nidx; i++, o += r->arity) {
        memcpy(o, r->idx[i].order, r->arity * sizeof *o);
        s->idx[i].order = o;
    }
    s->snap = true;
    s->tag = bt_pool_pin(r->pool);
    return s;
}

void rel_snapshot_release(const rel_t *s) {
    if (!s) return;
    assert(s->snap);
    bt_pool_unpin(s->pool, s->tag);
    free((rel_t *)s);
}

bool rel_is_snapshot(const rel_t *r) {
    return r->snap;
}

uint32_t rel_arity(const rel_t *r) {
    return r->arity;
}
size_t rel_count(const rel_t *r) {
    return r->idx[0].bt.count;
}
uint64_t rel_changes(const rel_t *r) {
    return r->changes;
}
bool rel_is_counted(const rel_t *r) {
    return r->counted;
}
size_t rel_bytes(const rel_t *r) {
    return bt_pool_bytes(r->pool);
}

/* Once nothing is stored, hand every node back to malloc. */
static void release_if_empty(rel_t *r) {
    if (r->idx[0].bt.count == 0 && r->neg.count == 0 && bt_pool_bytes(r->pool)) empty(r, false);
}

static void permute(const rel_idx *ix, uint32_t arity, const val_t *tuple, val_t *out) {
    for (uint32_t i = 0; i < arity; i++) out[i] = tuple[ix->order[i]];
}

/* A tuple became present (it is already in the primary): add it to the others. */
static void secondaries_insert(rel_t *r, const val_t *tuple) {
    val_t e[REL_MAX_ARITY];
    bool added;
    for (int i = 1; i < r->nidx; i++) {
        permute(&r->idx[i], r->arity, tuple, e);
        bt_insert(&r->idx[i].bt, r->pool, e, &added);
        assert(added);
    }
}

static void secondaries_delete(rel_t *r, const val_t *tuple) {
    val_t e[REL_MAX_ARITY];
    for (int i = 1; i < r->nidx; i++) {
        permute(&r->idx[i], r->arity, tuple, e);
        bool found = bt_delete(&r->idx[i].bt, r->pool, e);
        assert(found);
        (void)found;
    }
}

/* A slot found by bt_find or bt_insert, made writable: while a snapshot may share its
 * leaf, found again through bt_update, which copies the leaf's path. */
static val_t *writable(rel_t *r, btree *t, val_t *slot, const val_t *key) {
    return bt_pool_pinned(r->pool) ? bt_update(t, r->pool, key) : slot;
}

/* The primary entry for a tuple: its words, then the count for a counted relation
 * (and one zero word for a nullary set). */
static void make_entry(const rel_t *r, const val_t *tuple, int64_t count, val_t *e) {
    if (r->arity) memcpy(e, tuple, r->arity * sizeof *e);
    e[r->arity] = r->counted ? (val_t)count : 0;
}

/* Sets the count of an absent tuple that is not negative either. */
static void insert_present(rel_t *r, const val_t *tuple, int64_t count) {
    val_t e[REL_MAX_ARITY + 1];
    bool added;
    make_entry(r, tuple, count, e);
    bt_insert(&r->idx[0].bt, r->pool, e, &added);
    assert(added);
    secondaries_insert(r, tuple);
}

bool rel_insert(rel_t *r, const val_t *tuple) {
    assert(!r->snap);
    val_t e[REL_MAX_ARITY + 1];
    bool added;
    make_entry(r, tuple, 1, e);
    val_t *slot = bt_insert(&r->idx[0].bt, r->pool, e, &added);
    if (!added) {
        if (r->counted && slot[r->arity] != 1)
            writable(r, &r->idx[0].bt, slot, tuple)[r->arity] = 1;
        return false;
    }
    if (r->neg.count) bt_delete(&r->neg, r->pool, tuple);
    secondaries_insert(r, tuple);
    r->changes++;
    return true;
}

bool rel_delete(rel_t *r, const val_t *tuple) {
    assert(!r->snap);
    bool was = bt_delete(&r->idx[0].bt, r->pool, tuple);
    if (was) {
        secondaries_delete(r, tuple);
        r->changes++;
    } else if (r->neg.count)
        bt_delete(&r->neg, r->pool, tuple);
    release_if_empty(r);
    return was;
}

bool rel_contains(const rel_t *r, const val_t *tuple) {
    return bt_find(&r->idx[0].bt, tuple) != NULL;
}

/* One side of rel_difference: the current leaf's run of tuples and the position in it. */
typedef struct diff_side {
    rel_cursor cur;
    const val_t *run; /* NULL past the end */
    size_t n, at;
    uint32_t stride;
} diff_side;

static void diff_next_run(diff_side *d) {
    d->at = 0;
    d->run = rel_next_run(&d->cur, &d->n, &d->stride);
}

static void diff_start(diff_side *d, const rel_t *r) {
    memset(d, 0, sizeof *d);
    if (!r) return;
    rel_seek(r, 0, NULL, 0, &d->cur);
    diff_next_run(d);
}

static void diff_step(diff_side *d) {
    if (++d->at == d->n) diff_next_run(d);
}

void rel_difference(const rel_t *was, const rel_t *now, rel_t *plus, rel_t *minus) {
    /* both in their primary index's natural column order: one merged walk, no lookups */
    uint32_t arity = was ? was->arity : now ? now->arity : 0;
    diff_side a, b;
    diff_start(&a, was);
    diff_start(&b, now);
    while (a.run || b.run) {
        /* A leaf both trees reach (a snapshot and the relation it was taken from share
           every node the writer has not replaced since, and never change one a live
           snapshot reaches) holds the same tuples on both sides: skipped whole, so that
           catching up with a few commits costs the leaves they changed, not the
           relation. */
        if (a.run && a.run == b.run && a.at == 0 && b.at == 0 && a.n == b.n) {
            diff_next_run(&a);
            diff_next_run(&b);
            continue;
        }
        const val_t *old = a.run ? a.run + a.at * a.stride : NULL;
        const val_t *cur = b.run ? b.run + b.at * b.stride : NULL;
        int c = !cur ? -1 : !old ? 1 : bt_cmp(old, cur, arity);
        if (c < 0) rel_insert(minus, old);
        if (c > 0) rel_insert(plus, cur);
        if (c <= 0) diff_step(&a);
        if (c >= 0) diff_step(&b);
    }
}

int rel_add_count(rel_t *r, const val_t *tuple, int64_t delta) {
    assert(!r->snap);
    if (!r->counted) { /* a set: a positive delta inserts, a negative one deletes */
        if (delta > 0) return rel_insert(r, tuple) ? 1 : 0;
        if (delta < 0) return rel_delete(r, tuple) ? -1 : 0;
        return 0;
    }
    if (delta == 0) return 0;
    uint32_t a = r->arity;
    if (delta > 0 && r->neg.count == 0) { /* the common case: one descent */
        val_t e[REL_MAX_ARITY + 1];
        bool added;
        make_entry(r, tuple, delta, e);
        val_t *slot = bt_insert(&r->idx[0].bt, r->pool, e, &added);
        if (added) {
            secondaries_insert(r, tuple);
            r->changes++;
            return 1;
        }
        slot = writable(r, &r->idx[0].bt, slot, tuple);
        slot[a] = (val_t)((int64_t)slot[a] + delta);
        return 0;
    }
    val_t *slot = bt_find(&r->idx[0].bt, tuple);
    if (slot) {
        int64_t c = (int64_t)slot[a] + delta;
        if (c > 0) {
            writable(r, &r->idx[0].bt, slot, tuple)[a] = (val_t)c;
            return 0;
        }
        bt_delete(&r->idx[0].bt, r->pool, tuple);
        secondaries_delete(r, tuple);
        r->changes++;
        if (c < 0) {
            val_t e[REL_MAX_ARITY + 1];
            bool added;
            make_entry(r, tuple, c, e);
            bt_insert(&r->neg, r->pool, e, &added);
        }
        release_if_empty(r);
        return -1;
    }
    val_t *nslot = r->neg.count ? bt_find(&r->neg, tuple) : NULL;
    int64_t c = (nslot ? (int64_t)nslot[a] : 0) + delta;
    if (c > 0) {
        if (nslot) bt_delete(&r->neg, r->pool, tuple);
        insert_present(r, tuple, c);
        r->changes++;
        return 1;
    }
    if (c < 0) {
        if (nslot) {
            writable(r, &r->neg, nslot, tuple)[a] = (val_t)c;
        } else {
            val_t e[REL_MAX_ARITY + 1];
            bool added;
            make_entry(r, tuple, c, e);
            bt_insert(&r->neg, r->pool, e, &added);
        }
        return 0;
    }
    bt_delete(&r->neg, r->pool, tuple); /* back to 0: nothing to remember */
    release_if_empty(r);
    return 0;
}

int64_t rel_get_count(const rel_t *r, const val_t *tuple) {
    const val_t *slot = bt_find(&r->idx[0].bt, tuple);
    if (slot) return r->counted ? (int64_t)slot[r->arity] : 1;
    if (r->neg.count && (slot = bt_find(&r->neg, tuple))) return (int64_t)slot[r->arity];
    return 0;
}

/* ---- building an index in bulk ---------------------------------------------------- */

#define RADIX_BITS    11
#define RADIX_DIGITS  ((64 + RADIX_BITS - 1) / RADIX_BITS)
#define RADIX_BUCKETS (1u << RADIX_BITS)

/* Stable sort of n entries of w words by their first nlead words, given that entries
 * equal on those words are already in the order wanted (the primary's order restricted
 * to the remaining columns). LSD radix sort, 11 bits a pass, skipping passes whose
 * digit is the same in every entry (the tag bits of values, the high bits of small
 * numbers). Returns a or tmp, whichever holds the result. */
static val_t *sort_lead(val_t *a, val_t *tmp, size_t n, uint32_t w, uint32_t nlead) {
    if (n < 64) { /* insertion sort; the radix histograms would cost more */
        val_t cur[REL_MAX_ARITY];
        for (size_t i = 1; i < n; i++) {
            memcpy(cur, a + i * w, w * sizeof *a);
            size_t j = i;
            while (j > 0 && bt_cmp(a + (j - 1) * w, cur, nlead) > 0) {
                memcpy(a + j * w, a + (j - 1) * w, w * sizeof *a);
                j--;
            }
            memcpy(a + j * w, cur, w * sizeof *a);
        }
        return a;
    }
    size_t(*hist)[RADIX_BUCKETS] = xmalloc(RADIX_DIGITS * sizeof *hist);
    val_t *src = a, *dst = tmp;
    for (uint32_t col = nlead; col-- > 0;) {
        memset(hist, 0, RADIX_DIGITS * sizeof *hist);
        for (size_t i = 0; i < n; i++) {
            val_t v = src[i * w + col];
            for (int d = 0; d < RADIX_DIGITS; d++)
                hist[d][(v >> (d * RADIX_BITS)) & (RADIX_BUCKETS - 1)]++;
        }
        for (int d = 0; d < RADIX_DIGITS; d++) {
            unsigned shift = (unsigned)d * RADIX_BITS;
            if (hist[d][(src[col] >> shift) & (RADIX_BUCKETS - 1)] == n) continue;
            size_t off = 0;
            for (uint32_t b = 0; b < RADIX_BUCKETS; b++) {
                size_t c = hist[d][b];
                hist[d][b] = off;
                off += c;
            }
            for (size_t i = 0; i < n; i++) {
                const val_t *e = src + i * w;
                size_t at = hist[d][(e[col] >> shift) & (RADIX_BUCKETS - 1)]++;
                memcpy(dst + at * w, e, w * sizeof *e);
            }
            val_t *t = src;
            src = dst;
            dst = t;
        }
    }
    free(hist);
    return src;
}

/* Fills an empty secondary index from the primary: copy, sort, build bottom-up. */
static void build_index(rel_t *r, rel_idx *ix, uint32_t nlead) {
    size_t n = r->idx[0].bt.count;
    if (n == 0) return;
    uint32_t a = r->arity, pw = r->idx[0].bt.width;
    /* twice the relation's size: counted with a statement's working data (base/meter.h) */
    val_t *buf = il_mem_alloc(n * a * sizeof *buf), *tmp = il_mem_alloc(n * a * sizeof *tmp);
    size_t i = 0;
    bt_path path;
    const btree *pt = &r->idx[0].bt;
    for (const bt_leaf *l = bt_first(pt, &path); l; l = bt_next_leaf(pt, l, &path))
        for (uint32_t j = 0; j < l->h.n; j++) permute(ix, a, l->e + (size_t)j * pw, buf + a * i++);
    assert(i == n);
    const val_t *sorted = sort_lead(buf, tmp, n, a, nlead);
    bt_build(&ix->bt, r->pool, sorted, n);
    il_mem_free(buf);
    il_mem_free(tmp);
}

/* Whether cols names distinct columns of r; their set in *seen. */
static bool valid_cols(const rel_t *r, const uint32_t *cols, uint32_t ncols, uint64_t *seen) {
    if (ncols > r->arity) return false;
    *seen = 0;
    for (uint32_t i = 0; i < ncols; i++) {
        if (cols[i] >= r->arity || (*seen >> cols[i] & 1)) return false;
        *seen |= UINT64_C(1) << cols[i];
    }
    return true;
}

int rel_find_index(const rel_t *r, const uint32_t *cols, uint32_t ncols) {
    uint64_t seen;
    if (!valid_cols(r, cols, ncols, &seen)) return -1;
    for (int i = 0; i < r->nidx; i++)
        if (ncols == 0 || memcmp(r->idx[i].order, cols, ncols * sizeof *cols) == 0) return i;
    return -1;
}

int rel_index(rel_t *r, const uint32_t *cols, uint32_t ncols) {
    uint32_t a = r->arity;
    uint64_t seen;
    if (!valid_cols(r, cols, ncols, &seen)) return -1;
    int found = rel_find_index(r, cols, ncols);
    if (found >= 0 || r->snap) return found; /* a snapshot gets no new index */
    if (r->nidx == REL_MAX_INDEXES) return -1;
    rel_idx *ix = &r->idx[r->nidx];
    ix->order = xmalloc(a * sizeof *ix->order);
    memcpy(ix->order, cols, ncols * sizeof *cols);
    for (uint32_t c = 0, j = ncols; c < a; c++)
        if (!(seen >> c & 1)) ix->order[j++] = c;
    bt_init(&ix->bt, a, a, r->pool->node_bytes);
    build_index(r, ix, ncols);
    return r->nidx++;
}

const uint32_t *rel_index_order(const rel_t *r, int index) {
    return r->idx[index].order;
}

/* ---- cursors ------------------------------------------------------------------- */

/* rel_cursor.mode: what rel_next does once cur reaches end. */
enum {
    REL_CUR_DONE,  /* the range is exhausted */
    REL_CUR_LEAF,  /* end is the leaf's end and the range may go on in the next leaf */
    REL_CUR_CHECK, /* the range ends in this leaf: check each entry against the prefix */
};

/* Enters a leaf at entry pos. One compare against the leaf's last entry settles the
 * common case, where the rest of the leaf is in range and rel_next only bumps a
 * pointer. Otherwise the range ends in this leaf, usually after a few entries (a point
 * lookup): rel_next then checks each entry against the prefix, which is cheaper than
 * searching for the end up front. */
static void cursor_enter(rel_cursor *c, const bt_leaf *l, uint32_t pos) {
    c->leaf = l;
    if (!l) {
        c->cur = c->end = NULL;
        c->mode = REL_CUR_DONE;
        return;
    }
    uint32_t w = c->stride, n = l->h.n, np = c->nprefix;
    c->cur = l->e + (size_t)pos * w;
    if (np == 0 || bt_cmp(l->e + (size_t)(n - 1) * w, c->prefix, np) == 0) {
        c->end = l->e + (size_t)n * w;
        c->mode = REL_CUR_LEAF;
        /* A scan is likely to go on into the next leaf: start fetching it, so that its
         * memory latency overlaps with the work on this one (in trees too big for the
         * cache; in small ones the prefetches cost more than they save). */
        const btree *bt = &c->rel->idx[c->index].bt;
        const bt_node *next = bt->count >= (1u << 16) ? bt_path_peek(&c->path) : NULL;
        if (next)
            for (uint32_t off = 0; off < bt->node_bytes; off += 64)
                __builtin_prefetch((const char *)next + off);
    } else {
        c->end = c->cur;
        c->mode = REL_CUR_CHECK;
    }
}

static const btree *cursor_init(const rel_t *r, int index, const val_t *prefix, uint32_t nprefix,
                                rel_cursor *c) {
    assert(index >= 0 && index < r->nidx && nprefix <= r->arity);
    const btree *bt = &r->idx[index].bt;
    c->rel = r;
    c->index = index;
    c->stride = bt->width;
    c->nprefix = nprefix;
    if (nprefix) memcpy(c->prefix, prefix, nprefix * sizeof *prefix);
    return bt;
}

void rel_seek(const rel_t *r, int index, const val_t *prefix, uint32_t nprefix, rel_cursor *c) {
    const btree *bt = cursor_init(r, index, prefix, nprefix, c);
    if (nprefix == 0) { /* a full scan: record the path on the way down */
        cursor_enter(c, bt_first(bt, &c->path), 0);
        return;
    }
    uint32_t pos = 0;
    c->path.valid = false; /* found by key if the range leaves its first leaf */
    const bt_leaf *l = bt_seek(bt, prefix, nprefix, &pos);
    cursor_enter(c, l, pos);
}

void rel_seek_resume(const rel_t *r, int index, const val_t *prefix, uint32_t nprefix,
                     const void *leaf, const val_t *cur, rel_cursor *c) {
    cursor_init(r, index, prefix, nprefix, c);
    c->path.valid = false; /* found again by key if the range leaves this leaf */
    c->path.depth = 0;
    const bt_leaf *l = leaf;
    cursor_enter(c, l, l ? (uint32_t)((size_t)(cur - l->e) / c->stride) : 0);
}

/* The count of a tuple met through a secondary index: look it up in the primary. */
static int64_t secondary_count(const rel_t *r, int index, const val_t *t) {
    val_t nat[REL_MAX_ARITY];
    const uint32_t *order = r->idx[index].order;
    for (uint32_t i = 0; i < r->arity; i++) nat[order[i]] = t[i];
    return rel_get_count(r, nat);
}

static inline void put_count(const rel_cursor *c, const val_t *t, int64_t *count) {
    const rel_t *r = c->rel;
    if (!r->counted)
        *count = 1;
    else if (c->index == 0)
        *count = (int64_t)t[r->arity];
    else
        *count = secondary_count(r, c->index, t);
}

const val_t *rel_next(rel_cursor *c, int64_t *count) {
    for (;;) {
        if (c->cur < c->end) {
            const val_t *t = c->cur;
            c->cur += c->stride;
            if (count) put_count(c, t, count);
            return t;
        }
        const bt_leaf *l = c->leaf;
        switch (c->mode) {
        case REL_CUR_LEAF:
            cursor_enter(c, bt_next_leaf_fast(&c->rel->idx[c->index].bt, l, &c->path), 0);
            continue;
        case REL_CUR_CHECK: {
            const val_t *t = c->cur;
            if (t < l->e + (size_t)l->h.n * c->stride && bt_cmp(t, c->prefix, c->nprefix) == 0) {
                c->cur = c->end = t + c->stride;
                if (count) put_count(c, t, count);
                return t;
            }
            c->mode = REL_CUR_DONE;
            return NULL;
        }
        default:
            return NULL;
        }
    }
}

const val_t *rel_next_run(rel_cursor *c, size_t *n, uint32_t *stride) {
    *stride = c->stride;
    /* in REL_CUR_LEAF mode the cursor is on a leaf; entering NULL ends the range */
    while (c->cur >= c->end && c->mode == REL_CUR_LEAF)
        cursor_enter(c, bt_next_leaf_fast(&c->rel->idx[c->index].bt, c->leaf, &c->path), 0);
    if (c->cur < c->end) {
        const val_t *t = c->cur;
        *n = (size_t)(c->end - c->cur) / c->stride;
        c->cur = c->end;
        return t;
    }
    const val_t *t = rel_next(c, NULL);
    *n = t ? 1 : 0;
    return t;
}

void rel_swap(rel_t *a, rel_t *b) {
    assert(!a->snap && !b->snap);
    struct rel t = *a;
    *a = *b;
    *b = t;
}

bool rel_load_sorted(rel_t *r, const val_t *tuples, size_t n) {
    return rel_load_sorted_parts(r, &tuples, &n, 1);
}

bool rel_load_sorted_parts(rel_t *r, const val_t *const *parts, const size_t *counts,
                           size_t nparts) {
    size_t n = 0;
    for (size_t i = 0; i < nparts; i++) n += counts[i];
    if (r->snap || r->counted || r->idx[0].bt.count || n == 0) return false;
    const val_t *prev = NULL;
    for (size_t i = 0; i < nparts; i++)
        for (size_t j = 0; j < counts[i]; j++) {
            const val_t *t = parts[i] + j * r->arity;
            if (prev && bt_cmp(prev, t, r->arity) >= 0) return false;
            prev = t;
        }
    bt_build_parts(&r->idx[0].bt, r->pool, parts, counts, nparts);
    for (int i = 1; i < r->nidx; i++) build_index(r, &r->idx[i], r->arity);
    r->changes += n;
    return true;
}
