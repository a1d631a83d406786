/* Vector builtins over f32 vectors (iql-language.md 5.2): euclidean, cosine, dot,
 * manhattan, normalize, vec_dim, vec_add, vec_scale. The arithmetic is the original's
 * to the bit: which sums run in f32 and which in f64, and from which starting zero,
 * decides the last digits of the printed distances. A sequential f32 sum is kept
 * sequential (the compiler may not reassociate it); loops without a pinned order
 * (element-wise maps) are written so they vectorise. Every product and sum is its own
 * statement so that no compiler contracts it into a fused multiply-add, which would
 * round differently. An i8 vector or any other non-f32 argument gives Null. */
#include <math.h>
#include <stdlib.h>

#include "exec/builtin_impl.h"
#include "exec/vecdist.h"

static bool get_f32_vec(val_t v, const float **elems, uint32_t *n) {
    if (val_type_of(v) != VT_VEC) return false;
    *elems = val_get_vec_f32(v, n);
    return true;
}

/* Two f32 vectors of the same length; *same_len tells a length mismatch apart from a
 * type mismatch, which the functions answer differently. */
static bool get_f32_pair(const val_t *a, const float **x, const float **y, uint32_t *n,
                         bool *same_len) {
    uint32_t nx, ny;
    if (!get_f32_vec(a[0], x, &nx) || !get_f32_vec(a[1], y, &ny)) return false;
    *same_len = nx == ny;
    *n = nx;
    return true;
}

/* The elements and heads of two f32 vectors of the same length; false otherwise. */
static bool get_f32_pair_heads(const val_t *a, const float **x, const float **y, uint32_t *n,
                               const val_vec_head **hx, const val_vec_head **hy) {
    uint32_t nx, ny;
    if (!val_is_vec_f32(a[0]) || !val_is_vec_f32(a[1])) return false;
    *x = val_get_vec_f32_head(a[0], &nx, hx);
    *y = val_get_vec_f32_head(a[1], &ny, hy);
    *n = nx;
    return nx == ny;
}

static val_t fn_euclidean(const val_t *a) {
    const float *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_f32_pair(a, &x, &y, &n, &same_len)) return VAL_NULL;
    if (!same_len) return val_float(INFINITY);
    /* Rust's f32 `sum()` starts from -0.0: two empty vectors are at distance -0.0 */
    return val_float(sqrt((double)vecdist_sqdist_seq(x, y, n)));
}

static val_t fn_cosine(const val_t *a) {
    const float *x, *y;
    uint32_t n;
    const val_vec_head *hx, *hy;
    if (val_type_of(a[0]) != VT_VEC || val_type_of(a[1]) != VT_VEC) return VAL_NULL;
    if (!get_f32_pair_heads(a, &x, &y, &n, &hx, &hy)) return val_float(INFINITY);
    /* |a|^2 and |b|^2 were summed when the vectors were made, in the same order */
    return val_float(vecdist_cosine_from(vecdist_dot_seq(x, y, n), hx, hy));
}

/* Bounds of cosine and euclidean over a run of rows (exec_builtin_bounds_fn): a filter
   on the distance can reject a row from them without the exact, sequential sum. The
   other argument is resolved once; the rows' vectors go to the kernel in batches. */
enum { BOUNDS_BATCH = 64 };

static void bounds_rows(vecdist_bounded f, const val_t *args, uint32_t arg, const val_t *rows,
                        size_t stride, size_t n, double *lo, double *hi) {
    val_t other = args[1 - arg];
    if (!val_is_vec_f32(other)) {
        for (size_t i = 0; i < n; i++) lo[i] = hi[i] = NAN;
        return;
    }
    uint32_t dim, nx;
    const val_vec_head *hq;
    const float *q = val_get_vec_f32_head(other, &dim, &hq);
    const float *xs[BOUNDS_BATCH];
    const val_vec_head *hxs[BOUNDS_BATCH];
    for (size_t done = 0; done < n; done += BOUNDS_BATCH) {
        size_t m = n - done < BOUNDS_BATCH ? n - done : BOUNDS_BATCH;
        for (size_t i = 0; i < m; i++) {
            val_t v = rows[(done + i) * stride];
            xs[i] = NULL;
            hxs[i] = hq;
            if (!val_is_vec_f32(v)) continue;
            const float *x = val_get_vec_f32_head(v, &nx, &hxs[i]);
            if (nx == dim) xs[i] = x;
        }
        vecdist_bounds_many(f, q, hq, dim, xs, hxs, m, lo + done, hi + done);
    }
}

