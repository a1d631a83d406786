/* Clause compilation: choose a join order and turn a clause into plan operations.
 *
 * Order: the delta literal of a semi-naive variant first; then, repeatedly, every
 * comparison whose inputs are bound (an `=` with one unbound variable side binds it),
 * every negation whose variables are bound, and the positive atom with the most bound
 * arguments (demand relations and small relations first on ties). Each atom becomes an
 * index seek on its bound columns, so a relation gets the indexes its plans need. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "exec/builtin.h"
#include "exec/expr.h"
#include "iql/parser.h"
#include "iql/vars.h"
#include "plan/build.h"
#include "plan/clause.h"

typedef struct compiler {
    plan_program *p;
    il_arena *a;
    const bclause *c;
    const char *error;
} compiler;

static plan_expr *new_expr(compiler *k, plan_expr_kind kind) {
    plan_expr *e = il_arena_calloc(k->a, sizeof *e);
    e->kind = kind;
    return e;
}

static void set_error(compiler *k, const char *msg) {
    if (!k->error) k->error = il_arena_strdup(k->a, msg);
}

/* `Variable 'Y' not found in schema ["X", "_ph_data_1"]`: the schema is the variables
 * of the positive atoms in the order they appear. */
static void unknown_var_error(compiler *k, const char *name) {
    if (k->error) return;
    il_buf t;
    il_buf_init(&t);
    il_buf_printf(&t, "Variable '%s' not found in schema [", name);
    bool *seen = il_arena_calloc(k->a, k->c->vars->n + 1);
    bool first = true;
    for (uint32_t i = 0; i < k->c->nlits; i++) {
        const blit *l = &k->c->lits[i];
        if (l->kind != IQL_LIT_ATOM || l->magic) continue;
        for (uint32_t j = 0; j < l->nargs; j++) {
            if (l->args[j].kind != BT_VAR || seen[l->args[j].var]) continue;
            seen[l->args[j].var] = true;
            il_buf_printf(&t, "%s\"%s\"", first ? "" : ", ", k->c->vars->names[l->args[j].var]);
            first = false;
        }
    }
    il_buf_putc(&t, ']');
    set_error(k, il_buf_str(&t));
    il_buf_free(&t);
}

typedef struct unknown_ctx {
    compiler *k;
    const bool *bound;
} unknown_ctx;

/* Reports the first variable that is not bound; stops the walk there. */
static bool report_unknown(const char *var, void *ctx) {
    unknown_ctx *u = ctx;
    int32_t v = bvars_find(u->k->c->vars, var);
    if (v >= 0 && u->bound[v]) return true;
    unknown_var_error(u->k, var);
    return false;
}

static plan_expr *compile_expr(compiler *k, const iql_term *t) {
    switch (t->kind) {
    case IQL_T_VAR: {
        int32_t s = bvars_find(k->c->vars, t->u.var);
        if (s < 0) {
            unknown_var_error(k, t->u.var);
            plan_expr *e = new_expr(k, PX_CONST);
            e->c = VAL_NULL;
            return e;
        }
        plan_expr *e = new_expr(k, PX_SLOT);
        e->slot = (uint32_t)s;
        return e;
    }
    case IQL_T_ARITH: {
        plan_expr *e = new_expr(k, PX_ARITH);
        e->op = t->u.arith.op;
        e->l = compile_expr(k, t->u.arith.lhs);
        e->r = compile_expr(k, t->u.arith.rhs);
        return e;
    }
    case IQL_T_CALL: {
        plan_expr *e = new_expr(k, PX_CALL);
        e->fn = exec_builtin_find(t->u.call.name);
        const char *canon;
        uint32_t arity;
        char msg[256];
        if (iql_builtin_lookup(t->u.call.name, strlen(t->u.call.name), &canon, &arity) &&
            arity != t->u.call.nargs) {
            snprintf(msg, sizeof msg, "Function '%s' requires %u argument(s), but %u provided",
                     t->u.call.name, arity, t->u.call.nargs);
            set_error(k, msg);
        } else if (!e->fn) {
            snprintf(msg, sizeof msg, "Function '%s' is not available in this version",
                     t->u.call.name);
            set_error(k, msg);
        }
        e->nargs = t->u.call.nargs;
        e->args = il_arena_alloc(k->a, (e->nargs + 1) * sizeof *e->args);
        for (uint32_t i = 0; i < e->nargs; i++) e->args[i] = compile_expr(k, t->u.call.args[i]);
        return e;
    }
    case IQL_T_PLACEHOLDER:
    case IQL_T_AGG: {
        set_error(k, "Unsupported term in expression");
        plan_expr *e = new_expr(k, PX_CONST);
        e->c = VAL_NULL;
        return e;
    }
    default: {
        plan_expr *e = new_expr(k, PX_CONST);
        e->c = plan_const_value(t);
        return e;
    }
    }
}

