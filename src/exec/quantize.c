/* Int8 quantisation builtins (iql-language.md 5.3): quantize_linear and
 * quantize_symmetric turn an f32 vector into an i8 vector, dequantize and
 * dequantize_scaled turn it back, and the *_int8 distances compare two i8 vectors with
 * exact integer sums (the element products fit in 32 bits, so the loops vectorise).
 * Quantisation follows the original's f32 arithmetic step by step, each step its own
 * statement so that no compiler fuses a multiply and an add. */
#include <math.h>
#include <stdlib.h>

#include "exec/builtin_impl.h"

static bool get_f32_vec(val_t v, const float **elems, uint32_t *n) {
    if (val_type_of(v) != VT_VEC) return false;
    *elems = val_get_vec_f32(v, n);
    return true;
}

static bool get_i8_vec(val_t v, const int8_t **elems, uint32_t *n) {
    if (val_type_of(v) != VT_VEC_I8) return false;
    *elems = val_get_vec_i8(v, n);
    return true;
}

/* Rust's `f.round().clamp(lo, hi) as i8`: half away from zero, and NaN (which clamp
 * keeps) casts to 0. */
static int8_t round_clamp_i8(float f, float lo, float hi) {
    float r = roundf(f);
    if (r != r) return 0;
    if (r < lo) r = lo;
    if (r > hi) r = hi;
    return (int8_t)r;
}

static val_t intern_i8(int8_t *elems, uint32_t n) {
    val_t v = val_vec_i8(elems, n);
    free(elems);
    return v;
}

static val_t fn_quantize_linear(const val_t *a) {
    const float *x;
    uint32_t n;
    if (!get_f32_vec(a[0], &x, &n)) return VAL_NULL;
    int8_t *out = calloc(n ? n : 1, 1);
    /* fminf/fmaxf skip NaN the way Rust's f32::min/max do */
    float lo = INFINITY, hi = -INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        lo = fminf(lo, x[i]);
        hi = fmaxf(hi, x[i]);
    }
    float range = hi - lo;
    if (n > 0 && range != 0.0f) {
        for (uint32_t i = 0; i < n; i++) {
            float shifted = x[i] - lo;
            float unit = shifted / range;
            float scaled = unit * 255.0f;
            float centred = scaled - 128.0f;
            out[i] = round_clamp_i8(centred, -128.0f, 127.0f);
        }
    }
    return intern_i8(out, n);
}

static val_t fn_quantize_symmetric(const val_t *a) {
    const float *x;
    uint32_t n;
    if (!get_f32_vec(a[0], &x, &n)) return VAL_NULL;
    int8_t *out = calloc(n ? n : 1, 1);
    float max_abs = 0.0f;
    for (uint32_t i = 0; i < n; i++) max_abs = fmaxf(max_abs, fabsf(x[i]));
    if (max_abs != 0.0f) {
        float scale = 127.0f / max_abs;
        for (uint32_t i = 0; i < n; i++) {
            float scaled = x[i] * scale;
            out[i] = round_clamp_i8(scaled, -127.0f, 127.0f);
        }
    }
    return intern_i8(out, n);
}

static val_t dequantize_by(const val_t *a, float factor) {
    const int8_t *q;
    uint32_t n;
    if (!get_i8_vec(a[0], &q, &n)) return VAL_NULL;
    float *out = malloc((n ? n : 1) * sizeof(float));
    for (uint32_t i = 0; i < n; i++) out[i] = (float)q[i] * factor;
    val_t v = val_vec_f32(out, n);
    free(out);
    return v;
}

static val_t fn_dequantize(const val_t *a) {
    return dequantize_by(a, 1.0f);
}

static val_t fn_dequantize_scaled(const val_t *a) {
    return dequantize_by(a, (float)val_to_f64(a[1]));
}

/* Two i8 vectors; *same_len tells a length mismatch apart from a type mismatch. */
static bool get_i8_pair(const val_t *a, const int8_t **x, const int8_t **y, uint32_t *n,
                        bool *same_len) {
    uint32_t nx, ny;
    if (!get_i8_vec(a[0], x, &nx) || !get_i8_vec(a[1], y, &ny)) return false;
    *same_len = nx == ny;
    *n = nx;
    return true;
}

static val_t fn_euclidean_int8(const val_t *a) {
    const int8_t *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_i8_pair(a, &x, &y, &n, &same_len)) return VAL_NULL;
    if (!same_len) return val_float(INFINITY);
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t d = (int32_t)x[i] - (int32_t)y[i];
        sum += d * d;
    }
    return val_float(sqrt((double)sum));
}

static val_t fn_cosine_int8(const val_t *a) {
    const int8_t *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_i8_pair(a, &x, &y, &n, &same_len)) return VAL_NULL;
    if (!same_len) return val_float(INFINITY);
    int64_t dot = 0, xx = 0, yy = 0;
    for (uint32_t i = 0; i < n; i++) {
        dot += (int32_t)x[i] * (int32_t)y[i];
        xx += (int32_t)x[i] * (int32_t)x[i];
        yy += (int32_t)y[i] * (int32_t)y[i];
    }
    if (xx == 0 || yy == 0) return val_float(1.0);
    double denom = sqrt((double)xx) * sqrt((double)yy);
    double sim = (double)dot / denom;
    if (sim < -1.0) sim = -1.0;
    if (sim > 1.0) sim = 1.0;
    return val_float(1.0 - sim);
}

static val_t fn_dot_int8(const val_t *a) {
    const int8_t *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_i8_pair(a, &x, &y, &n, &same_len)) return VAL_NULL;
    if (!same_len) return val_float(0.0);
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += (int32_t)x[i] * (int32_t)y[i];
    return val_float((double)sum);
}

static val_t fn_manhattan_int8(const val_t *a) {
    const int8_t *x, *y;
    uint32_t n;
    bool same_len;
    if (!get_i8_pair(a, &x, &y, &n, &same_len)) return VAL_NULL;
    if (!same_len) return val_float(INFINITY);
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t d = (int32_t)x[i] - (int32_t)y[i];
        sum += d < 0 ? -d : d;
    }
    return val_float((double)sum);
}

const exec_builtin exec_quantize_builtins[] = {
    {"quantize_linear", 1, fn_quantize_linear},
    {"quantize_symmetric", 1, fn_quantize_symmetric},
    {"dequantize", 1, fn_dequantize},
    {"dequantize_scaled", 2, fn_dequantize_scaled},
    {"euclidean_int8", 2, fn_euclidean_int8},
    {"cosine_int8", 2, fn_cosine_int8},
    {"dot_int8", 2, fn_dot_int8},
    {"manhattan_int8", 2, fn_manhattan_int8},
    {NULL, 0, NULL},
};
