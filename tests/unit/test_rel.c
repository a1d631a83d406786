/* Unit tests of relation storage (exec/rel.h) and the B+-trees under it
 * (exec/btree.h): random operations checked against a brute-force model, prefix
 * seeks at every length, counted relations, index creation, clearing, large loads. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "exec/btree.h"
#include "exec/rel.h"
#include "exec/tupleset.h"

/* ---- helpers ------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static uint64_t rnd_below(uint64_t n) {
    return rnd() % n;
}

/* Small domains make collisions (re-inserts, deletes of present tuples) common; the
 * spread mapping puts the values all over the 64-bit range (tagged words included) so
 * that raw unsigned order is exercised, not just small integers. */
static bool spread;
static val_t val_of(uint64_t x) {
    return spread ? x * 0x9E3779B97F4A7C15ull : x;
}

static uint32_t sort_width;
static int cmp_tuples(const void *a, const void *b) {
    return bt_cmp(a, b, sort_width);
}

#define MAXA      5
#define MODEL_MAX 20000

/* The model: a plain array of distinct tuples with their counts. */
typedef struct model {
    uint32_t arity;
    size_t n;
    val_t t[MODEL_MAX][MAXA];
    int64_t c[MODEL_MAX]; /* count; for sets always 1 */
} model;

static long model_find(const model *m, const val_t *t) {
    for (size_t i = 0; i < m->n; i++)
        if (bt_cmp(m->t[i], t, m->arity) == 0) return (long)i;
    return -1;
}

static void model_remove(model *m, size_t i) {
    m->n--;
    memcpy(m->t[i], m->t[m->n], sizeof m->t[i]);
    m->c[i] = m->c[m->n];
}

static size_t model_present(const model *m) {
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) k += m->c[i] > 0;
    return k;
}

/* Every index's full scan equals the present model tuples, permuted and sorted; counts
 * come out right through every index. */
static void check_scans(const rel_t *r, const model *m, int nidx) {
    uint32_t a = m->arity;
    cr_assert_eq(rel_count(r), model_present(m));
    val_t *exp = malloc((m->n + 1) * (MAXA + 1) * sizeof *exp);
    for (int ix = 0; ix < nidx; ix++) {
        const uint32_t *order = rel_index_order(r, ix);
        size_t k = 0;
        for (size_t i = 0; i < m->n; i++) {
            if (m->c[i] <= 0) continue;
            for (uint32_t j = 0; j < a; j++) exp[k * (a + 1) + j] = m->t[i][order[j]];
            exp[k * (a + 1) + a] = (val_t)m->c[i];
            k++;
        }
        sort_width = a + 1; /* tuples are unique, so the count word never decides */
        qsort(exp, k, (a + 1) * sizeof *exp, cmp_tuples);
        rel_cursor c;
        rel_seek(r, ix, NULL, 0, &c);
        const val_t *t;
        int64_t cnt;
        size_t got = 0;
        while ((t = rel_next(&c, &cnt))) {
            cr_assert_lt(got, k, "index %d yields more tuples than the model has", ix);
            cr_assert_eq(bt_cmp(t, exp + got * (a + 1), a), 0, "index %d tuple %zu differs", ix,
                         got);
            cr_assert_eq(cnt, (int64_t)exp[got * (a + 1) + a], "index %d count of tuple %zu", ix,
                         got);
            got++;
        }
        cr_assert_eq(got, k, "index %d yields %zu tuples, model %zu", ix, got, k);
        cr_assert_null(rel_next(&c, NULL), "an exhausted cursor stays exhausted");
    }
    free(exp);
}

/* A seek visits exactly the model's tuples with the prefix, in the index's order. */
static void check_seek(const rel_t *r, const model *m, int ix, const val_t *prefix, uint32_t np) {
    uint32_t a = m->arity;
    const uint32_t *order = rel_index_order(r, ix);
    val_t *exp = malloc((m->n + 1) * MAXA * sizeof *exp);
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->c[i] <= 0) continue;
        val_t p[MAXA];
        for (uint32_t j = 0; j < a; j++) p[j] = m->t[i][order[j]];
        if (bt_cmp(p, prefix, np) != 0) continue;
        memcpy(exp + k++ * a, p, a * sizeof *p);
    }
    sort_width = a;
    qsort(exp, k, a * sizeof *exp, cmp_tuples);
    rel_cursor c;
    rel_seek(r, ix, prefix, np, &c);
    size_t got = 0;
    const val_t *t;
    while ((t = rel_next(&c, NULL))) {
        cr_assert_lt(got, k, "seek (index %d, %u words) yields too many", ix, np);
        cr_assert_eq(bt_cmp(t, exp + got * a, a), 0, "seek (index %d, %u words) tuple %zu", ix, np,
                     got);
        got++;
    }
    cr_assert_eq(got, k, "seek (index %d, %u words): %zu tuples, model %zu", ix, np, got, k);
    free(exp);
}

static void random_tuple(uint32_t a, uint64_t dom, val_t *t) {
    for (uint32_t j = 0; j < a; j++) t[j] = val_of(rnd_below(dom));
}

/* Domain per column so that arity a has a few thousand possible tuples. */
static uint64_t domain_for(uint32_t a) {
    static const uint64_t d[MAXA + 1] = {1, 3000, 60, 15, 8, 5};
    return d[a];
}

/* Adds a random secondary index (a random column order prefix). */
static int add_random_index(rel_t *r, uint32_t a) {
    uint32_t cols[MAXA], n = (uint32_t)rnd_below(a) + 1;
    for (uint32_t j = 0; j < a; j++) cols[j] = j;
    for (uint32_t j = a; j > 1; j--) {
        uint32_t k = (uint32_t)rnd_below(j), tmp = cols[j - 1];
        cols[j - 1] = cols[k];
        cols[k] = tmp;
    }
    int id = rel_index(r, cols, n);
    cr_assert_geq(id, 0);
    const uint32_t *order = rel_index_order(r, id);
    for (uint32_t j = 0; j < n; j++) cr_assert_eq(order[j], cols[j]);
    return id;
}

/* ---- B+-tree level ------------------------------------------------------------- */

/* Random inserts and deletes straight on a tree, with the structural check after every
 * batch; wide entries make small nodes and deep trees. */
