/* Tests of the vector and int8 quantisation builtins (vector.c, quantize.c), called
 * through the builtin table as the evaluator calls them: exact f32/f64 results, and the
 * edge cases (empty and zero vectors, NaN and infinities, dimension mismatch, wrong
 * types). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "unit_fixture.h"
#include "value/value.h"

static void teardown(void) {
    val_shutdown();
}

TestSuite(vector_fn, .fini = teardown);
TestSuite(quantize_fn, .fini = teardown);

static val_t vf(uint32_t n, const float *e) {
    return val_vec_f32(e, n);
}
#define VF(...) vf(sizeof((float[]){__VA_ARGS__}) / sizeof(float), (float[]){__VA_ARGS__})

static val_t vi(uint32_t n, const int8_t *e) {
    return val_vec_i8(e, n);
}
#define VI(...) vi(sizeof((int8_t[]){__VA_ARGS__}), (int8_t[]){__VA_ARGS__})

static val_t empty_f32(void) {
    return val_vec_f32(NULL, 0);
}

static double as_f64(val_t v) {
    cr_assert(val_is_float(v), "expected a float result");
    return val_get_float(v);
}

static void assert_f32_vec(val_t v, uint32_t n, const float *want) {
    cr_assert_eq(val_type_of(v), VT_VEC);
    uint32_t got_n;
    const float *got = val_get_vec_f32(v, &got_n);
    cr_assert_eq(got_n, n);
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "element %u: %.9g != %.9g", i, got[i], want[i]);
}
#define ASSERT_VF(v, ...)                                                                          \
    assert_f32_vec(v, sizeof((float[]){__VA_ARGS__}) / sizeof(float), (float[]){__VA_ARGS__})

static void assert_i8_vec(val_t v, uint32_t n, const int8_t *want) {
    cr_assert_eq(val_type_of(v), VT_VEC_I8);
    uint32_t got_n;
    const int8_t *got = val_get_vec_i8(v, &got_n);
    cr_assert_eq(got_n, n);
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "element %u: %d != %d", i, got[i], want[i]);
}
#define ASSERT_VI(v, ...) assert_i8_vec(v, sizeof((int8_t[]){__VA_ARGS__}), (int8_t[]){__VA_ARGS__})

/* ---- euclidean ----------------------------------------------------------------------- */

Test(vector_fn, euclidean_sums_squares_in_f32) {
    /* The reference transcript's value: the f32 difference 0.8 squared and summed in f32 */
    cr_assert_eq(as_f64(UNIT_CALL("euclidean", VF(0.1f), VF(0.9f))), 0.799999953806399);
    cr_assert_eq(as_f64(UNIT_CALL("euclidean", VF(0, 0, 0), VF(3, 4, 0))), 5.0);
    cr_assert_eq(as_f64(UNIT_CALL("euclidean", VF(1, 2), VF(1, 2))), 0.0);
}

Test(vector_fn, euclidean_of_empty_vectors_is_negative_zero) {
    double d = as_f64(UNIT_CALL("euclidean", empty_f32(), empty_f32()));
    cr_assert_eq(d, 0.0);
    cr_assert(signbit(d));
}

Test(vector_fn, euclidean_dimension_mismatch_is_infinite) {
    cr_assert(isinf(as_f64(UNIT_CALL("euclidean", VF(1, 2), VF(1, 2, 3)))));
    cr_assert(isinf(as_f64(UNIT_CALL("euclidean", empty_f32(), VF(1)))));
}

Test(vector_fn, euclidean_nan_and_infinity) {
    cr_assert_eq(UNIT_CALL("euclidean", VF(NAN, 1), VF(0, 1)), VAL_FNAN);
    cr_assert(isinf(as_f64(UNIT_CALL("euclidean", VF(INFINITY), VF(0)))));
    /* inf - inf */
    cr_assert_eq(UNIT_CALL("euclidean", VF(INFINITY), VF(INFINITY)), VAL_FNAN);
    /* 1e30 squared overflows f32 even though the f64 result would fit */
    cr_assert(isinf(as_f64(UNIT_CALL("euclidean", VF(1e30f), VF(0)))));
}

