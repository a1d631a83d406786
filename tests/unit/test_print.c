/* Tests of print.c: the float formats (ryu layout, Rust Display), table cell text
 * (including the client's float re-parse and string escapes), value Display, values as
 * JSON and quoted literals. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>

#include "value/print.h"

static il_buf buf;

static void setup(void) {
    il_buf_init(&buf);
}
static void teardown(void) {
    il_buf_free(&buf);
    val_shutdown();
}

TestSuite(print_float, .init = setup, .fini = teardown);
TestSuite(print_cell, .init = setup, .fini = teardown);
TestSuite(print_display, .init = setup, .fini = teardown);
TestSuite(print_json, .init = setup, .fini = teardown);

static const char *shortest(double d) {
    il_buf_clear(&buf);
    fmt_f64_shortest(d, &buf);
    return il_buf_str(&buf);
}

static const char *shortest32(float f) {
    il_buf_clear(&buf);
    fmt_f32_shortest(f, &buf);
    return il_buf_str(&buf);
}

static const char *display_f64(double d) {
    il_buf_clear(&buf);
    fmt_f64_display(d, &buf);
    return il_buf_str(&buf);
}

static const char *cell(val_t v) {
    il_buf_clear(&buf);
    val_fmt_cell(v, &buf);
    return il_buf_str(&buf);
}

static const char *display(val_t v) {
    il_buf_clear(&buf);
    val_fmt_display(v, &buf);
    return il_buf_str(&buf);
}

static const char *json(val_t v) {
    il_buf_clear(&buf);
    val_fmt_json(v, &buf);
    return il_buf_str(&buf);
}

static const char *quoted(const char *s) {
    il_buf_clear(&buf);
    val_fmt_quoted(s, strlen(s), &buf);
    return il_buf_str(&buf);
}

/* Volatile keeps the compiler from folding these at a different precision. */
static volatile double one = 1.0, two = 2.0, three = 3.0, ten = 10.0, tenth = 0.1, fifth = 0.2;

/* ---- fmt_f64_shortest: ryu's layout (6.7) ------------------------------------------ */

Test(print_float, shortest_round_trip_digits_of_computed_values) {
    cr_assert_str_eq(shortest(tenth + fifth), "0.30000000000000004");
    cr_assert_str_eq(shortest(one / three), "0.3333333333333333");
    cr_assert_str_eq(shortest(ten / three), "3.3333333333333335");
    cr_assert_str_eq(shortest(56333.333333333336), "56333.333333333336");
}

Test(print_float, integral_values_keep_a_point_zero_up_to_16_digits) {
    cr_assert_str_eq(shortest(0.0), "0.0");
    cr_assert_str_eq(shortest(-0.0), "-0.0");
    cr_assert_str_eq(shortest(two), "2.0");
    cr_assert_str_eq(shortest(100.0), "100.0");
    cr_assert_str_eq(shortest(1e15), "1000000000000000.0");
    cr_assert_str_eq(shortest(9007199254740992.0), "9007199254740992.0");
    cr_assert_str_eq(shortest(1e16), "1e16");
    cr_assert_str_eq(shortest(1e20), "1e20");
    cr_assert_str_eq(shortest(123456789012345680.0), "1.2345678901234568e17");
}

Test(print_float, fractions_use_a_point_down_to_1e_minus_5) {
    cr_assert_str_eq(shortest(3.14), "3.14");
    cr_assert_str_eq(shortest(-1.5), "-1.5");
    cr_assert_str_eq(shortest(0.001), "0.001");
    cr_assert_str_eq(shortest(1e-5), "0.00001");
    cr_assert_str_eq(shortest(1.5e-5), "0.000015");
    cr_assert_str_eq(shortest(1e-6), "1e-6");
    cr_assert_str_eq(shortest(2.5e-7), "2.5e-7");
    cr_assert_str_eq(shortest(2.65358979335273e-6), "2.65358979335273e-6");
    cr_assert_str_eq(shortest(2.6794896585028633e-8), "2.6794896585028633e-8");
}

Test(print_float, extremes) {
    cr_assert_str_eq(shortest(5e-324), "5e-324");
    cr_assert_str_eq(shortest(DBL_MAX), "1.7976931348623157e308");
    cr_assert_str_eq(shortest(DBL_MIN), "2.2250738585072014e-308");
    cr_assert_str_eq(shortest(3e100), "3e100");
}

