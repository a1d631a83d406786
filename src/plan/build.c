/* Program building and the demand transformation (see build.h).
 *
 * Every derived relation is instantiated per adornment: `reach^bf` holds the part of
 * `reach` that some consumer asks for with the first argument bound. A demand relation
 * `m_reach^bf` holds the bound values asked for; it is seeded by constants of the query
 * and by the bindings that flow sideways through the bodies (sideways information
 * passing: the body is walked most-bound-atom first, and each derived atom gets the
 * bindings of everything before it). An instance may hold more tuples than asked for
 * (a head position computed by an expression cannot be restricted); every consumer
 * filters by its own bound values, so supersets stay correct.
 *
 * Aggregating relations and negated atoms always use the unrestricted instance: a
 * group or an absence must be judged over everything.
 *
 * When the program computes a relation's unrestricted instance anyway (`?reach(X, Y)`
 * over `reach(X, Z) <- edge(X, Y), reach(Y, Z)` asks for reach^ff, whose body then asks
 * for reach^bf), every call to that relation reads the unrestricted instance instead: it
 * holds every answer of any binding, and a restricted copy would only compute part of it
 * again, through a demand relation that may well reach every value. Which relations
 * these are is known only once the program is built (an unrestricted call can come from
 * anywhere: a negation, an aggregate, a mutually recursive relation), so plan_build
 * builds again with those relations read whole, until no new one turns up. */
#include "plan/build.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/meter.h"
#include "base/strmap.h"
#include "exec/expr.h"
#include "iql/vars.h"
#include "plan/clause.h"

/* A program predicate's origin, for deduplicating instances. */
typedef enum pred_role { ROLE_BASE, ROLE_DERIVED, ROLE_MAGIC } pred_role;

typedef struct pred_key {
    const char *rel;
    uint64_t mask;
    pred_role role;
} pred_key;

typedef struct rule_group {
    const char *rel;
    uint32_t *rules; /* indexes into src->rules, program order */
    uint32_t n;
    uint32_t arity; /* effective head arity of the first clause */
    bool is_agg;    /* some clause aggregates */
} rule_group;

typedef struct builder {
    plan_program *p;
    const plan_source *src;
    il_arena *a;
    IL_VEC(pred_key) keys; /* parallel to p->preds */
    IL_VEC(rule_group) groups;
    il_strmap group_of;    /* head relation -> index in groups + 1 */
    IL_VEC(bclause) out;   /* final clauses */
    IL_VEC(uint32_t) work; /* derived instances still to expand */
    bclause *norm;         /* normalised source rules, by rule index (lazily) */
    bool demand;           /* apply the demand transformation */
    bool *whole;           /* by group: every call reads the unrestricted instance */
    uint32_t order;        /* source rule of the clauses being emitted */
    bool *normed;
} builder;

static uint32_t popcount64(uint64_t m) {
    return (uint32_t)__builtin_popcountll(m);
}

int32_t bvars_find(const bvars *v, const char *name) {
    for (uint32_t i = 0; i < v->n; i++)
        if (strcmp(v->names[i], name) == 0) return (int32_t)i;
    return -1;
}

static uint32_t bvars_add(il_arena *a, bvars *v, const char *name) {
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 8;
        const char **n = il_arena_alloc(a, cap * sizeof *n);
        if (v->n) memcpy(n, v->names, v->n * sizeof *n);
        v->names = n;
        v->cap = cap;
    }
    v->names[v->n] = name;
    return v->n++;
}

static uint32_t bvars_get(il_arena *a, bvars *v, const char *name) {
    int32_t i = bvars_find(v, name);
    return i >= 0 ? (uint32_t)i : bvars_add(a, v, name);
}

/* ---- constants ---- */

val_t plan_const_value(const iql_term *t) {
    switch (t->kind) {
    case IQL_T_INT:
        return val_int(t->u.ival);
    case IQL_T_FLOAT:
        return val_float(t->u.fval);
    case IQL_T_STRING:
        return val_str(t->u.str.ptr, t->u.str.len);
    case IQL_T_BOOL:
        return val_bool(t->u.bval);
    case IQL_T_VECTOR: {
        float tmp[64] = {0};
        float *f = t->u.vec.n <= 64 ? tmp : malloc(t->u.vec.n * sizeof *f);
        for (uint32_t i = 0; i < t->u.vec.n; i++) f[i] = (float)t->u.vec.elems[i];
        val_t v = val_vec_f32(f, t->u.vec.n);
        if (f != tmp) free(f);
        return v;
    }
    default:
        return VAL_NULL;
    }
}

bool plan_term_is_const(const iql_term *t) {
    switch (t->kind) {
    case IQL_T_INT:
    case IQL_T_FLOAT:
    case IQL_T_STRING:
    case IQL_T_BOOL:
    case IQL_T_VECTOR:
        return true;
    default:
        return false;
    }
}

/* ---- rule groups ---- */

