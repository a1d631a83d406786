/* A program's parameters (params.h): two programs of one query shape walked side by
 * side, every field compared, the constants that differ matched to the query's. */
#include "plan/params.h"

#include <stdlib.h>
#include <string.h>

#include "exec/expr.h"

typedef struct walk {
    const val_t *va, *vb;
    uint32_t n;
    plan_params *out;
    uint32_t cap;
} walk;

static bool push(walk *w, val_t *slot, uint32_t param, bool alt) {
    if (w->out->n == w->cap) {
        uint32_t cap = w->cap ? w->cap * 2 : 8;
        plan_param_slot *v = realloc(w->out->v, cap * sizeof *v);
        if (!v) return false;
        w->out->v = v;
        w->cap = cap;
    }
    w->out->v[w->out->n++] = (plan_param_slot){.slot = slot, .param = param, .alt = alt};
    return true;
}

/* A constant of a against its counterpart in b: the same value (a constant of the rules,
 * or one the query's values do not reach), or exactly one query constant's value or
 * other numeric form in both. */
static bool same_const(walk *w, val_t *a, val_t b) {
    if (*a == b) return true;
    int32_t found = -1;
    bool alt = false;
    for (uint32_t i = 0; i < w->n; i++) {
        val_t xa, xb;
        bool hit = *a == w->va[i] && b == w->vb[i];
        bool hit_alt = !hit && exec_numeric_alternative(w->va[i], &xa) &&
                       exec_numeric_alternative(w->vb[i], &xb) && *a == xa && b == xb;
        if (!hit && !hit_alt) continue;
        if (found >= 0) return false; /* two query constants alike: which one is unknown */
        found = (int32_t)i;
        alt = hit_alt;
    }
    return found >= 0 && push(w, a, (uint32_t)found, alt);
}

static bool same_expr(walk *w, plan_expr *a, const plan_expr *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case PX_SLOT:
        return a->slot == b->slot;
    case PX_CONST:
        return same_const(w, &a->c, b->c);
    case PX_ARITH:
        return a->op == b->op && same_expr(w, a->l, b->l) && same_expr(w, a->r, b->r);
    case PX_CALL:
        if (a->fn != b->fn || a->nargs != b->nargs) return false;
        for (uint32_t i = 0; i < a->nargs; i++)
            if (!same_expr(w, a->args[i], b->args[i])) return false;
        return true;
    }
    return false;
}

static bool same_op(walk *w, plan_op *a, const plan_op *b) {
    if (a->kind != b->kind || a->kind == POP_HNSW) return false;
    switch (a->kind) {
    case POP_SCAN:
    case POP_NEG:
        if (a->pred != b->pred || a->version != b->version || a->arity != b->arity ||
            a->nprefix != b->nprefix || a->arity > REL_MAX_ARITY)
            return false;
        for (uint32_t p = 0; p < a->arity; p++) {
            uint32_t col = a->order[p];
            if (col != b->order[p] || col >= REL_MAX_ARITY) return false;
            if (p < a->nprefix) {
                if (a->prefix_slot[col] != b->prefix_slot[col] ||
                    a->prefix_bind[col] != b->prefix_bind[col] ||
                    a->prefix_check[col] != b->prefix_check[col])
                    return false;
                if (a->prefix_slot[col] < 0 &&
                    !same_const(w, &a->prefix_const[col], b->prefix_const[col]))
                    return false;
            } else {
                if (a->act[col] != b->act[col]) return false;
                if (a->act[col] == PCOL_CHECK_CONST) return false; /* only searches have it */
                if ((a->act[col] == PCOL_BIND || a->act[col] == PCOL_CHECK_SLOT) &&
                    a->act_slot[col] != b->act_slot[col])
                    return false;
            }
        }
        return true;
    case POP_FILTER:
        if (a->cmp != b->cmp || a->mode != b->mode) return false;
        if (a->mode == PCMP_CONST_CONST) return a->result == b->result;
        return same_expr(w, a->lhs, b->lhs) && same_expr(w, a->rhs, b->rhs);
    case POP_ASSIGN:
        return a->slot == b->slot && a->bound_filter == b->bound_filter && a->bounds == b->bounds &&
               same_expr(w, a->rhs, b->rhs);
    case POP_HNSW:
        break;
    }
    return false;
}