Test(print_float, power_of_two_boundaries_pick_the_digits_ryu_picks) {
    /* The nearest 17-digit decimal lies below these and misses; the next one up is right. */
    uint64_t bits = 0x0060000000000000ull;
    double d;
    memcpy(&d, &bits, sizeof d);
    cr_assert_str_eq(shortest(d), "7.120236347223045e-307");
    bits = 0x2d70000000000000ull;
    memcpy(&d, &bits, sizeof d);
    cr_assert_str_eq(shortest(d), "7.854549544476363e-90");
}

Test(print_float, non_finite_is_null) {
    cr_assert_str_eq(shortest(NAN), "null");
    cr_assert_str_eq(shortest(INFINITY), "null");
    cr_assert_str_eq(shortest(-INFINITY), "null");
    cr_assert_str_eq(shortest32(NAN), "null");
}

Test(print_float, f32_shortest_reads_back_as_the_f32) {
    cr_assert_str_eq(shortest32(0.1f), "0.1");
    cr_assert_str_eq(shortest32(0.9f), "0.9");
    cr_assert_str_eq(shortest32(2.5f), "2.5");
    cr_assert_str_eq(shortest32(-0.0f), "-0.0");
    cr_assert_str_eq(shortest32(16777216.0f), "16777216.0");
    cr_assert_str_eq(shortest32(FLT_MAX), "3.4028235e38");
    cr_assert_str_eq(shortest32(FLT_MIN), "1.1754944e-38");
    cr_assert_str_eq(shortest32(FLT_TRUE_MIN), "1e-45");
}

/* ---- fmt_f64_display: Rust `{}` ----------------------------------------------------- */

Test(print_float, display_never_uses_an_exponent) {
    cr_assert_str_eq(display_f64(two), "2");
    cr_assert_str_eq(display_f64(0.5), "0.5");
    cr_assert_str_eq(display_f64(-2.5), "-2.5");
    cr_assert_str_eq(display_f64(1e15), "1000000000000000");
    cr_assert_str_eq(display_f64(1e20), "100000000000000000000");
    cr_assert_str_eq(display_f64(1e-7), "0.0000001");
    cr_assert_str_eq(display_f64(2.5e-7), "0.00000025");
    cr_assert_str_eq(display_f64(tenth + fifth), "0.30000000000000004");
    cr_assert_str_eq(display_f64(123456789012345680.0), "123456789012345680");
}

Test(print_float, display_of_zero_and_non_finite) {
    cr_assert_str_eq(display_f64(0.0), "0");
    cr_assert_str_eq(display_f64(-0.0), "-0");
    cr_assert_str_eq(display_f64(NAN), "NaN");
    cr_assert_str_eq(display_f64(INFINITY), "inf");
    cr_assert_str_eq(display_f64(-INFINITY), "-inf");
}

Test(print_float, display_of_the_extremes) {
    const char *s = display_f64(5e-324);
    cr_assert_eq(strlen(s), 2 + 323 + 1);
    cr_assert_eq(strncmp(s, "0.000", 5), 0);
    cr_assert_eq(s[strlen(s) - 1], '5');
    s = display_f64(DBL_MAX);
    cr_assert_eq(strlen(s), 309);
    cr_assert_eq(strncmp(s, "17976931348623157000", 20), 0);
}

/* ---- table cells ------------------------------------------------------------------- */

Test(print_cell, numbers) {
    cr_assert_str_eq(cell(val_int(42)), "42");
    cr_assert_str_eq(cell(val_int(INT64_MIN)), "-9223372036854775808");
    cr_assert_str_eq(cell(val_int(INT64_MAX)), "9223372036854775807");
    cr_assert_str_eq(cell(val_ts(1611170160950)), "1611170160950");
    cr_assert_str_eq(cell(val_float(9.99)), "9.99");
    cr_assert_str_eq(cell(val_float(ten / 2)), "5.0");
    cr_assert_str_eq(cell(val_float(-0.0)), "-0.0");
    cr_assert_str_eq(cell(val_float(1e20)), "1e20");
}

