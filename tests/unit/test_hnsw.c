/* Unit tests of vector search: the HNSW graph (src/exec/hnsw.c) against brute force on
 * small random sets (recall, deletes by tombstone, revival, searches at an earlier
 * revision, what it refuses), its distances against the builtins', and the engine's
 * indexes (src/kg/indexes.c): kept in step with inserts and deletes, correct after a
 * rolled-back transaction, and their definitions surviving a restart from the log and
 * from a checkpoint. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/builtin.h"
#include "exec/hnsw.h"
#include "inputlayer.h"
#include "unit_fixture.h"
#include "value/value.h"

static uint64_t rng_state;

static double next_unit(void) {
    return unit_random(&rng_state);
}

static val_t random_vec(uint32_t dim) {
    float v[64];
    for (uint32_t i = 0; i < dim; i++) v[i] = (float)next_unit();
    return val_vec_f32(v, dim);
}

static void teardown(void) {
    val_shutdown();
}

TestSuite(hnsw, .fini = teardown);

/* The k nearest by the builtin's own function, nearest first (ties by key). */
typedef struct ref_hit {
    double d;
    int64_t key;
} ref_hit;

static int ref_cmp(const void *a, const void *b) {
    const ref_hit *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

static size_t brute_force(const char *fn, const val_t *vecs, const bool *live, size_t n, val_t q,
                          size_t k, ref_hit *out) {
    const exec_builtin *b = exec_builtin_find(fn);
    cr_assert_not_null(b);
    ref_hit *all = malloc(n * sizeof *all);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (live && !live[i]) continue;
        val_t args[2] = {vecs[i], q};
        all[m++] = (ref_hit){val_get_float(b->fn(args)), (int64_t)i};
    }
    qsort(all, m, sizeof *all, ref_cmp);
    if (m > k) m = k;
    memcpy(out, all, m * sizeof *out);
    free(all);
    return m;
}

/* The fraction of the true k nearest that the graph found, over `queries` queries. */
static double recall(hnsw *h, const char *fn, const val_t *vecs, const bool *live, size_t n,
                     uint32_t dim, size_t k, uint32_t ef, int queries) {
    size_t found = 0, wanted = 0;
    hnsw_hit hits[64];
    ref_hit ref[64];
    for (int qi = 0; qi < queries; qi++) {
        val_t q = random_vec(dim);
        size_t nr = brute_force(fn, vecs, live, n, q, k, ref);
        size_t nh = hnsw_search(h, q, (uint32_t)k, ef, false, hits);
        cr_assert_eq(nh, nr);
        for (size_t i = 0; i < nh; i++) {
            int64_t key = val_get_int(hits[i].key);
            if (live) cr_assert(live[key], "a removed vector was returned");
            for (size_t j = 0; j < nr; j++)
                if (ref[j].key == key) found++;
        }
        wanted += nr;
    }
    return (double)found / (double)wanted;
}

static hnsw *build(hnsw_metric metric, val_t *vecs, size_t n, uint32_t dim) {
    hnsw_params p = {metric, 8, 64, 7};
    hnsw *h = hnsw_new(&p);
    for (size_t i = 0; i < n; i++) {
        vecs[i] = random_vec(dim);
        cr_assert(hnsw_add(h, val_int((int64_t)i), vecs[i]));
    }
    return h;
}

Test(hnsw, recall_against_brute_force) {
    rng_state = 1;
    enum { N = 3000, DIM = 16 };
    static val_t vecs[N];
    hnsw_metric metrics[] = {HNSW_COSINE, HNSW_EUCLIDEAN, HNSW_MANHATTAN};
    const char *fns[] = {"cosine", "euclidean", "manhattan"};
    for (int m = 0; m < 3; m++) {
        hnsw *h = build(metrics[m], vecs, N, DIM);
        cr_assert_eq(hnsw_live(h), N);
        cr_assert_eq(hnsw_dim(h), DIM);
        double r = recall(h, fns[m], vecs, NULL, N, DIM, 10, 64, 50);
        cr_assert(r >= 0.95, "%s recall@10 %.3f", fns[m], r);
        hnsw_free(h);
    }
}

