/* Display of syntax trees (print.h): the rule text of `.rule def`, `.session` and
 * messages, in the reference's layout. */
#include "iql/print.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "value/print.h"

/* Set while iql_fmt_rule_key prints: vector literals print as the hex of their
   elements' bits, an exact text that costs a fraction of their decimal display. */
static _Thread_local bool key_mode;

static void fmt_vector_key(const iql_term *t, il_buf *out) {
    static const char hex[] = "0123456789abcdef";
    char buf[17 * 16];
    il_buf_puts(out, "#[");
    for (uint32_t i = 0; i < t->u.vec.n; i += 16) {
        uint32_t end = i + 16 < t->u.vec.n ? i + 16 : t->u.vec.n;
        size_t len = 0;
        for (uint32_t j = i; j < end; j++) {
            uint64_t bits;
            memcpy(&bits, &t->u.vec.elems[j], sizeof bits);
            for (int d = 60; d >= 0; d -= 4) buf[len++] = hex[(bits >> d) & 15];
            buf[len++] = ',';
        }
        il_buf_put(out, buf, len);
    }
    il_buf_putc(out, ']');
}

const char *iql_agg_kind_name(iql_agg_kind k) {
    switch (k) {
    case IQL_AGG_COUNT:
        return "count";
    case IQL_AGG_COUNT_DISTINCT:
        return "count_distinct";
    case IQL_AGG_SUM:
        return "sum";
    case IQL_AGG_MIN:
        return "min";
    case IQL_AGG_MAX:
        return "max";
    case IQL_AGG_AVG:
        return "avg";
    case IQL_AGG_TOP_K:
        return "top_k";
    case IQL_AGG_TOP_K_THRESHOLD:
        return "top_k_threshold";
    case IQL_AGG_WITHIN_RADIUS:
        return "within_radius";
    }
    return "?";
}

static bool agg_is_ranking(iql_agg_kind k) {
    return k == IQL_AGG_TOP_K || k == IQL_AGG_TOP_K_THRESHOLD || k == IQL_AGG_WITHIN_RADIUS;
}

/* `top_k<3, Name, Score:desc>`: the direction is shown where it was written, except on
 * a lone variable with the aggregate's default direction. */
static void fmt_ranking(const iql_term *t, il_buf *out) {
    iql_sort_dir dflt = t->u.agg.kind == IQL_AGG_WITHIN_RADIUS ? IQL_SORT_ASC : IQL_SORT_DESC;
    il_buf_puts(out, iql_agg_kind_name(t->u.agg.kind));
    il_buf_putc(out, '<');
    if (t->u.agg.kind == IQL_AGG_WITHIN_RADIUS) {
        fmt_f64_display(t->u.agg.param, out);
    } else {
        il_buf_printf(out, "%" PRIu64, t->u.agg.k);
        if (t->u.agg.kind == IQL_AGG_TOP_K_THRESHOLD) {
            il_buf_puts(out, ", ");
            fmt_f64_display(t->u.agg.param, out);
        }
    }
    for (uint32_t i = 0; i < t->u.agg.nspecs; i++) {
        const iql_agg_spec *s = &t->u.agg.specs[i];
        il_buf_puts(out, ", ");
        il_buf_puts(out, s->var);
        if (s->dir == IQL_SORT_NONE || (t->u.agg.nspecs == 1 && s->dir == dflt)) continue;
        il_buf_puts(out, s->dir == IQL_SORT_ASC ? ":asc" : ":desc");
    }
    il_buf_putc(out, '>');
}

static int arith_prec(const iql_term *t) {
    if (t->kind != IQL_T_ARITH) return 3;
    return t->u.arith.op == '+' || t->u.arith.op == '-' ? 1 : 2;
}

/* No spaces; the left operand is parenthesised when it binds more loosely, the right
 * one also when it binds equally (the operators are left-associative). */
static void fmt_arith(const iql_term *t, il_buf *out) {
    int prec = arith_prec(t);
    const iql_term *l = t->u.arith.lhs, *r = t->u.arith.rhs;
    bool pl = arith_prec(l) < prec, pr = arith_prec(r) <= prec;
    if (pl) il_buf_putc(out, '(');
    iql_fmt_term(l, out);
    if (pl) il_buf_putc(out, ')');
    il_buf_putc(out, t->u.arith.op);
    if (pr) il_buf_putc(out, '(');
    iql_fmt_term(r, out);
    if (pr) il_buf_putc(out, ')');
}

