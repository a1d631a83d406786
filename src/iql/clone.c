/* Deep copies of syntax trees into another arena (parser.h), for rules and queries that
 * outlive the arena of the statement that defined them. */
#include <string.h>

#include "iql/parser.h"

static const char *clone_str(il_arena *a, const char *s) {
    return s ? il_arena_strdup(a, s) : NULL;
}

static iql_term **clone_terms(il_arena *a, iql_term *const *terms, uint32_t n) {
    if (n == 0) return NULL;
    iql_term **v = il_arena_alloc(a, n * sizeof *v);
    for (uint32_t i = 0; i < n; i++) v[i] = iql_term_clone(a, terms[i]);
    return v;
}

iql_term *iql_term_clone(il_arena *a, const iql_term *t) {
    if (!t) return NULL;
    iql_term *c = il_arena_alloc(a, sizeof *c);
    *c = *t;
    switch (t->kind) {
    case IQL_T_VAR:
        c->u.var = clone_str(a, t->u.var);
        break;
    case IQL_T_STRING: {
        /* Strings may hold NUL bytes (\0), so copy by length. */
        char *p = il_arena_alloc(a, t->u.str.len + 1);
        memcpy(p, t->u.str.ptr, t->u.str.len);
        p[t->u.str.len] = 0;
        c->u.str.ptr = p;
        break;
    }
    case IQL_T_VECTOR:
        c->u.vec.elems = il_arena_memdup(a, t->u.vec.elems, t->u.vec.n * sizeof(double));
        break;
    case IQL_T_CALL:
        c->u.call.name = clone_str(a, t->u.call.name);
        c->u.call.args = clone_terms(a, t->u.call.args, t->u.call.nargs);
        break;
    case IQL_T_ARITH:
        c->u.arith.lhs = iql_term_clone(a, t->u.arith.lhs);
        c->u.arith.rhs = iql_term_clone(a, t->u.arith.rhs);
        break;
    case IQL_T_AGG:
        c->u.agg.var = clone_str(a, t->u.agg.var);
        if (t->u.agg.nspecs) {
            iql_agg_spec *specs = il_arena_alloc(a, t->u.agg.nspecs * sizeof *specs);
            for (uint32_t i = 0; i < t->u.agg.nspecs; i++) {
                specs[i].var = clone_str(a, t->u.agg.specs[i].var);
                specs[i].dir = t->u.agg.specs[i].dir;
            }
            c->u.agg.specs = specs;
        }
        break;
    case IQL_T_PLACEHOLDER:
    case IQL_T_INT:
    case IQL_T_FLOAT:
    case IQL_T_BOOL:
        break;
    }
    return c;
}

void iql_atom_clone(il_arena *a, iql_atom *dst, const iql_atom *src) {
    dst->rel = clone_str(a, src->rel);
    dst->nargs = src->nargs;
    dst->args = clone_terms(a, src->args, src->nargs);
}

void iql_rule_clone(il_arena *a, iql_rule *dst, const iql_rule *src) {
    iql_atom_clone(a, &dst->head, &src->head);
    dst->nbody = src->nbody;
    dst->body = NULL;
    if (src->nbody == 0) return;
    dst->body = il_arena_alloc(a, src->nbody * sizeof *dst->body);
    for (uint32_t i = 0; i < src->nbody; i++) {
        const iql_literal *s = &src->body[i];
        iql_literal *d = &dst->body[i];
        *d = *s;
        if (s->kind == IQL_LIT_CMP) {
            d->lhs = iql_term_clone(a, s->lhs);
            d->rhs = iql_term_clone(a, s->rhs);
        } else {
            iql_atom_clone(a, &d->atom, &s->atom);
        }
    }
}
