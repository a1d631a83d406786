/* Expressions and comparisons at run time (see expr.h). */
#include "exec/expr.h"

#include <math.h>
#include <string.h>

#include "exec/builtin.h"

#define FLOAT_EQ_TOLERANCE 1e-10

static bool is_intlike(val_t v) {
    val_type t = val_type_of(v);
    return t == VT_INT || t == VT_TS;
}

/* f64 -> i64 the way Rust's `as` does: saturating, NaN to 0. */
static int64_t f64_to_i64_sat(double d) {
    if (d != d) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
}

val_t exec_arith(char op, val_t a, val_t b) {
    bool both_int = val_type_of(a) == VT_INT && val_type_of(b) == VT_INT;
    double x = val_to_f64(a), y = val_to_f64(b), r;
    switch (op) {
    case '+':
        r = x + y;
        break;
    case '-':
        r = x - y;
        break;
    case '*':
        r = x * y;
        break;
    case '/':
        if (y == 0) return VAL_NULL;
        return val_float(x / y);
    case '%':
        if (y == 0) return VAL_NULL;
        r = fmod(x, y);
        break;
    default:
        return VAL_NULL;
    }
    if (!isfinite(r)) return VAL_NULL;
    if (both_int) return val_int(f64_to_i64_sat(r));
    return val_float(r);
}

val_t exec_eval(const plan_expr *e, const val_t *regs) {
    switch (e->kind) {
    case PX_SLOT:
        return regs[e->slot];
    case PX_CONST:
        return e->c;
    case PX_ARITH:
        return exec_arith(e->op, exec_eval(e->l, regs), exec_eval(e->r, regs));
    case PX_CALL: {
        val_t args[16];
        uint32_t n = e->nargs < 16 ? e->nargs : 16;
        for (uint32_t i = 0; i < n; i++) args[i] = exec_eval(e->args[i], regs);
        return e->fn ? e->fn->fn(args) : VAL_NULL;
    }
    }
    return VAL_NULL;
}

/* Integer-only arithmetic of comparisons (3.4): operands must be ints, float literals
 * truncate, `/` divides integers; a failure rejects the row. */
static bool eval_int(const plan_expr *e, const val_t *regs, int64_t *out) {
    switch (e->kind) {
    case PX_SLOT: {
        val_t v = regs[e->slot];
        if (!is_intlike(v)) return false;
        *out = val_get_int(v);
        return true;
    }
    case PX_CONST:
        if (is_intlike(e->c)) {
            *out = val_get_int(e->c);
            return true;
        }
        if (val_is_float(e->c)) {
            *out = f64_to_i64_sat(val_get_float(e->c));
            return true;
        }
        return false;
    case PX_ARITH: {
        int64_t x, y;
        if (!eval_int(e->l, regs, &x) || !eval_int(e->r, regs, &y)) return false;
        switch (e->op) {
        case '+':
            *out = (int64_t)((uint64_t)x + (uint64_t)y);
            return true;
        case '-':
            *out = (int64_t)((uint64_t)x - (uint64_t)y);
            return true;
        case '*':
            *out = (int64_t)((uint64_t)x * (uint64_t)y);
            return true;
        case '/':
            if (y == 0 || (x == INT64_MIN && y == -1)) return false;
            *out = x / y;
            return true;
        case '%':
            if (y == 0 || (x == INT64_MIN && y == -1)) return false;
            *out = x % y;
            return true;
        }
        return false;
    }
    case PX_CALL:
        return false;
    }
    return false;
}

bool exec_order_holds(iql_cmp_op op, int c) {
    switch (op) {
    case IQL_CMP_EQ:
        return c == 0;
    case IQL_CMP_NE:
        return c != 0;
    case IQL_CMP_LT:
        return c < 0;
    case IQL_CMP_LE:
        return c <= 0;
    case IQL_CMP_GT:
        return c > 0;
    case IQL_CMP_GE:
        return c >= 0;
    }
    return false;
}

static int cmp_i64(int64_t a, int64_t b) {
    return a < b ? -1 : a > b;
}
static int cmp_f64(double a, double b) {
    return a < b ? -1 : a > b;
}

/* A value against a number with the tolerance rule for `=` and `!=`. */
static bool numeric_holds(iql_cmp_op op, double x, double c) {
    if (op == IQL_CMP_EQ) return fabs(x - c) < FLOAT_EQ_TOLERANCE;
    if (op == IQL_CMP_NE) return !(fabs(x - c) < FLOAT_EQ_TOLERANCE);
    return exec_order_holds(op, cmp_f64(x, c));
}

static bool values_hold(iql_cmp_op op, val_t a, val_t b) {
    if (op == IQL_CMP_EQ) return a == b;
    if (op == IQL_CMP_NE) return a != b;
    if (is_intlike(a) && is_intlike(b))
        return exec_order_holds(op, cmp_i64(val_get_int(a), val_get_int(b)));
    if (val_is_numeric(a) && val_is_numeric(b))
        return exec_order_holds(op, cmp_f64(val_to_f64(a), val_to_f64(b)));
    if (val_type_of(a) == VT_STR && val_type_of(b) == VT_STR)
        return exec_order_holds(op, val_cmp(a, b));
    return false;
}

