/* Tests of value.c and intern.c: canonical words, the value orders, the numeric
 * conversions, interning stability and use from several threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>

#include "base/intern.h"
#include "value/value.h"

static void teardown(void) {
    val_shutdown();
}

TestSuite(value, .fini = teardown);
TestSuite(value_order, .fini = teardown);
TestSuite(value_convert, .fini = teardown);
TestSuite(intern, .fini = teardown);

static int sign(int c) {
    return (c > 0) - (c < 0);
}

/* ---- canonical encoding ------------------------------------------------------------ */

Test(value, equal_ints_give_equal_words) {
    cr_assert_eq(val_int(0), val_int(0));
    cr_assert_eq(val_int(-42), val_int(-42));
    cr_assert_neq(val_int(1), val_int(2));
    cr_assert_eq(val_get_int(val_int(-42)), -42);
    cr_assert_eq(val_type_of(val_int(7)), VT_INT);
    cr_assert(val_is_int_inline(val_int(7)));
}

Test(value, int_and_float_one_are_different_values) {
    cr_assert_neq(val_int(1), val_float(1.0));
    cr_assert_eq(val_type_of(val_float(1.0)), VT_FLOAT);
    cr_assert_neq(val_int(5), val_ts(5));
    cr_assert_eq(val_type_of(val_ts(5)), VT_TS);
}

Test(value, ints_at_the_48_bit_boundary_round_trip) {
    const int64_t cases[] = {
        (INT64_C(1) << 47) - 1,
        -(INT64_C(1) << 47),
        INT64_C(1) << 47,
        -(INT64_C(1) << 47) - 1,
        INT64_MAX,
        INT64_MIN,
        INT64_MAX - 1,
        INT64_MIN + 1,
        1611170160950,
        -1,
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t x = cases[i];
        val_t a = val_int(x), b = val_int(x);
        cr_assert_eq(a, b, "int %lld must intern to one word", (long long)x);
        cr_assert_eq(val_get_int(a), x);
        cr_assert_eq(val_type_of(a), VT_INT);
        val_t t = val_ts(x);
        cr_assert_eq(t, val_ts(x));
        cr_assert_eq(val_get_int(t), x);
        cr_assert_eq(val_type_of(t), VT_TS);
        cr_assert_neq(t, a, "timestamp and int %lld must differ", (long long)x);
    }
    cr_assert(val_is_int_inline(val_int((INT64_C(1) << 47) - 1)));
    cr_assert_not(val_is_int_inline(val_int(INT64_C(1) << 47)));
    cr_assert_neq(val_int(INT64_MAX), val_int(INT64_MIN));
}

Test(value, boxing_a_small_int_stays_inline) {
    cr_assert_eq(val_box_int_(12, false), val_int(12));
    cr_assert_eq(val_box_int_(-12, true), val_ts(-12));
}

Test(value, zero_and_negative_zero_are_different_words) {
    cr_assert_neq(val_float(0.0), val_float(-0.0));
    cr_assert(signbit(val_get_float(val_float(-0.0))));
    cr_assert_eq(val_cmp(val_float(0.0), val_float(-0.0)), 0);
}

Test(value, every_nan_is_the_canonical_nan) {
    uint64_t bits = 0x7FF0000000000123ull; /* a signalling NaN with a payload */
    double payload_nan;
    memcpy(&payload_nan, &bits, sizeof payload_nan);
    cr_assert_eq(val_float(NAN), VAL_FNAN);
    cr_assert_eq(val_float(-NAN), VAL_FNAN);
    cr_assert_eq(val_float(payload_nan), VAL_FNAN);
    cr_assert_eq(val_type_of(VAL_FNAN), VT_FLOAT);
    cr_assert(isnan(val_get_float(VAL_FNAN)));
    cr_assert(val_is_float(VAL_FNAN));
}

Test(value, infinities_are_ordinary_floats) {
    cr_assert_eq(val_type_of(val_float(INFINITY)), VT_FLOAT);
    cr_assert_eq(val_type_of(val_float(-INFINITY)), VT_FLOAT);
    cr_assert_eq(val_get_float(val_float(-INFINITY)), -INFINITY);
}

