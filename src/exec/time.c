/* Temporal builtins (iql-language.md 5.4): timestamps are i64 milliseconds since the Unix
 * epoch. Points in time accept a Timestamp or an Int, and so do durations; any other
 * argument gives Null. Differences, sums and ages saturate at the i64 bounds instead of
 * wrapping, so an absurd input gives an extreme answer rather than a wrong-signed one. */
#include <math.h>
#include <time.h>

#include "exec/builtin_impl.h"

/* Reads the arguments as i64 milliseconds; false when one is not an Int or Timestamp. */
static bool get_times(const val_t *a, uint32_t n, int64_t *out) {
    for (uint32_t i = 0; i < n; i++) {
        val_type t = val_type_of(a[i]);
        if (t != VT_INT && t != VT_TS) return false;
        out[i] = val_get_int(a[i]);
    }
    return true;
}

static int64_t sat_add(int64_t x, int64_t y) {
    int64_t r;
    if (__builtin_add_overflow(x, y, &r)) return y > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t sat_sub(int64_t x, int64_t y) {
    int64_t r;
    if (__builtin_sub_overflow(x, y, &r)) return y < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static val_t fn_time_now(const val_t *a) {
    (void)a;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return val_ts((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
}

static val_t fn_time_diff(const val_t *a) {
    int64_t t[2];
    if (!get_times(a, 2, t)) return VAL_NULL;
    return val_int(sat_sub(t[0], t[1]));
}

static val_t fn_time_add(const val_t *a) {
    int64_t t[2];
    if (!get_times(a, 2, t)) return VAL_NULL;
    return val_ts(sat_add(t[0], t[1]));
}

static val_t fn_time_sub(const val_t *a) {
    int64_t t[2];
    if (!get_times(a, 2, t)) return VAL_NULL;
    return val_ts(sat_sub(t[0], t[1]));
}

/* The shared edge cases of the two decays; false when the weight still has to be
 * computed from *age (which is then > 0) and `scale` (> 0). */
static bool decay_edge(int64_t ts, int64_t now, int64_t scale, int64_t *age, double *weight) {
    if (scale <= 0) {
        *weight = ts >= now ? 1.0 : 0.0;
        return true;
    }
    *age = sat_sub(now, ts);
    if (*age <= 0) {
        *weight = 1.0;
        return true;
    }
    return false;
}

static val_t fn_time_decay(const val_t *a) {
    int64_t t[3], age;
    double weight;
    if (!get_times(a, 3, t)) return VAL_NULL;
    if (!decay_edge(t[0], t[1], t[2], &age, &weight)) weight = pow(0.5, (double)age / (double)t[2]);
    return val_float(weight);
}

static val_t fn_time_decay_linear(const val_t *a) {
    int64_t t[3], age;
    double weight;
    if (!get_times(a, 3, t)) return VAL_NULL;
    if (!decay_edge(t[0], t[1], t[2], &age, &weight)) {
        weight = 1.0 - (double)age / (double)t[2];
        if (weight < 0.0) weight = 0.0;
    }
    return val_float(weight);
}

static val_t fn_time_before(const val_t *a) {
    int64_t t[2];
    if (!get_times(a, 2, t)) return VAL_NULL;
    return val_bool(t[0] < t[1]);
}

static val_t fn_time_after(const val_t *a) {
    int64_t t[2];
    if (!get_times(a, 2, t)) return VAL_NULL;
    return val_bool(t[0] > t[1]);
}

/* time_between(ts, start, end) and point_in_interval(ts, start, end) are the same test */
static val_t fn_time_between(const val_t *a) {
    int64_t t[3];
    if (!get_times(a, 3, t)) return VAL_NULL;
    return val_bool(t[1] <= t[0] && t[0] <= t[2]);
}

static val_t fn_within_last(const val_t *a) {
    int64_t t[3];
    if (!get_times(a, 3, t)) return VAL_NULL;
    int64_t age = sat_sub(t[1], t[0]);
    return val_bool(age >= 0 && age <= t[2]);
}

static val_t fn_intervals_overlap(const val_t *a) {
    int64_t t[4];
    if (!get_times(a, 4, t)) return VAL_NULL;
    return val_bool(t[0] <= t[3] && t[2] <= t[1]);
}

static val_t fn_interval_contains(const val_t *a) {
    int64_t t[4];
    if (!get_times(a, 4, t)) return VAL_NULL;
    return val_bool(t[0] <= t[2] && t[3] <= t[1]);
}

static val_t fn_interval_duration(const val_t *a) {
    int64_t t[2];
    if (!get_times(a, 2, t)) return VAL_NULL;
    return val_int(sat_sub(t[1], t[0]));
}

const exec_builtin exec_time_builtins[] = {
    {"time_now", 0, fn_time_now},
    {"time_diff", 2, fn_time_diff},
    {"time_add", 2, fn_time_add},
    {"time_sub", 2, fn_time_sub},
    {"time_decay", 3, fn_time_decay},
    {"time_decay_linear", 3, fn_time_decay_linear},
    {"time_before", 2, fn_time_before},
    {"time_after", 2, fn_time_after},
    {"time_between", 3, fn_time_between},
    {"within_last", 3, fn_within_last},
    {"intervals_overlap", 4, fn_intervals_overlap},
    {"interval_contains", 4, fn_interval_contains},
    {"interval_duration", 2, fn_interval_duration},
    {"point_in_interval", 3, fn_time_between},
    {NULL, 0, NULL},
};