Test(print_cell, floats_pass_through_the_clients_json_parser) {
    cr_assert_str_eq(cell(val_float(3e100)), "3.0000000000000002e100");
    cr_assert_str_eq(cell(val_float(1e100)), "1e100");
    cr_assert_str_eq(cell(val_float(2e100)), "2e100");
    cr_assert_str_eq(cell(val_float(1e-100)), "1e-100");
    cr_assert_str_eq(cell(val_float(3e-100)), "3e-100");
    cr_assert_str_eq(cell(val_float(1e308)), "1e308");
    cr_assert_str_eq(cell(val_float(1e-308)), "1e-308");
    cr_assert_str_eq(cell(val_float(5e-324)), "5e-324");
    cr_assert_str_eq(cell(val_float(tenth + fifth)), "0.30000000000000004");
    cr_assert_str_eq(cell(val_float(56333.333333333336)), "56333.333333333336");
}

Test(print_cell, null_nan_and_infinity) {
    cr_assert_str_eq(cell(val_null()), "null");
    cr_assert_str_eq(cell(VAL_FNAN), "null");
    cr_assert_str_eq(cell(val_float(INFINITY)), "null");
    cr_assert_str_eq(cell(val_float(-INFINITY)), "null");
    cr_assert_str_eq(cell(val_bool(true)), "true");
    cr_assert_str_eq(cell(val_bool(false)), "false");
}

Test(print_cell, strings_print_as_their_literal) {
    const char said[] = "He said \"hello\"";
    cr_assert_str_eq(cell(val_str(said, strlen(said))), "\"He said \\\"hello\\\"\"");
    const char path[] = "C:\\Users\\test";
    cr_assert_str_eq(cell(val_str(path, strlen(path))), "\"C:\\\\Users\\\\test\"");
    const char ctl[] = "windows\r\nstyle\tx";
    cr_assert_str_eq(cell(val_str(ctl, strlen(ctl))), "\"windows\\r\\nstyle\\tx\"");
    cr_assert_str_eq(cell(val_str("", 0)), "\"\"");
    cr_assert_str_eq(cell(val_str("caf\xc3\xa9", 5)), "\"caf\xc3\xa9\"");
    cr_assert_str_eq(cell(val_str("It's", 4)), "\"It's\"");
}

Test(print_cell, f32_vectors_show_the_widened_f64) {
    float v[] = {1.0f, 2.5f, 0.1f};
    cr_assert_str_eq(cell(val_vec_f32(v, 3)), "[1.0, 2.5, 0.10000000149011612]");
    float w[] = {0.9f, 0.6f, -1.0f, 0.0f};
    cr_assert_str_eq(cell(val_vec_f32(w, 4)),
                     "[0.8999999761581421, 0.6000000238418579, -1.0, 0.0]");
    cr_assert_str_eq(cell(val_vec_f32(NULL, 0)), "[]");
}

Test(print_cell, i8_vectors) {
    int8_t q[] = {127, 63, -64, -128};
    cr_assert_str_eq(cell(val_vec_i8(q, 4)), "[127, 63, -64, -128]");
    cr_assert_str_eq(cell(val_vec_i8(NULL, 0)), "[]");
}

Test(print_cell, cells_append_to_the_buffer) {
    il_buf_clear(&buf);
    val_fmt_cell(val_int(1), &buf);
    val_fmt_cell(val_str("a", 1), &buf);
    cr_assert_str_eq(il_buf_str(&buf), "1\"a\"");
}

Test(print_cell, which_cells_are_numbers) {
    cr_assert(val_cell_is_number(val_int(1)));
    cr_assert(val_cell_is_number(val_int(INT64_MIN)));
    cr_assert(val_cell_is_number(val_ts(1)));
    cr_assert(val_cell_is_number(val_float(1.5)));
    cr_assert_not(val_cell_is_number(VAL_FNAN));
    cr_assert_not(val_cell_is_number(val_float(INFINITY)));
    cr_assert_not(val_cell_is_number(val_null()));
    cr_assert_not(val_cell_is_number(val_bool(true)));
    cr_assert_not(val_cell_is_number(val_str("1", 1)));
    cr_assert_not(val_cell_is_number(val_vec_f32(NULL, 0)));
}

/* ---- Display ----------------------------------------------------------------------- */