static void btree_random(uint32_t width, uint32_t klen, size_t dom, int steps) {
    size_t ns = bt_node_bytes(width, klen);
    bt_pool pool;
    btree t;
    bt_pool_init(&pool, ns);
    bt_init(&t, width, klen, ns);
    bool *in = calloc(dom, sizeof *in);
    size_t n = 0;
    val_t e[BT_MAX_WIDTH] = {0};
    for (int s = 0; s < steps; s++) {
        /* Phases: mostly inserts, then mostly deletes, so the tree grows and shrinks. */
        bool ins = (s / 3000) % 2 == 0 ? rnd_below(10) < 7 : rnd_below(10) < 3;
        uint64_t x = rnd_below(dom);
        /* The key's first word decides the order; key words after it repeat x. */
        for (uint32_t j = 0; j < klen; j++) e[j] = j == 0 ? val_of(x) : x;
        for (uint32_t j = klen; j < width; j++) e[j] = x + j;
        if (ins) {
            bool added;
            val_t *slot = bt_insert(&t, &pool, e, &added);
            cr_assert_eq(added, !in[x]);
            cr_assert_eq(bt_cmp(slot, e, width), 0);
            if (added) n++;
            in[x] = true;
        } else {
            cr_assert_eq(bt_delete(&t, &pool, e), in[x]);
            if (in[x]) n--;
            in[x] = false;
        }
        cr_assert_eq(t.count, n);
        if (s % 500 == 499) {
            cr_assert(bt_check(&t), "structure after step %d", s);
            for (uint64_t y = 0; y < dom; y++) {
                for (uint32_t j = 0; j < klen; j++) e[j] = j == 0 ? val_of(y) : y;
                cr_assert_eq(bt_find(&t, e) != NULL, in[y]);
            }
        }
    }
    for (uint64_t y = 0; y < dom; y++) {
        if (!in[y]) continue;
        for (uint32_t j = 0; j < klen; j++) e[j] = j == 0 ? val_of(y) : y;
        cr_assert(bt_delete(&t, &pool, e));
    }
    cr_assert_null(t.root);
    cr_assert(bt_check(&t));
    bt_pool_destroy(&pool);
    free(in);
}

Test(btree, random_narrow) {
    rng_state = 1;
    spread = false;
    btree_random(2, 2, 5000, 30000);
}

Test(btree, random_wide_deep) {
    rng_state = 2;
    spread = true;
    btree_random(65, 64, 3000, 30000); /* 4 entries a leaf, 4 children a node */
}

Test(btree, random_payload) {
    rng_state = 3;
    spread = true;
    btree_random(6, 5, 4000, 30000);
}

Test(btree, ascending_and_descending_loads_fill_nodes) {
    for (int dir = 0; dir < 2; dir++) {
        size_t ns = bt_node_bytes(2, 2);
        bt_pool pool;
        btree t;
        bt_pool_init(&pool, ns);
        bt_init(&t, 2, 2, ns);
        size_t n = 100000;
        for (size_t i = 0; i < n; i++) {
            val_t e[2] = {dir ? n - i : i, 7};
            bool added;
            bt_insert(&t, &pool, e, &added);
            cr_assert(added);
        }
        cr_assert(bt_check(&t));
        size_t leaves = 0;
        bt_path path;
        for (const bt_leaf *l = bt_first(&t, &path); l; l = bt_next_leaf(&t, l, &path)) leaves++;
        size_t ideal = (n + t.lcap - 1) / t.lcap;
        cr_assert_leq(leaves, ideal + 1, "%s load: %zu leaves for an ideal %zu",
                      dir ? "descending" : "ascending", leaves, ideal);
        bt_pool_destroy(&pool);
    }
}

/* A tree emptied for every write (a view's changes) reuses its pool's small first chunk
 * when the pool is recycled: the same node memory, no allocation; a grown pool keeps only
 * that first chunk, and a cleared one nothing. */
Test(btree, recycle_keeps_the_first_small_chunk) {
    size_t ns = bt_node_bytes(2, 2);
    bt_pool pool;
    btree t;
    bt_pool_init(&pool, ns);
    bt_init(&t, 2, 2, ns);
    val_t e[2] = {1, 2};
    bool added;
    const val_t *first = bt_insert(&t, &pool, e, &added);
    size_t one = bt_pool_bytes(&pool);
    cr_assert_gt(one, 0);
    cr_assert_leq(one, 4096);
    for (int round = 0; round < 3; round++) {
        bt_reset(&t);
        bt_pool_recycle(&pool);
        cr_assert_eq(bt_pool_bytes(&pool), one, "the first chunk stays");
        const val_t *again = bt_insert(&t, &pool, e, &added);
        cr_assert(added);
        cr_assert_eq(again, first, "its room is taken again");
        cr_assert_eq(bt_pool_bytes(&pool), one, "no chunk was allocated");
    }
    /* Grown over many chunks, and cleared: only the first stays, and the tree works. */
    for (val_t i = 0; i < 50000; i++) {
        val_t x[2] = {i, i};
        bt_insert(&t, &pool, x, &added);
    }
    cr_assert_gt(bt_pool_bytes(&pool), 100 * one);
    bt_reset(&t);
    bt_pool_recycle(&pool);
    cr_assert_eq(bt_pool_bytes(&pool), one);
    for (val_t i = 0; i < 1000; i++) {
        val_t x[2] = {i * 3, i};
        bt_insert(&t, &pool, x, &added);
        cr_assert(added);
    }
    cr_assert(bt_check(&t));
    cr_assert_eq(t.count, 1000);
    bt_reset(&t);
    bt_pool_clear(&pool);
    cr_assert_eq(bt_pool_bytes(&pool), 0, "clear keeps nothing");
    bt_pool_destroy(&pool);
}

Test(btree, bulk_build_every_size) {
    size_t ns = bt_node_bytes(3, 3);
    val_t *es = malloc(20000 * 3 * sizeof *es);
    for (size_t i = 0; i < 20000; i++) {
        es[i * 3] = i / 7;
        es[i * 3 + 1] = i % 7;
        es[i * 3 + 2] = 0;
    }
    for (size_t n = 0; n < 20000; n = n < 200 ? n + 1 : n * 3 / 2) {
        bt_pool pool;
        btree t;
        bt_pool_init(&pool, ns);
        bt_init(&t, 3, 3, ns);
        bt_build(&t, &pool, es, n);
        cr_assert(bt_check(&t), "build of %zu", n);
        /* The built tree takes updates like any other. */
        for (size_t i = 0; i < n; i += 2) cr_assert(bt_delete(&t, &pool, es + i * 3));
        val_t extra[3] = {5, 100, 0};
        bool added;
        bt_insert(&t, &pool, extra, &added);
        cr_assert(added);
        cr_assert(bt_check(&t), "updates after build of %zu", n);
        bt_pool_destroy(&pool);
    }
    free(es);
}