static uint32_t head_effective_arity(const iql_atom *h, bool *is_agg) {
    bool agg = false;
    for (uint32_t i = 0; i < h->nargs; i++)
        if (h->args[i]->kind == IQL_T_AGG) agg = true;
    uint32_t n = 0;
    for (uint32_t i = 0; i < h->nargs; i++) {
        const iql_term *t = h->args[i];
        if (t->kind == IQL_T_PLACEHOLDER && !agg) continue;
        if (t->kind == IQL_T_AGG) {
            iql_agg_kind k = t->u.agg.kind;
            bool ranking =
                k == IQL_AGG_TOP_K || k == IQL_AGG_TOP_K_THRESHOLD || k == IQL_AGG_WITHIN_RADIUS;
            n += ranking ? t->u.agg.nspecs : 1;
        } else {
            n++;
        }
    }
    if (is_agg) *is_agg = agg;
    return n;
}

static rule_group *find_group(builder *b, const char *rel) {
    uintptr_t i = (uintptr_t)il_strmap_get(&b->group_of, rel);
    return i ? &b->groups.v[i - 1] : NULL;
}

static void build_groups(builder *b) {
    const plan_source *s = b->src;
    uint32_t *counts = il_arena_calloc(b->a, (s->nrules + 1) * sizeof *counts);
    uint32_t *gid = il_arena_alloc(b->a, (s->nrules + 1) * sizeof *gid);
    for (uint32_t i = 0; i < s->nrules; i++) {
        const char *rel = s->rules[i]->head.rel;
        rule_group *g = find_group(b, rel);
        if (!g) {
            rule_group ng = {.rel = rel};
            bool agg;
            ng.arity = head_effective_arity(&s->rules[i]->head, &agg);
            il_vec_push(b->groups, ng);
            il_strmap_put(&b->group_of, rel, (void *)(uintptr_t)b->groups.n);
            g = &b->groups.v[b->groups.n - 1];
        }
        gid[i] = (uint32_t)(g - b->groups.v);
        counts[gid[i]]++;
    }
    for (uint32_t gi = 0; gi < b->groups.n; gi++) {
        b->groups.v[gi].rules = il_arena_alloc(b->a, counts[gi] * sizeof(uint32_t) + 1);
    }
    for (uint32_t i = 0; i < s->nrules; i++) {
        rule_group *g = &b->groups.v[gid[i]];
        g->rules[g->n++] = i;
        bool agg;
        head_effective_arity(&s->rules[i]->head, &agg);
        if (agg) g->is_agg = true;
    }
}

/* ---- predicates ---- */

static const char *adorn_name(builder *b, const char *prefix, const char *rel, uint64_t mask,
                              uint32_t arity) {
    il_buf t;
    il_buf_init(&t);
    il_buf_puts(&t, prefix);
    il_buf_puts(&t, rel);
    if (mask) {
        il_buf_putc(&t, '^');
        for (uint32_t i = 0; i < arity && i < 64; i++) il_buf_putc(&t, (mask >> i) & 1 ? 'b' : 'f');
    }
    const char *s = il_arena_strdup(b->a, il_buf_str(&t));
    il_buf_free(&t);
    return s;
}

static uint32_t get_pred(builder *b, const char *rel, uint64_t mask, pred_role role,
                         uint32_t arity) {
    for (uint32_t i = 0; i < b->keys.n; i++) {
        pred_key *k = &b->keys.v[i];
        if (k->mask == mask && k->role == role && strcmp(k->rel, rel) == 0) return i;
    }
    plan_pred pp;
    memset(&pp, 0, sizeof pp);
    pp.arity = arity;
    switch (role) {
    case ROLE_BASE:
        pp.kind = PP_BASE;
        pp.name = rel;
        pp.stored = b->src->stored(b->src->ctx, rel);
        if (pp.stored && rel_arity(pp.stored) != arity) pp.arity = rel_arity(pp.stored);
        break;
    case ROLE_DERIVED:
        pp.kind = PP_DERIVED;
        pp.name = adorn_name(b, "", rel, mask, arity);
        break;
    case ROLE_MAGIC:
        pp.kind = PP_DERIVED;
        pp.name = adorn_name(b, "m_", rel, mask, arity);
        pp.arity = popcount64(mask);
        break;
    }
    pred_key key = {rel, mask, role};
    il_vec_push(b->keys, key);
    il_vec_push(b->p->preds, pp);
    uint32_t id = b->p->preds.n - 1;
    if (role == ROLE_DERIVED) il_vec_push(b->work, id);
    return id;
}

/* ---- normalisation of a source rule ---- */

