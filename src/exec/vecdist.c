/* Distance kernels over f32 vectors (see vecdist.h).
 *
 * The fast kernels use the compiler's vector extensions (8 floats per vector, 4
 * accumulators), which GCC and clang lower to whatever the target has. On x86-64 each
 * is compiled twice, for AVX2 and for the baseline (SSE2), and a constructor picks one
 * for the CPU when the program loads. The translation unit is ISO C, so no product and
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

static inline __attribute__((always_inline)) float dot_fast_body(const float *x, const float *y,
                                                                 uint32_t n) {
    vf8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, u0, u1, u2, u3, w0, w1, w2, w3;
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        LOAD8(u0, x + i);
        LOAD8(w0, y + i);
        LOAD8(u1, x + i + 8);
        LOAD8(w1, y + i + 8);
        LOAD8(u2, x + i + 16);
        LOAD8(w2, y + i + 16);
        LOAD8(u3, x + i + 24);
        LOAD8(w3, y + i + 24);
        a0 += u0 * w0;
        a1 += u1 * w1;
        a2 += u2 * w2;
        a3 += u3 * w3;
    }
    for (; i + 8 <= n; i += 8) {
        LOAD8(u0, x + i);
        LOAD8(w0, y + i);
        a0 += u0 * w0;
    }
    vf8 t = (a0 + a1) + (a2 + a3);
    float s = sum8(&t);
    for (; i < n; i++) s += x[i] * y[i];
    return s;
}

static inline __attribute__((always_inline)) float sqdist_fast_body(const float *x, const float *y,
                                                                    uint32_t n) {
    vf8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, u0, u1, u2, u3, w0, w1, w2, w3;
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        LOAD8(u0, x + i);
        LOAD8(w0, y + i);
        LOAD8(u1, x + i + 8);
        LOAD8(w1, y + i + 8);
        LOAD8(u2, x + i + 16);
        LOAD8(w2, y + i + 16);
        LOAD8(u3, x + i + 24);
        LOAD8(w3, y + i + 24);
        u0 -= w0;
        u1 -= w1;
        u2 -= w2;
        u3 -= w3;
        a0 += u0 * u0;
        a1 += u1 * u1;
        a2 += u2 * u2;
        a3 += u3 * u3;
    }
    for (; i + 8 <= n; i += 8) {
        LOAD8(u0, x + i);
        LOAD8(w0, y + i);
        u0 -= w0;
        a0 += u0 * u0;
    }
    vf8 t = (a0 + a1) + (a2 + a3);
    float s = sum8(&t);
    for (; i < n; i++) {
        float d = x[i] - y[i];
        s += d * d;
    }
    return s;
}

/* One version of each fast kernel for the baseline and, on x86-64, one for AVX2, chosen
   once when the program loads. */
typedef float (*kernel_fn)(const float *x, const float *y, uint32_t n);

static float dot_fast_base(const float *x, const float *y, uint32_t n) {
    return dot_fast_body(x, y, n);
}
static float sqdist_fast_base(const float *x, const float *y, uint32_t n) {
    return sqdist_fast_body(x, y, n);
}

static kernel_fn dot_fast_impl = dot_fast_base, sqdist_fast_impl = sqdist_fast_base;

#if defined(__x86_64__)
__attribute__((target("avx2"))) static float dot_fast_avx2(const float *x, const float *y,
                                                           uint32_t n) {
    return dot_fast_body(x, y, n);
}
__attribute__((target("avx2"))) static float sqdist_fast_avx2(const float *x, const float *y,
                                                              uint32_t n) {
    return sqdist_fast_body(x, y, n);
}

__attribute__((constructor)) static void choose_kernels(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        dot_fast_impl = dot_fast_avx2;
        sqdist_fast_impl = sqdist_fast_avx2;
    }
}
#endif

float vecdist_dot_fast(const float *x, const float *y, uint32_t n) {
    return dot_fast_impl(x, y, n);
}

float vecdist_sqdist_fast(const float *x, const float *y, uint32_t n) {
    return sqdist_fast_impl(x, y, n);
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

/* 2 gamma / (1 - gamma) + F64_SLACK, over-estimated without a division: with
   nu = (n+1) 2^-24 <= 2^-4 (n <= 2^20), gamma <= nu (1 + 2 nu) and 1 / (1 - gamma) <= 1.2. */
static inline double cosine_margin(uint32_t n) {
    double nu = ((double)n + 1.0) * 0x1p-24;
    return 2.4 * nu * (1.0 + 2.0 * nu) + 1e-12;
}

/* Slack for the f64 arithmetic after the sums (a few roundings of 2^-53). */
#define F64_SLACK 1e-12
/* Squared norms inside which no sum of products overflows or loses more than a
 * negligible absolute amount to subnormal products. */
#define SQNORM_MIN 1e-20
#define SQNORM_MAX 1e30

bool vecdist_cosine_bounds(const float *x, const val_vec_head *hx, const float *y,
                           const val_vec_head *hy, uint32_t n, double *lo, double *hi) {
    if (!hx->finite || !hy->finite || n > (1u << 20)) return false;
    if (!(hx->sqnorm >= SQNORM_MIN && hx->sqnorm <= SQNORM_MAX && hy->sqnorm >= SQNORM_MIN &&
          hy->sqnorm <= SQNORM_MAX))
        return false;
    /* Both sums are within gamma * sum|x_i y_i| <= gamma |x| |y| of the exact dot, and
       the f32 norms are within a factor (1 - gamma) of the exact ones: the similarities
       differ by at most 2 gamma / (1 - gamma). */
    double margin = cosine_margin(n);
    /* a product of reciprocals instead of a division: a few more roundings of 2^-53,
       well inside F64_SLACK */
    double sim = (double)vecdist_dot_fast(x, y, n) * (hx->inv_norm * hy->inv_norm);
    double shi = sim + margin, slo = sim - margin;
    *lo = 1.0 - (shi > 1.0 ? 1.0 : shi) - F64_SLACK;
    *hi = 1.0 - (slo < -1.0 ? -1.0 : slo) + F64_SLACK;
    return true;
}

bool vecdist_euclidean_bounds(const float *x, const val_vec_head *hx, const float *y,
                              const val_vec_head *hy, uint32_t n, double *lo, double *hi) {
    if (!hx->finite || !hy->finite || n > (1u << 20)) return false;
    float fast = vecdist_sqdist_fast(x, y, n);
    if (!(fast <= 1e37f)) return false;
    /* The terms are the same rounded squares in both sums and none is negative: each
       sum is within gamma of their exact total, relatively. */
    double g = vecdist_gamma(n);
    double f = (double)fast;
    double slo = f * (1.0 - g) / (1.0 + g), shi = f * (1.0 + g) / (1.0 - g);
    *lo = sqrt(slo) * (1.0 - F64_SLACK);
    *hi = sqrt(shi) * (1.0 + F64_SLACK) + 1e-300;
    return true;
}
