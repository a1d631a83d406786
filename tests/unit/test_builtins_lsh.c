/* Tests of the LSH builtins (lsh.c), called through the builtin table: the bucket ids the
 * language reference lists (they pin the SipHash-1-3 hyperplane generator and the f32
 * dot), the probe sequences, and the edge cases (negative counts, empty, NaN and wrong
 * typed vectors, the 62-bit cap, ids that lose precision in f32). */
#include <criterion/criterion.h>
#include <math.h>

#include "unit_fixture.h"
#include "value/value.h"

static void teardown(void) {
    val_shutdown();
}

TestSuite(lsh_fn, .fini = teardown);

#define I(x)    val_int(x)
#define VF(...) val_vec_f32((float[]){__VA_ARGS__}, sizeof((float[]){__VA_ARGS__}) / sizeof(float))

static void assert_f32_vec(val_t v, uint32_t n, const float *want) {
    cr_assert_eq(val_type_of(v), VT_VEC);
    uint32_t got_n;
    const float *got = val_get_vec_f32(v, &got_n);
    cr_assert_eq(got_n, n, "length %u != %u", got_n, n);
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "element %u: %.9g != %.9g", i, got[i], want[i]);
}
#define ASSERT_VF(v, ...)                                                                          \
    assert_f32_vec(v, sizeof((float[]){__VA_ARGS__}) / sizeof(float), (float[]){__VA_ARGS__})

static uint32_t vec_len(val_t v) {
    cr_assert_eq(val_type_of(v), VT_VEC);
    uint32_t n;
    val_get_vec_f32(v, &n);
    return n;
}

/* ---- lsh_bucket ---------------------------------------------------------------------- */

Test(lsh_fn, bucket_matches_the_reference_values) {
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 0, 0), I(0), I(4)), I(8));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(0, 0, 1), I(0), I(4)), I(3));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(-1, 0, 0, 0), I(0), I(4)), I(7));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 2, 3), I(4), I(42)), I(1611170160950));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(4, 5, 6), I(4), I(42)), I(2153476890934));
}

Test(lsh_fn, bucket_three_hyperplanes) {
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(-1, 0, 0, 0), I(0), I(3)), I(7));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 0, 0, 0), I(0), I(3)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(0.9f, 0.1f, 0, 0), I(0), I(3)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(0, 1, 0, 0), I(0), I(3)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(0, 0.9f, 0.1f, 0), I(0), I(3)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(0.95f, 0.05f, 0, 0), I(0), I(3)), I(0));
}

Test(lsh_fn, bucket_depends_on_direction_only) {
    val_t a = UNIT_CALL("lsh_bucket", VF(1, 2, 3), I(4), I(42));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(10, 20, 30), I(4), I(42)), a);
    cr_assert_neq(UNIT_CALL("lsh_bucket", VF(1, 2, 3), I(5), I(42)), a);
}

Test(lsh_fn, bucket_counts_are_converted_with_to_i64) {
    val_t a = UNIT_CALL("lsh_bucket", VF(1, 2, 3), I(4), I(42));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 2, 3), val_float(4.9), val_float(42.5)), a);
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 2, 3), val_ts(4), val_ts(42)), a);
    /* a string table is to_i64 0 */
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 0, 0), val_str("t", 1), I(4)), I(8));
}

Test(lsh_fn, bucket_edge_cases) {
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 2), I(0), I(-1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 2), I(0), I(INT64_MIN)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, 2), I(0), I(0)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", val_vec_f32(NULL, 0), I(0), I(8)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(0, 0, 0), I(0), I(8)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(NAN, 1), I(0), I(8)), I(0));
    cr_assert_eq(UNIT_CALL("lsh_bucket", val_vec_i8((int8_t[]){1, 2}, 2), I(0), I(4)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("lsh_bucket", I(1), I(0), I(4)), VAL_NULL);
    /* negative tables wrap as u64 and still hash */
    cr_assert_eq(val_type_of(UNIT_CALL("lsh_bucket", VF(1, 2), I(-1), I(4))), VT_INT);
}

Test(lsh_fn, bucket_is_capped_at_62_bits) {
    val_t all = UNIT_CALL("lsh_bucket", VF(1, -2, 3, -4, 5), I(7), I(INT64_MAX));
    cr_assert_eq(UNIT_CALL("lsh_bucket", VF(1, -2, 3, -4, 5), I(7), I(62)), all);
    int64_t b = val_get_int(all);
    cr_assert(b >= 0 && b < (INT64_C(1) << 62));
    /* the low bits are the same hyperplanes as a smaller count */
    int64_t low = val_get_int(UNIT_CALL("lsh_bucket", VF(1, -2, 3, -4, 5), I(7), I(10)));
    cr_assert_eq(b & 1023, low);
}