Test(value, null_and_bools) {
    cr_assert_eq(val_type_of(val_null()), VT_NULL);
    cr_assert_eq(val_type_of(val_bool(true)), VT_BOOL);
    cr_assert(val_get_bool(val_bool(true)));
    cr_assert_not(val_get_bool(val_bool(false)));
    cr_assert_neq(val_bool(false), val_int(0));
}

Test(value, strings_intern_by_content) {
    char a[] = "hello", b[] = "hello";
    val_t x = val_str(a, 5), y = val_str(b, 5);
    cr_assert_eq(x, y);
    cr_assert_neq(x, val_str("hell", 4));
    cr_assert_eq(val_type_of(x), VT_STR);
    size_t len;
    const char *s = val_get_str(x, &len);
    cr_assert_eq(len, 5);
    cr_assert_eq(memcmp(s, "hello", 5), 0);
}

Test(value, strings_may_hold_nul_bytes_and_be_empty) {
    val_t x = val_str("a\0b", 3), y = val_str("a\0c", 3), e = val_str("", 0);
    cr_assert_neq(x, y);
    cr_assert_eq(e, val_str(NULL, 0));
    size_t len;
    val_get_str(x, &len);
    cr_assert_eq(len, 3);
    val_get_str(e, &len);
    cr_assert_eq(len, 0);
}