static bool same_ids(const uint32_t *a, const uint32_t *b, uint32_t n) {
    return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

static bool same_agg(const plan_agg *a, const plan_agg *b) {
    if (a->kind != b->kind || a->slot != b->slot || a->k != b->k ||
        memcmp(&a->param, &b->param, sizeof a->param) != 0 || a->nout != b->nout ||
        a->order_out != b->order_out || a->desc != b->desc)
        return false;
    return same_ids(a->out_slots, b->out_slots, a->nout);
}

static bool same_clause(walk *w, plan_clause *a, const plan_clause *b) {
    if (a->error || b->error || a->head_pred != b->head_pred || a->nslots != b->nslots ||
        a->nops != b->nops || a->nhead != b->nhead || a->is_agg != b->is_agg ||
        a->ngroup != b->ngroup || a->naggs != b->naggs || a->delta_op != b->delta_op ||
        a->recursive_base != b->recursive_base || a->reads_stratum_full != b->reads_stratum_full ||
        a->order != b->order)
        return false;
    for (uint32_t i = 0; i < a->nops; i++)
        if (!same_op(w, &a->ops[i], &b->ops[i])) return false;
    if (a->is_agg) {
        if (!same_ids(a->group_slots, b->group_slots, a->ngroup)) return false;
        for (uint32_t i = 0; i < a->naggs; i++)
            if (!same_agg(&a->aggs[i], &b->aggs[i])) return false;
    } else {
        for (uint32_t i = 0; i < a->nhead; i++)
            if (!same_expr(w, a->head[i], b->head[i])) return false;
    }
    return true;
}

static bool same_program(walk *w, plan_program *a, const plan_program *b) {
    if (a->error || b->error || a->query_pred != b->query_pred ||
        a->unstratified != b->unstratified || a->preds.n != b->preds.n ||
        a->clauses.n != b->clauses.n || a->strata.n != b->strata.n)
        return false;
    /* Not the names: a cached program's may point into the text of the query it was
       built for (they serve `.explain`, which builds its own); clauses name predicates by
       index, so these fields and the clauses say the same. */
    for (uint32_t i = 0; i < a->preds.n; i++) {
        const plan_pred *x = &a->preds.v[i], *y = &b->preds.v[i];
        if (x->kind != y->kind || x->arity != y->arity || x->stored != y->stored ||
            x->stratum != y->stratum)
            return false;
    }
    for (uint32_t i = 0; i < a->strata.n; i++) {
        const plan_stratum *x = &a->strata.v[i], *y = &b->strata.v[i];
        if (x->recursive != y->recursive || x->npreds != y->npreds || x->nclauses != y->nclauses ||
            !same_ids(x->preds, y->preds, x->npreds) ||
            !same_ids(x->clauses, y->clauses, x->nclauses))
            return false;
    }
    for (uint32_t i = 0; i < a->clauses.n; i++)
        if (!same_clause(w, &a->clauses.v[i], &b->clauses.v[i])) return false;
    return true;
}

bool plan_params_find(plan_program *a, const plan_program *b, const val_t *va, const val_t *vb,
                      uint32_t n, plan_params *out) {
    memset(out, 0, sizeof *out);
    walk w = {.va = va, .vb = vb, .n = n, .out = out};
    if (same_program(&w, a, b)) return true;
    plan_params_free(out);
    return false;
}

void plan_params_bind(const plan_params *pp, const val_t *values) {
    for (uint32_t i = 0; i < pp->n; i++) {
        const plan_param_slot *s = &pp->v[i];
        val_t v = values[s->param];
        if (s->alt) exec_numeric_alternative(v, &v);
        *s->slot = v;
    }
}

void plan_params_free(plan_params *pp) {
    free(pp->v);
    memset(pp, 0, sizeof *pp);
}
