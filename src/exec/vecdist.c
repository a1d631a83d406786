/* Distance kernels over f32 vectors and bf16 rows (see vecdist.h).
 *
 * The fast kernels use the compiler's vector extensions (8 floats per vector, 4
 * accumulators), which GCC and clang lower to whatever the target has. On x86-64 each
 * is compiled twice, for AVX2 and for the baseline (SSE2), and a constructor picks one
 * for the CPU when the program loads; the loops over many vectors are compiled with the
 * kernel inside, so a call covers a batch. The translation unit is ISO C, so no product and
 * sum are fused into a multiply-add: the exact kernels round exactly as written. */
#include "exec/vecdist.h"

#include <math.h>
#include <string.h>

typedef float vf8 __attribute__((vector_size(32)));

/* Vectors go between helpers by pointer: passing a 32-byte vector by value would depend
   on whether the caller was compiled for AVX. */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(vf8))

static inline float sum8(const vf8 *v) {
    float a = ((*v)[0] + (*v)[4]) + ((*v)[1] + (*v)[5]),
          b = ((*v)[2] + (*v)[6]) + ((*v)[3] + (*v)[7]);
    return a + b;
}

float vecdist_dot_seq(const float *x, const float *y, uint32_t n) {
    float sum = 0.0f;
    for (uint32_t i = 0; i < n; i++) {
        float p = x[i] * y[i];
        sum += p;
    }
    return sum;
}

float vecdist_sqdist_seq(const float *x, const float *y, uint32_t n) {
    float sum = -0.0f;
    for (uint32_t i = 0; i < n; i++) {
        float d = x[i] - y[i];
        float sq = d * d;
        sum += sq;
    }
    return sum;
}

double vecdist_dot_f64(const float *x, const float *y, uint32_t n) {
    double sum = -0.0;
    for (uint32_t i = 0; i < n; i++) {
        double p = (double)x[i] * (double)y[i];
        sum += p;
    }
    return sum;
}

double vecdist_manhattan(const float *x, const float *y, uint32_t n) {
    double sum = -0.0;
    for (uint32_t i = 0; i < n; i++) {
        float d = x[i] - y[i];
        sum += fabs((double)d);
    }
    return sum;
}

typedef uint32_t vu32x8 __attribute__((vector_size(32)));

/* Adds u * w (sq false) or (u - w)^2 (sq true) to *acc. */
static inline __attribute__((always_inline)) void add_prod(vf8 *acc, const vf8 *u, const vf8 *w,
                                                           bool sq) {
    if (sq) {
        vf8 d = *u - *w;
        *acc += d * d;
    } else {
        *acc += *u * *w;
    }
}

/* Adds x[i..i+8) * y[i..i+8) (sq false) or (x[i..i+8) - y[i..i+8))^2 (sq true) to *acc. */
static inline __attribute__((always_inline)) void add_terms(vf8 *acc, const float *x,
                                                            const float *y, uint32_t i, bool sq) {
    vf8 u, w;
    LOAD8(u, x + i);
    LOAD8(w, y + i);
    add_prod(acc, &u, &w, sq);
}

/* The sum of x_i y_i (sq false) or of (x_i - y_i)^2 (sq true) in 4 accumulators of 8
   lanes; sq is a constant wherever this is inlined. */
static inline __attribute__((always_inline)) float fast_sum(const float *x, const float *y,
                                                            uint32_t n, bool sq) {
    vf8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        add_terms(&a0, x, y, i, sq);
        add_terms(&a1, x, y, i + 8, sq);
        add_terms(&a2, x, y, i + 16, sq);
        add_terms(&a3, x, y, i + 24, sq);
    }
    for (; i + 8 <= n; i += 8) add_terms(&a0, x, y, i, sq);
    vf8 t = (a0 + a1) + (a2 + a3);
    float s = sum8(&t);
    for (; i < n; i++) {
        float d = sq ? x[i] - y[i] : x[i];
        float p = sq ? d * d : d * y[i];
        s += p;
    }
    return s;
}

/* The sum over a bf16 row (vecdist_bf16_pack) and a prepared query (vecdist_bf16_query)
   of `words` words: each 8 words give the 8 even elements of a block of 16 (shifted into
   place) and the 8 odd ones (masked), lane by lane, against the query's 8 and 8. */
static inline __attribute__((always_inline)) float bf16_sum(const uint32_t *row, const float *pq,
                                                            uint32_t words, bool sq) {
    vf8 a0 = {0}, a1 = {0}, even, odd, qe, qo;
    for (uint32_t i = 0; i < words; i += 8) {
        vu32x8 w, lo, hi;
        memcpy(&w, row + i, sizeof w);
        lo = w << 16;
        hi = w & 0xFFFF0000u;
        memcpy(&even, &lo, sizeof even);
        memcpy(&odd, &hi, sizeof odd);
        LOAD8(qe, pq + 2 * i);
        LOAD8(qo, pq + 2 * i + 8);
        add_prod(&a0, &even, &qe, sq);
        add_prod(&a1, &odd, &qo, sq);
    }
    vf8 t = a0 + a1;
    return sum8(&t);
}