static plan_expr *compile_bterm(compiler *k, const bterm *t) {
    switch (t->kind) {
    case BT_VAR: {
        plan_expr *e = new_expr(k, PX_SLOT);
        e->slot = t->var;
        return e;
    }
    case BT_CONST: {
        plan_expr *e = new_expr(k, PX_CONST);
        e->c = t->c;
        return e;
    }
    case BT_EXPR:
        return compile_expr(k, t->ast);
    case BT_WILD:
        break;
    }
    plan_expr *e = new_expr(k, PX_CONST);
    e->c = VAL_NULL;
    return e;
}

static iql_cmp_op swap_op(iql_cmp_op op) {
    switch (op) {
    case IQL_CMP_LT:
        return IQL_CMP_GT;
    case IQL_CMP_LE:
        return IQL_CMP_GE;
    case IQL_CMP_GT:
        return IQL_CMP_LT;
    case IQL_CMP_GE:
        return IQL_CMP_LE;
    default:
        return op;
    }
}

static bool const_const_result(val_t a, val_t b, iql_cmp_op op) {
    int c;
    val_type ta = val_type_of(a), tb = val_type_of(b);
    if (ta == VT_INT && tb == VT_INT) {
        int64_t x = val_get_int(a), y = val_get_int(b);
        c = x < y ? -1 : x > y;
    } else if (val_is_numeric(a) && val_is_numeric(b)) {
        double x = val_to_f64(a), y = val_to_f64(b);
        if (op == IQL_CMP_EQ || op == IQL_CMP_NE) {
            bool eq = x - y < 2.220446049250313e-16 && y - x < 2.220446049250313e-16;
            return op == IQL_CMP_EQ ? eq : !eq;
        }
        c = x < y ? -1 : x > y;
    } else if (ta == tb) {
        c = val_cmp(a, b);
    } else {
        return op == IQL_CMP_NE;
    }
    return exec_order_holds(op, c);
}

static void compile_filter(compiler *k, const blit *l, plan_op *op) {
    op->kind = POP_FILTER;
    const iql_term *lhs = l->lhs, *rhs = l->rhs;
    iql_cmp_op cmp = l->op;
    bool lc = plan_term_is_const(lhs), rc = plan_term_is_const(rhs);
    if (lc && rc) {
        op->mode = PCMP_CONST_CONST;
        op->result = const_const_result(plan_const_value(lhs), plan_const_value(rhs), cmp);
        return;
    }
    if (lc) { /* constant on the left: swap so the constant is on the right */
        const iql_term *t = lhs;
        lhs = rhs;
        rhs = t;
        cmp = swap_op(cmp);
        lc = false;
        rc = true;
    }
    op->cmp = cmp;
    bool larith = lhs->kind == IQL_T_ARITH, rarith = rhs->kind == IQL_T_ARITH;
    if (rc) {
        switch (rhs->kind) {
        case IQL_T_INT:
            op->mode = larith ? PCMP_INT_ARITH : PCMP_CONST_INT;
            break;
        case IQL_T_FLOAT:
            op->mode = PCMP_CONST_FLOAT;
            break;
        case IQL_T_STRING:
            op->mode = PCMP_CONST_STR;
            break;
        case IQL_T_BOOL:
            op->mode = PCMP_CONST_BOOL;
            break;
        default:
            op->mode = PCMP_VALUES;
            break;
        }
    } else if ((larith || rarith) && lhs->kind != IQL_T_CALL && rhs->kind != IQL_T_CALL) {
        op->mode = PCMP_INT_ARITH;
    } else {
        op->mode = PCMP_VALUES;
    }
    op->lhs = compile_expr(k, lhs);
    op->rhs = compile_expr(k, rhs);
}