static void fmt_terms(iql_term *const *terms, uint32_t n, il_buf *out) {
    for (uint32_t i = 0; i < n; i++) {
        if (i) il_buf_puts(out, ", ");
        iql_fmt_term(terms[i], out);
    }
}

void iql_fmt_term(const iql_term *t, il_buf *out) {
    switch (t->kind) {
    case IQL_T_VAR:
        il_buf_puts(out, t->u.var);
        break;
    case IQL_T_PLACEHOLDER:
        il_buf_putc(out, '_');
        break;
    case IQL_T_INT:
        il_buf_printf(out, "%" PRId64, t->u.ival);
        break;
    case IQL_T_FLOAT:
        fmt_f64_display(t->u.fval, out);
        break;
    case IQL_T_STRING:
        val_fmt_quoted(t->u.str.ptr, t->u.str.len, out);
        break;
    case IQL_T_BOOL:
        il_buf_puts(out, t->u.bval ? "true" : "false");
        break;
    case IQL_T_VECTOR:
        if (key_mode) {
            fmt_vector_key(t, out);
            break;
        }
        il_buf_putc(out, '[');
        for (uint32_t i = 0; i < t->u.vec.n; i++) {
            if (i) il_buf_puts(out, ", ");
            fmt_f64_display(t->u.vec.elems[i], out);
        }
        il_buf_putc(out, ']');
        break;
    case IQL_T_CALL:
        il_buf_puts(out, t->u.call.name);
        il_buf_putc(out, '(');
        fmt_terms(t->u.call.args, t->u.call.nargs, out);
        il_buf_putc(out, ')');
        break;
    case IQL_T_ARITH:
        fmt_arith(t, out);
        break;
    case IQL_T_AGG:
        if (agg_is_ranking(t->u.agg.kind)) {
            fmt_ranking(t, out);
        } else {
            il_buf_puts(out, iql_agg_kind_name(t->u.agg.kind));
            il_buf_putc(out, '<');
            il_buf_puts(out, t->u.agg.var);
            il_buf_putc(out, '>');
        }
        break;
    }
}

void iql_fmt_atom(const iql_atom *a, il_buf *out) {
    il_buf_puts(out, a->rel);
    il_buf_putc(out, '(');
    fmt_terms(a->args, a->nargs, out);
    il_buf_putc(out, ')');
}

void iql_fmt_literal(const iql_literal *l, il_buf *out) {
    static const char *const ops[] = {
        [IQL_CMP_EQ] = " = ",  [IQL_CMP_NE] = " != ", [IQL_CMP_LT] = " < ",
        [IQL_CMP_LE] = " <= ", [IQL_CMP_GT] = " > ",  [IQL_CMP_GE] = " >= ",
    };
    switch (l->kind) {
    case IQL_LIT_ATOM:
        iql_fmt_atom(&l->atom, out);
        break;
    case IQL_LIT_NEG:
        il_buf_putc(out, '!');
        iql_fmt_atom(&l->atom, out);
        break;
    case IQL_LIT_CMP:
        iql_fmt_term(l->lhs, out);
        il_buf_puts(out, ops[l->op]);
        iql_fmt_term(l->rhs, out);
        break;
    }
}

void iql_fmt_rule(const iql_rule *r, il_buf *out) {
    iql_fmt_atom(&r->head, out);
    for (uint32_t i = 0; i < r->nbody; i++) {
        il_buf_puts(out, i ? ", " : " <- ");
        iql_fmt_literal(&r->body[i], out);
    }
}

void iql_fmt_rule_key(const iql_rule *r, il_buf *out) {
    key_mode = true;
    iql_fmt_rule(r, out);
    key_mode = false;
}

void iql_fmt_agg_name(const iql_term *agg, il_buf *out) {
    if (agg_is_ranking(agg->u.agg.kind))
        fmt_ranking(agg, out);
    else
        il_buf_puts(out, iql_agg_kind_name(agg->u.agg.kind));
}