static bterm atom_term(builder *b, bclause *c, const iql_atom *at, uint32_t i, blit **extra,
                       uint32_t *nextra) {
    const iql_term *t = at->args[i];
    bterm r;
    memset(&r, 0, sizeof r);
    switch (t->kind) {
    case IQL_T_VAR:
        r.kind = BT_VAR;
        r.var = bvars_get(b->a, c->vars, t->u.var);
        break;
    case IQL_T_PLACEHOLDER: {
        char name[256];
        snprintf(name, sizeof name, "_ph_%s_%u", at->rel, i);
        r.kind = BT_VAR;
        r.var = bvars_add(b->a, c->vars, il_arena_strdup(b->a, name));
        break;
    }
    case IQL_T_ARITH:
    case IQL_T_CALL: {
        /* A computed argument matches the column whose value equals it. */
        char name[64];
        snprintf(name, sizeof name, "_t%u_%u", c->vars->n, i);
        r.kind = BT_VAR;
        r.var = bvars_add(b->a, c->vars, il_arena_strdup(b->a, name));
        if (extra) {
            blit *l = &(*extra)[(*nextra)++];
            memset(l, 0, sizeof *l);
            l->kind = IQL_LIT_CMP;
            l->op = IQL_CMP_EQ;
            iql_term *v = il_arena_calloc(b->a, sizeof *v);
            v->kind = IQL_T_VAR;
            v->u.var = c->vars->names[r.var];
            l->lhs = v;
            l->rhs = t;
        }
        break;
    }
    case IQL_T_AGG:
        r.kind = BT_WILD;
        break;
    default:
        r.kind = BT_CONST;
        r.c = plan_const_value(t);
        r.bind = -1;
        r.ast = t;
        break;
    }
    return r;
}

/* `V = c` with V an argument of a positive atom: the atom matches the constant through
 * its index (numbers numerically, like the comparison) and V takes the stored value. */
static void fold_const_equalities(builder *b, bclause *c) {
    (void)b;
    for (uint32_t i = 0; i < c->nlits; i++) {
        blit *l = &c->lits[i];
        if (l->kind != IQL_LIT_CMP || l->op != IQL_CMP_EQ) continue;
        const iql_term *v = l->lhs, *k = l->rhs;
        if (v->kind != IQL_T_VAR) {
            v = l->rhs;
            k = l->lhs;
        }
        if (v->kind != IQL_T_VAR || !plan_term_is_const(k) || k->kind == IQL_T_VECTOR) continue;
        int32_t var = bvars_find(c->vars, v->u.var);
        if (var < 0) continue;
        bool folded = false;
        for (uint32_t j = 0; j < c->nlits && !folded; j++) {
            blit *a = &c->lits[j];
            if (a->kind != IQL_LIT_ATOM) continue;
            for (uint32_t m = 0; m < a->nargs && !folded; m++) {
                if (a->args[m].kind != BT_VAR || a->args[m].var != (uint32_t)var) continue;
                a->args[m].kind = BT_CONST;
                a->args[m].c = plan_const_value(k);
                a->args[m].bind = var;
                a->args[m].ast = k;
                folded = true;
            }
        }
        if (!folded) continue;
        memmove(&c->lits[i], &c->lits[i + 1], (c->nlits - i - 1) * sizeof *l);
        c->nlits--;
        i--;
    }
}

/* Gives every variable of a term a slot, so comparisons and heads can name it. */
typedef struct register_ctx {
    builder *b;
    bvars *v;
} register_ctx;

static bool register_var(const char *var, void *ctx) {
    register_ctx *r = ctx;
    bvars_get(r->b->a, r->v, var);
    return true;
}

static void register_vars(builder *b, bvars *v, const iql_term *t) {
    register_ctx r = {b, v};
    iql_term_each_var(t, true, register_var, &r);
}