Test(hnsw, exact_search_is_brute_force_with_the_builtins_distances) {
    rng_state = 2;
    enum { N = 500, DIM = 8 };
    static val_t vecs[N];
    hnsw *h = build(HNSW_COSINE, vecs, N, DIM);
    hnsw_hit hits[10];
    ref_hit ref[10];
    for (int qi = 0; qi < 20; qi++) {
        val_t q = random_vec(DIM);
        size_t nh = hnsw_search(h, q, 10, 0, true, hits);
        cr_assert_eq(brute_force("cosine", vecs, NULL, N, q, 10, ref), nh);
        for (size_t i = 0; i < nh; i++) {
            cr_assert_eq(val_get_int(hits[i].key), ref[i].key);
            cr_assert(hits[i].dist == ref[i].d, "%.17g != %.17g", hits[i].dist, ref[i].d);
            cr_assert_eq(hits[i].vec, vecs[ref[i].key]);
        }
        /* the graph's answers carry the exact distances too */
        nh = hnsw_search(h, q, 10, 64, false, hits);
        const exec_builtin *b = exec_builtin_find("cosine");
        for (size_t i = 0; i < nh; i++) {
            val_t args[2] = {hits[i].vec, q};
            cr_assert(hits[i].dist == val_get_float(b->fn(args)));
            if (i) cr_assert(hits[i - 1].dist <= hits[i].dist);
        }
    }
    hnsw_free(h);
}

Test(hnsw, removed_vectors_are_never_returned_and_can_come_back) {
    rng_state = 3;
    enum { N = 2000, DIM = 12 };
    static val_t vecs[N];
    static bool live[N];
    hnsw *h = build(HNSW_EUCLIDEAN, vecs, N, DIM);
    for (size_t i = 0; i < N; i++) {
        live[i] = i % 3 != 0;
        if (!live[i]) cr_assert(hnsw_remove(h, val_int((int64_t)i), vecs[i]));
    }
    cr_assert(!hnsw_remove(h, val_int(0), vecs[0]), "removed twice");
    cr_assert(!hnsw_remove(h, val_int(1), vecs[2]), "a pair that was never added");
    cr_assert_eq(hnsw_live(h), N - (N + 2) / 3);
    cr_assert_eq(hnsw_tombstones(h), (N + 2) / 3);
    double r = recall(h, "euclidean", vecs, live, N, DIM, 10, 64, 50);
    cr_assert(r >= 0.95, "recall@10 after removals %.3f", r);
    /* searching for a removed vector itself finds something else */
    hnsw_hit hit;
    cr_assert_eq(hnsw_search(h, vecs[3], 1, 64, false, &hit), 1);
    cr_assert_neq(val_get_int(hit.key), 3);
    /* adding it again revives the node */
    cr_assert(hnsw_add(h, val_int(3), vecs[3]));
    cr_assert_eq(hnsw_tombstones(h), (N + 2) / 3 - 1);
    cr_assert_eq(hnsw_search(h, vecs[3], 1, 64, false, &hit), 1);
    cr_assert_eq(val_get_int(hit.key), 3);
    cr_assert_eq(hit.dist, 0.0);
    /* adding a present pair changes nothing */
    cr_assert(hnsw_add(h, val_int(4), vecs[4]));
    cr_assert_eq(hnsw_live(h), N - (N + 2) / 3 + 1);
    hnsw_free(h);
}

/* The hits of a search against brute force over the `present` nodes: same keys, same
 * distances, in order. */
static void expect_brute_force(const hnsw_hit *hits, size_t nh, const val_t *vecs,
                               const bool *present, size_t n, val_t q, size_t k) {
    ref_hit ref[16];
    size_t nr = brute_force("euclidean", vecs, present, n, q, k, ref);
    cr_assert_eq(nh, nr, "%zu hits where %zu are present", nh, nr);
    for (size_t i = 0; i < nh; i++) {
        cr_assert_eq(val_get_int(hits[i].key), ref[i].key, "hit %zu", i);
        cr_assert(hits[i].dist == ref[i].d);
    }
}