/* Slack for the f64 arithmetic after the sums (a few roundings of 2^-53). */
#define F64_SLACK 1e-12
/* Squared norms inside which no sum of products overflows or loses more than a
 * negligible absolute amount to subnormal products. */
#define SQNORM_MIN 1e-20
#define SQNORM_MAX 1e30

static inline bool sqnorm_in_range(const val_vec_head *h) {
    return h->sqnorm >= SQNORM_MIN && h->sqnorm <= SQNORM_MAX;
}

/* 2 gamma / (1 - gamma) + F64_SLACK, over-estimated without a division: with
   nu = (n+1) 2^-24 <= 2^-4 (n <= 2^20), gamma <= nu (1 + 2 nu) and 1 / (1 - gamma) <= 1.2. */
static inline double cosine_margin(uint32_t n) {
    double nu = ((double)n + 1.0) * 0x1p-24;
    return 2.4 * nu * (1.0 + 2.0 * nu) + 1e-12;
}

/* vecdist_bounds_many's loop, the kernel inlined: what depends on the query alone is
   computed once. */
static inline __attribute__((always_inline)) void
bounds_many_body(vecdist_bounded f, const float *q, const val_vec_head *hq, uint32_t dim,
                 const float *const *xs, const val_vec_head *const *hxs, size_t n, double *lo,
                 double *hi) {
    bool usable = hq->finite && dim <= (1u << 20) && (f != VECDIST_COSINE || sqnorm_in_range(hq));
    /* cosine: both sums are within gamma * sum|x_i y_i| <= gamma |x| |y| of the exact dot,
       and the f32 norms are within a factor (1 - gamma) of the exact ones: the
       similarities differ by at most 2 gamma / (1 - gamma). euclidean: the terms are the
       same rounded squares in both sums and none is negative, so each sum is within
       gamma of their exact total, relatively. */
    double margin = cosine_margin(dim), g = vecdist_gamma(dim);
    double shrink = (1.0 - g) / (1.0 + g), grow = (1.0 + g) / (1.0 - g);
    for (size_t i = 0; i < n; i++) {
        const val_vec_head *hx = hxs[i];
        lo[i] = hi[i] = NAN;
        if (!usable || !xs[i] || !hx->finite) continue;
        if (f == VECDIST_COSINE) {
            if (!sqnorm_in_range(hx)) continue;
            /* a product of reciprocals instead of a division: a few more roundings of
               2^-53, well inside F64_SLACK */
            double sim = (double)fast_sum(xs[i], q, dim, false) * (hx->inv_norm * hq->inv_norm);
            double shi = sim + margin, slo = sim - margin;
            lo[i] = 1.0 - (shi > 1.0 ? 1.0 : shi) - F64_SLACK;
            hi[i] = 1.0 - (slo < -1.0 ? -1.0 : slo) + F64_SLACK;
        } else {
            float fast = fast_sum(xs[i], q, dim, true);
            if (!(fast <= 1e37f)) continue;
            double d = (double)fast;
            lo[i] = sqrt(d * shrink) * (1.0 - F64_SLACK);
            hi[i] = sqrt(d * grow) * (1.0 + F64_SLACK) + 1e-300;
        }
    }
}

/* vecdist_bf16_rows's loop, the kernel inlined. */
static inline __attribute__((always_inline)) void
bf16_rows_body(bool sq, const float *pq, const uint32_t *rows, size_t stride, const uint32_t *ids,
               size_t n, uint32_t dim, float *out) {
    uint32_t words = vecdist_bf16_words(dim);
    if (sq)
        for (size_t i = 0; i < n; i++) out[i] = bf16_sum(rows + ids[i] * stride, pq, words, true);
    else
        for (size_t i = 0; i < n; i++) out[i] = bf16_sum(rows + ids[i] * stride, pq, words, false);
}

/* Each fast kernel for the baseline and, on x86-64, for AVX2, chosen once when the
   program loads. */
typedef struct kernels {
    float (*dot)(const float *x, const float *y, uint32_t n);
    float (*sqdist)(const float *x, const float *y, uint32_t n);
    void (*bounds_many)(vecdist_bounded f, const float *q, const val_vec_head *hq, uint32_t dim,
                        const float *const *xs, const val_vec_head *const *hxs, size_t n,
                        double *lo, double *hi);
    void (*bf16_rows)(bool sq, const float *pq, const uint32_t *rows, size_t stride,
                      const uint32_t *ids, size_t n, uint32_t dim, float *out);
} kernels;