static void normalise(builder *b, const iql_rule *r, bclause *c) {
    memset(c, 0, sizeof *c);
    c->vars = il_arena_calloc(b->a, sizeof *c->vars);
    c->head_ast = &r->head;
    /* Body: atoms may add one computed-argument equality per argument. */
    uint32_t cap = r->nbody;
    for (uint32_t i = 0; i < r->nbody; i++)
        if (r->body[i].kind != IQL_LIT_CMP) cap += r->body[i].atom.nargs;
    c->lits = il_arena_alloc(b->a, (cap + 1) * sizeof *c->lits);
    blit *extra = il_arena_alloc(b->a, (cap + 1) * sizeof *extra);
    uint32_t nextra = 0;
    for (uint32_t i = 0; i < r->nbody; i++) {
        const iql_literal *l = &r->body[i];
        blit *o = &c->lits[c->nlits++];
        memset(o, 0, sizeof *o);
        o->kind = l->kind;
        if (l->kind == IQL_LIT_CMP) {
            o->op = l->op;
            o->lhs = l->lhs;
            o->rhs = l->rhs;
            continue;
        }
        o->rel = l->atom.rel;
        o->nargs = l->atom.nargs;
        o->args = il_arena_alloc(b->a, (o->nargs + 1) * sizeof *o->args);
        for (uint32_t j = 0; j < o->nargs; j++) {
            if (l->kind == IQL_LIT_NEG && l->atom.args[j]->kind == IQL_T_PLACEHOLDER) {
                o->args[j].kind = BT_WILD;
                continue;
            }
            o->args[j] =
                atom_term(b, c, &l->atom, j, l->kind == IQL_LIT_ATOM ? &extra : NULL, &nextra);
        }
    }
    for (uint32_t i = 0; i < nextra; i++) c->lits[c->nlits++] = extra[i];
    for (uint32_t i = 0; i < c->nlits; i++) {
        if (c->lits[i].kind != IQL_LIT_CMP) continue;
        register_vars(b, c->vars, c->lits[i].lhs);
        register_vars(b, c->vars, c->lits[i].rhs);
    }
    fold_const_equalities(b, c);

    /* Head. */
    const iql_atom *h = &r->head;
    for (uint32_t i = 0; i < h->nargs; i++)
        if (h->args[i]->kind == IQL_T_AGG) c->is_agg = true;
    c->head = il_arena_alloc(b->a, (h->nargs + 1) * sizeof *c->head);
    for (uint32_t i = 0; i < h->nargs; i++) {
        const iql_term *t = h->args[i];
        bterm *o = &c->head[c->nhead];
        memset(o, 0, sizeof *o);
        o->bind = -1;
        if (c->is_agg) {
            if (t->kind == IQL_T_VAR) {
                o->kind = BT_VAR;
                o->var = bvars_get(b->a, c->vars, t->u.var);
            } else if (t->kind == IQL_T_AGG) {
                o->kind = BT_EXPR;
                o->ast = t;
            } else if (!c->error) {
                switch (t->kind) {
                case IQL_T_PLACEHOLDER:
                    c->error = "Placeholders in aggregation head not supported";
                    break;
                case IQL_T_ARITH:
                    c->error = "Arithmetic expressions in aggregation head not yet supported";
                    break;
                case IQL_T_CALL:
                    c->error = "Function calls in aggregation head not yet supported";
                    break;
                default:
                    c->error = "Constants in aggregation head not supported";
                    break;
                }
            }
            c->nhead++;
            continue;
        }
        switch (t->kind) {
        case IQL_T_PLACEHOLDER:
            continue; /* dropped: reduces the output arity */
        case IQL_T_VAR:
            o->kind = BT_VAR;
            o->var = bvars_get(b->a, c->vars, t->u.var);
            break;
        case IQL_T_ARITH:
            o->kind = BT_EXPR;
            o->ast = t;
            break;
        case IQL_T_CALL:
            o->kind = BT_EXPR;
            o->ast = t;
            if (!c->error)
                c->error = "Function calls in rule head not yet fully supported. Use Compute node "
                           "directly.";
            break;
        case IQL_T_VECTOR:
            o->kind = BT_CONST;
            o->c = plan_const_value(t);
            o->ast = t;
            if (!c->error) c->error = "Vector literals in rule head not yet supported.";
            break;
        default:
            o->kind = BT_CONST;
            o->c = plan_const_value(t);
            o->ast = t;
            break;
        }
        c->nhead++;
    }
}

static const bclause *normalised(builder *b, uint32_t rule) {
    if (!b->normed[rule]) {
        normalise(b, b->src->rules[rule], &b->norm[rule]);
        b->normed[rule] = true;
    }
    return &b->norm[rule];
}

/* ---- adornment ---- */

typedef struct bound_ctx {
    const bvars *v;
    const bool *bound;
} bound_ctx;

static bool var_is_bound(const char *var, void *ctx) {
    const bound_ctx *b = ctx;
    int32_t s = bvars_find(b->v, var);
    return s >= 0 && b->bound[s];
}

static bool term_bound(const iql_term *t, const bvars *v, bool *bound) {
    bound_ctx b = {v, bound};
    return iql_term_each_var(t, false, var_is_bound, &b);
}

bool plan_cmp_ready(const blit *l, const bvars *v, bool *bound) {
    bool lb = term_bound(l->lhs, v, bound), rb = term_bound(l->rhs, v, bound);
    if (lb && rb) return true;
    if (l->op != IQL_CMP_EQ) return false;
    if (!lb && l->lhs->kind == IQL_T_VAR && rb) {
        int32_t s = bvars_find(v, l->lhs->u.var);
        if (s >= 0) bound[s] = true;
        return s >= 0;
    }
    if (!rb && l->rhs->kind == IQL_T_VAR && lb) {
        int32_t s = bvars_find(v, l->rhs->u.var);
        if (s >= 0) bound[s] = true;
        return s >= 0;
    }
    return false;
}

static bool is_var(const iql_term *t, const char *name) {
    return t->kind == IQL_T_VAR && strcmp(t->u.var, name) == 0;
}