Test(vector_fn, non_f32_arguments_give_null) {
    cr_assert_eq(UNIT_CALL("euclidean", VI(1, 2), VI(1, 2)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("euclidean", VF(1), val_int(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("cosine", val_str("a", 1), VF(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("dot", VAL_NULL, VF(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("manhattan", VF(1), VI(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("normalize", VI(3)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("vec_dim", val_float(1.0)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("vec_add", VF(1), VAL_TRUE), VAL_NULL);
    cr_assert_eq(UNIT_CALL("vec_scale", VI(1), val_int(2)), VAL_NULL);
}

/* ---- cosine -------------------------------------------------------------------------- */

Test(vector_fn, cosine_is_a_distance) {
    cr_assert_eq(as_f64(UNIT_CALL("cosine", VF(1, 0), VF(2, 0))), 0.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine", VF(1, 0), VF(0, 1))), 1.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine", VF(1, 0), VF(-3, 0))), 2.0);
}

Test(vector_fn, cosine_with_a_zero_vector_is_zero) {
    cr_assert_eq(as_f64(UNIT_CALL("cosine", VF(0, 0, 0), VF(1, 0, 0))), 0.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine", VF(0, 0), VF(0, 0))), 0.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine", empty_f32(), empty_f32())), 0.0);
}

Test(vector_fn, cosine_mismatch_and_nan) {
    cr_assert(isinf(as_f64(UNIT_CALL("cosine", VF(1), VF(1, 1)))));
    cr_assert_eq(UNIT_CALL("cosine", VF(NAN, 1), VF(1, 1)), VAL_FNAN);
}

Test(vector_fn, cosine_clamps_rounding_beyond_one) {
    /* Parallel vectors whose f32 sums round so that dot/(|a||b|) may exceed 1 */
    double d = as_f64(UNIT_CALL("cosine", VF(0.1f, 0.2f, 0.3f), VF(0.1f, 0.2f, 0.3f)));
    cr_assert(d >= 0.0 && d < 1e-6);
}

/* ---- dot and manhattan --------------------------------------------------------------- */

Test(vector_fn, dot_sums_in_f64) {
    cr_assert_eq(as_f64(UNIT_CALL("dot", VF(1, 2, 3), VF(4, 5, 6))), 32.0);
    cr_assert_eq(as_f64(UNIT_CALL("dot", VF(0.1f), VF(0.1f))), (double)0.1f * (double)0.1f);
    cr_assert_eq(as_f64(UNIT_CALL("dot", VF(-1, 2), VF(3, -4))), -11.0);
    /* f32 elements at f32's limit multiply without overflow in f64 */
    cr_assert_eq(as_f64(UNIT_CALL("dot", VF(3e38f), VF(3e38f))), (double)3e38f * (double)3e38f);
}

Test(vector_fn, dot_mismatch_is_zero) {
    cr_assert_eq(UNIT_CALL("dot", VF(1, 2), VF(1)), val_float(0.0));
    cr_assert_eq(as_f64(UNIT_CALL("dot", empty_f32(), empty_f32())), 0.0);
}

Test(vector_fn, manhattan) {
    cr_assert_eq(as_f64(UNIT_CALL("manhattan", VF(1, 2), VF(4, -2))), 7.0);
    cr_assert_eq(as_f64(UNIT_CALL("manhattan", VF(0.5f), VF(0.5f))), 0.0);
    cr_assert(isinf(as_f64(UNIT_CALL("manhattan", VF(1), empty_f32()))));
    cr_assert(isinf(as_f64(UNIT_CALL("manhattan", VF(-INFINITY), VF(0)))));
    cr_assert_eq(UNIT_CALL("manhattan", VF(NAN), VF(0)), VAL_FNAN);
    /* the f32 difference overflows before the f64 sum sees it */
    cr_assert(isinf(as_f64(UNIT_CALL("manhattan", VF(3e38f), VF(-3e38f)))));
}

/* ---- normalize, vec_dim, vec_add, vec_scale ------------------------------------------ */

Test(vector_fn, normalize_divides_by_the_f32_norm) {
    ASSERT_VF(UNIT_CALL("normalize", VF(3, 4)), 0.6f, 0.8f);
    ASSERT_VF(UNIT_CALL("normalize", VF(-2)), -1.0f);
}

Test(vector_fn, normalize_zero_and_empty_vectors) {
    ASSERT_VF(UNIT_CALL("normalize", VF(0, 0, 0)), 0, 0, 0);
    val_t e = UNIT_CALL("normalize", empty_f32());
    cr_assert_eq(e, empty_f32());
}

Test(vector_fn, normalize_infinite_norm_gives_zeros_and_nan) {
    /* 1e30 squared is +inf in f32; x / inf */
    ASSERT_VF(UNIT_CALL("normalize", VF(1e30f, 1)), 0.0f, 0.0f);
    uint32_t n;
    const float *e = val_get_vec_f32(UNIT_CALL("normalize", VF(NAN, 1)), &n);
    cr_assert_eq(n, 2);
    cr_assert(isnan(e[0]) && isnan(e[1]));
}

Test(vector_fn, vec_dim) {
    cr_assert_eq(UNIT_CALL("vec_dim", VF(3, 4)), val_int(2));
    cr_assert_eq(UNIT_CALL("vec_dim", empty_f32()), val_int(0));
    float big[1000] = {0};
    cr_assert_eq(UNIT_CALL("vec_dim", vf(1000, big)), val_int(1000));
}

Test(vector_fn, vec_add) {
    ASSERT_VF(UNIT_CALL("vec_add", VF(1, 2.5f), VF(-1, 0.5f)), 0, 3);
    cr_assert_eq(UNIT_CALL("vec_add", VF(1, 2), VF(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("vec_add", empty_f32(), empty_f32()), empty_f32());
    ASSERT_VF(UNIT_CALL("vec_add", VF(3e38f), VF(3e38f)), INFINITY);
}

Test(vector_fn, vec_scale_by_any_number) {
    ASSERT_VF(UNIT_CALL("vec_scale", VF(1, -2), val_int(3)), 3, -6);
    ASSERT_VF(UNIT_CALL("vec_scale", VF(1, -2), val_float(0.5)), 0.5f, -1);
    ASSERT_VF(UNIT_CALL("vec_scale", VF(1), VAL_TRUE), 1);
    /* a non-number scale is to_f64 0.0 */
    ASSERT_VF(UNIT_CALL("vec_scale", VF(1, -2), val_str("x", 1)), 0, -0.0f);
    /* the factor is rounded to f32 first: 1e300 becomes inf */
    ASSERT_VF(UNIT_CALL("vec_scale", VF(1), val_float(1e300)), INFINITY);
    ASSERT_VF(UNIT_CALL("vec_scale", VF(1), val_int(INT64_MAX)), 9223372036854775807.0f);
}

/* ---- quantisation -------------------------------------------------------------------- */

Test(quantize_fn, quantize_linear_examples) {
    ASSERT_VI(UNIT_CALL("quantize_linear", VF(1.0f, 0.5f, -0.5f, -1.0f)), 127, 63, -64, -128);
    ASSERT_VI(UNIT_CALL("quantize_linear", VF(0.25f, 0.75f, -0.25f, -0.75f)), 42, 127, -43, -128);
    ASSERT_VI(UNIT_CALL("quantize_linear", VF(2.0f, -2.0f, 1.0f, -1.0f)), 127, -128, 63, -64);
}

Test(quantize_fn, quantize_linear_constant_and_empty) {
    ASSERT_VI(UNIT_CALL("quantize_linear", VF(0, 0, 0, 0)), 0, 0, 0, 0);
    ASSERT_VI(UNIT_CALL("quantize_linear", VF(5, 5)), 0, 0);
    cr_assert_eq(UNIT_CALL("quantize_linear", empty_f32()), val_vec_i8(NULL, 0));
}

Test(quantize_fn, quantize_linear_nan_and_infinity) {
    /* NaN is skipped by min/max and quantises to 0 */
    ASSERT_VI(UNIT_CALL("quantize_linear", VF(NAN, 1, -1)), 0, 127, -128);
    /* an infinite range: finite elements land on -128, the infinity itself is NaN -> 0 */
    ASSERT_VI(UNIT_CALL("quantize_linear", VF(INFINITY, 0)), 0, -128);
}

Test(quantize_fn, quantize_symmetric_examples) {
    ASSERT_VI(UNIT_CALL("quantize_symmetric", VF(1.0f, 0.5f, -0.5f, -1.0f)), 127, 64, -64, -127);
    ASSERT_VI(UNIT_CALL("quantize_symmetric", VF(2.0f, -2.0f, 1.0f, -1.0f)), 127, -127, 64, -64);
    ASSERT_VI(UNIT_CALL("quantize_symmetric", VF(0, 0)), 0, 0);
    cr_assert_eq(UNIT_CALL("quantize_symmetric", empty_f32()), val_vec_i8(NULL, 0));
    ASSERT_VI(UNIT_CALL("quantize_symmetric", VF(NAN, -4, 2)), 0, -127, 64);
}

Test(quantize_fn, quantize_rejects_non_f32) {
    cr_assert_eq(UNIT_CALL("quantize_linear", VI(1, 2)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("quantize_symmetric", val_int(3)), VAL_NULL);
}

Test(quantize_fn, dequantize) {
    ASSERT_VF(UNIT_CALL("dequantize", VI(127, 63, -64, -128)), 127, 63, -64, -128);
    cr_assert_eq(UNIT_CALL("dequantize", VF(1, 2)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("dequantize", val_vec_i8(NULL, 0)), empty_f32());
}

Test(quantize_fn, dequantize_scaled) {
    ASSERT_VF(UNIT_CALL("dequantize_scaled", VI(127, 63, -64, -128), val_float(0.5)), 63.5f, 31.5f,
              -32.0f, -64.0f);
    ASSERT_VF(UNIT_CALL("dequantize_scaled", VI(1, -1), val_int(-2)), -2, 2);
    ASSERT_VF(UNIT_CALL("dequantize_scaled", VI(1), VAL_NULL), 0);
    cr_assert_eq(UNIT_CALL("dequantize_scaled", VF(1), val_float(2.0)), VAL_NULL);
}

Test(quantize_fn, int8_distances) {
    cr_assert_eq(as_f64(UNIT_CALL("euclidean_int8", VI(-128), VI(127))), 255.0);
    cr_assert_eq(as_f64(UNIT_CALL("euclidean_int8", VI(0, 0), VI(3, -4))), 5.0);
    cr_assert_eq(as_f64(UNIT_CALL("dot_int8", VI(-128, 127), VI(-128, 127))), 16384.0 + 16129.0);
    cr_assert_eq(as_f64(UNIT_CALL("manhattan_int8", VI(-128, -128), VI(127, 127))), 510.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine_int8", VI(1, 0), VI(5, 0))), 0.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine_int8", VI(1, 0), VI(-5, 0))), 2.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine_int8", VI(1, 0), VI(0, 5))), 1.0);
}

Test(quantize_fn, int8_sums_do_not_overflow) {
    int8_t lo[4096], hi[4096];
    for (int i = 0; i < 4096; i++) lo[i] = -128, hi[i] = 127;
    val_t a = vi(4096, lo), b = vi(4096, hi);
    cr_assert_eq(as_f64(UNIT_CALL("dot_int8", a, a)), 4096.0 * 16384.0);
    cr_assert_eq(as_f64(UNIT_CALL("manhattan_int8", a, b)), 4096.0 * 255.0);
    cr_assert_eq(as_f64(UNIT_CALL("euclidean_int8", a, b)), sqrt(4096.0 * 255.0 * 255.0));
    cr_assert_eq(as_f64(UNIT_CALL("cosine_int8", a, b)), 2.0);
}

Test(quantize_fn, int8_zero_empty_and_mismatch) {
    cr_assert_eq(as_f64(UNIT_CALL("cosine_int8", VI(0, 0), VI(1, 1))), 1.0);
    cr_assert_eq(as_f64(UNIT_CALL("cosine_int8", val_vec_i8(NULL, 0), val_vec_i8(NULL, 0))), 1.0);
    cr_assert_eq(as_f64(UNIT_CALL("euclidean_int8", val_vec_i8(NULL, 0), val_vec_i8(NULL, 0))),
                 0.0);
    cr_assert(isinf(as_f64(UNIT_CALL("euclidean_int8", VI(1), VI(1, 2)))));
    cr_assert(isinf(as_f64(UNIT_CALL("cosine_int8", VI(1), VI(1, 2)))));
    cr_assert(isinf(as_f64(UNIT_CALL("manhattan_int8", VI(1), VI(1, 2)))));
    cr_assert_eq(UNIT_CALL("dot_int8", VI(1), VI(1, 2)), val_float(0.0));
}

Test(quantize_fn, int8_functions_reject_f32_vectors) {
    cr_assert_eq(UNIT_CALL("euclidean_int8", VF(1), VF(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("cosine_int8", VI(1), VF(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("dot_int8", VI(1), val_int(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("manhattan_int8", VAL_NULL, VI(1)), VAL_NULL);
}