/* Pairs each assignment of a bounded builtin (`D = cosine(V, Q)`) with the first filter
 * that compares its slot with a number (`D < 0.5`), when only filters and assignments lie
 * between them: the evaluator can then reject a row from the bounds alone. */
static void link_bound_filters(plan_op *ops, uint32_t nops) {
    for (uint32_t i = 0; i < nops; i++) {
        plan_op *a = &ops[i];
        if (a->kind != POP_ASSIGN || a->rhs->kind != PX_CALL || !a->rhs->fn) continue;
        exec_builtin_bounds_fn bounds = exec_builtin_find_bounds(a->rhs->fn);
        if (!bounds) continue;
        for (uint32_t j = i + 1; j < nops; j++) {
            const plan_op *f = &ops[j];
            if (f->kind != POP_FILTER && f->kind != POP_ASSIGN) break;
            if (f->kind == POP_ASSIGN) {
                if (f->slot == a->slot) break;
                continue;
            }
            if ((f->mode == PCMP_CONST_FLOAT || f->mode == PCMP_CONST_INT) &&
                f->lhs->kind == PX_SLOT && f->lhs->slot == a->slot && f->cmp != IQL_CMP_EQ &&
                f->cmp != IQL_CMP_NE) {
                a->bound_filter = j;
                a->bounds = bounds;
                break;
            }
        }
    }
}

/* Builds a seek (SCAN) or an existence probe (NEG) for an atom. */
static void compile_atom(compiler *k, const blit *l, bool *bound, plan_version version,
                         plan_op *op) {
    op->kind = l->kind == IQL_LIT_NEG ? POP_NEG : POP_SCAN;
    op->pred = l->pred;
    op->version = version;
    op->arity = l->nargs;
    uint32_t n = 0;
    bool *seen = il_arena_calloc(k->a, k->c->vars->n + 1);
    /* prefix: constants and variables bound before this atom */
    for (uint32_t i = 0; i < l->nargs; i++) {
        const bterm *t = &l->args[i];
        if (t->kind == BT_CONST) {
            op->order[n] = i;
            op->prefix_slot[i] = -1;
            op->prefix_const[i] = t->c;
            op->prefix_bind[i] =
                op->kind == POP_SCAN && t->bind >= 0 && !bound[t->bind] ? t->bind : -1;
            /* bound already (by demand, say, whose values come in both numeric forms): the
               constant matched numerically, but V's value must be the stored one */
            op->prefix_check[i] =
                op->kind == POP_SCAN && t->bind >= 0 && bound[t->bind] ? t->bind : -1;
            /* `V = c` folded into this column (build.c): V's other columns in this atom
               must hold the same stored value, so they check it rather than bind V again */
            if (op->prefix_bind[i] >= 0) seen[t->bind] = true;
            n++;
        } else if (t->kind == BT_VAR && bound[t->var]) {
            op->order[n] = i;
            op->prefix_slot[i] = (int32_t)t->var;
            op->prefix_bind[i] = op->prefix_check[i] = -1;
            n++;
        }
    }
    op->nprefix = n;
    for (uint32_t i = 0; i < l->nargs; i++) {
        const bterm *t = &l->args[i];
        if (t->kind == BT_CONST || (t->kind == BT_VAR && bound[t->var])) continue;
        op->order[n++] = i;
        if (t->kind != BT_VAR || op->kind == POP_NEG) {
            op->act[i] = PCOL_IGNORE;
        } else if (seen[t->var]) {
            op->act[i] = PCOL_CHECK_SLOT;
            op->act_slot[i] = t->var;
        } else {
            seen[t->var] = true;
            op->act[i] = PCOL_BIND;
            op->act_slot[i] = t->var;
        }
    }
    if (op->kind == POP_SCAN)
        for (uint32_t i = 0; i < l->nargs; i++) {
            if (l->args[i].kind == BT_VAR) bound[l->args[i].var] = true;
            if (l->args[i].kind == BT_CONST && l->args[i].bind >= 0) bound[l->args[i].bind] = true;
        }
}

