/* `.why ?query` (why.h): the query's table, as the reference prints it, plus a proof tree
 * per row.
 *
 * Proving is breadth first from the rows: each round takes the conclusions met in the
 * previous one, and for every clause of their relation runs one query, the clause
 * rewritten as `#why(every variable) <- #seed(head columns), body`, with #seed holding
 * the round's tuples. The planner seeks every body atom through an index and restricts
 * derived atoms by demand, so a round costs about the size of its proofs, never a scan
 * of a relation. Each conclusion is a node tabled by (relation, tuple), expanded once.
 * Then ranks are computed (the height of a node's shortest proof, a fixpoint over the
 * collected derivations), and a derivation is kept when it cannot close a cycle: one of
 * the node's shortest ones, or another whose children do not reach the node back. */
#include "kg/why.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "exec/eval.h"
#include "exec/tuplesort.h"
#include "iql/parser.h"
#include "iql/vars.h"
#include "kg/kg.h"
#include "plan/build.h"

#define SEED_REL  "#seed"
#define QUERY_REL "#why"

/* ---- tabling: (relation, tuple) -> node ---- */

typedef struct node_table {
    uint32_t *slots; /* node + 1, 0 = empty */
    uint32_t nslots, n;
} node_table;

static uint64_t tuple_hash(uint32_t rel, const val_t *t, uint32_t arity) {
    uint64_t h = 0x9E3779B97F4A7C15ull * (rel + 1);
    for (uint32_t i = 0; i < arity; i++) h = (h ^ val_hash(t[i])) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static bool node_is(const why_ctx *w, uint32_t id, uint32_t rel, const val_t *t, uint32_t arity) {
    const why_node *n = &w->nodes.v[id];
    return n->rel == rel && n->arity == arity &&
           memcmp(&w->vals.v[n->vals], t, arity * sizeof *t) == 0;
}

static void table_grow(node_table *nt, const why_ctx *w) {
    uint32_t ns = nt->nslots ? nt->nslots * 2 : 256;
    uint32_t *s = calloc(ns, sizeof *s);
    for (uint32_t i = 0; i < nt->nslots; i++) {
        if (!nt->slots[i]) continue;
        const why_node *n = &w->nodes.v[nt->slots[i] - 1];
        uint64_t h = tuple_hash(n->rel, &w->vals.v[n->vals], n->arity);
        uint32_t j = (uint32_t)h & (ns - 1);
        while (s[j]) j = (j + 1) & (ns - 1);
        s[j] = nt->slots[i];
    }
    free(nt->slots);
    nt->slots = s;
    nt->nslots = ns;
}

/* The node of the tuple, or WHY_NONE; *slot gets where a new one goes. */
static uint32_t table_find(const node_table *nt, const why_ctx *w, uint32_t rel, const val_t *t,
                           uint32_t arity, uint32_t *slot) {
    uint32_t j = (uint32_t)tuple_hash(rel, t, arity) & (nt->nslots - 1);
    while (nt->slots[j]) {
        if (node_is(w, nt->slots[j] - 1, rel, t, arity)) return nt->slots[j] - 1;
        j = (j + 1) & (nt->nslots - 1);
    }
    *slot = j;
    return WHY_NONE;
}

typedef IL_VEC(uint32_t) u32_vec;

typedef struct prover {
    why_ctx *w;
    il_session *s;
    node_table table;
    il_arena *a;
    IL_VEC(const iql_rule *) rules; /* every persistent clause, for the planner */
    u32_vec frontier;               /* nodes to expand this round */
    u32_vec next;                   /* nodes met this round, expanded in the next */
    IL_VEC(int32_t) rel_clauses;    /* per relation: first clause index, -2 not prepared */
    const rel_t *seed;              /* the #seed relation of the query running now */
    const char *error;
} prover;

static uint32_t rel_id(why_ctx *w, const char *name) {
    for (uint32_t i = 0; i < w->rels.n; i++)
        if (strcmp(w->rels.v[i], name) == 0) return i;
    il_vec_push(w->rels, name);
    return w->rels.n - 1;
}

static uint32_t add_node(prover *p, uint32_t rel, const val_t *t, uint32_t arity,
                         why_node_kind kind, uint32_t level, bool *added) {
    why_ctx *w = p->w;
    *added = false;
    if (p->table.n * 2 >= p->table.nslots) table_grow(&p->table, w);
    uint32_t slot;
    uint32_t id = table_find(&p->table, w, rel, t, arity, &slot);
    if (id != WHY_NONE) return id;
    why_node n = {.rel = rel,
                  .arity = arity,
                  .vals = w->vals.n,
                  .kind = kind,
                  .level = level,
                  .rank = -1,
                  .first = WHY_NONE,
                  .last = WHY_NONE};
    for (uint32_t i = 0; i < arity; i++) il_vec_push(w->vals, t[i]);
    il_vec_push(w->nodes, n);
    p->table.slots[slot] = w->nodes.n;
    p->table.n++;
    *added = true;
    return w->nodes.n - 1;
}

/* ---- the proving query of a clause ---- */

typedef struct names {
    IL_VEC(const char *) v;
} names;

static int32_t name_index(const names *n, const char *var) {
    for (uint32_t i = 0; i < n->v.n; i++)
        if (strcmp(n->v.v[i], var) == 0) return (int32_t)i;
    return -1;
}

static bool add_name(const char *var, void *ctx) {
    names *n = ctx;
    if (name_index(n, var) < 0) il_vec_push(n->v, var);
    return true;
}

static iql_term *fresh_var(il_arena *a, const char *prefix, uint32_t k) {
    char name[32];
    snprintf(name, sizeof name, "#%s%u", prefix, k);
    iql_term *t = il_arena_calloc(a, sizeof *t);
    t->kind = IQL_T_VAR;
    t->u.var = il_arena_strdup(a, name);
    return t;
}

static iql_literal equality(iql_term *var, const iql_term *t) {
    iql_literal l;
    memset(&l, 0, sizeof l);
    l.kind = IQL_LIT_CMP;
    l.op = IQL_CMP_EQ;
    l.lhs = var;
    l.rhs = (iql_term *)t;
    return l;
}

static bool rel_is_derived(il_session *s, const char *rel) {
    kg_rule *r = kg_rule_find(s->kg, rel);
    return r && r->clauses.n;
}

/* hnsw_nearest(...): a search of a vector index, not an atom of a relation. */
static bool is_vector(const iql_literal *l) {
    return l->kind == IQL_LIT_ATOM && strcmp(l->atom.rel, "hnsw_nearest") == 0 &&
           l->atom.nargs >= 5;
}

/* Output column of a term's value (a variable of the proving query), or -1 for a constant
 * or `_`. */
static int32_t col_of(const names *out, const iql_term *t) {
    return t && t->kind == IQL_T_VAR ? name_index(out, t->u.var) : -1;
}

/* Builds c->q and the column maps from c->src. */
static void prepare_clause(prover *p, why_clause *c) {
    il_arena *a = p->a;
    const iql_rule *r = c->src;
    const iql_atom *h = &r->head;
    uint32_t cap = r->nbody * 3 + h->nargs + 2;
    for (uint32_t i = 0; i < r->nbody; i++)
        if (r->body[i].kind != IQL_LIT_CMP) cap += r->body[i].atom.nargs;
    iql_literal *body = il_arena_calloc(a, cap * sizeof *body);
    uint32_t nb = 1; /* body[0] is the seed atom */
    iql_term **seed_args = il_arena_calloc(a, (h->nargs + 1) * sizeof *seed_args);
    c->seed_cols = il_arena_calloc(a, (h->nargs + 1) * sizeof *c->seed_cols);
    names seed_vars = {0};
    uint32_t col = 0, k = 0;
    for (uint32_t i = 0; i < h->nargs; i++) {
        const iql_term *t = h->args[i];
        if (c->is_agg) {
            if (t->kind == IQL_T_AGG) {
                bool ranking = t->u.agg.kind == IQL_AGG_TOP_K ||
                               t->u.agg.kind == IQL_AGG_TOP_K_THRESHOLD ||
                               t->u.agg.kind == IQL_AGG_WITHIN_RADIUS;
                col += ranking ? t->u.agg.nspecs : 1;
                continue;
            }
        } else if (t->kind == IQL_T_PLACEHOLDER) {
            continue;
        }
        iql_term *sv;
        if (t->kind == IQL_T_VAR && name_index(&seed_vars, t->u.var) < 0) {
            sv = (iql_term *)t;
        } else {
            sv = fresh_var(a, "h", k++);
            body[nb++] = equality(sv, t);
        }
        il_vec_push(seed_vars.v, sv->u.var);
        c->seed_cols[c->nseed] = col++;
        seed_args[c->nseed++] = sv;
    }
    body[0].kind = IQL_LIT_ATOM;
    body[0].atom.rel = SEED_REL;
    body[0].atom.args = seed_args;
    body[0].atom.nargs = c->nseed;
    il_vec_free(seed_vars.v);

    /* the body: positive atoms get a variable in every argument, so the instance
       shows the stored tuple; computed sides of comparisons and negated arguments get
       one too, so their values can be shown */
    c->lits = il_arena_calloc(a, (r->nbody + 1) * sizeof *c->lits);
    iql_term **sides = il_arena_calloc(a, (r->nbody * 2 + 1) * sizeof *sides);
    iql_term ***args = il_arena_calloc(a, (r->nbody + 1) * sizeof *args);
    uint32_t nv = 0;
    for (uint32_t i = 0; i < r->nbody; i++) {
        const iql_literal *l = &r->body[i];
        iql_literal *o = &body[nb++];
        *o = *l;
        if (l->kind == IQL_LIT_CMP) {
            const iql_term *side[2] = {l->lhs, l->rhs};
            for (int s = 0; s < 2; s++) {
                if (side[s]->kind == IQL_T_VAR || plan_term_is_const(side[s])) continue;
                sides[i * 2 + s] = fresh_var(a, "c", nv++);
                body[nb++] = equality(sides[i * 2 + s], side[s]);
            }
            continue;
        }
        args[i] = il_arena_calloc(a, (l->atom.nargs + 1) * sizeof(iql_term *));
        if (is_vector(l)) {
            /* a search keeps its arguments as written (its index name must stay a
               literal); its variables show the instance */
            for (uint32_t j = 0; j < l->atom.nargs; j++)
                if (l->atom.args[j]->kind == IQL_T_VAR) args[i][j] = l->atom.args[j];
        } else if (l->kind == IQL_LIT_ATOM) {
            o->atom.args = il_arena_calloc(a, (l->atom.nargs + 1) * sizeof(iql_term *));
            for (uint32_t j = 0; j < l->atom.nargs; j++) {
                const iql_term *t = l->atom.args[j];
                iql_term *v = t->kind == IQL_T_VAR ? (iql_term *)t : fresh_var(a, "a", nv++);
                if (t->kind != IQL_T_VAR && t->kind != IQL_T_PLACEHOLDER)
                    body[nb++] = equality(v, t);
                o->atom.args[j] = v;
                args[i][j] = v;
            }
        } else {
            for (uint32_t j = 0; j < l->atom.nargs; j++) {
                const iql_term *t = l->atom.args[j];
                if (t->kind == IQL_T_VAR) {
                    args[i][j] = (iql_term *)t;
                } else if (t->kind != IQL_T_PLACEHOLDER && !plan_term_is_const(t)) {
                    args[i][j] = fresh_var(a, "n", nv++);
                    body[nb++] = equality(args[i][j], t);
                }
            }
        }
    }

    /* outputs: the seed columns, then every other variable in order of appearance */
    names out = {0};
    for (uint32_t i = 0; i < c->nseed; i++) il_vec_push(out.v, seed_args[i]->u.var);
    for (uint32_t i = 1; i < nb; i++) {
        const iql_literal *l = &body[i];
        if (l->kind == IQL_LIT_CMP) {
            iql_term_each_var(l->lhs, false, add_name, &out);
            iql_term_each_var(l->rhs, false, add_name, &out);
        } else if (l->kind == IQL_LIT_ATOM) {
            for (uint32_t j = 0; j < l->atom.nargs; j++)
                iql_term_each_var(l->atom.args[j], false, add_name, &out);
        }
    }
    c->nout = out.v.n;
    if (c->nout > REL_MAX_ARITY) {
        c->error = "too many variables to prove";
        il_vec_free(out.v);
        return;
    }
    c->out_names = il_arena_alloc(a, (out.v.n + 1) * sizeof *c->out_names);
    iql_term **head_args = il_arena_alloc(a, (out.v.n + 1) * sizeof *head_args);
    for (uint32_t i = 0; i < out.v.n; i++) {
        c->out_names[i] = out.v.v[i];
        iql_term *t = il_arena_calloc(a, sizeof *t);
        t->kind = IQL_T_VAR;
        t->u.var = out.v.v[i];
        head_args[i] = t;
    }
    for (uint32_t i = 0; i < r->nbody; i++) {
        const iql_literal *l = &r->body[i];
        why_lit *wl = &c->lits[i];
        if (l->kind == IQL_LIT_CMP) {
            wl->lhs_col = sides[i * 2] ? col_of(&out, sides[i * 2]) : col_of(&out, l->lhs);
            wl->rhs_col = sides[i * 2 + 1] ? col_of(&out, sides[i * 2 + 1]) : col_of(&out, l->rhs);
            continue;
        }
        wl->arg_col = il_arena_alloc(a, (l->atom.nargs + 1) * sizeof *wl->arg_col);
        for (uint32_t j = 0; j < l->atom.nargs; j++) wl->arg_col[j] = col_of(&out, args[i][j]);
        if (is_vector(l)) {
            wl->vector = true;
            const iql_term *name = l->atom.args[0];
            kg_index *ix =
                name->kind == IQL_T_STRING ? kg_index_find(p->s->kg, name->u.str.ptr) : NULL;
            wl->metric = ix ? hnsw_metric_name(ix->def.metric) : NULL;
        } else if (l->kind == IQL_LIT_ATOM) {
            wl->derived = rel_is_derived(p->s, l->atom.rel);
            wl->rel = rel_id(p->w, l->atom.rel);
        }
    }
    il_vec_free(out.v);
    c->q.head.rel = QUERY_REL;
    c->q.head.args = head_args;
    c->q.head.nargs = c->nout;
    c->q.body = body;
    c->q.nbody = nb;
}

static uint32_t add_clause(prover *p, const iql_rule *src, uint32_t rel, uint32_t number,
                           bool is_query) {
    why_clause c;
    memset(&c, 0, sizeof c);
    c.src = src;
    c.rel = rel;
    c.number = number;
    c.is_query = is_query;
    for (uint32_t i = 0; i < src->head.nargs; i++)
        if (src->head.args[i]->kind == IQL_T_AGG) c.is_agg = true;
    prepare_clause(p, &c);
    il_vec_push(p->w->clauses, c);
    return p->w->clauses.n - 1;
}

/* The clauses of a relation: [first, first + n) of why_ctx.clauses. */
static void clauses_of(prover *p, uint32_t rel, uint32_t *first, uint32_t *n) {
    while (p->rel_clauses.n <= rel) il_vec_push(p->rel_clauses, -2);
    if (p->rel_clauses.v[rel] == -2) {
        kg_rule *r = kg_rule_find(p->s->kg, p->w->rels.v[rel]);
        p->rel_clauses.v[rel] = (int32_t)p->w->clauses.n;
        for (uint32_t i = 0; r && i < r->clauses.n; i++)
            add_clause(p, r->clauses.v[i], rel, i + 1, false);
    }
    *first = (uint32_t)p->rel_clauses.v[rel];
    kg_rule *r = kg_rule_find(p->s->kg, p->w->rels.v[rel]);
    *n = r ? r->clauses.n : 0;
}

/* ---- running a proving query ---- */

static const rel_t *why_stored(void *ctx, const char *rel) {
    prover *p = ctx;
    if (strcmp(rel, SEED_REL) == 0) return p->seed;
    kg_relation *r = kg_rel_find(p->s->kg, rel);
    return r ? r->data : NULL;
}

/* Runs the clause's query over the seed; its rows sorted (a counted block), or NULL
 * with p->error set when it failed or was stopped. */
static void *why_index(void *ctx, const char *name) {
    prover *p = ctx;
    return kg_index_find(p->s->kg, name);
}

static val_t *run_clause(prover *p, const why_clause *c, const rel_t *seed, size_t *nrows) {
    *nrows = 0;
    p->seed = seed;
    plan_source src = {.rules = p->rules.v,
                       .nrules = p->rules.n,
                       .stored = why_stored,
                       .ctx = p,
                       .index = why_index,
                       .index_search = kg_index_search};
    plan_program prog;
    plan_program_init(&prog);
    val_t *rows = NULL;
    if (!plan_build(&prog, &src, &c->q)) {
        p->error = il_arena_strdup(p->a, prog.error ? prog.error : "cannot plan");
    } else {
        exec_ctx x = {.guard = p->s->guard};
        plan_pred *qp = &prog.preds.v[prog.query_pred];
        if (!exec_run(&prog, &x)) {
            p->error = il_arena_strdup(p->a, x.error ? x.error : EXEC_STOPPED);
        } else if (qp->rows.n && !tuple_sort(qp->rows.tuples, qp->rows.n, qp->arity)) {
            p->error = EXEC_STOPPED;
        } else if (qp->rows.n && qp->arity == c->nout) {
            rows = qp->rows.tuples;
            *nrows = qp->rows.n;
            qp->rows.tuples = NULL;
            qp->rows.n = qp->rows.cap = 0;
        }
    }
    plan_program_free(&prog);
    p->seed = NULL;
    return rows;
}

/* ---- collecting derivations ---- */

/* The node of one positive atom of an instance: created when new (a derived one is
 * expanded next round, or left truncated past the depth bound). */
static uint32_t child_node(prover *p, const why_clause *c, uint32_t lit, const val_t *row,
                           uint32_t level) {
    why_ctx *w = p->w;
    const iql_atom *at = &c->src->body[lit].atom;
    const why_lit *wl = &c->lits[lit];
    val_t t[REL_MAX_ARITY];
    uint32_t n = at->nargs < REL_MAX_ARITY ? at->nargs : REL_MAX_ARITY;
    for (uint32_t j = 0; j < n; j++) t[j] = wl->arg_col[j] >= 0 ? row[wl->arg_col[j]] : VAL_NULL;
    why_node_kind kind = WN_FACT;
    if (wl->derived) kind = level > w->max_depth || w->capped ? WN_TRUNCATED : WN_DERIVED;
    bool added;
    uint32_t id = add_node(p, wl->rel, t, n, kind, level, &added);
    if (added && kind == WN_DERIVED) {
        il_vec_push(p->next, id);
        if (w->nodes.n >= WHY_MAX_NODES) w->capped = true;
    }
    return id;
}

static uint32_t add_deriv(prover *p, uint32_t node, uint32_t clause, const val_t *row,
                          bool is_input, bool with_children, uint32_t level) {
    why_ctx *w = p->w;
    const why_clause *c = &w->clauses.v[clause];
    why_deriv d = {.node = node,
                   .clause = clause,
                   .vals = w->vals.n,
                   .child_off = w->children.n,
                   .next = WHY_NONE,
                   .rank = -1,
                   .is_input = is_input,
                   .first_input = WHY_NONE};
    for (uint32_t i = 0; i < c->nout; i++) il_vec_push(w->vals, row[i]);
    for (uint32_t i = 0; i < c->src->nbody && with_children; i++) {
        if (c->src->body[i].kind != IQL_LIT_ATOM || c->lits[i].vector) continue;
        uint32_t ch = child_node(p, c, i, row, level);
        il_vec_push(w->children, ch);
        d.nchild++;
    }
    il_vec_push(w->derivs, d);
    return w->derivs.n - 1;
}

static void link_deriv(why_ctx *w, uint32_t node, uint32_t d) {
    why_node *n = &w->nodes.v[node];
    if (n->last == WHY_NONE)
        n->first = d;
    else
        w->derivs.v[n->last].next = d;
    n->last = d;
    n->ncollected++;
}

/* The seed tuple of a node for a clause (its head columns). */
static void seed_of(const why_ctx *w, const why_clause *c, uint32_t node, val_t *out) {
    const why_node *n = &w->nodes.v[node];
    for (uint32_t i = 0; i < c->nseed; i++)
        out[i] = c->seed_cols[i] < n->arity ? w->vals.v[n->vals + c->seed_cols[i]] : VAL_NULL;
}

static int words_cmp(const val_t *a, const val_t *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static _Thread_local const why_ctx *g_cmp_w; /* for cmp_by_seed */
static _Thread_local const why_clause *g_cmp_c;

static int cmp_by_seed(const void *a, const void *b) {
    val_t x[REL_MAX_ARITY], y[REL_MAX_ARITY];
    seed_of(g_cmp_w, g_cmp_c, *(const uint32_t *)a, x);
    seed_of(g_cmp_w, g_cmp_c, *(const uint32_t *)b, y);
    for (uint32_t i = 0; i < g_cmp_c->nseed; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* One clause over the frontier nodes [nodes, nodes + n) of its relation. */
static void expand_clause(prover *p, uint32_t clause, uint32_t *nodes, uint32_t n) {
    why_ctx *w = p->w;
    const why_clause *c = &w->clauses.v[clause];
    if (c->error) return;
    uint32_t cap = w->max_proofs * 4 < 32 ? 32 : w->max_proofs * 4;
    rel_t *seed = rel_new(c->nseed);
    val_t t[REL_MAX_ARITY];
    for (uint32_t i = 0; i < n; i++) {
        seed_of(w, c, nodes[i], t);
        rel_insert(seed, t);
    }
    size_t nrows;
    val_t *rows = run_clause(p, c, seed, &nrows);
    rel_free(seed);
    /* rows and nodes both in seed order (the seed columns come first in a row) */
    g_cmp_w = w;
    g_cmp_c = c;
    qsort(nodes, n, sizeof *nodes, cmp_by_seed);
    size_t r = 0;
    for (uint32_t i = 0; i < n && r < nrows;) {
        seed_of(w, c, nodes[i], t);
        uint32_t j = i + 1; /* nodes[i, j): one seed (several for a ranking aggregate) */
        while (j < n && cmp_by_seed(&nodes[i], &nodes[j]) == 0) j++;
        int cmp = 0;
        while (r < nrows && (cmp = words_cmp(&rows[r * c->nout], t, c->nseed)) < 0) r++;
        size_t r0 = r;
        while (r < nrows && words_cmp(&rows[r * c->nout], t, c->nseed) == 0) r++;
        for (uint32_t k = i; k < j && r > r0; k++) {
            uint32_t node = nodes[k];
            uint32_t level = w->nodes.v[node].level + 1;
            if (!c->is_agg) {
                for (size_t q = r0; q < r; q++) {
                    if (w->nodes.v[node].ncollected >= cap) {
                        w->nodes.v[node].more = true;
                        break;
                    }
                    link_deriv(w, node,
                               add_deriv(p, node, clause, &rows[q * c->nout], false, true, level));
                }
                continue;
            }
            /* an aggregate: one derivation, a sample of the group's body instances */
            uint32_t ad = add_deriv(p, node, clause, &rows[r0 * c->nout], false, false, level);
            w->derivs.v[ad].ninputs = r - r0;
            uint32_t last = WHY_NONE;
            for (size_t q = r0; q < r && q - r0 < w->agg_sample; q++) {
                uint32_t in = add_deriv(p, ad, clause, &rows[q * c->nout], true, true, level);
                if (last == WHY_NONE)
                    w->derivs.v[ad].first_input = in;
                else
                    w->derivs.v[last].next = in;
                last = in;
            }
            link_deriv(w, node, ad);
        }
        i = j;
    }
    il_mem_free(rows);
}

static _Thread_local const why_ctx *g_rel_w;
static int cmp_by_rel(const void *a, const void *b) {
    uint32_t x = g_rel_w->nodes.v[*(const uint32_t *)a].rel;
    uint32_t y = g_rel_w->nodes.v[*(const uint32_t *)b].rel;
    return (x > y) - (x < y);
}

/* Expands round after round until no new conclusion is met. */
static void expand_all(prover *p) {
    why_ctx *w = p->w;
    while (p->frontier.n && !p->error) {
        g_rel_w = w;
        qsort(p->frontier.v, p->frontier.n, sizeof *p->frontier.v, cmp_by_rel);
        for (uint32_t i = 0; i < p->frontier.n && !p->error;) {
            uint32_t rel = w->nodes.v[p->frontier.v[i]].rel;
            uint32_t j = i + 1;
            while (j < p->frontier.n && w->nodes.v[p->frontier.v[j]].rel == rel) j++;
            uint32_t first, nc;
            if (w->nodes.v[p->frontier.v[i]].kind == WN_QUERY) {
                first = 0; /* the query's clause, the first one prepared */
                nc = 1;
            } else {
                clauses_of(p, rel, &first, &nc);
            }
            for (uint32_t k = 0; k < nc && !p->error; k++) {
                /* expand_clause reorders the nodes it gets */
                expand_clause(p, first + k, &p->frontier.v[i], j - i);
            }
            i = j;
        }
        p->frontier.n = 0;
        u32_vec tmp = p->frontier;
        p->frontier = p->next;
        p->next = tmp;
    }
}

/* ---- ranks and the derivations kept ---- */

/* Heights of shortest proofs, round by round: a derivation is proved once all its
 * children are; its node takes the round of its first proved derivation. */
static void compute_ranks(why_ctx *w) {
    uint32_t nn = w->nodes.n, nd = w->derivs.n;
    /* for each node, the derivations that have it as a child (an aggregate's inputs
       belong to lower strata and never wait) */
    uint32_t *cnt = calloc(nn + 1, sizeof *cnt);
    uint32_t *pending = calloc(nd + 1, sizeof *pending);
    for (uint32_t i = 0; i < nn; i++)
        if (w->nodes.v[i].kind == WN_FACT || w->nodes.v[i].kind == WN_TRUNCATED)
            w->nodes.v[i].rank = 0;
    u32_vec waits = {0}; /* (derived child, derivation waiting for it) pairs */
    for (uint32_t d = 0; d < nd; d++) {
        const why_deriv *dv = &w->derivs.v[d];
        if (dv->is_input) continue;
        for (uint32_t k = 0; k < dv->nchild; k++) {
            uint32_t ch = w->children.v[dv->child_off + k];
            if (w->nodes.v[ch].kind != WN_DERIVED) continue;
            il_vec_push(waits, ch);
            il_vec_push(waits, d);
            cnt[ch]++;
            pending[d]++;
        }
    }
    uint32_t *start = malloc((nn + 1) * sizeof *start);
    uint32_t total = 0;
    for (uint32_t i = 0; i < nn; i++) {
        start[i] = total;
        total += cnt[i];
    }
    start[nn] = total;
    uint32_t *users = malloc((total + 1) * sizeof *users);
    memset(cnt, 0, (nn + 1) * sizeof *cnt);
    for (uint32_t e = 0; e < waits.n; e += 2) {
        uint32_t ch = waits.v[e];
        users[start[ch] + cnt[ch]++] = waits.v[e + 1];
    }
    il_vec_free(waits);
    u32_vec ready = {0}, later = {0};
    for (uint32_t d = 0; d < nd; d++)
        if (!w->derivs.v[d].is_input && pending[d] == 0) il_vec_push(ready, d);
    for (int32_t round = 1; ready.n; round++) {
        later.n = 0;
        for (uint32_t i = 0; i < ready.n; i++) {
            why_deriv *dv = &w->derivs.v[ready.v[i]];
            dv->rank = round;
            why_node *n = &w->nodes.v[dv->node];
            if (n->rank >= 0) continue;
            n->rank = round;
            uint32_t id = dv->node;
            for (uint32_t u = start[id]; u < start[id + 1]; u++)
                if (--pending[users[u]] == 0) il_vec_push(later, users[u]);
        }
        u32_vec t = ready;
        ready = later;
        later = t;
    }
    il_vec_free(ready);
    il_vec_free(later);
    free(users);
    free(start);
    free(pending);
    free(cnt);
}

/* Whether `target` is reachable from `from` over kept derivations. */
static bool reaches(const why_ctx *w, uint32_t from, uint32_t target, uint32_t *stamp,
                    uint32_t mark, uint32_t *stack) {
    uint32_t sp = 0;
    stack[sp++] = from;
    stamp[from] = mark;
    while (sp) {
        uint32_t id = stack[--sp];
        if (id == target) return true;
        for (uint32_t d = w->nodes.v[id].first; d != WHY_NONE; d = w->derivs.v[d].next) {
            const why_deriv *dv = &w->derivs.v[d];
            if (!dv->kept) continue;
            for (uint32_t in = dv->first_input;; in = w->derivs.v[in].next) {
                const why_deriv *src = in == WHY_NONE ? dv : &w->derivs.v[in];
                for (uint32_t k = 0; k < src->nchild; k++) {
                    uint32_t ch = w->children.v[src->child_off + k];
                    if (stamp[ch] == mark) continue;
                    stamp[ch] = mark;
                    stack[sp++] = ch;
                }
                if (in == WHY_NONE) break;
            }
        }
    }
    return false;
}

static _Thread_local const why_ctx *g_keep_w;
static int cmp_by_rank(const void *a, const void *b) {
    const why_deriv *x = &g_keep_w->derivs.v[*(const uint32_t *)a];
    const why_deriv *y = &g_keep_w->derivs.v[*(const uint32_t *)b];
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    return (i > j) - (i < j);
}

/* Keeps, shortest first, up to max_proofs derivations per node that close no cycle. */
static void keep_derivations(why_ctx *w) {
    IL_VEC(uint32_t) order = {0};
    for (uint32_t d = 0; d < w->derivs.n; d++)
        if (!w->derivs.v[d].is_input && w->derivs.v[d].rank > 0) il_vec_push(order, d);
    g_keep_w = w;
    if (order.n) qsort(order.v, order.n, sizeof *order.v, cmp_by_rank);
    uint32_t nn = w->nodes.n;
    uint32_t *stamp = calloc(nn + 1, sizeof *stamp);
    uint32_t *stack = malloc((nn + 1) * sizeof *stack);
    uint32_t mark = 0;
    for (uint32_t i = 0; i < order.n; i++) {
        why_deriv *dv = &w->derivs.v[order.v[i]];
        why_node *n = &w->nodes.v[dv->node];
        if (n->nkept >= w->max_proofs) {
            n->more = true;
            continue;
        }
        bool cycle = false;
        if (dv->rank > n->rank) {
            /* not one of its shortest: its children must not lead back to it */
            for (uint32_t k = 0; k < dv->nchild && !cycle; k++) {
                uint32_t ch = w->children.v[dv->child_off + k];
                if (ch == dv->node) {
                    cycle = true;
                    break;
                }
                if (++mark == 0) {
                    memset(stamp, 0, (nn + 1) * sizeof *stamp);
                    mark = 1;
                }
                cycle = reaches(w, ch, dv->node, stamp, mark, stack);
            }
        }
        if (cycle) continue;
        dv->kept = true;
        n->nkept++;
    }
    free(stamp);
    free(stack);
    il_vec_free(order);
}

/* ---- `.why` ---- */

/* The query is its goal alone (constants of the goal aside): a row's proof is then the
 * goal's own node. */
static bool is_simple(const iql_query *q) {
    return q->nextra == 0;
}

il_result *kg_why(il_session *s, const iql_meta *m, il_arena *a, bool full) {
    const char *text = m->text;
    if (!m->inner) return res_error("Why error: %s", m->inner_err);
    iql_stmt st = *m->inner;
    if (st.kind != IQL_STMT_QUERY) return res_error("Why error: expected a query (?...)");
    kg_query_opts o = {.raw_headers = true};
    il_result *r = kg_query(s, &st.u.query, o);
    if (r->kind != IL_RESULT_TABLE || r->nrows == 0) return r;
    query_shape shape;
    kg_query_shape(s, &st.u.query, o, a, &shape);
    if (shape.rule.head.nargs != r->width) return r;

    exec_guard *outer = exec_guard_enter(s->guard);
    why_ctx w;
    memset(&w, 0, sizeof w);
    w.max_depth = WHY_MAX_DEPTH;
    w.max_proofs = full ? WHY_MAX_PROOFS_FULL : WHY_MAX_PROOFS;
    w.agg_sample = full ? WHY_AGG_SAMPLE_FULL : WHY_AGG_SAMPLE;
    w.simple_query = is_simple(&st.u.query) && !shape.quirk_all &&
                     strcmp(st.u.query.goal.rel, "hnsw_nearest") != 0;
    /* nodes and derivations point into vals, also those of no values (propositions) */
    il_vec_reserve(w.vals, 1);
    while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r') text++;
    w.query = text;
    prover p;
    memset(&p, 0, sizeof p);
    p.w = &w;
    p.s = s;
    p.a = a;
    kg_graph *g = s->kg;
    for (uint32_t i = 0; i < g->rules.n; i++)
        for (uint32_t j = 0; j < g->rules.v[i]->clauses.n; j++)
            il_vec_push(p.rules, g->rules.v[i]->clauses.v[j]);

    /* A query that is its goal alone proves each row as the goal's tuple, which is the
       row; any other query proves its rows through its own clause (level 0). */
    size_t nrows = r->nrows < WHY_MAX_ROWS ? r->nrows : WHY_MAX_ROWS;
    const iql_atom *goal = &st.u.query.goal;
    uint32_t qrel = rel_id(&w, w.simple_query ? goal->rel : "__query__");
    why_node_kind kind = WN_QUERY;
    if (w.simple_query)
        kind = rel_is_derived(s, goal->rel) ? WN_DERIVED : WN_FACT;
    else
        add_clause(&p, &shape.rule, qrel, 1, true);
    val_t none = 0; /* the row of a query of no columns has no cells */
    uint64_t t0 = exec_clock_ns();
    for (size_t i = 0; i < nrows; i++) {
        bool added;
        const val_t *row = r->width ? &r->cells.v[i * r->width] : &none;
        uint32_t id =
            add_node(&p, qrel, row, (uint32_t)r->width, kind, w.simple_query ? 1 : 0, &added);
        il_vec_push(w.roots, id);
        if (added && kind != WN_FACT) il_vec_push(p.frontier, id);
    }
    expand_all(&p);
    if (!p.error && !(s->guard && s->guard->stop)) {
        compute_ranks(&w);
        keep_derivations(&w);
        il_buf b;
        il_buf_init(&b);
        why_json(&w, &b);
        r->proof_json = il_buf_take(&b);
    }
    s->prove_ns += exec_clock_ns() - t0;
    exec_guard_leave(outer);
    il_vec_free(w.rels);
    il_vec_free(w.roots);
    il_vec_free(w.nodes);
    il_vec_free(w.derivs);
    il_vec_free(w.children);
    il_vec_free(w.vals);
    il_vec_free(w.clauses);
    free(p.table.slots);
    il_vec_free(p.rules);
    il_vec_free(p.frontier);
    il_vec_free(p.next);
    il_vec_free(p.rel_clauses);
    if (s->guard && s->guard->stop) {
        il_result_free(r);
        return res_error("Query execution failed: %s", il_stop_message(s->guard->stop));
    }
    if (p.error) {
        il_result_free(r);
        return res_error("Why error: %s", p.error);
    }
    return r;
}