static bool const_int_holds(iql_cmp_op op, val_t v, val_t c) {
    if (is_intlike(v)) return exec_order_holds(op, cmp_i64(val_get_int(v), val_get_int(c)));
    if (val_is_float(v)) return numeric_holds(op, val_get_float(v), (double)val_get_int(c));
    return op == IQL_CMP_NE;
}

static bool const_float_holds(iql_cmp_op op, val_t v, val_t c) {
    if (val_is_numeric(v)) return numeric_holds(op, val_to_f64(v), val_get_float(c));
    return op == IQL_CMP_NE;
}

static bool const_str_holds(iql_cmp_op op, val_t v, val_t c) {
    if (val_type_of(v) == VT_STR) return exec_order_holds(op, val_cmp(v, c));
    return op == IQL_CMP_NE;
}

static bool const_bool_holds(iql_cmp_op op, val_t v, val_t c) {
    if (val_type_of(v) == VT_BOOL) {
        if (op == IQL_CMP_EQ) return v == c;
        if (op == IQL_CMP_NE) return v != c;
        return false;
    }
    return op == IQL_CMP_NE;
}

bool exec_numeric_alternative(val_t c, val_t *alt) {
    val_type t = val_type_of(c);
    if (t == VT_INT) {
        *alt = val_float((double)val_get_int(c));
        return true;
    }
    if (t == VT_FLOAT) {
        double d = val_get_float(c);
        /* in range first: converting a float beyond int64 is undefined */
        if (d > -9.2e18 && d < 9.2e18 && d == (double)(int64_t)d) {
            *alt = val_int((int64_t)d);
            return true;
        }
    }
    return false;
}

bool exec_const_matches(val_t v, val_t c) {
    if (v == c) return true;
    val_type tc = val_type_of(c);
    if (tc == VT_INT) return const_int_holds(IQL_CMP_EQ, v, c);
    if (tc == VT_FLOAT) return const_float_holds(IQL_CMP_EQ, v, c);
    return false;
}

bool exec_filter(const plan_op *op, const val_t *regs) {
    switch (op->mode) {
    case PCMP_CONST_CONST:
        return op->result;
    case PCMP_VALUES:
        return values_hold(op->cmp, exec_eval(op->lhs, regs), exec_eval(op->rhs, regs));
    case PCMP_CONST_INT:
        return const_int_holds(op->cmp, exec_eval(op->lhs, regs), op->rhs->c);
    case PCMP_CONST_FLOAT:
        return const_float_holds(op->cmp, exec_eval(op->lhs, regs), op->rhs->c);
    case PCMP_CONST_STR:
        return const_str_holds(op->cmp, exec_eval(op->lhs, regs), op->rhs->c);
    case PCMP_CONST_BOOL:
        return const_bool_holds(op->cmp, exec_eval(op->lhs, regs), op->rhs->c);
    case PCMP_INT_ARITH: {
        /* one side may be a plain value (int or float); arithmetic sides are i64 */
        const plan_expr *l = op->lhs, *r = op->rhs;
        if (l->kind == PX_SLOT && r->kind != PX_SLOT) {
            int64_t y;
            if (!eval_int(r, regs, &y)) return false;
            val_t v = regs[l->slot];
            if (is_intlike(v)) return exec_order_holds(op->cmp, cmp_i64(val_get_int(v), y));
            if (val_is_float(v)) return numeric_holds(op->cmp, val_get_float(v), (double)y);
            return op->cmp == IQL_CMP_NE;
        }
        if (r->kind == PX_SLOT && l->kind != PX_SLOT) {
            int64_t x;
            if (!eval_int(l, regs, &x)) return false;
            val_t v = regs[r->slot];
            if (is_intlike(v)) return exec_order_holds(op->cmp, cmp_i64(x, val_get_int(v)));
            if (val_is_float(v)) return numeric_holds(op->cmp, (double)x, val_get_float(v));
            return op->cmp == IQL_CMP_NE;
        }
        int64_t x, y;
        if (!eval_int(l, regs, &x) || !eval_int(r, regs, &y)) return false;
        return exec_order_holds(op->cmp, cmp_i64(x, y));
    }
    }
    return false;
}

/* exec_bounds_reject from the builtin's argument values. */
static bool bounds_fail(const plan_op *assign, const plan_op *filter, const val_t *args) {
    double lo, hi;
    assign->bounds(args, 0, args, 0, 1, &lo, &hi);
    return exec_bounds_exclude(filter->cmp, val_to_f64(filter->rhs->c), lo, hi);
}

bool exec_bounds_reject(const plan_op *assign, const plan_op *filter, const val_t *regs) {
    const plan_expr *call = assign->rhs;
    val_t args[16];
    uint32_t n = call->nargs < 16 ? call->nargs : 16;
    for (uint32_t i = 0; i < n; i++) args[i] = exec_eval(call->args[i], regs);
    return bounds_fail(assign, filter, args);
}
