/* Walking the variables of a term (see vars.h). */
#include "iql/vars.h"

bool iql_term_each_var(const iql_term *t, bool aggs, bool (*fn)(const char *var, void *ctx),
                       void *ctx) {
    if (!t) return true;
    switch (t->kind) {
    case IQL_T_VAR:
        return fn(t->u.var, ctx);
    case IQL_T_ARITH:
        return iql_term_each_var(t->u.arith.lhs, aggs, fn, ctx) &&
               iql_term_each_var(t->u.arith.rhs, aggs, fn, ctx);
    case IQL_T_CALL:
        for (uint32_t i = 0; i < t->u.call.nargs; i++)
            if (!iql_term_each_var(t->u.call.args[i], aggs, fn, ctx)) return false;
        return true;
    case IQL_T_AGG:
        if (!aggs) return true;
        if (t->u.agg.var && !fn(t->u.agg.var, ctx)) return false;
        for (uint32_t i = 0; i < t->u.agg.nspecs; i++)
            if (!fn(t->u.agg.specs[i].var, ctx)) return false;
        return true;
    default:
        return true;
    }
}