bool plan_cmp_waits(const blit *lits, uint32_t i, const bool *done, const char *var) {
    for (uint32_t j = 0; j < i; j++) {
        const blit *l = &lits[j];
        if (done[j] || l->kind != IQL_LIT_CMP || l->op != IQL_CMP_EQ) continue;
        const iql_term *other = is_var(l->lhs, var) ? l->rhs : is_var(l->rhs, var) ? l->lhs : NULL;
        if (other && !plan_term_is_const(other) && !is_var(other, var)) return true;
    }
    return false;
}

static uint64_t atom_bound_mask(const blit *l, const bool *bound) {
    uint64_t m = 0;
    for (uint32_t i = 0; i < l->nargs && i < 64; i++) {
        const bterm *t = &l->args[i];
        if (t->kind == BT_CONST || (t->kind == BT_VAR && bound[t->var])) m |= 1ull << i;
    }
    return m;
}

static uint32_t group_arity(builder *b, const char *rel, uint32_t fallback) {
    rule_group *g = find_group(b, rel);
    return g ? g->arity : fallback;
}

/* The predicate a positive or negated atom reads, given the bound positions. */
static uint32_t resolve_atom(builder *b, const blit *l, uint64_t mask) {
    rule_group *g = find_group(b, l->rel);
    if (!g) return get_pred(b, l->rel, 0, ROLE_BASE, l->nargs);
    if (!b->demand || g->is_agg || l->kind == IQL_LIT_NEG || l->nargs != g->arity ||
        b->whole[g - b->groups.v])
        mask = 0;
    return get_pred(b, l->rel, mask, ROLE_DERIVED, g->arity);
}

static bool is_session_rule(const builder *b, uint32_t order) {
    return order < b->src->nrules && order + b->src->nsession >= b->src->nrules;
}

static bclause *emit(builder *b) {
    bclause c;
    memset(&c, 0, sizeof c);
    c.order = b->order;
    c.session = is_session_rule(b, b->order);
    il_vec_push(b->out, c);
    return &b->out.v[b->out.n - 1];
}

/* The magic atom restricting an instance: m_rel^mask(args at bound positions). */
static blit magic_atom(builder *b, const char *rel, uint64_t mask, const bterm *args,
                       uint32_t nargs, uint32_t arity) {
    blit m;
    memset(&m, 0, sizeof m);
    m.kind = IQL_LIT_ATOM;
    m.rel = rel;
    m.magic = true;
    m.pred = get_pred(b, rel, mask, ROLE_MAGIC, arity);
    m.args = il_arena_alloc(b->a, (popcount64(mask) + 1) * sizeof *m.args);
    for (uint32_t i = 0; i < nargs && i < 64; i++) {
        if (!((mask >> i) & 1)) continue;
        bterm t = args[i];
        if (t.kind == BT_EXPR) t.kind = BT_WILD;
        t.bind = -1;
        m.args[m.nargs++] = t;
    }
    return m;
}

static bool same_lit(const blit *a, const blit *b) {
    if (a->pred != b->pred || a->nargs != b->nargs) return false;
    for (uint32_t i = 0; i < a->nargs; i++) {
        if (a->args[i].kind != b->args[i].kind) return false;
        if (a->args[i].kind == BT_VAR && a->args[i].var != b->args[i].var) return false;
        if (a->args[i].kind == BT_CONST && a->args[i].c != b->args[i].c) return false;
    }
    return true;
}

/* True when a body atom over the head's own instance has the head's variables at every
 * bound position: its tuples already satisfy the demand, so the demand atom is redundant
 * (reach^bf(X, Z) <- reach^bf(X, Y), edge(Y, Z) needs no m_reach^bf(X)). */
static bool carries_binding(const bclause *src, const blit *lits, uint32_t head_pred,
                            uint64_t mask) {
    for (uint32_t i = 0; i < src->nlits; i++) {
        const blit *l = &lits[i];
        if (l->kind != IQL_LIT_ATOM || l->pred != head_pred || l->nargs != src->nhead) continue;
        bool same = true;
        for (uint32_t j = 0; j < l->nargs && j < 64 && same; j++) {
            if (!((mask >> j) & 1)) continue;
            const bterm *h = &src->head[j], *a = &l->args[j];
            same = h->kind == BT_VAR && a->kind == BT_VAR && h->var == a->var;
        }
        if (same) return true;
    }
    return false;
}

/* Emits the demand clause m(args) <- prefix. A numeric constant among the demanded
 * values is demanded in both its forms (2 and 2.0), because demanded values then join
 * strictly while the constant itself matched numerically. */