Test(hnsw, a_search_at_a_revision_sees_the_nodes_present_then) {
    rng_state = 5;
    enum { N = 300, MORE = 200, DIM = 8, K = 10 };
    static val_t vecs[N + MORE];
    static bool then[N + MORE], now[N + MORE];
    hnsw *h = build(HNSW_EUCLIDEAN, vecs, N, DIM);
    for (size_t i = 0; i < N; i++) then[i] = now[i] = i % 5 != 0;
    for (size_t i = 0; i < N; i += 5) cr_assert(hnsw_remove(h, val_int((int64_t)i), vecs[i]));
    /* a search at a revision holds a reference, as a pinned copy's index does */
    hnsw_ref(h);
    hnsw_rev rev = hnsw_now(h);
    cr_assert_eq(rev.live, N - N / 5);
    /* then the graph changes: removals (the nearest of some queries among them), new
       nodes, and removed pairs added again (present now, absent at the revision) */
    for (size_t i = 1; i < N; i += 3)
        if (now[i]) {
            cr_assert(hnsw_remove(h, val_int((int64_t)i), vecs[i]));
            now[i] = false;
        }
    for (size_t i = N; i < N + MORE; i++) {
        vecs[i] = random_vec(DIM);
        cr_assert(hnsw_add(h, val_int((int64_t)i), vecs[i]));
        now[i] = true;
    }
    for (size_t i = 0; i < N; i += 10) {
        cr_assert(hnsw_add(h, val_int((int64_t)i), vecs[i]));
        now[i] = true;
    }
    /* and one present at the revision, removed and added again: present at both */
    cr_assert(hnsw_remove(h, val_int(2), vecs[2]));
    cr_assert(hnsw_add(h, val_int(2), vecs[2]));
    hnsw_hit hits[K];
    for (int qi = 0; qi < 30; qi++) {
        val_t q = qi < 10 ? vecs[1 + 3 * qi] : random_vec(DIM); /* some removed since */
        /* a beam wider than the graph walks all of it: exact, so comparable */
        size_t nh = hnsw_search_at(h, &rev, q, K, 2000, false, hits);
        expect_brute_force(hits, nh, vecs, then, N + MORE, q, K);
        nh = hnsw_search_at(h, &rev, q, K, 0, true, hits);
        expect_brute_force(hits, nh, vecs, then, N + MORE, q, K);
        /* the latest state, as before */
        nh = hnsw_search(h, q, K, 2000, false, hits);
        expect_brute_force(hits, nh, vecs, now, N + MORE, q, K);
        nh = hnsw_search(h, q, K, 0, true, hits);
        expect_brute_force(hits, nh, vecs, now, N + MORE, q, K);
    }
    /* the pairs added again while the revision was held are new nodes: their old ones stay
       tombstones (until a rebuild): 60 removed first, 80 after, and node 2 */
    cr_assert_eq(hnsw_tombstones(h), 141);
    hnsw_free(h);
    /* with no reference but the index's, a removed pair added again is revived in place */
    size_t dead = hnsw_tombstones(h);
    cr_assert(hnsw_remove(h, val_int(3), vecs[3]));
    cr_assert(hnsw_add(h, val_int(3), vecs[3]));
    cr_assert_eq(hnsw_tombstones(h), dead);
    hnsw_free(h);
}

