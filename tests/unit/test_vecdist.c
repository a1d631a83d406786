/* Unit tests of the distance kernels (src/exec/vecdist.c) and of the bounded filter they
 * allow (`D = cosine(V, Q), D < c` rejecting rows from the fast kernel's bounds): the
 * bounds always contain the builtin's exact value, whatever the dimension and scale; they
 * refuse vectors outside their range; the fast and sequential sums agree within their
 * bound; and a query with a bounded filter returns exactly the rows of the same query
 * without one, with thresholds placed on the rows' own distances. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "exec/builtin.h"
#include "exec/vecdist.h"
#include "inputlayer.h"
#include "unit_fixture.h"
#include "value/value.h"

static uint64_t rng_state;

static double next_unit(void) {
    return unit_random(&rng_state);
}

static void teardown(void) {
    val_shutdown();
}

TestSuite(vecdist, .fini = teardown);

static double builtin(const char *fn, val_t a, val_t b) {
    val_t args[2] = {a, b};
    return val_get_float(exec_builtin_find(fn)->fn(args));
}

static val_t vec_of(const float *x, uint32_t n) {
    return val_vec_f32(x, n);
}

/* The exact value within the bounds, for both bounded builtins. */
static void check_pair(const float *x, const float *y, uint32_t n) {
    val_t a = vec_of(x, n), b = vec_of(y, n);
    uint32_t na;
    const val_vec_head *ha, *hb;
    const float *ea = val_get_vec_f32_head(a, &na, &ha);
    const float *eb = val_get_vec_f32_head(b, &na, &hb);
    double lo, hi;
    if (vecdist_bounds(VECDIST_COSINE, ea, ha, eb, hb, n, &lo, &hi)) {
        double d = builtin("cosine", a, b);
        cr_assert(lo <= d && d <= hi, "cosine n=%u: %.17g not in [%.17g, %.17g]", n, d, lo, hi);
        cr_assert(hi - lo < 1e-3, "cosine bounds too loose: %.3g", hi - lo);
    }
    if (vecdist_bounds(VECDIST_EUCLIDEAN, ea, ha, eb, hb, n, &lo, &hi)) {
        double d = builtin("euclidean", a, b);
        cr_assert(lo <= d && d <= hi, "euclidean n=%u: %.17g not in [%.17g, %.17g]", n, d, lo, hi);
    }
}

Test(vecdist, bounds_contain_the_exact_value) {
    rng_state = 11;
    static const double scales[] = {1e-9, 1e-3, 1.0, 7.5, 1e4, 1e12};
    float x[300], y[300];
    for (int round = 0; round < 3000; round++) {
        uint32_t n = 1 + (uint32_t)((next_unit() + 1.0) * 149.5);
        double sx = scales[round % 6], sy = scales[(round / 6) % 6];
        for (uint32_t i = 0; i < n; i++) {
            x[i] = (float)(next_unit() * sx);
            y[i] = (float)(next_unit() * sy);
        }
        check_pair(x, y, n);
        /* nearly the same and nearly opposite directions: distances close to 0 and 2 */
        for (uint32_t i = 0; i < n; i++) y[i] = x[i] * (1.0f + (float)next_unit() * 1e-6f);
        check_pair(x, y, n);
        for (uint32_t i = 0; i < n; i++) y[i] = -x[i];
        check_pair(x, y, n);
        check_pair(x, x, n);
    }
}