static void emit_magic(builder *b, const blit *ml, bvars *vars, const blit *prefix,
                       uint32_t nprefix) {
    uint32_t pos[3], nalt = 0;
    val_t alt[3];
    for (uint32_t j = 0; j < ml->nargs && nalt < 3; j++)
        if (ml->args[j].kind == BT_CONST && exec_numeric_alternative(ml->args[j].c, &alt[nalt]))
            pos[nalt++] = j;
    for (uint32_t combo = 0; combo < (1u << nalt); combo++) {
        bterm *head = il_arena_memdup(b->a, ml->args, (ml->nargs + 1) * sizeof *head);
        for (uint32_t k = 0; k < nalt; k++)
            if ((combo >> k) & 1) head[pos[k]].c = alt[k];
        bclause *mc = emit(b);
        mc->head_pred = ml->pred;
        mc->head = head;
        mc->nhead = ml->nargs;
        mc->vars = vars;
        mc->lits = il_arena_memdup(b->a, prefix, nprefix * sizeof *prefix);
        mc->nlits = nprefix;
    }
}

/* hnsw_nearest(...) (compile.c): it runs once its query vector (argument 2) is bound and
 * binds only its key and distance variables, so demand passes through it like through a
 * comparison, never from its constant arguments. */
static bool is_hnsw_lit(const blit *l) {
    return l->kind == IQL_LIT_ATOM && strcmp(l->rel, "hnsw_nearest") == 0 && l->nargs >= 5;
}

static bool hnsw_lit_ready(const blit *l, const bool *bound) {
    const bterm *q = &l->args[1];
    return q->kind == BT_CONST || (q->kind == BT_VAR && bound[q->var]);
}

/* Whether lits[i], which just marked a variable bound (before -> bound), must leave that
 * to an earlier `=` (plan_cmp_waits). */
static bool binds_out_of_order(const blit *lits, uint32_t i, const bool *done, const bvars *v,
                               const bool *before, const bool *bound) {
    for (uint32_t s = 0; s < v->n; s++)
        if (bound[s] && !before[s]) return plan_cmp_waits(lits, i, done, v->names[s]);
    return false;
}

static void adorn_clause(builder *b, const bclause *src, uint32_t head_pred, const char *head_rel,
                         uint64_t mask) {
    il_arena *a = b->a;
    uint32_t nv = src->vars->n;
    bool *bound = il_arena_calloc(a, nv + 1);
    bool *done = il_arena_calloc(a, src->nlits + 1);
    blit *lits = il_arena_alloc(a, (src->nlits + 1) * sizeof *lits);
    memcpy(lits, src->lits, src->nlits * sizeof *lits);
    blit *prefix = il_arena_alloc(a, (src->nlits + 2) * sizeof *prefix);
    uint32_t nprefix = 0;
    bool has_magic = false;
    blit mhead;
    if (mask) {
        /* A head variable that no positive atom binds is computed (`Y = X + 1`): demand
           may not supply its value, or the row would carry the asked-for value instead of
           the computed one (3.0 for 3). It only filters, through the consumer. */
        bool *in_atom = il_arena_calloc(a, nv + 1);
        for (uint32_t i = 0; i < src->nlits; i++) {
            const blit *l = &src->lits[i];
            if (l->kind != IQL_LIT_ATOM) continue;
            for (uint32_t j = 0; j < l->nargs; j++) {
                if (l->args[j].kind == BT_VAR) in_atom[l->args[j].var] = true;
                if (l->args[j].kind == BT_CONST && l->args[j].bind >= 0)
                    in_atom[l->args[j].bind] = true;
            }
        }
        bterm *mh = il_arena_memdup(a, src->head, (src->nhead + 1) * sizeof *mh);
        for (uint32_t i = 0; i < src->nhead && i < 64; i++)
            if (((mask >> i) & 1) && mh[i].kind == BT_VAR && !in_atom[mh[i].var])
                mh[i].kind = BT_WILD;
        uint32_t arity = group_arity(b, head_rel, src->nhead);
        mhead = magic_atom(b, head_rel, mask, mh, src->nhead, arity);
        prefix[nprefix++] = mhead;
        has_magic = true;
        for (uint32_t i = 0; i < src->nhead && i < 64; i++)
            if (((mask >> i) & 1) && mh[i].kind == BT_VAR) bound[mh[i].var] = true;
    }
    /* in_order: `=` literals bind in the order of the text (plan_cmp_waits); dropped
       only when that leaves a comparison that can never run, as the clause was then
       written in an order no evaluation follows */
    bool in_order = true;
    for (;;) {
        /* comparisons and index searches that can run now */
        for (uint32_t i = 0; i < src->nlits; i++) {
            if (done[i]) continue;
            if (is_hnsw_lit(&lits[i]) && hnsw_lit_ready(&lits[i], bound)) {
                lits[i].pred = resolve_atom(b, &lits[i], 0);
                done[i] = true;
                for (uint32_t j = 3; j < 5; j++) {
                    const bterm *t = &lits[i].args[j];
                    if (t->kind == BT_VAR) bound[t->var] = true;
                    if (t->kind == BT_CONST && t->bind >= 0) bound[t->bind] = true;
                }
                prefix[nprefix++] = lits[i];
                i = (uint32_t)-1; /* what it bound may make others ready */
                continue;
            }
            if (lits[i].kind != IQL_LIT_CMP) continue;
            bool before[nv + 1];
            memcpy(before, bound, nv + 1);
            if (!plan_cmp_ready(&lits[i], src->vars, bound)) continue;
            if (in_order && binds_out_of_order(lits, i, done, src->vars, before, bound)) {
                memcpy(bound, before, nv + 1);
                continue;
            }
            done[i] = true;
            prefix[nprefix++] = lits[i];
        }
        int32_t best = -1;
        uint32_t best_score = 0;
        for (uint32_t i = 0; i < src->nlits; i++) {
            if (done[i] || lits[i].kind != IQL_LIT_ATOM || is_hnsw_lit(&lits[i])) continue;
            uint32_t score = popcount64(atom_bound_mask(&lits[i], bound)) + 1;
            if (best < 0 || score > best_score) {
                best = (int32_t)i;
                best_score = score;
            }
        }
        if (best < 0) {
            bool stuck = false;
            for (uint32_t i = 0; i < src->nlits && !stuck; i++)
                stuck = !done[i] && lits[i].kind == IQL_LIT_CMP;
            if (!in_order || !stuck) break;
            in_order = false;
            continue;
        }
        blit *l = &lits[best];
        uint64_t m = atom_bound_mask(l, bound);
        l->pred = resolve_atom(b, l, m);
        const pred_key *k = &b->keys.v[l->pred];
        if (k->role == ROLE_DERIVED && k->mask) {
            /* demand for l: m_l(bound args) <- everything before it */
            uint32_t arity = b->p->preds.v[l->pred].arity;
            blit ml = magic_atom(b, l->rel, k->mask, l->args, l->nargs, arity);
            bool trivial = nprefix == 1 && same_lit(&prefix[0], &ml);
            if (!trivial) emit_magic(b, &ml, src->vars, prefix, nprefix);
        }
        done[best] = true;
        for (uint32_t j = 0; j < l->nargs; j++) {
            if (l->args[j].kind == BT_VAR) bound[l->args[j].var] = true;
            if (l->args[j].kind == BT_CONST && l->args[j].bind >= 0) bound[l->args[j].bind] = true;
        }
        prefix[nprefix++] = *l;
    }
    for (uint32_t i = 0; i < src->nlits; i++)
        if (lits[i].kind == IQL_LIT_NEG || (!done[i] && is_hnsw_lit(&lits[i])))
            lits[i].pred = resolve_atom(b, &lits[i], 0);

    bclause *c = emit(b);
    *c = *src;
    c->order = b->order;
    c->session = is_session_rule(b, b->order);
    c->head_pred = head_pred;
    c->nlits = 0;
    c->lits = il_arena_alloc(a, (src->nlits + 2) * sizeof *c->lits);
    if (has_magic && !carries_binding(src, lits, head_pred, mask)) c->lits[c->nlits++] = mhead;
    for (uint32_t i = 0; i < src->nlits; i++) c->lits[c->nlits++] = lits[i];
}