Test(hnsw, refuses_what_it_cannot_index) {
    hnsw_params p = {HNSW_COSINE, 4, 16, 1};
    hnsw *h = hnsw_new(&p);
    float three[3] = {1, 2, 3}, two[2] = {1, 2}, bad[3] = {1, NAN, 3}, inf[3] = {INFINITY, 0, 0};
    hnsw_hit hit;
    cr_assert_eq(hnsw_search(h, val_vec_f32(three, 3), 1, 10, false, &hit), 0, "empty graph");
    cr_assert(!hnsw_add(h, val_int(1), val_vec_f32(three, 0)), "empty vector");
    cr_assert(hnsw_add(h, val_int(1), val_vec_f32(three, 3)));
    cr_assert(!hnsw_add(h, val_int(2), val_vec_f32(two, 2)), "another dimension");
    cr_assert(!hnsw_add(h, val_int(3), val_vec_f32(bad, 3)), "NaN");
    cr_assert(!hnsw_add(h, val_int(4), val_vec_f32(inf, 3)), "infinity");
    cr_assert(!hnsw_add(h, val_int(5), val_int(7)), "not a vector");
    int8_t i8[3] = {1, 2, 3};
    cr_assert(!hnsw_add(h, val_int(6), val_vec_i8(i8, 3)), "an i8 vector");
    cr_assert_eq(hnsw_live(h), 1);
    cr_assert_eq(hnsw_search(h, val_vec_f32(two, 2), 1, 10, false, &hit), 0, "query dimension");
    cr_assert_eq(hnsw_search(h, val_vec_f32(bad, 3), 1, 10, false, &hit), 0, "NaN query");
    cr_assert_eq(hnsw_search(h, val_str("x", 1), 1, 10, false, &hit), 0, "not a vector");
    cr_assert_eq(hnsw_search(h, val_vec_f32(three, 3), 0, 10, false, &hit), 0, "k = 0");
    cr_assert_eq(hnsw_search(h, val_vec_f32(three, 3), 1, 10, false, &hit), 1);
    hnsw_free(h);
    hnsw_metric m;
    cr_assert(hnsw_metric_parse("L2", &m) && m == HNSW_EUCLIDEAN);
    cr_assert(hnsw_metric_parse("dot", &m) && m == HNSW_DOT);
    cr_assert(!hnsw_metric_parse("hamming", &m));
}

/* ---- the engine's indexes ---- */

static il_session *S;

static void run(const char *text) {
    unit_run(S, text);
}

static char *answer(const char *q) {
    return unit_answer_str(S, q);
}

static void expect(const char *q, const char *want) {
    char *got = answer(q);
    cr_assert(strstr(got, want), "%s\ngot:  %s\nwant: %s", q, got, want);
    free(got);
}

static void expect_no_rows(const char *q) {
    char *got = answer(q);
    size_t n = strlen(got);
    cr_assert(n >= 3 && strcmp(got + n - 3, "->\n") == 0, "%s: rows: %s", q, got);
    free(got);
}

/* 3,000 random 8-d vectors (enough that searches use the graph, not a scan), with ids. */
static void load_vectors(int from, int to) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+emb[");
    for (int i = from; i < to; i++) {
        il_buf_printf(&b, "%s(%d, [", i > from ? ", " : "", i);
        for (int d = 0; d < 8; d++) il_buf_printf(&b, "%s%.6f", d ? ", " : "", next_unit());
        il_buf_puts(&b, "])");
    }
    il_buf_puts(&b, "]");
    run(il_buf_str(&b));
    il_buf_free(&b);
}

/* Every vector's nearest neighbour by the index is itself. */
static void expect_self_nearest(int from, int to, int step) {
    for (int i = from; i < to; i += step) {
        char q[160], want[64];
        snprintf(q, sizeof q, "?emb(%d, V), hnsw_nearest(\"e\", V, 1, Id, D)", i);
        snprintf(want, sizeof want, "], %d, ", i);
        char *got = answer(q);
        cr_assert(strstr(got, want), "%s -> %s", q, got);
        free(got);
    }
}

Test(hnsw, engine_index_follows_writes_and_rollbacks) {
    rng_state = 4;
    il_engine *e = unit_engine_open(&S);
    run("+emb(id: int, vec: vector)");
    load_vectors(0, 3000);
    run(".index create e on emb(vec) metric cosine");
    expect(".index list", "vectors: 3000, valid: true");
    expect_self_nearest(0, 3000, 97);
    /* incremental: the new vectors are found, the deleted ones never */
    load_vectors(3000, 3100);
    expect(".index stats e", "vectors=3100, tombstones=0, valid=true, dimension=8");
    expect_self_nearest(3000, 3100, 7);
    run("-emb(X, V) <- emb(X, V), X < 100");
    expect(".index stats e", "vectors=3000, tombstones=100, valid=true");
    expect_no_rows("?emb(200, V), hnsw_nearest(\"e\", V, 3000, Id, D), Id < 100");
    /* a transaction rolled back changes the facts behind the index's back: it is rebuilt
       from them before its next use */
    cr_assert(il_txn_begin(S));
    load_vectors(5000, 5010);
    run("-emb(X, V) <- emb(X, V), X >= 100, X < 110");
    il_txn_rollback(S);
    expect("?emb(105, V), hnsw_nearest(\"e\", V, 1, Id, D)", "], 105, ");
    expect_no_rows("?emb(200, V), hnsw_nearest(\"e\", V, 3000, Id, D), Id >= 5000");
    expect(".index list", "vectors: 3000, valid: true");
    /* `.clear` empties it */
    run(".clear prefix emb");
    expect_no_rows("?hnsw_nearest(\"e\", [1.0, 0, 0, 0, 0, 0, 0, 0], 5, Id, D)");
    expect(".index list", "vectors: 0, valid: true");
    unit_engine_close(e);
}