/* hnsw_nearest("index", Query, K, IdVar, DistVar[, Ef]) (iql-language.md 2.10): an atom
 * by its syntax, a search of a vector index when it runs. The parser checked its form. */
static bool is_hnsw(const blit *l) {
    return l->kind == IQL_LIT_ATOM && strcmp(l->rel, "hnsw_nearest") == 0;
}

/* Its query vector is a constant or already bound. */
static bool hnsw_ready(const blit *l, const bool *bound) {
    const bterm *q = &l->args[1];
    return q->kind == BT_CONST || (q->kind == BT_VAR && bound[q->var]);
}

static void compile_hnsw(compiler *k, const blit *l, bool *bound, plan_op *op) {
    op->kind = POP_HNSW;
    const bterm *name = &l->args[0], *q = &l->args[1];
    op->k = (uint32_t)val_get_int(l->args[2].c);
    op->ef = l->nargs > 5 ? (uint32_t)val_get_int(l->args[5].c) : 0;
    op->rhs = new_expr(k, q->kind == BT_CONST ? PX_CONST : PX_SLOT);
    if (q->kind == BT_CONST)
        op->rhs->c = q->c;
    else
        op->rhs->slot = q->var;
    size_t len;
    const char *s = val_get_str(name->c, &len);
    char idx[256];
    snprintf(idx, sizeof idx, "%.*s", (int)len, s);
    const plan_source *src = k->p->src;
    op->index = src && src->index ? src->index(src->ctx, idx) : NULL;
    op->search = src ? src->index_search : NULL;
    if (!op->index || !op->search) {
        char msg[320];
        snprintf(msg, sizeof msg, "hnsw_nearest: index '%s' not found", idx);
        set_error(k, msg);
    }
    for (uint32_t i = 0; i < 2; i++) {
        const bterm *t = &l->args[3 + i];
        if (t->kind == BT_CONST) { /* `Id = 3` elsewhere folded into the literal */
            op->act[i] = PCOL_CHECK_CONST;
            op->act_const[i] = t->c;
            op->act_slot[i] = t->bind >= 0 ? (uint32_t)t->bind : UINT32_MAX; /* none */
            if (t->bind >= 0) bound[t->bind] = true;
            continue;
        }
        op->act_slot[i] = t->var;
        op->act[i] = bound[t->var] ? PCOL_CHECK_SLOT : PCOL_BIND;
        bound[t->var] = true;
    }
    if (op->act[0] == PCOL_BIND && op->act[1] == PCOL_BIND && op->act_slot[0] == op->act_slot[1])
        op->act[1] = PCOL_CHECK_SLOT;
}

static bool neg_ready(const blit *l, const bool *bound) {
    for (uint32_t i = 0; i < l->nargs; i++)
        if (l->args[i].kind == BT_VAR && !bound[l->args[i].var]) return false;
    return true;
}

/* Higher is better. A fully bound atom is a check and goes first; a demand relation
 * is tiny and drives a clause that has nothing bound yet; otherwise atoms connected to
 * what is bound come before cross products, the fewest estimated rows first: a relation
 * of n tuples with b of its k columns bound yields about n^((k-b)/k) (uniform spread,
 * no statistics yet). */
static double atom_score(compiler *k, const blit *l, const bool *bound, bool any_bound) {
    uint32_t nb = 0;
    for (uint32_t i = 0; i < l->nargs; i++) {
        const bterm *t = &l->args[i];
        if (t->kind == BT_CONST || (t->kind == BT_VAR && bound[t->var])) nb++;
    }
    if (nb == l->nargs) return 1e12;
    if (l->magic && !any_bound) return 1e11;
    double penalty = nb == 0 && any_bound ? 1e9 : 0;
    double size = 1000;
    const plan_pred *pp = &k->p->preds.v[l->pred];
    if (pp->kind == PP_BASE) size = pp->stored ? (double)rel_count(pp->stored) : 0;
    if (l->magic) size = 10;
    double est = size < 1 ? 0 : pow(size, (double)(l->nargs - nb) / (double)l->nargs);
    return -est - penalty;
}