Test(value, vectors_intern_by_type_and_bits) {
    float v1[] = {1.0f, 2.5f, 0.1f}, v2[] = {1.0f, 2.5f, 0.1f};
    val_t a = val_vec_f32(v1, 3), b = val_vec_f32(v2, 3);
    cr_assert_eq(a, b);
    cr_assert_eq(val_type_of(a), VT_VEC);
    uint32_t n;
    const float *e = val_get_vec_f32(a, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(e[1], 2.5f);

    float pz[] = {0.0f}, nz[] = {-0.0f};
    cr_assert_neq(val_vec_f32(pz, 1), val_vec_f32(nz, 1));
    cr_assert_eq(val_vec_f32(NULL, 0), val_vec_f32(v1, 0));
    cr_assert_neq(val_vec_f32(v1, 2), a);
}

Test(value, i8_vectors_differ_from_f32_vectors_with_the_same_bytes) {
    float f[] = {1.0f};
    int8_t bytes[4];
    memcpy(bytes, f, 4);
    val_t vf = val_vec_f32(f, 1), vi = val_vec_i8(bytes, 4);
    cr_assert_neq(vf, vi);
    cr_assert_eq(val_type_of(vi), VT_VEC_I8);
    cr_assert_eq(val_vec_i8(bytes, 4), vi);
    int8_t q[] = {127, -128, 0};
    uint32_t n;
    const int8_t *e = val_get_vec_i8(val_vec_i8(q, 3), &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(e[1], -128);
    cr_assert_neq(val_vec_i8(NULL, 0), val_vec_f32(NULL, 0));
    cr_assert_neq(val_vec_i8(NULL, 0), val_str("", 0));
}

Test(value, numeric_family) {
    cr_assert(val_is_numeric(val_int(1)));
    cr_assert(val_is_numeric(val_int(INT64_MIN)));
    cr_assert(val_is_numeric(val_ts(1)));
    cr_assert(val_is_numeric(val_float(1.5)));
    cr_assert(val_is_numeric(VAL_FNAN));
    cr_assert_not(val_is_numeric(val_bool(true)));
    cr_assert_not(val_is_numeric(val_null()));
    cr_assert_not(val_is_numeric(val_str("1", 1)));
}

/* ---- value order (3.8) ------------------------------------------------------------- */

Test(value_order, types_order_by_rank) {
    float f[] = {0.0f};
    int8_t q[] = {0};
    val_t ladder[] = {
        val_null(),        val_bool(false),   val_bool(true),    val_int(INT64_MIN),
        val_int(5),        val_int(1 << 20),  val_float(-1e300), val_float(0.5),
        val_ts(-3),        val_ts(INT64_MAX), val_str("", 0),    val_str("z", 1),
        val_vec_f32(f, 1), val_vec_i8(q, 1),
    };
    size_t n = sizeof ladder / sizeof ladder[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int want = (i > j) - (i < j);
            cr_assert_eq(sign(val_cmp(ladder[i], ladder[j])), want, "ladder %zu vs %zu", i, j);
        }
}

Test(value_order, int_precedes_float_whatever_the_numbers) {
    cr_assert_lt(val_cmp(val_int(300), val_float(200.5)), 0);
    cr_assert_gt(val_cmp(val_float(-1e300), val_int(INT64_MAX)), 0);
}

Test(value_order, ints_and_timestamps_numerically_inline_or_boxed) {
    int64_t xs[] = {INT64_MIN, -(INT64_C(1) << 47) - 1, -(INT64_C(1) << 47), -5,       0,
                    5,         (INT64_C(1) << 47) - 1,  INT64_C(1) << 47,    INT64_MAX};
    size_t n = sizeof xs / sizeof xs[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int want = (i > j) - (i < j);
            cr_assert_eq(sign(val_cmp(val_int(xs[i]), val_int(xs[j]))), want);
            cr_assert_eq(sign(val_cmp(val_ts(xs[i]), val_ts(xs[j]))), want);
        }
}

Test(value_order, floats_numerically_and_nan_equal_to_all) {
    cr_assert_lt(val_cmp(val_float(-2.5), val_float(1.0)), 0);
    cr_assert_gt(val_cmp(val_float(INFINITY), val_float(1e308)), 0);
    cr_assert_eq(val_cmp(VAL_FNAN, val_float(1.0)), 0);
    cr_assert_eq(val_cmp(val_float(-7.0), VAL_FNAN), 0);
}

Test(value_order, strings_bytewise) {
    cr_assert_lt(val_cmp(val_str("B", 1), val_str("a", 1)), 0);
    cr_assert_lt(val_cmp(val_str("a", 1), val_str("ab", 2)), 0);
    cr_assert_lt(val_cmp(val_str("", 0), val_str("a", 1)), 0);
    cr_assert_gt(val_cmp(val_str("\xc3\xa9", 2), val_str("z", 1)), 0);
    cr_assert_lt(val_cmp(val_str("a\0", 2), val_str("a\1", 2)), 0);
    cr_assert_eq(val_cmp(val_str("same", 4), val_str("same", 4)), 0);
}

Test(value_order, bools) {
    cr_assert_lt(val_cmp(val_bool(false), val_bool(true)), 0);
}

Test(value_order, vectors_by_length_then_raw_bits) {
    float one[] = {9.0f}, two[] = {1.0f, 1.0f}, pos[] = {1.0f}, neg[] = {-1.0f}, big[] = {2.0f};
    cr_assert_lt(val_cmp(val_vec_f32(one, 1), val_vec_f32(two, 2)), 0);
    cr_assert_lt(val_cmp(val_vec_f32(pos, 1), val_vec_f32(big, 1)), 0);
    /* -1.0 has the sign bit set, so as u32 it sorts after every positive element. */
    cr_assert_gt(val_cmp(val_vec_f32(neg, 1), val_vec_f32(big, 1)), 0);
    cr_assert_lt(val_cmp(val_vec_f32(NULL, 0), val_vec_f32(one, 1)), 0);
}

Test(value_order, i8_vectors_by_length_then_value) {
    int8_t a[] = {-1}, b[] = {1}, c[] = {-128, -128};
    cr_assert_lt(val_cmp(val_vec_i8(a, 1), val_vec_i8(b, 1)), 0);
    cr_assert_lt(val_cmp(val_vec_i8(b, 1), val_vec_i8(c, 2)), 0);
}

Test(value_order, sort_comparator_mixes_int_and_float_numerically) {
    cr_assert_gt(val_cmp_sort(val_int(300), val_float(200.5)), 0);
    cr_assert_lt(val_cmp_sort(val_float(200.5), val_int(300)), 0);
    cr_assert_eq(val_cmp_sort(val_int(2), val_float(2.0)), 0);
    cr_assert_lt(val_cmp_sort(val_int(INT64_MIN), val_float(-1e18)), 0);
    cr_assert_eq(val_cmp_sort(VAL_FNAN, val_int(3)), 0);
    cr_assert_lt(val_cmp_sort(val_int(-5), val_int(4)), 0);
}

Test(value_order, sort_comparator_ranks_other_mixes) {
    cr_assert_lt(val_cmp_sort(val_null(), val_bool(false)), 0);
    cr_assert_lt(val_cmp_sort(val_null(), val_int(INT64_MIN)), 0);
    cr_assert_gt(val_cmp_sort(val_int(1), val_null()), 0);
    cr_assert_lt(val_cmp_sort(val_bool(true), val_int(-1)), 0);
    cr_assert_lt(val_cmp_sort(val_float(1e300), val_str("a", 1)), 0);
    /* In this comparator strings come before timestamps (the reverse of val_cmp). */
    cr_assert_lt(val_cmp_sort(val_str("a", 1), val_ts(0)), 0);
    cr_assert_gt(val_cmp(val_str("a", 1), val_ts(0)), 0);
    cr_assert_lt(val_cmp_sort(val_ts(INT64_MAX), val_vec_f32(NULL, 0)), 0);
    int8_t q[] = {1};
    float f[] = {1.0f};
    cr_assert_eq(val_cmp_sort(val_vec_f32(f, 1), val_vec_i8(q, 1)), 0);
}

Test(value_order, sort_comparator_same_type_uses_value_order) {
    cr_assert_lt(val_cmp_sort(val_str("a", 1), val_str("b", 1)), 0);
    cr_assert_lt(val_cmp_sort(val_ts(1), val_ts(2)), 0);
    cr_assert_lt(val_cmp_sort(val_bool(false), val_bool(true)), 0);
    cr_assert_eq(val_cmp_sort(val_null(), val_null()), 0);
}

/* ---- numeric conversions (3.7) ----------------------------------------------------- */

Test(value_convert, to_f64) {
    cr_assert_eq(val_to_f64(val_int(-3)), -3.0);
    cr_assert_eq(val_to_f64(val_int(INT64_MAX)), 9223372036854775807.0);
    cr_assert_eq(val_to_f64(val_ts(1500)), 1500.0);
    cr_assert_eq(val_to_f64(val_float(2.5)), 2.5);
    cr_assert(isnan(val_to_f64(VAL_FNAN)));
    cr_assert_eq(val_to_f64(val_bool(true)), 1.0);
    cr_assert_eq(val_to_f64(val_bool(false)), 0.0);
    cr_assert_eq(val_to_f64(val_str("12", 2)), 0.0);
    cr_assert_eq(val_to_f64(val_null()), 0.0);
    float f[] = {3.0f};
    cr_assert_eq(val_to_f64(val_vec_f32(f, 1)), 0.0);
}

Test(value_convert, to_i64_truncates_and_saturates) {
    cr_assert_eq(val_to_i64(val_int(INT64_MIN)), INT64_MIN);
    cr_assert_eq(val_to_i64(val_ts(-7)), -7);
    cr_assert_eq(val_to_i64(val_float(2.9)), 2);
    cr_assert_eq(val_to_i64(val_float(-2.9)), -2);
    cr_assert_eq(val_to_i64(val_float(1e300)), INT64_MAX);
    cr_assert_eq(val_to_i64(val_float(9223372036854775808.0)), INT64_MAX);
    cr_assert_eq(val_to_i64(val_float(-1e300)), INT64_MIN);
    cr_assert_eq(val_to_i64(val_float(-9223372036854775808.0)), INT64_MIN);
    cr_assert_eq(val_to_i64(val_float(INFINITY)), 0);
    cr_assert_eq(val_to_i64(val_float(-INFINITY)), 0);
    cr_assert_eq(val_to_i64(VAL_FNAN), 0);
    cr_assert_eq(val_to_i64(val_bool(true)), 1);
    cr_assert_eq(val_to_i64(val_str("5", 1)), 0);
    cr_assert_eq(val_to_i64(val_null()), 0);
}

/* ---- interning --------------------------------------------------------------------- */

Test(intern, ids_and_bytes_are_stable_while_the_table_grows) {
    uint32_t first = il_intern("first", 5);
    const char *p = il_intern_get(first, NULL);
    char key[32];
    for (int i = 0; i < 200000; i++) {
        int n = snprintf(key, sizeof key, "key-%d", i);
        il_intern(key, (size_t)n);
    }
    cr_assert_eq(il_intern("first", 5), first);
    size_t len;
    cr_assert_eq(il_intern_get(first, &len), p);
    cr_assert_eq(len, 5);
    cr_assert_str_eq(p, "first");
    for (int i = 0; i < 200000; i += 997) {
        int n = snprintf(key, sizeof key, "key-%d", i);
        uint32_t id = il_intern(key, (size_t)n);
        cr_assert_str_eq(il_intern_get(id, &len), key);
        cr_assert_eq(len, (size_t)n);
    }
}

Test(intern, bytes_are_nul_terminated_and_aligned) {
    uint32_t id = il_intern("abc", 3);
    const char *p = il_intern_get(id, NULL);
    cr_assert_eq(p[3], '\0');
    cr_assert_eq((uintptr_t)p % 4, 0);
    char big[100000];
    memset(big, 'x', sizeof big);
    uint32_t bid = il_intern(big, sizeof big);
    size_t len;
    const char *bp = il_intern_get(bid, &len);
    cr_assert_eq(len, sizeof big);
    cr_assert_eq(bp[len], '\0');
    cr_assert_eq(il_intern(big, sizeof big), bid);
}

Test(intern, distinct_strings_get_distinct_ids) {
    uint32_t a = il_intern("a", 1), b = il_intern("b", 1), ab = il_intern("ab", 2);
    cr_assert_neq(a, b);
    cr_assert_neq(a, ab);
    cr_assert_neq(b, ab);
}

Test(intern, usable_again_after_shutdown) {
    il_intern("before", 6);
    val_shutdown();
    uint32_t id = il_intern("after", 5);
    cr_assert_str_eq(il_intern_get(id, NULL), "after");
}

/* Every thread interns the same strings, numbers and vectors, each in its own order;
 * all of them must see the same words. */
#define THREADS    8
#define PER_THREAD 20000

typedef struct worker {
    int index;
    val_t strs[PER_THREAD];
    val_t boxed[PER_THREAD];
    val_t vecs[PER_THREAD];
} worker;

static void *intern_all(void *arg) {
    worker *w = arg;
    char key[32];
    for (int k = 0; k < PER_THREAD; k++) {
        int i = (k * 7919 + w->index * 104729) % PER_THREAD; /* a per-thread order */
        int n = snprintf(key, sizeof key, "shared-%d", i);
        w->strs[i] = val_str(key, (size_t)n);
        w->boxed[i] = val_int(INT64_MAX - i);
        float v[2] = {(float)i, -(float)i};
        w->vecs[i] = val_vec_f32(v, 2);
    }
    return NULL;
}

Test(intern, threads_agree_on_ids) {
    static worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t].index = t;
        cr_assert_eq(pthread_create(&threads[t], NULL, intern_all, &workers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    char key[32];
    for (int i = 0; i < PER_THREAD; i++) {
        for (int t = 1; t < THREADS; t++) {
            cr_assert_eq(workers[t].strs[i], workers[0].strs[i]);
            cr_assert_eq(workers[t].boxed[i], workers[0].boxed[i]);
            cr_assert_eq(workers[t].vecs[i], workers[0].vecs[i]);
        }
        int n = snprintf(key, sizeof key, "shared-%d", i);
        size_t len;
        const char *s = val_get_str(workers[0].strs[i], &len);
        cr_assert_eq(len, (size_t)n);
        cr_assert_eq(memcmp(s, key, len), 0);
        cr_assert_eq(val_get_int(workers[0].boxed[i]), INT64_MAX - i);
    }
}