Test(print_display, scalars) {
    cr_assert_str_eq(display(val_int(-5)), "-5");
    cr_assert_str_eq(display(val_int(INT64_MAX)), "9223372036854775807");
    cr_assert_str_eq(display(val_float(two)), "2");
    cr_assert_str_eq(display(val_float(0.5)), "0.5");
    cr_assert_str_eq(display(VAL_FNAN), "NaN");
    cr_assert_str_eq(display(val_null()), "NULL");
    cr_assert_str_eq(display(val_bool(true)), "true");
    cr_assert_str_eq(display(val_ts(5)), "5ms");
    cr_assert_str_eq(display(val_ts(INT64_MIN)), "-9223372036854775808ms");
}

Test(print_display, strings_quoted_with_escapes) {
    cr_assert_str_eq(display(val_str("socrates", 8)), "\"socrates\"");
    cr_assert_str_eq(display(val_str("a\"b\\c\n", 6)), "\"a\\\"b\\\\c\\n\"");
}

Test(print_display, vectors_with_four_decimals) {
    float v[] = {1.0f, 2.0f};
    cr_assert_str_eq(display(val_vec_f32(v, 2)), "[1.0000, 2.0000]");
    float w[] = {0.1f, -0.5f, 1.23456f, 0.0f, -0.0f, 100.0f};
    cr_assert_str_eq(display(val_vec_f32(w, 6)),
                     "[0.1000, -0.5000, 1.2346, 0.0000, -0.0000, 100.0000]");
    cr_assert_str_eq(display(val_vec_f32(NULL, 0)), "[]");
}

Test(print_display, long_vectors_show_five_and_a_count) {
    float v[] = {1, 2, 3, 4, 5, 6, 7};
    cr_assert_str_eq(display(val_vec_f32(v, 7)),
                     "[1.0000, 2.0000, 3.0000, 4.0000, 5.0000, ... 2 more]");
    int8_t q[] = {1, 2, 3, 4, 5, 6, 7, 8};
    cr_assert_str_eq(display(val_vec_i8(q, 8)), "[1, 2, 3, 4, 5, ... 3 more]i8");
}

Test(print_display, i8_vectors) {
    int8_t q[] = {1, -2};
    cr_assert_str_eq(display(val_vec_i8(q, 2)), "[1, -2]i8");
    cr_assert_str_eq(display(val_vec_i8(NULL, 0)), "[]i8");
}

/* A zero cell after a longer number must not pick up the earlier digits. */
Test(print_cell, zero_after_longer_numbers) {
    cr_assert_str_eq(cell(val_float(-5.25)), "-5.25");
    cr_assert_str_eq(cell(val_float(0.0)), "0.0");
    cr_assert_str_eq(cell(val_float(2.65358979335273e-6)), "2.65358979335273e-6");
    cr_assert_str_eq(cell(val_float(-0.0)), "-0.0");
}

/* ---- val_fmt_json and val_fmt_quoted ---------------------------------------------- */

Test(print_json, strings_are_json_strings_of_their_bytes) {
    const char ctl[] = "a\"b\\c\nd\x01";
    cr_assert_str_eq(json(val_str(ctl, strlen(ctl))), "\"a\\\"b\\\\c\\nd\\u0001\"");
    cr_assert_str_eq(json(val_str("caf\xc3\xa9", 5)), "\"caf\xc3\xa9\"");
    cr_assert_str_eq(json(val_str("", 0)), "\"\"");
}

Test(print_json, other_values_are_their_cell_text) {
    cr_assert_str_eq(json(val_int(-42)), "-42");
    cr_assert_str_eq(json(val_float(0.5)), "0.5");
    cr_assert_str_eq(json(val_float(NAN)), "null");
    cr_assert_str_eq(json(VAL_NULL), "null");
    cr_assert_str_eq(json(val_bool(true)), "true");
    const float e[] = {1.0f, -2.5f};
    cr_assert_str_eq(json(val_vec_f32(e, 2)), "[1.0, -2.5]");
}

Test(print_json, quoted_literals_escape_what_iql_reads) {
    cr_assert_str_eq(quoted("plain"), "\"plain\"");
    cr_assert_str_eq(quoted("a\"b\\c\nd\te\rf"), "\"a\\\"b\\\\c\\nd\\te\\rf\"");
    cr_assert_str_eq(quoted("\x01"), "\"\x01\"", "other control bytes stay raw");
}