#define DEFINE_KERNELS(suffix, attr)                                                               \
    attr static float dot_##suffix(const float *x, const float *y, uint32_t n) {                   \
        return fast_sum(x, y, n, false);                                                           \
    }                                                                                              \
    attr static float sqdist_##suffix(const float *x, const float *y, uint32_t n) {                \
        return fast_sum(x, y, n, true);                                                            \
    }                                                                                              \
    attr static void bounds_many_##suffix(vecdist_bounded f, const float *q,                       \
                                          const val_vec_head *hq, uint32_t dim,                    \
                                          const float *const *xs, const val_vec_head *const *hxs,  \
                                          size_t n, double *lo, double *hi) {                      \
        bounds_many_body(f, q, hq, dim, xs, hxs, n, lo, hi);                                       \
    }                                                                                              \
    attr static void bf16_rows_##suffix(bool sq, const float *q, const uint32_t *rows,             \
                                        size_t stride, const uint32_t *ids, size_t n,              \
                                        uint32_t dim, float *out) {                                \
        bf16_rows_body(sq, q, rows, stride, ids, n, dim, out);                                     \
    }                                                                                              \
    static const kernels kernels_##suffix = {dot_##suffix, sqdist_##suffix, bounds_many_##suffix,  \
                                             bf16_rows_##suffix};

DEFINE_KERNELS(base, )
static const kernels *impl = &kernels_base;

#if defined(__x86_64__)
DEFINE_KERNELS(avx2, __attribute__((target("avx2"))))

__attribute__((constructor)) static void choose_kernels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) impl = &kernels_avx2;
}
#endif

float vecdist_dot_fast(const float *x, const float *y, uint32_t n) {
    return impl->dot(x, y, n);
}

float vecdist_sqdist_fast(const float *x, const float *y, uint32_t n) {
    return impl->sqdist(x, y, n);
}

void vecdist_bounds_many(vecdist_bounded f, const float *q, const val_vec_head *hq, uint32_t dim,
                         const float *const *xs, const val_vec_head *const *hxs, size_t n,
                         double *lo, double *hi) {
    impl->bounds_many(f, q, hq, dim, xs, hxs, n, lo, hi);
}

void vecdist_bf16_rows(bool sq, const float *pq, const uint32_t *rows, size_t stride,
                       const uint32_t *ids, size_t n, uint32_t dim, float *out) {
    impl->bf16_rows(sq, pq, rows, stride, ids, n, dim, out);
}

uint32_t vecdist_bf16_words(uint32_t dim) {
    return ((dim + 15) & ~15u) / 2;
}

/* x rounded to bf16, to nearest, ties to even (finite values: no carry into a NaN). */
static uint32_t to_bf16(float x) {
    uint32_t w;
    memcpy(&w, &x, sizeof w);
    return (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;
}

void vecdist_bf16_pack(const float *x, uint32_t dim, uint32_t *out) {
    for (uint32_t i = 0; i < vecdist_bf16_words(dim); i++) {
        uint32_t lo = 2 * i < dim ? to_bf16(x[2 * i]) : 0;
        uint32_t hi = 2 * i + 1 < dim ? to_bf16(x[2 * i + 1]) : 0;
        out[i] = lo | hi << 16;
    }
}

void vecdist_bf16_query(const float *q, uint32_t dim, float *out) {
    /* each block of 16: the 8 even elements, then the 8 odd ones */
    uint32_t whole = dim & ~15u, padded = 2 * vecdist_bf16_words(dim);
    for (uint32_t b = 0; b < whole; b += 16)
        for (uint32_t k = 0; k < 8; k++) {
            out[b + k] = q[b + 2 * k];
            out[b + 8 + k] = q[b + 2 * k + 1];
        }
    for (uint32_t b = whole; b < padded; b += 16)
        for (uint32_t k = 0; k < 8; k++) {
            out[b + k] = b + 2 * k < dim ? q[b + 2 * k] : 0.0f;
            out[b + 8 + k] = b + 2 * k + 1 < dim ? q[b + 2 * k + 1] : 0.0f;
        }
}

bool vecdist_bounds(vecdist_bounded f, const float *x, const val_vec_head *hx, const float *q,
                    const val_vec_head *hq, uint32_t n, double *lo, double *hi) {
    impl->bounds_many(f, q, hq, n, &x, &hx, 1, lo, hi);
    return !isnan(*lo);
}

double vecdist_gamma(uint32_t n) {
    double nu = ((double)n + 1.0) * 0x1p-24;
    return nu / (1.0 - nu);
}

double vecdist_cosine_from(float dot, const val_vec_head *hx, const val_vec_head *hy) {
    double nx = hx->norm, ny = hy->norm;
    if (nx == 0.0 || ny == 0.0) return 0.0;
    double denom = nx * ny;
    double sim = (double)dot / denom;
    /* Rust's f64::clamp keeps NaN, and so does this */
    if (sim < -1.0) sim = -1.0;
    if (sim > 1.0) sim = 1.0;
    return 1.0 - sim;
}
