/* Expressions and comparisons at run time: the computed-value arithmetic of
 * iql-language.md 3.7 (f64 arithmetic, ints kept when both operands are ints, `/` always
 * a float, division by zero gives Null) and the comparison rules of 3.4 step 4. */
#ifndef IL_EXEC_EXPR_H
#define IL_EXEC_EXPR_H

#include "plan/plan.h"

/* Evaluates an expression over bound slots. */
val_t exec_eval(const plan_expr *e, const val_t *regs);
/* Decides a FILTER operation. */
bool exec_filter(const plan_op *op, const val_t *regs);
/* Equality of a stored value with a constant the way an atom's constant argument
 * matches (numbers numerically with a 1e-10 tolerance, everything else exactly). */
bool exec_const_matches(val_t v, val_t c);
/* The other form of a number a constant matches numerically: the float 2.0 for the int
 * 2, the int 2 for an integral float 2.0. False when there is none. */
bool exec_numeric_alternative(val_t c, val_t *alt);
/* Whether a three-way comparison result `c` satisfies `op`. */
bool exec_order_holds(iql_cmp_op op, int c);
/* Whether the bounds of an assignment's builtin (plan_op.bounds) already fail the filter
 * linked to it (plan_op.bound_filter), so that the row can be dropped without the exact
 * value. False when undecided. */
bool exec_bounds_reject(const plan_op *assign, const plan_op *filter, const val_t *regs);
/* Whether every value in [lo, hi] fails `value cmp c`. */
static inline bool exec_bounds_exclude(iql_cmp_op cmp, double c, double lo, double hi) {
    switch (cmp) {
    case IQL_CMP_LT:
        return lo >= c;
    case IQL_CMP_LE:
        return lo > c;
    case IQL_CMP_GT:
        return hi <= c;
    case IQL_CMP_GE:
        return hi < c;
    default:
        return false;
    }
}
/* Arithmetic on two values (`op` one of + - * / %). */
val_t exec_arith(char op, val_t a, val_t b);

#endif
