/* Math and conversion builtins (iql-language.md 5.5): abs, sqrt, pow, log, exp, trig,
 * floor/ceil, sign, to_float/to_int, min_val/max_val. Bad input types give Null. */
#include <math.h>

#include "exec/builtin_impl.h"

static bool intlike(val_t v) {
    val_type t = val_type_of(v);
    return t == VT_INT || t == VT_TS;
}

static int64_t sat_i64(double d) {
    if (d != d) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
}

static val_t fn_abs_int64(const val_t *a) {
    if (!intlike(a[0])) return VAL_NULL;
    int64_t x = val_get_int(a[0]);
    return val_int(x == INT64_MIN ? INT64_MAX : (x < 0 ? -x : x));
}
static val_t fn_abs_float64(const val_t *a) {
    return val_float(fabs(val_to_f64(a[0])));
}
static val_t fn_abs(const val_t *a) {
    if (intlike(a[0])) return fn_abs_int64(a);
    return val_float(fabs(val_to_f64(a[0])));
}
static val_t fn_sqrt(const val_t *a) {
    double x = val_to_f64(a[0]);
    return x < 0 ? VAL_NULL : val_float(sqrt(x));
}
static val_t fn_pow(const val_t *a) {
    return val_float(pow(val_to_f64(a[0]), val_to_f64(a[1])));
}
static val_t fn_log(const val_t *a) {
    double x = val_to_f64(a[0]);
    return x <= 0 ? VAL_NULL : val_float(log(x));
}
static val_t fn_exp(const val_t *a) {
    return val_float(exp(val_to_f64(a[0])));
}
static val_t fn_sin(const val_t *a) {
    return val_float(sin(val_to_f64(a[0])));
}
static val_t fn_cos(const val_t *a) {
    return val_float(cos(val_to_f64(a[0])));
}
static val_t fn_tan(const val_t *a) {
    return val_float(tan(val_to_f64(a[0])));
}
static val_t fn_floor(const val_t *a) {
    return val_int(sat_i64(floor(val_to_f64(a[0]))));
}
static val_t fn_ceil(const val_t *a) {
    return val_int(sat_i64(ceil(val_to_f64(a[0]))));
}
static val_t fn_sign(const val_t *a) {
    if (val_type_of(a[0]) == VT_INT) {
        int64_t x = val_get_int(a[0]);
        return val_int(x > 0 ? 1 : x < 0 ? -1 : 0);
    }
    double d = val_to_f64(a[0]);
    return val_int(d > 0 ? 1 : d == 0 ? 0 : -1);
}
static val_t fn_to_float(const val_t *a) {
    val_type t = val_type_of(a[0]);
    if (t == VT_INT) return val_float((double)val_get_int(a[0]));
    if (t == VT_FLOAT) return a[0];
    return VAL_NULL;
}
static val_t fn_to_int(const val_t *a) {
    val_type t = val_type_of(a[0]);
    if (t == VT_INT) return a[0];
    if (t == VT_FLOAT) {
        double d = val_get_float(a[0]);
        return isfinite(d) ? val_int(sat_i64(trunc(d))) : VAL_NULL;
    }
    return VAL_NULL;
}

static val_t min_max(const val_t *a, bool want_max) {
    val_type ta = val_type_of(a[0]), tb = val_type_of(a[1]);
    if (ta == VT_INT && tb == VT_INT) {
        int64_t x = val_get_int(a[0]), y = val_get_int(a[1]);
        return val_int(want_max ? (x > y ? x : y) : (x < y ? x : y));
    }
    if ((ta == VT_INT || ta == VT_FLOAT) && (tb == VT_INT || tb == VT_FLOAT)) {
        double x = val_to_f64(a[0]), y = val_to_f64(a[1]);
        return val_float(want_max ? fmax(x, y) : fmin(x, y));
    }
    if (ta == VT_STR && tb == VT_STR) {
        int c = val_cmp(a[0], a[1]);
        if (want_max) return c >= 0 ? a[0] : a[1];
        return c <= 0 ? a[0] : a[1];
    }
    return VAL_NULL;
}
static val_t fn_min_val(const val_t *a) {
    return min_max(a, false);
}
static val_t fn_max_val(const val_t *a) {
    return min_max(a, true);
}

const exec_builtin exec_math_builtins[] = {
    {"abs_int64", 1, fn_abs_int64},
    {"abs_float64", 1, fn_abs_float64},
    {"abs", 1, fn_abs},
    {"sqrt", 1, fn_sqrt},
    {"pow", 2, fn_pow},
    {"log", 1, fn_log},
    {"exp", 1, fn_exp},
    {"sin", 1, fn_sin},
    {"cos", 1, fn_cos},
    {"tan", 1, fn_tan},
    {"floor", 1, fn_floor},
    {"ceil", 1, fn_ceil},
    {"sign", 1, fn_sign},
    {"to_float", 1, fn_to_float},
    {"to_int", 1, fn_to_int},
    {"min_val", 2, fn_min_val},
    {"max_val", 2, fn_max_val},
    {NULL, 0, NULL},
};