/* ---- relations: random operations against the model ---------------------------- */

static void rel_random(uint32_t a, bool counted, bool spread_values, uint64_t seed) {
    rng_state = seed;
    spread = spread_values;
    static model m;
    memset(&m, 0, sizeof m);
    m.arity = a;
    uint64_t dom = domain_for(a);
    rel_t *r = counted ? rel_new_counted(a) : rel_new(a);
    cr_assert_eq(rel_arity(r), a);
    cr_assert_eq(rel_is_counted(r), counted);
    int nidx = 1;
    for (int k = 0; k < 2 && a > 1; k++) {
        int id = add_random_index(r, a); /* may be an index that exists already */
        if (id + 1 > nidx) nidx = id + 1;
    }
    val_t t[MAXA];
    for (int batch = 0; batch < 40; batch++) {
        /* Alternate growing and shrinking phases. */
        int grow = (batch / 5) % 2 == 0 ? 7 : 3;
        for (int s = 0; s < 150; s++) {
            random_tuple(a, dom, t);
            long i = model_find(&m, t);
            int op = (int)rnd_below(10);
            if (!counted || op < 3) {
                bool ins = (int)rnd_below(10) < grow;
                if (ins) {
                    bool was = i >= 0 && m.c[i] > 0;
                    cr_assert_eq(rel_insert(r, t), !was);
                    if (i < 0) {
                        i = (long)m.n++;
                        memcpy(m.t[i], t, sizeof t);
                    }
                    m.c[i] = 1;
                } else {
                    bool was = i >= 0 && m.c[i] > 0;
                    cr_assert_eq(rel_delete(r, t), was);
                    if (i >= 0) model_remove(&m, (size_t)i);
                }
            } else {
                int64_t delta = (int64_t)rnd_below(5) - (grow == 7 ? 1 : 3);
                int64_t old = i >= 0 ? m.c[i] : 0, now = old + delta;
                int want = old <= 0 && now > 0 ? 1 : old > 0 && now <= 0 ? -1 : 0;
                cr_assert_eq(rel_add_count(r, t, delta), want, "add_count %lld from %lld",
                             (long long)delta, (long long)old);
                if (i < 0 && now != 0) {
                    i = (long)m.n++;
                    memcpy(m.t[i], t, sizeof t);
                }
                if (i >= 0) m.c[i] = now;
                if (i >= 0 && now == 0) model_remove(&m, (size_t)i);
            }
            i = model_find(&m, t);
            cr_assert_eq(rel_get_count(r, t), i >= 0 ? m.c[i] : 0);
            cr_assert_eq(rel_contains(r, t), i >= 0 && m.c[i] > 0);
        }
        if (batch == 20 && a > 1) { /* built in bulk from the tuples present */
            int id = add_random_index(r, a);
            if (id + 1 > nidx) nidx = id + 1;
        }
        check_scans(r, &m, nidx);
        if (batch % 10 == 9) {
            /* Prefix seeks at every length, from present tuples and from random ones. */
            for (int ix = 0; ix < nidx; ix++) {
                const uint32_t *order = rel_index_order(r, ix);
                for (uint32_t np = 0; np <= a; np++) {
                    for (int q = 0; q < 20; q++) {
                        val_t p[MAXA];
                        if (m.n && q % 2 == 0) {
                            size_t i = rnd_below(m.n);
                            for (uint32_t j = 0; j < a; j++) p[j] = m.t[i][order[j]];
                        } else {
                            random_tuple(a, dom + 2, p);
                        }
                        check_seek(r, &m, ix, p, np);
                    }
                }
            }
        }
    }
    rel_free(r);
}

Test(rel, random_sets_every_arity) {
    for (uint32_t a = 1; a <= MAXA; a++) {
        rel_random(a, false, false, 100 + a);
        rel_random(a, false, true, 200 + a);
    }
}

Test(rel, random_counted_every_arity) {
    for (uint32_t a = 1; a <= MAXA; a++) {
        rel_random(a, true, false, 300 + a);
        rel_random(a, true, true, 400 + a);
    }
}

/* ---- relations: specific behaviour --------------------------------------------- */

Test(rel, seek_ranges_across_many_leaves) {
    /* Prefix groups bigger than a leaf, and groups that start and end mid-leaf. */
    rel_t *r = rel_new(3);
    for (uint64_t x = 0; x < 50; x++)
        for (uint64_t y = 0; y < x * 3; y++)
            for (uint64_t z = 0; z < 2; z++) rel_insert(r, (val_t[]){x, y, z});
    uint32_t cols[] = {2, 1};
    int ix = rel_index(r, cols, 2);
    cr_assert_eq(ix, 1);
    for (uint64_t x = 0; x < 52; x++) {
        rel_cursor c;
        rel_seek(r, 0, (val_t[]){x}, 1, &c);
        size_t n = 0;
        const val_t *t;
        while ((t = rel_next(&c, NULL))) {
            cr_assert_eq(t[0], x);
            cr_assert_eq(t[1], n / 2);
            cr_assert_eq(t[2], n % 2);
            n++;
        }
        cr_assert_eq(n, x < 50 ? x * 6 : 0);
        rel_seek(r, 0, (val_t[]){x, 1}, 2, &c);
        n = 0;
        while (rel_next(&c, NULL)) n++;
        cr_assert_eq(n, x < 50 && x * 3 > 1 ? 2 : 0);
    }
    /* Index (2, 1, 0): all z = 1 tuples, ordered by y then x. */
    rel_cursor c;
    rel_seek(r, ix, (val_t[]){1}, 1, &c);
    const val_t *t;
    val_t prev[3] = {0, 0, 0};
    size_t n = 0;
    while ((t = rel_next(&c, NULL))) {
        cr_assert_eq(t[0], 1);
        if (n) cr_assert_gt(bt_cmp(t, prev, 3), 0);
        memcpy(prev, t, sizeof prev);
        n++;
    }
    cr_assert_eq(n, rel_count(r) / 2);
    /* A prefix past every tuple, and one before them all. */
    rel_seek(r, 0, (val_t[]){UINT64_MAX}, 1, &c);
    cr_assert_null(rel_next(&c, NULL));
    rel_seek(r, 1, (val_t[]){0, 0, 0}, 3, &c);
    cr_assert_null(rel_next(&c, NULL)); /* (x=0) has no tuples */
    rel_seek(r, 1, (val_t[]){0, 0, 1}, 3, &c);
    t = rel_next(&c, NULL);
    cr_assert_not_null(t);
    cr_assert_null(rel_next(&c, NULL));
    rel_free(r);
}