/* The index follows a committed transaction's changes from the commit's delta, in order:
 * incrementally (the deleted vectors stay as tombstones rather than a rebuild), and a
 * search inside the transaction already sees its writes. */
Test(hnsw, engine_index_follows_a_committed_transaction) {
    rng_state = 6;
    il_engine *e = unit_engine_open(&S);
    run("+emb(id: int, vec: vector)");
    load_vectors(0, 1000);
    run(".index create e on emb(vec) metric cosine");
    expect(".index stats e", "vectors=1000, tombstones=0, valid=true");
    cr_assert(il_txn_begin(S));
    load_vectors(1000, 1020);
    run("-emb(X, V) <- emb(X, V), X >= 10, X < 15");
    load_vectors(2000, 2001);
    char *err = NULL;
    cr_assert(il_txn_commit(S, &err), "%s", err ? err : "?");
    expect(".index stats e", "vectors=1016, tombstones=5, valid=true");
    expect_self_nearest(1000, 1020, 3);
    expect_self_nearest(2000, 2001, 1);
    expect_no_rows("?emb(200, V), hnsw_nearest(\"e\", V, 1016, Id, D), Id >= 10, Id < 15");
    /* read inside the next one: rebuilt from the facts then, and current at the commit */
    cr_assert(il_txn_begin(S));
    load_vectors(3000, 3010);
    expect_self_nearest(3000, 3010, 1);
    cr_assert(il_txn_commit(S, &err), "%s", err ? err : "?");
    expect(".index stats e", "vectors=1026, tombstones=0, valid=true");
    expect_self_nearest(3000, 3010, 1);
    unit_engine_close(e);
}

Test(hnsw, index_definitions_survive_a_restart) {
    rng_state = 5;
    char dir[64];
    unit_mkdtemp(dir, sizeof dir, "hnsw");
    il_engine *e = unit_engine_open_dir(dir, &S);
    run("+emb(id: int, vec: vector)");
    load_vectors(0, 2500);
    run(".index create e on emb(vec) metric cosine m 12 efs 40");
    run(".index create gone on emb(vec) metric euclidean");
    run(".index drop gone");
    char *before = answer(".index list");
    char *near_before = answer("?emb(7, V), hnsw_nearest(\"e\", V, 5, Id, D)");
    il_engine_close(e);

    /* from the log */
    e = unit_engine_open_dir(dir, &S);
    char *after = answer(".index list");
    cr_assert_str_eq(after, before);
    cr_assert(strstr(after, "vectors: 2500, valid: true"), "%s", after);
    char *near_after = answer("?emb(7, V), hnsw_nearest(\"e\", V, 5, Id, D)");
    cr_assert_str_eq(near_after, near_before);
    expect(".index stats gone", "not found");
    /* from a checkpoint */
    run(".compact");
    il_engine_close(e);
    e = unit_engine_open_dir(dir, &S);
    free(after);
    after = answer(".index list");
    cr_assert_str_eq(after, before);
    free(near_after);
    near_after = answer("?emb(7, V), hnsw_nearest(\"e\", V, 5, Id, D)");
    cr_assert_str_eq(near_after, near_before);
    il_engine_close(e);
    free(before);
    free(after);
    free(near_before);
    free(near_after);
    unit_rm_tree(dir);
}
