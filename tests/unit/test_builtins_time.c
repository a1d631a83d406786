/* Tests of the temporal builtins (time.c), called through the builtin table: results and
 * result types, saturation at the i64 limits, negative timestamps, and Null for
 * arguments that are neither Int nor Timestamp. */
#include <criterion/criterion.h>
#include <math.h>
#include <time.h>

#include "unit_fixture.h"
#include "value/value.h"

static void teardown(void) {
    val_shutdown();
}

TestSuite(time_fn, .fini = teardown);

#define I(x) val_int(x)
#define T(x) val_ts(x)

/* The wall clock in ms, read as time_now reads it: time(2) may run on a coarser clock that
   lags the precise one across a second boundary. */
static int64_t realtime_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

Test(time_fn, time_now_is_the_current_time_in_ms) {
    int64_t before = realtime_ms();
    val_t now = unit_call("time_now", 0, NULL);
    int64_t after = realtime_ms();
    cr_assert_eq(val_type_of(now), VT_TS);
    cr_assert(val_get_int(now) >= before && val_get_int(now) <= after);
}

Test(time_fn, time_diff) {
    cr_assert_eq(UNIT_CALL("time_diff", I(1000), I(500)), I(500));
    cr_assert_eq(UNIT_CALL("time_diff", T(500), T(1000)), I(-500));
    cr_assert_eq(UNIT_CALL("time_diff", T(-5), I(-7)), I(2));
    cr_assert_eq(val_type_of(UNIT_CALL("time_diff", T(2), T(1))), VT_INT);
}

Test(time_fn, time_diff_saturates) {
    cr_assert_eq(UNIT_CALL("time_diff", I(INT64_MIN), I(1)), I(INT64_MIN));
    cr_assert_eq(UNIT_CALL("time_diff", I(INT64_MAX), I(-1)), I(INT64_MAX));
    cr_assert_eq(UNIT_CALL("time_diff", I(INT64_MAX), I(INT64_MIN)), I(INT64_MAX));
    cr_assert_eq(UNIT_CALL("time_diff", I(INT64_MIN), I(INT64_MIN)), I(0));
}

Test(time_fn, time_add_and_sub_give_timestamps) {
    cr_assert_eq(UNIT_CALL("time_add", I(1000000), I(500)), T(1000500));
    cr_assert_eq(UNIT_CALL("time_sub", I(1000000), I(500)), T(999500));
    cr_assert_eq(UNIT_CALL("time_add", T(10), I(-20)), T(-10));
    cr_assert_eq(UNIT_CALL("time_sub", T(10), T(-20)), T(30));
}

Test(time_fn, time_add_and_sub_saturate) {
    cr_assert_eq(UNIT_CALL("time_add", T(INT64_MAX), I(1)), T(INT64_MAX));
    cr_assert_eq(UNIT_CALL("time_add", T(INT64_MIN), I(-1)), T(INT64_MIN));
    cr_assert_eq(UNIT_CALL("time_sub", T(INT64_MIN), I(1)), T(INT64_MIN));
    cr_assert_eq(UNIT_CALL("time_sub", T(0), I(INT64_MIN)), T(INT64_MAX));
    cr_assert_eq(UNIT_CALL("time_sub", T(-1), I(INT64_MAX)), T(INT64_MIN));
}