/* The tuples of a seek, one at a time and in runs (rel_next_run), compared; returns the
   number of runs. */
static size_t expect_runs_match(const rel_t *r, int index, const val_t *prefix, uint32_t nprefix) {
    rel_cursor one, runs;
    rel_seek(r, index, prefix, nprefix, &one);
    rel_seek(r, index, prefix, nprefix, &runs);
    uint32_t arity = rel_arity(r), stride;
    size_t n, total = 0, nruns = 0;
    const val_t *run;
    while ((run = rel_next_run(&runs, &n, &stride))) {
        cr_assert_gt(n, 0);
        cr_assert_geq(stride, arity);
        nruns++;
        for (size_t k = 0; k < n; k++, total++) {
            const val_t *t = rel_next(&one, NULL);
            cr_assert_not_null(t, "a run went past the range");
            cr_assert_eq(memcmp(t, run + k * stride, arity * sizeof *t), 0);
        }
    }
    cr_assert_null(rel_next(&one, NULL), "runs stopped early after %zu tuples", total);
    return nruns;
}

Test(rel, runs_visit_what_next_visits) {
    /* whole leaves, ranges that start and end mid-leaf, secondary and counted indexes */
    rel_t *sets = rel_new(3), *counted = rel_new_counted(2);
    for (uint64_t x = 0; x < 40; x++)
        for (uint64_t y = 0; y < x * 7; y++) {
            rel_insert(sets, (val_t[]){x, y, y % 3});
            rel_add_count(counted, (val_t[]){x, y}, (int64_t)(y % 4) + 1);
        }
    uint32_t cols[] = {2};
    int ix = rel_index(sets, cols, 1);
    /* a whole scan comes a leaf at a time */
    cr_assert_lt(expect_runs_match(sets, 0, NULL, 0) * 10, rel_count(sets));
    cr_assert_lt(expect_runs_match(counted, 0, NULL, 0) * 10, rel_count(counted));
    for (uint64_t x = 0; x < 42; x++) {
        expect_runs_match(sets, 0, (val_t[]){x}, 1);
        expect_runs_match(sets, 0, (val_t[]){x, 3}, 2);
        expect_runs_match(counted, 0, (val_t[]){x}, 1);
    }
    for (uint64_t z = 0; z < 4; z++) expect_runs_match(sets, ix, (val_t[]){z}, 1);
    rel_free(sets);
    rel_free(counted);
}

Test(rel, counted_transitions) {
    rel_t *r = rel_new_counted(2);
    uint32_t cols[] = {1};
    int ix = rel_index(r, cols, 1);
    val_t t[2] = {10, 20};
    cr_assert_eq(rel_add_count(r, t, 2), 1); /* appears */
    cr_assert_eq(rel_add_count(r, t, 3), 0); /* 5 */
    cr_assert_eq(rel_get_count(r, t), 5);
    cr_assert_eq(rel_add_count(r, t, -4), 0);  /* 1 */
    cr_assert_eq(rel_add_count(r, t, -1), -1); /* vanishes at 0 */
    cr_assert(!rel_contains(r, t));
    cr_assert_eq(rel_count(r), 0);
    cr_assert_eq(rel_add_count(r, t, -2), 0); /* negative: stored, not present */
    cr_assert_eq(rel_get_count(r, t), -2);
    cr_assert(!rel_contains(r, t));
    cr_assert_eq(rel_count(r), 0);
    rel_cursor c;
    rel_seek(r, 0, NULL, 0, &c);
    cr_assert_null(rel_next(&c, NULL), "a negative tuple is not scanned");
    cr_assert_eq(rel_add_count(r, t, 1), 0);   /* -1 */
    cr_assert_eq(rel_add_count(r, t, 3), 1);   /* 2: appears */
    cr_assert_eq(rel_add_count(r, t, -5), -1); /* -3: vanishes */
    cr_assert_eq(rel_get_count(r, t), -3);
    cr_assert_eq(rel_add_count(r, t, 3), 0); /* back to 0: forgotten */
    cr_assert_eq(rel_get_count(r, t), 0);
    cr_assert_eq(rel_bytes(r), 0, "nothing stored, nothing held");
    cr_assert_eq(rel_add_count(r, t, 0), 0);
    /* Insert and delete set the count to 1 and 0. */
    cr_assert(rel_insert(r, t));
    cr_assert_eq(rel_add_count(r, t, 6), 0);
    cr_assert(!rel_insert(r, t));
    cr_assert_eq(rel_get_count(r, t), 1);
    cr_assert_eq(rel_add_count(r, t, -3), 0 - 1);
    cr_assert_eq(rel_add_count(r, t, -1), 0); /* -3 */
    cr_assert(rel_insert(r, t));              /* from -3 to 1 */
    cr_assert_eq(rel_get_count(r, t), 1);
    cr_assert_eq(rel_add_count(r, t, 4), 0);
    /* The count through the secondary index. */
    rel_seek(r, ix, (val_t[]){20}, 1, &c);
    int64_t cnt = 0;
    const val_t *s = rel_next(&c, &cnt);
    cr_assert_not_null(s);
    cr_assert_eq(s[0], 20);
    cr_assert_eq(s[1], 10);
    cr_assert_eq(cnt, 5);
    cr_assert(rel_delete(r, t));
    cr_assert_eq(rel_get_count(r, t), 0);
    cr_assert(!rel_delete(r, t));
    cr_assert_eq(rel_add_count(r, t, -1), 0);
    cr_assert(!rel_delete(r, t)); /* clears the negative count */
    cr_assert_eq(rel_get_count(r, t), 0);
    rel_free(r);
}

Test(rel, sets_take_counts_as_insert_and_delete) {
    rel_t *r = rel_new(1);
    val_t t[1] = {4};
    cr_assert_eq(rel_add_count(r, t, 3), 1);
    cr_assert_eq(rel_add_count(r, t, 3), 0);
    cr_assert_eq(rel_get_count(r, t), 1);
    cr_assert_eq(rel_add_count(r, t, -1), -1);
    cr_assert_eq(rel_add_count(r, t, -1), 0);
    rel_free(r);
}