/* The stored facts of a derived relation take part as one more clause (also when the
 * caller holds facts of it apart, which join the stored ones as a delta). */
static void stored_clause(builder *b, uint32_t inst, const char *rel, uint64_t mask) {
    const rel_t *st = b->src->stored(b->src->ctx, rel);
    uint32_t arity = b->p->preds.v[inst].arity;
    bool apart = b->src->facts_apart && b->src->facts_apart(b->src->ctx, rel, arity);
    if ((!st || rel_count(st) == 0) && !apart) return;
    if (st && rel_arity(st) != arity) return;
    bvars *v = il_arena_calloc(b->a, sizeof *v);
    bterm *args = il_arena_alloc(b->a, (arity + 1) * sizeof *args);
    for (uint32_t i = 0; i < arity; i++) {
        char name[32];
        snprintf(name, sizeof name, "V%u", i);
        args[i].kind = BT_VAR;
        args[i].var = bvars_add(b->a, v, il_arena_strdup(b->a, name));
    }
    bclause *c = emit(b);
    c->session = false; /* stored facts, whatever rule was expanded last */
    c->head_pred = inst;
    c->head = args;
    c->nhead = arity;
    c->vars = v;
    c->lits = il_arena_alloc(b->a, 2 * sizeof *c->lits);
    if (mask) c->lits[c->nlits++] = magic_atom(b, rel, mask, args, arity, arity);
    blit *l = &c->lits[c->nlits++];
    memset(l, 0, sizeof *l);
    l->kind = IQL_LIT_ATOM;
    l->rel = rel;
    l->args = args;
    l->nargs = arity;
    l->pred = get_pred(b, rel, 0, ROLE_BASE, arity);
}

static void expand_instance(builder *b, uint32_t inst) {
    pred_key k = b->keys.v[inst];
    rule_group *g = find_group(b, k.rel);
    if (!g) return;
    for (uint32_t i = 0; i < g->n; i++) {
        const bclause *src = normalised(b, g->rules[i]);
        b->order = g->rules[i];
        adorn_clause(b, src, inst, k.rel, k.mask);
    }
    stored_clause(b, inst, k.rel, k.mask);
}