void plan_compile_clause(plan_program *p, const bclause *c, int32_t delta_lit, plan_clause *out) {
    compiler k = {.p = p, .a = &p->arena, .c = c};
    memset(out, 0, sizeof *out);
    out->head_pred = c->head_pred;
    out->nslots = c->vars->n;
    out->slot_names = c->vars->names;
    out->delta_op = -1;
    out->order = c->order;
    out->session = c->session;
    if (c->error) k.error = c->error;
    uint32_t nv = c->vars->n;
    bool *bound = il_arena_calloc(k.a, nv + 1);
    bool *done = il_arena_calloc(k.a, c->nlits + 1);
    plan_op *ops = il_arena_calloc(k.a, (c->nlits + 1) * sizeof *ops);
    uint32_t nops = 0;
    if (delta_lit >= 0) {
        out->delta_op = (int32_t)nops;
        compile_atom(&k, &c->lits[delta_lit], bound, PV_DELTA, &ops[nops++]);
        done[delta_lit] = true;
    }
    /* as in adorn_clause (build.c): `=` literals bind in the order of the text unless
       that leaves a comparison that can never run */
    bool in_order = true;
    for (;;) {
        bool progress = true;
        while (progress) {
            progress = false;
            for (uint32_t i = 0; i < c->nlits; i++) {
                const blit *l = &c->lits[i];
                if (done[i]) continue;
                if (l->kind == IQL_LIT_CMP) {
                    bool before[nv + 1];
                    memcpy(before, bound, nv + 1);
                    if (!plan_cmp_ready(l, c->vars, bound)) continue;
                    /* which variable did it bind, if any? */
                    int32_t assigned = -1;
                    for (uint32_t s = 0; s < nv; s++)
                        if (bound[s] && !before[s]) assigned = (int32_t)s;
                    if (assigned >= 0 && in_order &&
                        plan_cmp_waits(c->lits, i, done, c->vars->names[assigned])) {
                        memcpy(bound, before, nv + 1);
                        continue;
                    }
                    plan_op *op = &ops[nops++];
                    if (assigned >= 0) {
                        op->kind = POP_ASSIGN;
                        op->slot = (uint32_t)assigned;
                        const iql_term *e =
                            l->lhs->kind == IQL_T_VAR &&
                                    strcmp(l->lhs->u.var, c->vars->names[assigned]) == 0
                                ? l->rhs
                                : l->lhs;
                        op->rhs = compile_expr(&k, e);
                    } else {
                        compile_filter(&k, l, op);
                    }
                    done[i] = true;
                    progress = true;
                } else if (is_hnsw(l) && hnsw_ready(l, bound)) {
                    compile_hnsw(&k, l, bound, &ops[nops++]);
                    done[i] = true;
                    progress = true;
                } else if (l->kind == IQL_LIT_NEG && neg_ready(l, bound)) {
                    compile_atom(&k, l, bound, PV_FULL, &ops[nops++]);
                    done[i] = true;
                    progress = true;
                }
            }
        }
        int32_t best = -1;
        double best_score = 0;
        for (uint32_t i = 0; i < c->nlits; i++) {
            if (done[i] || c->lits[i].kind != IQL_LIT_ATOM || is_hnsw(&c->lits[i])) continue;
            bool any_bound = false;
            for (uint32_t v = 0; v < nv && !any_bound; v++) any_bound = bound[v];
            double s = atom_score(&k, &c->lits[i], bound, any_bound);
            if (best < 0 || s > best_score) {
                best = (int32_t)i;
                best_score = s;
            }
        }
        if (best < 0) {
            bool stuck = false;
            for (uint32_t i = 0; i < c->nlits && !stuck; i++)
                stuck = !done[i] && c->lits[i].kind == IQL_LIT_CMP;
            if (!in_order || !stuck) break;
            in_order = false;
            continue;
        }
        compile_atom(&k, &c->lits[best], bound, PV_FULL, &ops[nops++]);
        done[best] = true;
    }
    /* Negations with variables no positive atom binds: those act as wildcards. */
    for (uint32_t i = 0; i < c->nlits; i++) {
        if (done[i] || c->lits[i].kind != IQL_LIT_NEG) continue;
        compile_atom(&k, &c->lits[i], bound, PV_FULL, &ops[nops++]);
        done[i] = true;
    }
    /* A search whose query no other atom binds. */
    for (uint32_t i = 0; i < c->nlits && !k.error; i++) {
        if (done[i] || !is_hnsw(&c->lits[i])) continue;
        char msg[320];
        snprintf(msg, sizeof msg,
                 "hnsw_nearest: the query vector '%s' must be a vector literal or a variable "
                 "bound by another atom of the body",
                 c->lits[i].args[1].kind == BT_VAR ? c->vars->names[c->lits[i].args[1].var] : "_");
        set_error(&k, msg);
        done[i] = true;
    }
    /* Comparisons that never became ready name their first unknown variable. */
    for (uint32_t i = 0; i < c->nlits && !k.error; i++) {
        if (done[i]) continue;
        const blit *l = &c->lits[i];
        unknown_ctx u = {&k, bound};
        if (iql_term_each_var(l->lhs, false, report_unknown, &u))
            iql_term_each_var(l->rhs, false, report_unknown, &u);
    }
    link_bound_filters(ops, nops);
    out->ops = ops;
    out->nops = nops;
    out->seek_caches = il_arena_calloc(k.a, (nops + 1) * sizeof *out->seek_caches);

    /* Head. */
    if (c->is_agg) {
        out->is_agg = true;
        out->group_slots = il_arena_alloc(k.a, (c->nhead + 1) * sizeof(uint32_t));
        out->aggs = il_arena_calloc(k.a, (c->nhead + 1) * sizeof *out->aggs);
        for (uint32_t i = 0; i < c->nhead; i++) {
            const bterm *t = &c->head[i];
            if (t->kind == BT_VAR) {
                if (!bound[t->var]) unknown_var_error(&k, c->vars->names[t->var]);
                out->group_slots[out->ngroup++] = t->var;
                continue;
            }
            if (t->kind != BT_EXPR || t->ast->kind != IQL_T_AGG) continue;
            const iql_term *g = t->ast;
            plan_agg *ag = &out->aggs[out->naggs++];
            ag->kind = g->u.agg.kind;
            ag->k = g->u.agg.k;
            ag->param = g->u.agg.param;
            if (g->u.agg.nspecs) {
                ag->nout = g->u.agg.nspecs;
                ag->out_slots = il_arena_alloc(k.a, ag->nout * sizeof(uint32_t));
                for (uint32_t j = 0; j < ag->nout; j++) {
                    int32_t s = bvars_find(c->vars, g->u.agg.specs[j].var);
                    if (s < 0) {
                        char msg[300];
                        snprintf(msg, sizeof msg,
                                 "Variable '%s' not found in schema for aggregation",
                                 g->u.agg.specs[j].var);
                        set_error(&k, msg);
                        s = 0;
                    }
                    ag->out_slots[j] = (uint32_t)s;
                }
                ag->order_out = g->u.agg.order_spec;
                ag->desc = g->u.agg.order == IQL_SORT_DESC;
            } else {
                int32_t s = g->u.agg.var ? bvars_find(c->vars, g->u.agg.var) : -1;
                if (s < 0) {
                    char msg[300];
                    snprintf(msg, sizeof msg, "Variable '%s' not found in schema for aggregation",
                             g->u.agg.var ? g->u.agg.var : "");
                    set_error(&k, msg);
                    s = 0;
                }
                ag->slot = (uint32_t)s;
            }
        }
    } else {
        out->nhead = c->nhead;
        out->head = il_arena_alloc(k.a, (c->nhead + 1) * sizeof *out->head);
        for (uint32_t i = 0; i < c->nhead; i++) {
            const bterm *t = &c->head[i];
            if (t->kind == BT_VAR && !bound[t->var]) unknown_var_error(&k, c->vars->names[t->var]);
            out->head[i] = compile_bterm(&k, t);
        }
    }
    out->error = k.error;
}