Test(rel, clear_keeps_arity_and_indexes) {
    rel_t *r = rel_new_counted(3);
    uint32_t cols[] = {2};
    int ix = rel_index(r, cols, 1);
    for (uint64_t i = 0; i < 5000; i++) rel_add_count(r, (val_t[]){i, i * 2, i % 10}, 2);
    rel_add_count(r, (val_t[]){1, 1, 1}, -1);
    cr_assert_gt(rel_bytes(r), 0);
    rel_clear(r);
    cr_assert_eq(rel_count(r), 0);
    cr_assert_leq(rel_bytes(r), 4096, "a small first chunk at most");
    cr_assert_eq(rel_arity(r), 3);
    cr_assert_eq(rel_get_count(r, (val_t[]){1, 1, 1}), 0);
    cr_assert_eq(rel_index(r, cols, 1), ix);
    for (uint64_t i = 0; i < 100; i++) rel_add_count(r, (val_t[]){i, i, i % 10}, 1);
    rel_cursor c;
    rel_seek(r, ix, (val_t[]){3}, 1, &c);
    size_t n = 0;
    int64_t cnt;
    while (rel_next(&c, &cnt)) {
        cr_assert_eq(cnt, 1);
        n++;
    }
    cr_assert_eq(n, 10);
    rel_free(r);
}

Test(rel, index_ids_and_limits) {
    rel_t *r = rel_new(3);
    uint32_t c0[] = {0}, c01[] = {0, 1}, c1[] = {1}, c10[] = {1, 0}, c2[] = {2}, bad[] = {3},
             dup[] = {1, 1};
    cr_assert_eq(rel_index(r, NULL, 0), 0);
    cr_assert_eq(rel_index(r, c0, 1), 0);
    cr_assert_eq(rel_index(r, c01, 2), 0);
    cr_assert_eq(rel_index(r, c1, 1), 1);
    const uint32_t *o = rel_index_order(r, 1);
    cr_assert(o[0] == 1 && o[1] == 0 && o[2] == 2);
    cr_assert_eq(rel_index(r, c10, 2), 1);
    cr_assert_eq(rel_index(r, c2, 1), 2);
    cr_assert_eq(rel_index(r, bad, 1), -1);
    cr_assert_eq(rel_index(r, dup, 2), -1);
    rel_free(r);
    /* Past REL_MAX_INDEXES. */
    r = rel_new(4);
    int made = 1;
    uint32_t perms[][2] = {{1, 0}, {2, 0}, {3, 0}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 1}, {3, 1}};
    for (size_t i = 0; i < sizeof perms / sizeof *perms; i++) {
        int id = rel_index(r, perms[i], 2);
        if (made < REL_MAX_INDEXES) {
            cr_assert_eq(id, made);
            made++;
        } else {
            cr_assert_eq(id, -1);
        }
    }
    rel_free(r);
    cr_assert_null(rel_new(REL_MAX_ARITY + 1));
}

Test(rel, index_built_on_populated_relation) {
    rng_state = 77;
    rel_t *r = rel_new(3);
    static model m;
    memset(&m, 0, sizeof m);
    m.arity = 3;
    for (int i = 0; i < 15000; i++) {
        val_t t[3] = {rnd_below(40), rnd() >> (rnd_below(64)), rnd_below(3)};
        if (rel_insert(r, t)) {
            memcpy(m.t[m.n], t, sizeof t);
            m.c[m.n++] = 1;
        }
    }
    uint32_t c21[] = {2, 1}, c1[] = {1};
    cr_assert_eq(rel_index(r, c21, 2), 1);
    cr_assert_eq(rel_index(r, c1, 1), 2);
    check_scans(r, &m, 3);
    for (int i = 0; i < 200; i++) {
        size_t k = rnd_below(m.n);
        val_t p[3] = {m.t[k][2], m.t[k][1], m.t[k][0]};
        check_seek(r, &m, 1, p, (uint32_t)(i % 4));
    }
    rel_free(r);
}

Test(rel, nullary) {
    rel_t *r = rel_new(0);
    cr_assert(!rel_contains(r, NULL));
    cr_assert(rel_insert(r, NULL));
    cr_assert(!rel_insert(r, NULL));
    cr_assert_eq(rel_count(r), 1);
    rel_cursor c;
    rel_seek(r, 0, NULL, 0, &c);
    cr_assert_not_null(rel_next(&c, NULL));
    cr_assert_null(rel_next(&c, NULL));
    cr_assert(rel_delete(r, NULL));
    cr_assert_eq(rel_count(r), 0);
    rel_free(r);
    r = rel_new_counted(0);
    cr_assert_eq(rel_add_count(r, NULL, 2), 1);
    cr_assert_eq(rel_get_count(r, NULL), 2);
    cr_assert_eq(rel_add_count(r, NULL, -2), -1);
    rel_free(r);
}

Test(rel, large_insert_then_delete_everything) {
    rng_state = 5;
    size_t n = 200000;
    rel_t *r = rel_new(2);
    uint32_t c1[] = {1};
    cr_assert_eq(rel_index(r, c1, 1), 1);
    val_t *ts = malloc(n * 2 * sizeof *ts);
    for (size_t i = 0; i < n; i++) {
        ts[2 * i] = i / 3;
        ts[2 * i + 1] = rnd();
    }
    /* Random order in, a different random order out. */
    for (size_t i = n; i > 1; i--) {
        size_t k = rnd_below(i);
        val_t a = ts[2 * (i - 1)], b = ts[2 * (i - 1) + 1];
        ts[2 * (i - 1)] = ts[2 * k];
        ts[2 * (i - 1) + 1] = ts[2 * k + 1];
        ts[2 * k] = a;
        ts[2 * k + 1] = b;
    }
    for (size_t i = 0; i < n; i++) cr_assert(rel_insert(r, ts + 2 * i));
    cr_assert_eq(rel_count(r), n);
    rel_cursor c;
    rel_seek(r, 1, NULL, 0, &c);
    const val_t *t, *prev = NULL;
    size_t k = 0;
    while ((t = rel_next(&c, NULL))) {
        if (prev) cr_assert_gt(bt_cmp(t, prev, 2), 0);
        prev = t;
        k++;
    }
    cr_assert_eq(k, n);
    for (size_t i = 0; i < n; i++) {
        size_t j = (i * 7919) % n; /* 7919 is prime and does not divide n */
        cr_assert(rel_delete(r, ts + 2 * j));
        if (i % 50000 == 0) cr_assert_eq(rel_count(r), n - i - 1);
    }
    cr_assert_eq(rel_count(r), 0);
    cr_assert_eq(rel_bytes(r), 0);
    for (int ix = 0; ix < 2; ix++) {
        rel_seek(r, ix, NULL, 0, &c);
        cr_assert_null(rel_next(&c, NULL));
    }
    /* Still usable. */
    cr_assert(rel_insert(r, ts));
    cr_assert(rel_contains(r, ts));
    free(ts);
    rel_free(r);
}

