/* Tests of the math, conversion and string builtins (math.c, string.c) at their edges,
 * called through the builtin table as the evaluator calls them: NaN and infinities,
 * int64 limits (saturation), wrong types (Null), character lengths and offsets of UTF-8
 * strings, invalid UTF-8, and negative and out-of-range substr offsets
 * (iql-language.md 5.1 and 5.5). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define HAVE_LEAK_CHECK 1
#endif
#endif

#include "unit_fixture.h"
#include "value/value.h"

static void teardown(void) {
    val_shutdown();
}

TestSuite(math_fn, .fini = teardown);
TestSuite(string_fn, .fini = teardown);

static val_t S(const char *s) {
    return val_str(s, strlen(s));
}

static void assert_int(val_t v, int64_t want) {
    cr_assert_eq(val_type_of(v), VT_INT, "expected an int");
    cr_assert_eq(val_get_int(v), want, "%lld != %lld", (long long)val_get_int(v), (long long)want);
}

static void assert_float(val_t v, double want) {
    cr_assert(val_is_float(v), "expected a float");
    double got = val_get_float(v);
    if (isnan(want))
        cr_assert(isnan(got), "expected NaN, got %.17g", got);
    else
        cr_assert(got == want, "%.17g != %.17g", got, want);
}

static void assert_str(val_t v, const char *want) {
    cr_assert_eq(val_type_of(v), VT_STR, "expected a string");
    size_t n;
    const char *s = val_get_str(v, &n);
    cr_assert(n == strlen(want) && memcmp(s, want, n) == 0, "'%.*s' != '%s'", (int)n, s, want);
}

/* ---- math ---------------------------------------------------------------------------- */

Test(math_fn, abs_at_int64_limits_saturates) {
    assert_int(UNIT_CALL("abs_int64", val_int(INT64_MIN)), INT64_MAX);
    assert_int(UNIT_CALL("abs_int64", val_int(INT64_MAX)), INT64_MAX);
    assert_int(UNIT_CALL("abs", val_int(INT64_MIN + 1)), INT64_MAX);
    assert_int(UNIT_CALL("abs", val_ts(-5)), 5);
    cr_assert_eq(UNIT_CALL("abs_int64", val_float(-2.0)), VAL_NULL);
    assert_float(UNIT_CALL("abs_float64", S("x")), 0.0);
    assert_float(UNIT_CALL("abs", val_float(-INFINITY)), INFINITY);
}

Test(math_fn, nan_and_infinity_in) {
    val_t nan = val_float(NAN), inf = val_float(INFINITY), ninf = val_float(-INFINITY);
    assert_float(UNIT_CALL("sqrt", nan), NAN);
    assert_float(UNIT_CALL("sqrt", inf), INFINITY);
    cr_assert_eq(UNIT_CALL("sqrt", ninf), VAL_NULL);
    cr_assert_eq(UNIT_CALL("sqrt", val_float(-0.5)), VAL_NULL);
    assert_float(UNIT_CALL("sqrt", val_float(-0.0)), -0.0);
    assert_float(UNIT_CALL("log", inf), INFINITY);
    cr_assert_eq(UNIT_CALL("log", val_int(0)), VAL_NULL);
    assert_float(UNIT_CALL("log", nan), NAN);
    assert_float(UNIT_CALL("exp", ninf), 0.0);
    assert_float(UNIT_CALL("exp", val_float(1000.0)), INFINITY);
    assert_float(UNIT_CALL("sin", inf), NAN);
    assert_float(UNIT_CALL("pow", val_int(0), val_int(-1)), INFINITY);
    assert_float(UNIT_CALL("pow", nan, val_int(0)), 1.0);
    assert_float(UNIT_CALL("pow", val_int(-8), val_float(1.0 / 3.0)), NAN);
}

