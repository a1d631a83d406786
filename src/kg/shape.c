/* Query shapes (kg.h): a query rule's parameters, the rule that names them as its cache
 * key, and (when the cache needs it) the rule with other values in their place, from
 * which plan/params.h tells whether the compiled program can take any values of those
 * types. */
#include <stdio.h>
#include <string.h>

#include "kg/kg.h"
#include "plan/build.h"

/* Numbers beyond 2^53 have no exact other numeric form: they stay in the text. */
#define EXACT_INT_LIMIT (INT64_C(1) << 53)

static bool param_term(const iql_term *t) {
    return (t->kind == IQL_T_INT && t->u.ival <= EXACT_INT_LIMIT &&
            t->u.ival >= -EXACT_INT_LIMIT) ||
           t->kind == IQL_T_STRING;
}

static bool same_value(const iql_term *a, const iql_term *b) {
    if (a->kind != b->kind) return false;
    if (a->kind == IQL_T_INT) return a->u.ival == b->u.ival;
    return a->u.str.len == b->u.str.len && memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len) == 0;
}

/* A literal's terms that are parameters: the constant arguments of an atom (not of a
 * search, whose arguments set how it searches), and the constant side of a comparison
 * whose other side is not constant (two constants are compared when compiled). Calls
 * visit(where, ctx) with where the slot holding each. */
static void each_param(iql_literal *l, void (*visit)(iql_term **where, void *ctx), void *ctx) {
    if (l->kind == IQL_LIT_ATOM || l->kind == IQL_LIT_NEG) {
        if (strcmp(l->atom.rel, "hnsw_nearest") == 0) return;
        for (uint32_t i = 0; i < l->atom.nargs; i++)
            if (param_term(l->atom.args[i])) visit(&l->atom.args[i], ctx);
        return;
    }
    bool lc = plan_term_is_const(l->lhs), rc = plan_term_is_const(l->rhs);
    if (lc && !rc && param_term(l->lhs)) visit(&l->lhs, ctx);
    if (rc && !lc && param_term(l->rhs)) visit(&l->rhs, ctx);
}

/* More distinct values than this and the query is cached by its text: finding them is
 * quadratic, and a query with that many constants is rarely asked with others. */
enum { MAX_PARAMS = 64 };

typedef struct collect_ctx {
    il_arena *a;
    kg_shape *out;
    uint32_t cap;
    bool too_many;
} collect_ctx;

static void collect(iql_term **where, void *ctx) {
    collect_ctx *c = ctx;
    kg_shape *s = c->out;
    for (uint32_t i = 0; i < s->n; i++)
        if (same_value(s->terms[i], *where)) return;
    if (s->n == MAX_PARAMS) {
        c->too_many = true;
        return;
    }
    if (s->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 8;
        const iql_term **terms = il_arena_alloc(c->a, cap * sizeof *terms);
        if (s->n) memcpy(terms, s->terms, s->n * sizeof *terms);
        s->terms = terms;
        c->cap = cap;
    }
    s->terms[s->n++] = *where;
}

static uint32_t param_of(const kg_shape *s, const iql_term *t) {
    for (uint32_t i = 0; i < s->n; i++)
        if (same_value(s->terms[i], t)) return i;
    return 0; /* not reached: every parameter was collected */
}

typedef struct replace_ctx {
    const kg_shape *shape;
    iql_term *const *with; /* per parameter */
} replace_ctx;

static void replace(iql_term **where, void *ctx) {
    replace_ctx *r = ctx;
    *where = r->with[param_of(r->shape, *where)];
}

/* q with every parameter replaced by with[its index]; the body and the argument lists it
 * changes are copies. */
static iql_rule replaced(il_arena *a, const iql_rule *q, const kg_shape *s, iql_term *const *with) {
    iql_rule r = *q;
    r.body = il_arena_memdup(a, q->body, q->nbody * sizeof *q->body);
    replace_ctx ctx = {.shape = s, .with = with};
    for (uint32_t i = 0; i < r.nbody; i++) {
        iql_literal *l = &r.body[i];
        if (l->kind != IQL_LIT_CMP && l->atom.nargs) /* `p()` may have no argument list */
            l->atom.args = il_arena_memdup(a, l->atom.args, l->atom.nargs * sizeof(iql_term *));
        each_param(l, replace, &ctx);
    }
    return r;
}

static bool other_taken(const kg_shape *s, int64_t v, const char *str, size_t len, bool is_int) {
    for (uint32_t i = 0; i < s->n; i++) {
        const iql_term *t = s->terms[i];
        if (is_int ? t->kind == IQL_T_INT && t->u.ival == v
                   : t->kind == IQL_T_STRING && t->u.str.len == len &&
                         memcmp(t->u.str.ptr, str, len) == 0)
            return true;
    }
    return false;
}

/* `$<i><kind>`, written out by hand: every query with parameters names them, and
 * snprintf was half of what finding a shape cost. */
static const char *param_name(il_arena *a, uint32_t i, char kind) {
    char digits[10], *name = il_arena_alloc(a, 2 + sizeof digits + 1);
    uint32_t n = 0;
    do digits[n++] = (char)('0' + i % 10);
    while ((i /= 10));
    size_t len = 0;
    name[len++] = '$';
    while (n) name[len++] = digits[--n];
    name[len++] = kind;
    name[len] = '\0';
    return name;
}

bool kg_shape_of(const iql_rule *q, il_arena *a, kg_shape *out) {
    memset(out, 0, sizeof *out);
    collect_ctx cc = {.a = a, .out = out};
    iql_rule scan = *q; /* each_param only reads through it here */
    for (uint32_t i = 0; i < scan.nbody; i++) each_param(&scan.body[i], collect, &cc);
    if (!out->n || cc.too_many) return false;
    iql_term **names = il_arena_alloc(a, out->n * sizeof *names);
    out->values = il_arena_alloc(a, out->n * sizeof *out->values);
    for (uint32_t i = 0; i < out->n; i++) {
        names[i] = il_arena_calloc(a, sizeof *names[i]);
        names[i]->kind = IQL_T_VAR;
        names[i]->u.var = param_name(a, i, out->terms[i]->kind == IQL_T_INT ? 'i' : 's');
        out->values[i] = plan_const_value(out->terms[i]);
    }
    out->key_rule = replaced(a, q, out, names);
    return true;
}

void kg_shape_others(const iql_rule *q, il_arena *a, kg_shape *s) {
    iql_term **others = il_arena_alloc(a, s->n * sizeof *others);
    s->others = il_arena_alloc(a, s->n * sizeof *s->others);
    /* far from everyday values, none a parameter; integers within 48 bits, which take no
       place in the intern table (value/value.h) */
    int64_t next_int = (INT64_C(1) << 47) - 977;
    uint32_t next_str = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        const iql_term *t = s->terms[i];
        iql_term *o = il_arena_calloc(a, sizeof *o);
        o->kind = t->kind;
        if (t->kind == IQL_T_INT) {
            while (other_taken(s, next_int, NULL, 0, true)) next_int--;
            o->u.ival = next_int--;
        } else {
            char text[40];
            int len = snprintf(text, sizeof text, "\x01param %u\x01", next_str++);
            while (other_taken(s, 0, text, (size_t)len, false))
                len = snprintf(text, sizeof text, "\x01param %u\x01", next_str++);
            o->u.str.ptr = il_arena_strdup(a, text);
            o->u.str.len = (size_t)len;
        }
        others[i] = o;
        s->others[i] = plan_const_value(o);
    }
    s->other_rule = replaced(a, q, s, others);
}