Test(rel, sequential_load_is_compact) {
    size_t n = 200000;
    rel_t *r = rel_new(2);
    for (size_t i = 0; i < n; i++) rel_insert(r, (val_t[]){i, i * 3});
    double bpt = (double)rel_bytes(r) / (double)n;
    cr_assert_lt(bpt, 20.0, "%.1f bytes a tuple", bpt);
    uint32_t c1[] = {1};
    rel_index(r, c1, 1);
    bpt = (double)rel_bytes(r) / (double)n;
    cr_assert_lt(bpt, 40.0, "%.1f bytes a tuple with two indexes", bpt);
    rel_free(r);
}

Test(tupleset, pushed_tuples_are_indexed_when_an_insert_comes) {
    /* the query's rows of one scan are pushed without hashing; a later insert (another
       clause of the same predicate) must still find every one of them */
    tupleset s;
    tupleset_init(&s, 2);
    for (int64_t i = 0; i < 5000; i++)
        tupleset_push_distinct(&s, (val_t[]){val_int(i), val_int(-i)});
    cr_assert_eq(s.n, 5000);
    for (int64_t i = 0; i < 5000; i += 7)
        cr_assert_not(tupleset_insert(&s, (val_t[]){val_int(i), val_int(-i)}), "%d", (int)i);
    cr_assert(tupleset_insert(&s, (val_t[]){val_int(1), val_int(1)}));
    cr_assert_eq(s.n, 5001);
    /* an indexed set stays indexed: a push of a present tuple does not duplicate it */
    tupleset_push_distinct(&s, (val_t[]){val_int(1), val_int(1)});
    cr_assert_eq(s.n, 5001);
    tupleset_free(&s);
}

/* ---- snapshots ----------------------------------------------------------------- */

/* Path copying at the tree level, on trees several levels high: copies of a tree's
 * struct pinned at many versions keep their structure and contents (bt_check, the
 * entries) while the writer inserts and deletes at random; unpinned in random order,
 * every retired node comes back. */
Test(btree, pinned_copies_stay_while_the_writer_changes) {
    rng_state = 7;
    enum { W = 3, N = 6000, SNAPS = 12 };
    size_t ns = bt_node_bytes(W, W);
    bt_pool pool;
    bt_pool_init(&pool, ns);
    btree t;
    bt_init(&t, W, W, ns);
    bool in[N] = {false};
    struct {
        btree copy;
        uint64_t tag;
        bool in[N];
        bool live;
    } *snaps = calloc(SNAPS, sizeof *snaps);
    for (int round = 0; round < 3 * SNAPS; round++) {
        for (int s = 0; s < 3000; s++) {
            uint64_t x = rnd_below(N);
            val_t e[W] = {x % 17, x, x * 3};
            bool added;
            if (rnd_below(3)) {
                bt_insert(&t, &pool, e, &added);
                cr_assert_eq(added, !in[x]);
                in[x] = true;
            } else {
                cr_assert_eq(bt_delete(&t, &pool, e), in[x]);
                in[x] = false;
            }
        }
        cr_assert(bt_check(&t));
        int k = (int)rnd_below(SNAPS);
        if (snaps[k].live) {
            cr_assert(bt_check(&snaps[k].copy), "snapshot %d before its release", k);
            bt_pool_unpin(&pool, snaps[k].tag);
        }
        snaps[k].copy = t;
        snaps[k].tag = bt_pool_pin(&pool);
        memcpy(snaps[k].in, in, sizeof in);
        snaps[k].live = true;
        for (int j = 0; j < SNAPS; j++) {
            if (!snaps[j].live) continue;
            cr_assert(bt_check(&snaps[j].copy), "snapshot %d in round %d", j, round);
            for (uint64_t x = 0; x < N; x += 7) {
                val_t e[W] = {x % 17, x, x * 3};
                cr_assert_eq(bt_find(&snaps[j].copy, e) != NULL, snaps[j].in[x],
                             "snapshot %d, entry %llu", j, (unsigned long long)x);
            }
        }
    }
    cr_assert_gt(bt_pool_retired(&pool), 0, "the writer replaced nodes that snapshots saw");
    for (int j = 0; j < SNAPS; j++)
        if (snaps[j].live) bt_pool_unpin(&pool, snaps[j].tag);
    cr_assert_eq(bt_pool_retired(&pool), 0, "every retired node is freed with the last pin");
    cr_assert(!bt_pool_pinned(&pool));
    /* With no snapshot left, changes happen in place: no node is retired. */
    for (uint64_t x = 0; x < N; x++) {
        val_t e[W] = {x % 17, x, x * 3};
        bool added;
        bt_insert(&t, &pool, e, &added);
    }
    cr_assert_eq(bt_pool_retired(&pool), 0);
    cr_assert(bt_check(&t));
    free(snaps);
    bt_pool_destroy(&pool);
}

/* A snapshot with the model as it was and the number of indexes it had. */
typedef struct snap_rec {
    const rel_t *s;
    model *m;
    int nidx;
} snap_rec;

static void check_snapshot(const snap_rec *sr, uint64_t dom) {
    const model *m = sr->m;
    uint32_t a = m->arity;
    cr_assert(rel_is_snapshot(sr->s));
    check_scans(sr->s, m, sr->nidx);
    val_t t[MAXA];
    for (int q = 0; q < 40; q++) {
        if (m->n && q % 2) {
            memcpy(t, m->t[rnd_below(m->n)], sizeof t);
        } else {
            random_tuple(a, dom, t);
        }
        long i = model_find(m, t);
        cr_assert_eq(rel_get_count(sr->s, t), i >= 0 ? m->c[i] : 0);
        cr_assert_eq(rel_contains(sr->s, t), i >= 0 && m->c[i] > 0);
    }
    for (int ix = 0; ix < sr->nidx; ix++) {
        const uint32_t *order = rel_index_order(sr->s, ix);
        for (uint32_t np = 1; np <= a; np++) {
            val_t p[MAXA];
            if (m->n) {
                size_t i = rnd_below(m->n);
                for (uint32_t j = 0; j < a; j++) p[j] = m->t[i][order[j]];
            } else {
                random_tuple(a, dom, p);
            }
            check_seek(sr->s, m, ix, p, np);
        }
    }
}