static void bounds_cosine(const val_t *args, uint32_t arg, const val_t *rows, size_t stride,
                          size_t n, double *lo, double *hi) {
    bounds_rows(VECDIST_COSINE, args, arg, rows, stride, n, lo, hi);
}

static void bounds_euclidean(const val_t *args, uint32_t arg, const val_t *rows, size_t stride,
                             size_t n, double *lo, double *hi) {
    bounds_rows(VECDIST_EUCLIDEAN, args, arg, rows, stride, n, lo, hi);
}

static val_t fn_dot(const val_t *a) {
    const float *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_f32_pair(a, &x, &y, &n, &same_len)) return VAL_NULL;
    if (!same_len) return val_float(0.0);
    return val_float(vecdist_dot_f64(x, y, n));
}

static val_t fn_manhattan(const val_t *a) {
    const float *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_f32_pair(a, &x, &y, &n, &same_len)) return VAL_NULL;
    if (!same_len) return val_float(INFINITY);
    return val_float(vecdist_manhattan(x, y, n));
}

/* An f32 vector built element by element into a scratch buffer, then interned. */
static val_t intern_f32(float *elems, uint32_t n) {
    val_t v = val_vec_f32(elems, n);
    free(elems);
    return v;
}

static float *alloc_f32(uint32_t n) {
    return malloc((n ? n : 1) * sizeof(float));
}

static val_t fn_normalize(const val_t *a) {
    const float *x;
    uint32_t n;
    if (!get_f32_vec(a[0], &x, &n)) return VAL_NULL;
    float sq_sum = -0.0f;
    for (uint32_t i = 0; i < n; i++) {
        float sq = x[i] * x[i];
        sq_sum += sq;
    }
    double norm = sqrt((double)sq_sum);
    float *out = alloc_f32(n);
    if (norm == 0.0) {
        for (uint32_t i = 0; i < n; i++) out[i] = 0.0f;
    } else {
        float norm32 = (float)norm;
        for (uint32_t i = 0; i < n; i++) out[i] = x[i] / norm32;
    }
    return intern_f32(out, n);
}

static val_t fn_vec_dim(const val_t *a) {
    const float *x;
    uint32_t n;
    if (!get_f32_vec(a[0], &x, &n)) return VAL_NULL;
    return val_int(n);
}

static val_t fn_vec_add(const val_t *a) {
    const float *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_f32_pair(a, &x, &y, &n, &same_len) || !same_len) return VAL_NULL;
    float *out = alloc_f32(n);
    for (uint32_t i = 0; i < n; i++) out[i] = x[i] + y[i];
    return intern_f32(out, n);
}

static val_t fn_vec_scale(const val_t *a) {
    const float *x;
    uint32_t n;
    if (!get_f32_vec(a[0], &x, &n)) return VAL_NULL;
    float factor = (float)val_to_f64(a[1]);
    float *out = alloc_f32(n);
    for (uint32_t i = 0; i < n; i++) out[i] = x[i] * factor;
    return intern_f32(out, n);
}

const exec_builtin exec_vector_builtins[] = {
    {"euclidean", 2, fn_euclidean}, {"cosine", 2, fn_cosine},       {"dot", 2, fn_dot},
    {"manhattan", 2, fn_manhattan}, {"normalize", 1, fn_normalize}, {"vec_dim", 1, fn_vec_dim},
    {"vec_add", 2, fn_vec_add},     {"vec_scale", 2, fn_vec_scale}, {NULL, 0, NULL},
};

const exec_builtin_bounds exec_vector_bounds[] = {
    {"cosine", bounds_cosine},
    {"euclidean", bounds_euclidean},
    {NULL, NULL},
};