Test(vecdist, bounds_refuse_what_they_cannot_bound) {
    float x[4] = {1, 2, 3, 4}, bad[4] = {1, NAN, 3, 4}, inf[4] = {1, INFINITY, 0, 0};
    float zero[4] = {0, 0, 0, 0}, huge[4] = {3e15f, 3e15f, 0, 0};
    val_t v = vec_of(x, 4);
    uint32_t n;
    const val_vec_head *hx, *h2;
    const float *ex = val_get_vec_f32_head(v, &n, &hx);
    double lo, hi;
    const float *others[] = {bad, inf, zero, huge};
    for (int i = 0; i < 4; i++) {
        const float *e2 = val_get_vec_f32_head(vec_of(others[i], 4), &n, &h2);
        cr_assert(!vecdist_bounds(VECDIST_COSINE, ex, hx, e2, h2, 4, &lo, &hi), "cosine case %d",
                  i);
    }
    const float *e2 = val_get_vec_f32_head(vec_of(bad, 4), &n, &h2);
    cr_assert(!vecdist_bounds(VECDIST_EUCLIDEAN, ex, hx, e2, h2, 4, &lo, &hi));
    e2 = val_get_vec_f32_head(vec_of(zero, 4), &n, &h2);
    cr_assert(vecdist_bounds(VECDIST_EUCLIDEAN, ex, hx, e2, h2, 4, &lo, &hi));
    cr_assert(lo <= builtin("euclidean", v, vec_of(zero, 4)));
}

Test(vecdist, vector_heads_hold_the_builtins_norms) {
    float x[3] = {3, 4, 0}, bad[2] = {1, NAN};
    uint32_t n;
    const val_vec_head *h;
    val_get_vec_f32_head(vec_of(x, 3), &n, &h);
    cr_assert_eq(n, 3);
    cr_assert_eq(h->sqnorm, 25.0f);
    cr_assert_eq(h->norm, 5.0);
    cr_assert_eq(h->finite, 1);
    val_get_vec_f32_head(vec_of(bad, 2), &n, &h);
    cr_assert_eq(h->finite, 0);
    val_get_vec_f32_head(vec_of(NULL, 0), &n, &h);
    cr_assert_eq(n, 0);
    cr_assert_eq(h->sqnorm, 0.0f);
    /* the head is part of the interned bytes: equal elements, one value */
    cr_assert_eq(vec_of(x, 3), vec_of((float[]){3, 4, 0}, 3));
}

Test(vecdist, fast_sums_agree_with_sequential_within_gamma) {
    rng_state = 12;
    float x[257], y[257];
    for (uint32_t n = 0; n <= 257; n++) {
        double sabs = 0, ssq = 0;
        for (uint32_t i = 0; i < n; i++) {
            x[i] = (float)next_unit();
            y[i] = (float)next_unit();
            sabs += fabs((double)x[i] * y[i]);
            double d = (double)(x[i] - y[i]);
            ssq += d * d;
        }
        double g = 2.0 * vecdist_gamma(n);
        double dd = fabs((double)vecdist_dot_fast(x, y, n) - (double)vecdist_dot_seq(x, y, n));
        cr_assert(dd <= g * sabs + 1e-30, "dot n=%u: %.3g > %.3g", n, dd, g * sabs);
        double ds =
            fabs((double)vecdist_sqdist_fast(x, y, n) - (double)vecdist_sqdist_seq(x, y, n));
        cr_assert(ds <= g * ssq + 1e-30, "sqdist n=%u", n);
    }
}

/* The builtins' bounds over a run of rows (what a scan asks for) are the pairs' own
   bounds, row by row, whatever sits between the rows; rows that are not f32 vectors of
   the query's length get none. */