static void release_rec(snap_rec *sr) {
    rel_snapshot_release(sr->s);
    free(sr->m);
    sr->s = NULL;
}

/* Random inserts, deletes, count changes, clears and new indexes on the live relation
 * while up to SNAP_LIVE snapshots taken along the way are checked against copies of the
 * model made when each was taken; released in random order, some after the relation. */
enum { SNAP_LIVE = 5 };
static void snap_random(uint32_t a, bool counted, uint64_t seed) {
    rng_state = seed;
    spread = seed & 1;
    static model m;
    memset(&m, 0, sizeof m);
    m.arity = a;
    uint64_t dom = domain_for(a);
    rel_t *r = counted ? rel_new_counted(a) : rel_new(a);
    int nidx = a > 1 ? add_random_index(r, a) + 1 : 1;
    snap_rec snaps[SNAP_LIVE] = {{0}};
    val_t t[MAXA];
    for (int batch = 0; batch < 30; batch++) {
        int grow = (batch / 4) % 2 == 0 ? 7 : 3;
        for (int s = 0; s < 120; s++) {
            random_tuple(a, dom, t);
            long i = model_find(&m, t);
            int op = (int)rnd_below(10);
            if (!counted || op < 3) {
                if ((int)rnd_below(10) < grow) {
                    rel_insert(r, t);
                    if (i < 0) {
                        i = (long)m.n++;
                        memcpy(m.t[i], t, sizeof t);
                    }
                    m.c[i] = 1;
                } else {
                    rel_delete(r, t);
                    if (i >= 0) model_remove(&m, (size_t)i);
                }
            } else {
                int64_t delta = (int64_t)rnd_below(5) - (grow == 7 ? 1 : 3);
                int64_t now = (i >= 0 ? m.c[i] : 0) + delta;
                rel_add_count(r, t, delta);
                if (i < 0 && now != 0) {
                    i = (long)m.n++;
                    memcpy(m.t[i], t, sizeof t);
                }
                if (i >= 0) m.c[i] = now;
                if (i >= 0 && now == 0) model_remove(&m, (size_t)i);
            }
            if (rnd_below(40) == 0) { /* a snapshot, in a random slot */
                snap_rec *sr = &snaps[rnd_below(SNAP_LIVE)];
                if (sr->s) {
                    check_snapshot(sr, dom);
                    release_rec(sr);
                }
                sr->s = rel_snapshot(r);
                sr->m = malloc(sizeof m);
                memcpy(sr->m, &m, sizeof m);
                sr->nidx = nidx;
                check_snapshot(sr, dom);
            }
        }
        if (batch % 10 == 5) {
            rel_clear(r);
            m.n = 0;
        }
        if (batch == 12 && a > 1) {
            int id = add_random_index(r, a);
            if (id + 1 > nidx) nidx = id + 1;
        }
        check_scans(r, &m, nidx);
        for (int k = 0; k < SNAP_LIVE; k++)
            if (snaps[k].s) check_snapshot(&snaps[k], dom);
    }
    /* Some snapshots outlive the relation. */
    for (int k = 0; k < 2; k++)
        if (snaps[k].s) {
            check_snapshot(&snaps[k], dom);
            release_rec(&snaps[k]);
        }
    rel_free(r);
    for (int k = 2; k < SNAP_LIVE; k++)
        if (snaps[k].s) {
            check_snapshot(&snaps[k], dom);
            release_rec(&snaps[k]);
        }
}

Test(rel_snapshot, sets_every_arity) {
    for (uint32_t a = 1; a <= MAXA; a++) snap_random(a, false, 500 + a);
}

Test(rel_snapshot, counted_every_arity) {
    for (uint32_t a = 1; a <= MAXA; a++) snap_random(a, true, 600 + a);
}

static void seq_counts(rel_t *r, size_t n, int64_t delta) {
    for (uint64_t i = 0; i < n; i++) rel_add_count(r, (val_t[]){i, i * 7}, delta);
}

/* Nodes the writer replaced go back to it once no snapshot can see them: a relation
 * rewritten under a new snapshot each round does not grow round after round. */
Test(rel_snapshot, memory_returns_after_release) {
    enum { N = 20000 };
    rel_t *r = rel_new_counted(2);
    uint32_t c1[] = {1};
    int ix = rel_index(r, c1, 1);
    seq_counts(r, N, 1);
    size_t base = rel_bytes(r);
    for (int round = 0; round < 20; round++) {
        const rel_t *s = rel_snapshot(r);
        seq_counts(r, N, round % 2 ? -1 : 1); /* every leaf of the primary changes */
        for (uint64_t i = 0; i < N; i += 10) rel_delete(r, (val_t[]){i, i * 7});
        for (uint64_t i = 0; i < N; i += 10) rel_add_count(r, (val_t[]){i, i * 7}, 1);
        cr_assert_eq(rel_get_count(s, (val_t[]){3, 21}), round % 2 ? 2 : 1);
        cr_assert_eq(rel_count(s), N);
        rel_snapshot_release(s);
    }
    cr_assert_leq(rel_bytes(r), 3 * base, "%zu bytes after 20 rounds, %zu before", rel_bytes(r),
                  base);
    /* With no snapshot, a round copies nothing. */
    size_t steady = rel_bytes(r);
    seq_counts(r, N, 1);
    cr_assert_eq(rel_bytes(r), steady);
    /* A clear with a snapshot outstanding: the relation starts on new memory, the
     * snapshot keeps the old until it goes (ASan sees that it does). */
    const rel_t *s = rel_snapshot(r);
    rel_clear(r);
    cr_assert_eq(rel_bytes(r), 0);
    cr_assert_eq(rel_count(s), N);
    cr_assert_eq(rel_get_count(s, (val_t[]){5, 35}), 2);
    rel_cursor c;
    rel_seek(s, ix, (val_t[]){35}, 1, &c);
    int64_t cnt;
    const val_t *t = rel_next(&c, &cnt);
    cr_assert(t && t[0] == 35 && t[1] == 5 && cnt == 2);
    rel_add_count(r, (val_t[]){1, 2}, 4);
    cr_assert_eq(rel_get_count(s, (val_t[]){1, 2}), 0);
    rel_snapshot_release(s);
    /* Emptied by deletes with a snapshot outstanding: the same. */
    s = rel_snapshot(r);
    rel_add_count(r, (val_t[]){1, 2}, -4);
    cr_assert_eq(rel_bytes(r), 0);
    cr_assert_eq(rel_get_count(s, (val_t[]){1, 2}), 4);
    rel_snapshot_release(s);
    rel_free(r);
}