Test(time_fn, non_time_arguments_give_null) {
    cr_assert_eq(UNIT_CALL("time_diff", val_float(1.0), I(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("time_add", I(1), val_str("1", 1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("time_sub", VAL_NULL, I(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("time_decay", I(1), I(2), val_float(NAN)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("time_decay_linear", VAL_TRUE, I(2), I(3)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("time_before", I(1), val_float(2.0)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("time_after", val_vec_f32(NULL, 0), I(1)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("time_between", I(1), I(0), val_float(INFINITY)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("within_last", I(1), I(2), VAL_NULL), VAL_NULL);
    cr_assert_eq(UNIT_CALL("intervals_overlap", I(1), I(2), I(3), val_str("", 0)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("interval_contains", val_float(0.0), I(2), I(3), I(4)), VAL_NULL);
    cr_assert_eq(UNIT_CALL("interval_duration", I(1), VAL_FALSE), VAL_NULL);
    cr_assert_eq(UNIT_CALL("point_in_interval", I(1), I(0), val_float(2.0)), VAL_NULL);
}

Test(time_fn, time_decay_halves_every_half_life) {
    cr_assert_eq(UNIT_CALL("time_decay", I(1000000), I(1000000), I(1000)), val_float(1.0));
    cr_assert_eq(UNIT_CALL("time_decay", I(999000), I(1000000), I(1000)), val_float(0.5));
    cr_assert_eq(UNIT_CALL("time_decay", I(998000), I(1000000), I(1000)), val_float(0.25));
    cr_assert_float_eq(val_get_float(UNIT_CALL("time_decay", T(0), T(500), I(1000))), sqrt(0.5),
                       1e-15);
}

Test(time_fn, time_decay_edge_cases) {
    /* a future event has weight 1 */
    cr_assert_eq(UNIT_CALL("time_decay", I(2000), I(1000), I(1000)), val_float(1.0));
    /* no half-life: a step at now */
    cr_assert_eq(UNIT_CALL("time_decay", I(1000), I(1000), I(0)), val_float(1.0));
    cr_assert_eq(UNIT_CALL("time_decay", I(999), I(1000), I(-5)), val_float(0.0));
    /* the age saturates instead of wrapping negative */
    cr_assert_eq(UNIT_CALL("time_decay", I(INT64_MIN), I(INT64_MAX), I(1)), val_float(0.0));
    cr_assert_eq(UNIT_CALL("time_decay", I(INT64_MIN), I(INT64_MAX), I(INT64_MAX)), val_float(0.5));
}

Test(time_fn, time_decay_linear) {
    cr_assert_eq(UNIT_CALL("time_decay_linear", I(10000), I(10000), I(10000)), val_float(1.0));
    cr_assert_eq(UNIT_CALL("time_decay_linear", I(5000), I(10000), I(10000)), val_float(0.5));
    cr_assert_eq(UNIT_CALL("time_decay_linear", I(0), I(10000), I(10000)), val_float(0.0));
    cr_assert_eq(UNIT_CALL("time_decay_linear", I(-90000), I(10000), I(10000)), val_float(0.0));
    cr_assert_eq(UNIT_CALL("time_decay_linear", I(20000), I(10000), I(10000)), val_float(1.0));
    cr_assert_eq(UNIT_CALL("time_decay_linear", I(0), I(1), I(0)), val_float(0.0));
    cr_assert_eq(UNIT_CALL("time_decay_linear", I(INT64_MIN), I(INT64_MAX), I(1)), val_float(0.0));
}

Test(time_fn, before_after_between) {
    cr_assert_eq(UNIT_CALL("time_before", I(100), I(200)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("time_before", I(100), I(100)), VAL_FALSE);
    cr_assert_eq(UNIT_CALL("time_after", T(200), I(100)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("time_after", I(INT64_MIN), I(INT64_MAX)), VAL_FALSE);
    cr_assert_eq(UNIT_CALL("time_between", I(100), I(100), I(200)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("time_between", I(200), I(100), I(200)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("time_between", I(50), I(100), I(200)), VAL_FALSE);
    cr_assert_eq(UNIT_CALL("time_between", I(150), I(200), I(100)), VAL_FALSE);
    cr_assert_eq(UNIT_CALL("point_in_interval", I(-5), I(-10), I(0)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("point_in_interval", I(1), I(-10), I(0)), VAL_FALSE);
}

Test(time_fn, within_last) {
    cr_assert_eq(UNIT_CALL("within_last", I(900), I(1000), I(100)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("within_last", I(1000), I(1000), I(0)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("within_last", I(899), I(1000), I(100)), VAL_FALSE);
    /* the future is not within the last anything */
    cr_assert_eq(UNIT_CALL("within_last", I(1001), I(1000), I(100)), VAL_FALSE);
    cr_assert_eq(UNIT_CALL("within_last", I(INT64_MIN), I(INT64_MAX), I(INT64_MAX)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("within_last", I(INT64_MAX), I(INT64_MIN), I(INT64_MAX)), VAL_FALSE);
}

Test(time_fn, intervals) {
    cr_assert_eq(UNIT_CALL("intervals_overlap", I(0), I(10), I(10), I(20)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("intervals_overlap", I(0), I(10), I(11), I(20)), VAL_FALSE);
    cr_assert_eq(UNIT_CALL("intervals_overlap", I(5), I(6), I(0), I(20)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("interval_contains", I(0), I(20), I(5), I(6)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("interval_contains", I(0), I(20), I(0), I(20)), VAL_TRUE);
    cr_assert_eq(UNIT_CALL("interval_contains", I(0), I(20), I(-1), I(5)), VAL_FALSE);
    cr_assert_eq(UNIT_CALL("interval_duration", I(100), I(200)), I(100));
    cr_assert_eq(UNIT_CALL("interval_duration", I(500), I(500)), I(0));
    cr_assert_eq(UNIT_CALL("interval_duration", I(200), I(100)), I(-100));
    cr_assert_eq(UNIT_CALL("interval_duration", I(INT64_MIN), I(INT64_MAX)), I(INT64_MAX));
    cr_assert_eq(UNIT_CALL("interval_duration", I(INT64_MAX), I(INT64_MIN)), I(INT64_MIN));
}