/* Marks in whole[] (by group) the relations that have their unrestricted instance and a
 * restricted one too; true when one was not marked yet. */
static bool mark_whole(builder *b, bool *whole) {
    bool grew = false;
    for (uint32_t i = 0; i < b->keys.n; i++) {
        const pred_key *k = &b->keys.v[i];
        if (k->role != ROLE_DERIVED || k->mask == 0) continue;
        rule_group *g = find_group(b, k->rel);
        uint32_t gi = (uint32_t)(g - b->groups.v);
        if (whole[gi]) continue;
        for (uint32_t j = 0; j < b->keys.n && !whole[gi]; j++) {
            const pred_key *f = &b->keys.v[j];
            if (f->role == ROLE_DERIVED && f->mask == 0 && strcmp(f->rel, k->rel) == 0)
                whole[gi] = grew = true;
        }
    }
    return grew;
}

/* Builds the program; with demand, whole[] (by rule group, as build_groups numbers them:
 * at least nrules entries) names the relations read unrestricted, and *grew tells
 * whether this build found more of them (marked in whole[]). */
static bool build_program(plan_program *p, const plan_source *src, const iql_rule *query,
                          bool demand, bool *whole, bool *grew) {
    builder b;
    memset(&b, 0, sizeof b);
    b.demand = demand;
    b.whole = whole;
    b.p = p;
    b.src = src;
    p->src = src;
    b.a = &p->arena;
    b.norm = il_arena_calloc(b.a, (src->nrules + 1) * sizeof *b.norm);
    b.normed = il_arena_calloc(b.a, src->nrules + 1);
    build_groups(&b);

    bclause q;
    normalise(&b, query, &q);
    uint32_t qarity = q.nhead;
    uint32_t qpred = get_pred(&b, "__query__", 0, ROLE_DERIVED, qarity);
    b.work.n--; /* the query predicate is expanded here, not from the worklist */
    p->query_pred = qpred;
    b.order = src->nrules;
    adorn_clause(&b, &q, qpred, "__query__", 0);
    while (b.work.n) {
        uint32_t inst = b.work.v[--b.work.n];
        expand_instance(&b, inst);
    }
    *grew = demand && mark_whole(&b, whole);
    for (uint32_t i = 0; i < b.out.n; i++) {
        if (b.out.v[i].error && !p->error) {
            /* an error in a clause the query needs */
            p->error = b.out.v[i].error;
        }
    }
    if (!p->error && !*grew) plan_stratify(p, b.out.v, b.out.n);
    p->src = NULL;
    il_vec_free(b.keys);
    il_vec_free(b.groups);
    il_strmap_free(&b.group_of);
    il_vec_free(b.out);
    il_vec_free(b.work);
    return p->error == NULL;
}

bool plan_build(plan_program *p, const plan_source *src, const iql_rule *query) {
    bool *whole = il_mem_calloc(src->nrules + 1, sizeof *whole);
    bool grew, ok;
    /* each round marks at least one more relation, so there are at most nrules + 1 */
    while ((ok = build_program(p, src, query, true, whole, &grew)) && grew) {
        plan_program_free(p);
        plan_program_init(p);
    }
    if (ok && p->unstratified) {
        /* Two consumers at different strata shared a restricted instance and tied a
           negation or an aggregate into a cycle: evaluate without demand instead. */
        plan_program_free(p);
        plan_program_init(p);
        ok = build_program(p, src, query, false, whole, &grew);
    }
    il_mem_free(whole);
    return ok;
}

void plan_program_init(plan_program *p) {
    memset(p, 0, sizeof *p);
    il_arena_init(&p->arena);
}

void plan_program_reset(plan_program *p) {
    for (uint32_t i = 0; i < p->preds.n; i++) {
        plan_pred *pp = &p->preds.v[i];
        if (pp->full) rel_free(pp->full);
        if (pp->next) rel_free(pp->next);
        pp->full = pp->next = NULL;
        il_mvec_free(pp->delta);
        il_mvec_free(pp->added);
        tupleset_free(&pp->rows);
    }
    for (uint32_t i = 0; i < p->clauses.n; i++)
        for (uint32_t j = 0; j < p->clauses.v[i].nops; j++) {
            il_mem_free(p->clauses.v[i].seek_caches[j].e);
            p->clauses.v[i].seek_caches[j].e = NULL;
            p->clauses.v[i].seek_caches[j].seeks = 0;
        }
}

void plan_program_free(plan_program *p) {
    plan_program_reset(p);
    for (uint32_t i = 0; i < p->strata.n; i++) {
        free(p->strata.v[i].preds);
        free(p->strata.v[i].clauses);
    }
    il_vec_free(p->preds);
    il_vec_free(p->clauses);
    il_vec_free(p->strata);
    il_arena_destroy(&p->arena);
}