/* Bulk loads, swaps, new indexes and the index lookup with snapshots outstanding. */
Test(rel_snapshot, loads_swaps_and_indexes) {
    enum { N = 5000 };
    val_t *ts = malloc(N * 2 * sizeof *ts);
    for (size_t i = 0; i < N; i++) {
        ts[2 * i] = i;
        ts[2 * i + 1] = N - i;
    }
    rel_t *a = rel_new(2), *b = rel_new(2);
    const rel_t *empty = rel_snapshot(a);
    cr_assert(rel_load_sorted(a, ts, N));
    cr_assert_eq(rel_count(empty), 0);
    const rel_t *sa = rel_snapshot(a);
    cr_assert(!rel_load_sorted((rel_t *)sa, ts, N), "a snapshot is never loaded");
    uint32_t c1[] = {1};
    int ix = rel_index(a, c1, 1);
    cr_assert_eq(ix, 1);
    cr_assert_eq(rel_find_index(sa, c1, 1), -1, "the snapshot predates the index");
    cr_assert_eq(rel_index((rel_t *)sa, c1, 1), -1, "a snapshot gets no new index");
    cr_assert_eq(rel_find_index(a, c1, 1), 1);
    const rel_t *sa2 = rel_snapshot(a);
    cr_assert_eq(rel_find_index(sa2, c1, 1), 1);
    rel_insert(b, (val_t[]){9, 9});
    const rel_t *sb = rel_snapshot(b);
    rel_swap(a, b);
    rel_insert(a, (val_t[]){10, 10});
    for (size_t i = 0; i < N; i += 2) rel_delete(b, ts + 2 * i);
    cr_assert_eq(rel_count(sb), 1);
    cr_assert_eq(rel_count(sa), N);
    cr_assert_eq(rel_count(sa2), N);
    cr_assert_eq(rel_count(b), N / 2);
    rel_cursor c;
    size_t n = 0;
    rel_seek(sa2, 1, NULL, 0, &c);
    for (const val_t *t; (t = rel_next(&c, NULL)); n++) cr_assert_eq(t[0], n + 1);
    cr_assert_eq(n, N);
    rel_snapshot_release(NULL);
    rel_free(a);
    rel_free(b);
    /* released after their relations, in no particular order */
    rel_snapshot_release(sa2);
    rel_snapshot_release(empty);
    rel_snapshot_release(sb);
    rel_snapshot_release(sa);
    free(ts);
}

/* The difference between a snapshot and the relation it was taken from, after random
 * changes (a few, many, none; sets and counted relations): exactly the tuples gained and
 * lost, whichever leaves the two still share (those are skipped unread). */
Test(rel, difference_from_a_snapshot) {
    rng_state = 0x5eed5eedull;
    for (int round = 0; round < 40; round++) {
        bool counted = round % 2;
        uint32_t arity = 1 + (uint32_t)(round % 3);
        uint64_t dom = round < 20 ? 5000 : 40;
        rel_t *r = counted ? rel_new_counted(arity) : rel_new(arity);
        size_t n = 200 + rnd_below(6000);
        val_t t[3];
        for (size_t i = 0; i < n; i++) {
            for (uint32_t k = 0; k < arity; k++) t[k] = rnd_below(dom);
            rel_insert(r, t);
        }
        const rel_t *snap = rel_snapshot(r);
        /* the model: the snapshot's tuples, then the changes applied to a copy */
        rel_t *model = rel_new(arity);
        rel_cursor c;
        rel_seek(snap, 0, NULL, 0, &c);
        for (const val_t *x; (x = rel_next(&c, NULL));) rel_insert(model, x);
        rel_t *after = rel_new(arity);
        rel_seek(snap, 0, NULL, 0, &c);
        for (const val_t *x; (x = rel_next(&c, NULL));) rel_insert(after, x);
        size_t changes = round % 5 == 0 ? 0 : round % 5 == 1 ? 1 + rnd_below(3) : rnd_below(n);
        for (size_t i = 0; i < changes; i++) {
            for (uint32_t k = 0; k < arity; k++) t[k] = rnd_below(dom);
            if (rnd() & 1) {
                rel_insert(r, t);
                rel_insert(after, t);
            } else {
                rel_delete(r, t);
                rel_delete(after, t);
            }
        }
        rel_t *plus = rel_new(arity), *minus = rel_new(arity);
        rel_difference(snap, r, plus, minus);
        /* plus: in after, not in the model; minus: the other way; nothing else */
        size_t np = 0, nm = 0;
        rel_seek(after, 0, NULL, 0, &c);
        for (const val_t *x; (x = rel_next(&c, NULL));)
            if (!rel_contains(model, x)) {
                np++;
                cr_assert(rel_contains(plus, x), "round %d: a gained tuple missing", round);
            }
        rel_seek(model, 0, NULL, 0, &c);
        for (const val_t *x; (x = rel_next(&c, NULL));)
            if (!rel_contains(after, x)) {
                nm++;
                cr_assert(rel_contains(minus, x), "round %d: a lost tuple missing", round);
            }
        cr_assert_eq(rel_count(plus), np, "round %d", round);
        cr_assert_eq(rel_count(minus), nm, "round %d", round);
        /* and the other way round, from the relation to its snapshot */
        rel_t *plus2 = rel_new(arity), *minus2 = rel_new(arity);
        rel_difference(r, snap, plus2, minus2);
        cr_assert_eq(rel_count(plus2), nm, "round %d", round);
        cr_assert_eq(rel_count(minus2), np, "round %d", round);
        rel_free(plus2);
        rel_free(minus2);
        rel_free(plus);
        rel_free(minus);
        rel_free(model);
        rel_free(after);
        rel_snapshot_release(snap);
        rel_free(r);
    }
}