Test(vecdist, bounds_over_rows_are_the_bounds_of_each_row) {
    rng_state = 14;
    enum { N = 150, DIM = 40, STRIDE = 3 };
    static val_t rows[N * STRIDE];
    float q[DIM], x[DIM];
    for (uint32_t d = 0; d < DIM; d++) q[d] = (float)next_unit();
    val_t qv = vec_of(q, DIM);
    uint32_t n;
    const val_vec_head *hq, *hv;
    val_get_vec_f32_head(qv, &n, &hq);
    for (size_t i = 0; i < N; i++) {
        for (uint32_t d = 0; d < DIM; d++) x[d] = (float)(next_unit() * (i % 5 + 1));
        rows[i * STRIDE] = val_int((int64_t)i); /* another column before the vector */
        rows[i * STRIDE + 1] = i % 17 == 3   ? val_str("x", 1)
                               : i % 17 == 5 ? vec_of(x, DIM - 1)
                               : i % 17 == 7 ? vec_of((float[]){0, 0, 0}, 3)
                                             : vec_of(x, DIM);
        rows[i * STRIDE + 2] = val_int(0);
    }
    const char *fns[] = {"cosine", "euclidean"};
    vecdist_bounded kinds[] = {VECDIST_COSINE, VECDIST_EUCLIDEAN};
    for (int f = 0; f < 2; f++) {
        exec_builtin_bounds_fn bounds = exec_builtin_find_bounds(exec_builtin_find(fns[f]));
        cr_assert_not_null(bounds);
        static double lo[N], hi[N];
        for (uint32_t arg = 0; arg < 2; arg++) {
            val_t args[2];
            args[1 - arg] = qv;
            bounds(args, arg, rows + 1, STRIDE, N, lo, hi);
            for (size_t i = 0; i < N; i++) {
                val_t v = rows[i * STRIDE + 1];
                double l1 = NAN, h1 = NAN;
                if (val_is_vec_f32(v)) {
                    const float *e = val_get_vec_f32_head(v, &n, &hv);
                    if (n == DIM) vecdist_bounds(kinds[f], e, hv, q, hq, DIM, &l1, &h1);
                }
                cr_assert(isnan(l1) ? isnan(lo[i]) && isnan(hi[i]) : lo[i] == l1 && hi[i] == h1,
                          "%s row %zu: [%g, %g], alone [%g, %g]", fns[f], i, lo[i], hi[i], l1, h1);
                if (!isnan(lo[i])) {
                    double d = builtin(fns[f], v, qv);
                    cr_assert(lo[i] <= d && d <= hi[i]);
                }
            }
        }
    }
}

/* The graph's navigation kernel over bf16 rows: within bf16's rounding of the exact
   sums, for dimensions on and off its blocks of 16, and rows picked by id. */
Test(vecdist, bf16_rows_are_close_to_the_exact_sums) {
    rng_state = 15;
    enum { ROWS = 9, MAXDIM = 70 };
    static float x[ROWS][MAXDIM], q[MAXDIM], pq[2 * MAXDIM + 32];
    static uint32_t packed[ROWS * (MAXDIM / 2 + 16)];
    for (uint32_t dim = 1; dim <= MAXDIM; dim++) {
        uint32_t words = vecdist_bf16_words(dim);
        cr_assert_eq(words % 8, 0);
        cr_assert_geq(2 * words, dim);
        for (uint32_t d = 0; d < dim; d++) q[d] = (float)next_unit();
        for (uint32_t r = 0; r < ROWS; r++) {
            for (uint32_t d = 0; d < dim; d++) x[r][d] = (float)(next_unit() * (r + 1));
            vecdist_bf16_pack(x[r], dim, packed + r * words);
        }
        vecdist_bf16_query(q, dim, pq);
        uint32_t ids[] = {8, 0, 3, 3, 5};
        float dots[5], sqs[5];
        vecdist_bf16_rows(false, pq, packed, words, ids, 5, dim, dots);
        vecdist_bf16_rows(true, pq, packed, words, ids, 5, dim, sqs);
        for (int k = 0; k < 5; k++) {
            const float *xr = x[ids[k]];
            double dot = 0, sq = 0, sabs = 0, sdx = 0;
            for (uint32_t d = 0; d < dim; d++) {
                double diff = (double)xr[d] - q[d];
                dot += (double)xr[d] * q[d];
                sabs += fabs((double)xr[d] * q[d]);
                sq += diff * diff;
                sdx += fabs(diff * xr[d]);
            }
            /* each element within 2^-9 relatively: a product within 2^-9 of its size, a
               squared difference within 2 |d| |x| 2^-9 + (|x| 2^-9)^2 */
            cr_assert(fabs(dots[k] - dot) <= sabs * 0x1p-8 + 1e-5, "dot dim=%u: %g vs %g", dim,
                      dots[k], dot);
            cr_assert(fabs(sqs[k] - sq) <= sdx * 0x1p-7 + sq * 1e-6 + 1e-4,
                      "sqdist dim=%u: %g vs %g", dim, sqs[k], sq);
        }
    }
}