Test(lsh_fn, large_hyperplane_sets_agree_with_small_ones) {
    /* 100 dimensions x 62 planes are generated per call, 100 x 10 come from the cache */
    float v[100];
    for (int i = 0; i < 100; i++) v[i] = (float)((i * 37) % 11) - 5.0f;
    val_t vec = val_vec_f32(v, 100);
    int64_t all = val_get_int(UNIT_CALL("lsh_bucket", vec, I(3), I(62)));
    int64_t low = val_get_int(UNIT_CALL("lsh_bucket", vec, I(3), I(10)));
    cr_assert_eq(all & 1023, low);
    cr_assert_eq(val_get_int(UNIT_CALL("lsh_bucket", vec, I(3), I(62))), all);
}

/* ---- lsh_probes ---------------------------------------------------------------------- */

Test(lsh_fn, probes_flip_singles_then_pairs_then_triples) {
    ASSERT_VF(UNIT_CALL("lsh_probes", I(8), I(4), I(5)), 8, 9, 10, 12, 0);
    ASSERT_VF(UNIT_CALL("lsh_probes", I(0), I(3), I(100)), 0, 1, 2, 4, 3, 5, 6, 7);
}

Test(lsh_fn, probes_count_and_truncation) {
    cr_assert_eq(vec_len(UNIT_CALL("lsh_probes", I(0), I(4), I(1000))), 1 + 4 + 6 + 4);
    cr_assert_eq(vec_len(UNIT_CALL("lsh_probes", I(0), I(62), I(INT64_MAX))),
                 1 + 62 + 1891 + 37820);
    cr_assert_eq(vec_len(UNIT_CALL("lsh_probes", I(0), I(1000), I(70))), 70);
    ASSERT_VF(UNIT_CALL("lsh_probes", I(5), I(0), I(10)), 5);
    cr_assert_eq(vec_len(UNIT_CALL("lsh_probes", I(5), I(4), I(0))), 0);
}

Test(lsh_fn, probes_negative_counts_give_null) {
    cr_assert_eq(UNIT_CALL("lsh_probes", I(8), I(-1), I(5)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("lsh_probes", I(8), I(4), I(-1)), VAL_NULL);
}

Test(lsh_fn, probes_are_stored_as_f32) {
    int64_t big = (INT64_C(1) << 40) + 1;
    ASSERT_VF(UNIT_CALL("lsh_probes", I(big), I(1), I(2)), (float)(INT64_C(1) << 40),
              (float)(INT64_C(1) << 40));
}

/* ---- lsh_multi_probe ----------------------------------------------------------------- */

Test(lsh_fn, multi_probe_starts_at_the_bucket) {
    val_t v = VF(1, 2, 3);
    val_t bucket = UNIT_CALL("lsh_bucket", v, I(4), I(42));
    uint32_t n;
    const float *p = val_get_vec_f32(UNIT_CALL("lsh_multi_probe", v, I(4), I(42), I(3)), &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(p[0], (float)val_get_int(bucket));
}

Test(lsh_fn, multi_probe_flips_the_nearest_hyperplanes_first) {
    /* [1, .5, 0, -.5] lies closest to hyperplane 2, then 0, 1, 3 */
    ASSERT_VF(UNIT_CALL("lsh_multi_probe", VF(1, 0.5f, 0, -0.5f), I(0), I(4), I(5)), 8, 12, 9, 10,
              0);
    ASSERT_VF(UNIT_CALL("lsh_multi_probe", VF(0, 1, 0.5f, 0), I(0), I(4), I(5)), 11, 10, 9, 15, 3);
}

Test(lsh_fn, multi_probe_visits_every_single_flip) {
    val_t v = VF(0.3f, -0.7f, 0.2f);
    uint32_t n;
    const float *p = val_get_vec_f32(UNIT_CALL("lsh_multi_probe", v, I(1), I(6), I(7)), &n);
    cr_assert_eq(n, 7);
    int64_t bucket = (int64_t)p[0];
    int seen = 0;
    for (uint32_t i = 1; i < 7; i++) seen |= (int)((int64_t)p[i] ^ bucket);
    cr_assert_eq(seen, 63);
}

Test(lsh_fn, multi_probe_edge_cases) {
    cr_assert_eq(UNIT_CALL("lsh_multi_probe", VF(1), I(0), I(-1), I(5)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("lsh_multi_probe", VF(1), I(0), I(4), I(-1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("lsh_multi_probe", I(1), I(0), I(4), I(5)), VAL_NULL);
    ASSERT_VF(UNIT_CALL("lsh_multi_probe", VF(1, 2), I(0), I(0), I(5)), 0);
    /* no direction: bucket 0, every hyperplane equally near, flipped in bit order */
    ASSERT_VF(UNIT_CALL("lsh_multi_probe", val_vec_f32(NULL, 0), I(0), I(3), I(5)), 0, 1, 2, 4, 3);
    cr_assert_eq(vec_len(UNIT_CALL("lsh_multi_probe", VF(1, 2), I(0), I(62), I(INT64_MAX))),
                 1 + 62 + 1891 + 37820);
}