Test(math_fn, floor_ceil_and_to_int_saturate) {
    assert_int(UNIT_CALL("floor", val_float(NAN)), 0);
    assert_int(UNIT_CALL("floor", val_float(INFINITY)), INT64_MAX);
    assert_int(UNIT_CALL("ceil", val_float(-INFINITY)), INT64_MIN);
    assert_int(UNIT_CALL("floor", val_float(1e300)), INT64_MAX);
    assert_int(UNIT_CALL("ceil", val_float(-1e300)), INT64_MIN);
    assert_int(UNIT_CALL("floor", val_float(-1.7)), -2);
    assert_int(UNIT_CALL("ceil", val_int(INT64_MAX)), INT64_MAX); /* via f64: 2^63 saturates */
    assert_int(UNIT_CALL("floor", S("3")), 0);
    assert_int(UNIT_CALL("to_int", val_float(-2.9)), -2);
    assert_int(UNIT_CALL("to_int", val_float(1e300)), INT64_MAX);
    assert_int(UNIT_CALL("to_int", val_float(-1e300)), INT64_MIN);
    assert_int(UNIT_CALL("to_int", val_int(INT64_MIN)), INT64_MIN);
    cr_assert_eq(UNIT_CALL("to_int", val_float(NAN)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("to_int", val_float(INFINITY)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("to_int", S("7")), VAL_NULL);
    cr_assert_eq(UNIT_CALL("to_int", VAL_TRUE), VAL_NULL);
}

Test(math_fn, to_float_of_int64_limits) {
    assert_float(UNIT_CALL("to_float", val_int(INT64_MAX)), 9223372036854775807.0);
    assert_float(UNIT_CALL("to_float", val_int(INT64_MIN)), -9223372036854775808.0);
    assert_float(UNIT_CALL("to_float", val_float(INFINITY)), INFINITY);
    cr_assert_eq(UNIT_CALL("to_float", val_ts(5)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("to_float", VAL_NULL), VAL_NULL);
}

Test(math_fn, sign_of_edges) {
    assert_int(UNIT_CALL("sign", val_int(INT64_MIN)), -1);
    assert_int(UNIT_CALL("sign", val_int(0)), 0);
    assert_int(UNIT_CALL("sign", val_float(-0.0)), 0);
    assert_int(UNIT_CALL("sign", val_float(NAN)), -1);
    assert_int(UNIT_CALL("sign", val_float(INFINITY)), 1);
    assert_int(UNIT_CALL("sign", S("x")), 0); /* to_f64 of a string is 0 */
}

Test(math_fn, min_max_edges) {
    assert_int(UNIT_CALL("min_val", val_int(INT64_MIN), val_int(INT64_MAX)), INT64_MIN);
    assert_int(UNIT_CALL("max_val", val_int(INT64_MIN), val_int(INT64_MAX)), INT64_MAX);
    /* f64 min/max ignore a NaN operand */
    assert_float(UNIT_CALL("min_val", val_float(NAN), val_float(1.5)), 1.5);
    assert_float(UNIT_CALL("max_val", val_float(2.5), val_float(NAN)), 2.5);
    assert_float(UNIT_CALL("max_val", val_int(1), val_float(-INFINITY)), 1.0);
    assert_str(UNIT_CALL("min_val", S("b"), S("a")), "a");
    cr_assert_eq(UNIT_CALL("min_val", S("a"), val_int(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("max_val", VAL_TRUE, VAL_FALSE), VAL_NULL);
}

/* ---- strings ------------------------------------------------------------------------- */

Test(string_fn, len_counts_characters) {
    assert_int(UNIT_CALL("len", S("")), 0);
    assert_int(UNIT_CALL("len", S("abc")), 3);
    assert_int(UNIT_CALL("len", S("h\xc3\xa9llo")), 5);     /* é is one character, two bytes */
    assert_int(UNIT_CALL("len", S("\xf0\x9f\x98\x80")), 1); /* one emoji, four bytes */
    assert_int(UNIT_CALL("len", val_str("a\0b", 3)), 3);    /* a NUL byte counts */
    assert_int(UNIT_CALL("len", S("\xff\xfe")), 2);         /* invalid UTF-8: one per byte */
    assert_int(UNIT_CALL("len", S("\xc3")), 1);             /* a truncated sequence */
    cr_assert_eq(UNIT_CALL("len", val_int(5)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("len", VAL_NULL), VAL_NULL);
}

Test(string_fn, substr_offsets_negative_and_out_of_range) {
    val_t s = S("hello");
    assert_str(UNIT_CALL("substr", s, val_int(1), val_int(3)), "ell");
    assert_str(UNIT_CALL("substr", s, val_int(0), val_int(0)), "");
    assert_str(UNIT_CALL("substr", s, val_int(3), val_int(100)), "lo");
    assert_str(UNIT_CALL("substr", s, val_int(5), val_int(1)), "");  /* start == len */
    assert_str(UNIT_CALL("substr", s, val_int(6), val_int(1)), "");  /* start past the end */
    assert_str(UNIT_CALL("substr", s, val_int(-1), val_int(2)), ""); /* negative start */
    assert_str(UNIT_CALL("substr", s, val_int(1), val_int(-2)), ""); /* negative length */
    assert_str(UNIT_CALL("substr", s, val_int(INT64_MAX), val_int(INT64_MAX)), "");
    assert_str(UNIT_CALL("substr", s, val_int(2), val_int(INT64_MAX)), "llo");
    assert_str(UNIT_CALL("substr", s, S("1"), val_int(2)), "he"); /* a non-int counts as 0 */
    assert_str(UNIT_CALL("substr", s, val_int(1), val_float(2.0)), "");
    cr_assert_eq(UNIT_CALL("substr", val_int(1), val_int(0), val_int(1)), VAL_NULL);
}

Test(string_fn, substr_counts_characters) {
    val_t s = S("h\xc3\xa9llo \xf0\x9f\x98\x80!");
    assert_str(UNIT_CALL("substr", s, val_int(1), val_int(1)), "\xc3\xa9");
    assert_str(UNIT_CALL("substr", s, val_int(1), val_int(3)), "\xc3\xa9ll");
    assert_str(UNIT_CALL("substr", s, val_int(6), val_int(1)), "\xf0\x9f\x98\x80");
    assert_str(UNIT_CALL("substr", s, val_int(6), val_int(9)), "\xf0\x9f\x98\x80!");
    assert_str(UNIT_CALL("substr", s, val_int(8), val_int(1)), ""); /* start == len */
    assert_str(UNIT_CALL("substr",
                         S("a\xff"
                           "b"),
                         val_int(1), val_int(2)),
               "\xff"
               "b");
}

Test(string_fn, case_mapping_is_unicode_and_keeps_invalid_bytes) {
    assert_str(UNIT_CALL("upper", S("h\xc3\xa9llo w\xc3\xb6rld")), "H\xc3\x89LLO W\xc3\x96RLD");
    assert_str(UNIT_CALL("lower", S("\xc3\x9c"
                                    "BER")),
               "\xc3\xbc"
               "ber");
    assert_str(UNIT_CALL("upper", S("\xce\xb1\xce\xb2")), "\xce\x91\xce\x92"); /* Greek */
    assert_str(UNIT_CALL("upper", S("a\xff"
                                    "b\xc3")),
               "A\xff"
               "B\xc3"); /* invalid kept */
    assert_str(UNIT_CALL("lower", S("")), "");
    cr_assert_eq(UNIT_CALL("upper", val_float(1.0)), VAL_NULL);
}

/* Case mapping on threads that then end, as the server's workers do at shutdown: the
 * Unicode locale it uses is the process's, so nothing is left behind with the threads
 * (in the sanitizer build, a leak check right after they ended sees it otherwise). */
static void *upper_on_a_thread(void *arg) {
    val_t v = UNIT_CALL("upper", S("\xc3\xa9t\xc3\xa9"));
    size_t n;
    const char *s = val_type_of(v) == VT_STR ? val_get_str(v, &n) : NULL;
    *(bool *)arg = s && n == 5 && memcmp(s, "\xc3\x89T\xc3\x89", 5) == 0;
    return NULL;
}

Test(string_fn, case_mapping_on_threads_that_end) {
    pthread_t t[4];
    bool ok[4] = {false};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, upper_on_a_thread, &ok[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_assert(ok[i], "thread %d", i);
    }
#ifdef HAVE_LEAK_CHECK
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory left behind by ended threads");
#endif
}

Test(string_fn, trim_unicode_whitespace) {
    assert_str(UNIT_CALL("trim", S(" \t\n x y \r")), "x y");
    assert_str(UNIT_CALL("trim", S("\xc2\xa0"
                                   "x"
                                   "\xe3\x80\x80")),
               "x"); /* NBSP, ideographic */
    assert_str(UNIT_CALL("trim", S("\xe2\x80\x83"
                                   "a b"
                                   "\xe2\x80\xa8")),
               "a b");
    assert_str(UNIT_CALL("trim", S("   ")), "");
    assert_str(UNIT_CALL("trim", S("\xff x \xff")),
               "\xff x \xff"); /* invalid bytes are not space */
    assert_str(UNIT_CALL("trim", S(" \xc3")), "\xc3");
    cr_assert_eq(UNIT_CALL("trim", val_int(1)), VAL_NULL);
}

Test(string_fn, replace_and_concat_edges) {
    assert_str(UNIT_CALL("replace", S("h\xc3\xa9"), S(""), S("-")), "-h-\xc3\xa9-");
    assert_str(UNIT_CALL("replace", S("aaa"), S("aa"), S("b")), "ba");
    assert_str(UNIT_CALL("replace", S(""), S("a"), S("b")), "");
    cr_assert_eq(UNIT_CALL("replace", S("a"), val_int(1), S("b")), VAL_NULL);
    assert_str(UNIT_CALL("concat", val_int(INT64_MIN), S("|"), val_float(2.0)),
               "-9223372036854775808|2");
    assert_str(UNIT_CALL("concat", VAL_NULL, VAL_TRUE, val_float(0.5)), "NULLtrue0.5");
}