/* ---- through a query ---- */

static il_session *S;

static char *rows_of(const char *q) {
    char *all = unit_answer_str(S, q);
    char *arrow = strstr(all, " ->"); /* drop the echoed query */
    char *out = strdup(arrow ? arrow : all);
    free(all);
    return out;
}

Test(vecdist, a_bounded_filter_keeps_exactly_the_rows_of_an_unbounded_one) {
    rng_state = 13;
    il_engine *e = unit_engine_open(&S);
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+v[");
    float q[24];
    for (int d = 0; d < 24; d++) q[d] = (float)next_unit();
    for (int i = 0; i < 400; i++) {
        il_buf_printf(&b, "%s(%d, [", i ? ", " : "", i);
        /* some rows lie on the query's direction, some near it */
        double t = next_unit();
        for (int d = 0; d < 24; d++) {
            double c = i % 10 == 0   ? q[d] * 2.0
                       : i % 10 == 1 ? q[d] + next_unit() * 1e-4
                                     : t * q[d] + next_unit();
            il_buf_printf(&b, "%s%.9g", d ? ", " : "", c);
        }
        il_buf_puts(&b, "])");
    }
    il_buf_puts(&b, "]");
    unit_run(S, il_buf_str(&b));
    il_buf_clear(&b);
    il_buf_puts(&b, "[");
    for (int d = 0; d < 24; d++) il_buf_printf(&b, "%s%.9g", d ? ", " : "", q[d]);
    il_buf_puts(&b, "]");
    char *qv = il_buf_take(&b);
    /* thresholds on the rows' own exact distances, and between them */
    const char *fns[] = {"cosine", "euclidean"};
    const char *ops[] = {"<", "<=", ">", ">="};
    char query[4096];
    for (int f = 0; f < 2; f++) {
        snprintf(query, sizeof query, "?v(I, V), I < 12, D = %s(V, %s)", fns[f], qv);
        il_result *r = il_execute(S, query, strlen(query));
        cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE);
        size_t nr = il_result_nrows(r);
        double th[16];
        size_t nth = 0;
        for (size_t i = 0; i < nr && nth < 12; i++) {
            size_t w;
            const il_value *row = il_result_row(r, i, &w);
            th[nth++] = val_get_float((val_t)row[2]);
        }
        il_result_free(r);
        th[nth++] = 0.5;
        th[nth++] = 1e-12;
        for (size_t t = 0; t < nth; t++)
            for (int o = 0; o < 4; o++) {
                snprintf(query, sizeof query, "?v(I, V), D = %s(V, %s), D %s %.17g", fns[f], qv,
                         ops[o], th[t]);
                char *bounded = rows_of(query);
                snprintf(query, sizeof query, "?v(I, V), D = %s(V, %s), E = D, E %s %.17g", fns[f],
                         qv, ops[o], th[t]);
                char *plain = rows_of(query);
                /* the second query has one more column (E): compare the row count and
                   the ids, which come first */
                size_t n1 = 0, n2 = 0;
                for (char *p = bounded; (p = strstr(p, " (")); p++) n1++;
                for (char *p = plain; (p = strstr(p, " (")); p++) n2++;
                cr_assert_eq(n1, n2, "%s %s %.17g: %zu rows bounded, %zu not", fns[f], ops[o],
                             th[t], n1, n2);
                for (char *p = bounded, *q2 = plain;
                     (p = strstr(p, " (")) && (q2 = strstr(q2, " (")); p++, q2++)
                    cr_assert(strncmp(p, q2, strcspn(p, ",")) == 0, "ids differ");
                free(bounded);
                free(plain);
            }
    }
    free(qv);
    unit_engine_close(e);
}
