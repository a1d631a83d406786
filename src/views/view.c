/* Maintained views (view.h): building a view's program and keeping its relations current
 * under writes, exactly, deletions included.
 *
 * A view is the program plan_build makes for its query (with demand, so `?path(400, Y)`
 * maintains only what node 400 needs) whose derived relations are kept between writes.
 * A write arrives as a base delta: per stored relation, the tuples inserted (plus) and
 * deleted (minus). Nothing is applied until every stratum is done, so each relation can
 * be read in two versions without a copy (view_eval.h's vsrc): a stored relation already
 * holds the NEW state (OLD = stored - plus + minus), a derived one still holds the OLD
 * state (NEW = main - minus + plus). Strata are processed in order, each producing its
 * own plus and minus for the strata above:
 *
 * - Non-recursive strata by counting. A derived tuple keeps its number of derivations
 *   (distinct bindings of a clause body). Per clause, the lost bindings are those found
 *   by seeding one atom from a change that can break it (a deleted tuple of a positive
 *   atom, an appeared tuple of a negated one) with the rest in OLD; the gained ones the
 *   same way from inserted / vanished tuples with the rest in NEW. Candidates are
 *   deduplicated per clause (a binding that used two changed tuples is found twice) and
 *   then checked: lost only if not valid in NEW, gained only if not valid in OLD. The
 *   check makes counts exact even where one binding has several supporting tuples
 *   (`edge(2, Y)` matches both 2 and 2.0). A tuple whose count crosses zero is the
 *   relation's delta.
 * - Recursive strata by DRed, with set semantics: over-delete (everything with a
 *   derivation through a deleted tuple, semi-naively, in OLD), re-derive (over-deleted
 *   tuples that still have a derivation in NEW), then insert semi-naively from the
 *   re-derived tuples and the inserted inputs, in NEW.
 * - Aggregating strata per group. The view keeps the clause's distinct body bindings
 *   (the set the aggregate reads) with an index on the group variables. A write's lost
 *   and gained bindings are found as for counting; only the groups they touch are
 *   aggregated again, from that index, and their rows compared with the group's old
 *   rows. Every aggregate (count, sum, min, max, avg, top_k...) takes this one path:
 *   exact, and proportional to the touched groups' sizes rather than to the relation.
 *   A stratum of several clauses for one head, or with more variables than a tuple
 *   holds, is recomputed whole instead.
 *
 * A view's rows are first computed as a query computes them (exec_run), and its derived
 * relations are kept as they come out of it; what only a write needs is built from the
 * state before the first write that needs it: a counted stratum's derivation counts, an
 * aggregating stratum's bindings. DRed and recomputing need nothing but the rows. When
 * the query reads a derived predicate as it is (`?reach(V0, V1)`), its rows are that
 * predicate's, not a copy.
 *
 * A change of rules, or of which stored relations exist (both bump the graph's version),
 * rebuilds the view from scratch; the delta is then the difference of the two states. */
#include "views/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/aggregate.h"
#include "exec/builtin.h"
#include "exec/eval.h"
#include "exec/expr.h"
#include "exec/tuplesort.h"
#include "iql/parser.h"
#include "plan/build.h"
#include "views/catalog.h"
#include "views/view_eval.h"

typedef enum vkind {
    VK_BASE,      /* stored facts */
    VK_COUNT,     /* non-recursive: counted derivations */
    VK_DRED,      /* recursive: a set, maintained by DRed */
    VK_GROUPS,    /* aggregating, one clause: touched groups recomputed from its bindings */
    VK_RECOMPUTE, /* aggregating otherwise: recomputed whole when an input changed */
    VK_ALIAS,     /* the query predicate when it is a derived predicate as it is: its rows */
} vkind;

/* A program predicate's maintained state and this write's change. */
typedef struct vpred {
    vkind kind;
    uint32_t arity;         /* tuple width (at least 1) */
    const rel_t *stored;    /* VK_BASE: the catalog's facts now (looked up per write) */
    rel_t *main;            /* derived: the rows before this write (counted for VK_COUNT) */
    rel_t *plus, *minus;    /* this write's change; for VK_BASE the catalog's delta (not owned) */
    rel_t *gain, *loss;     /* VK_COUNT: derivations gained and lost per tuple */
    rel_t *fresh;           /* VK_RECOMPUTE: the new rows */
    rel_t *work, *worknext; /* VK_DRED: the semi-naive frontier and the next one */
    const plan_clause *agg; /* VK_GROUPS: the aggregating clause */
    rel_t *bindings;        /* VK_GROUPS: its distinct body bindings, now */
    int group_index;        /* VK_GROUPS: the index of `bindings` on the group variables */
    /* VK_COUNT: `main` is a plain set, its derivations not counted yet; VK_GROUPS: no
       `bindings` yet. Built from the state before the first write that needs them, so a
       view that is only read never pays for them. */
    bool lazy;
    uint32_t alias; /* VK_ALIAS: the predicate whose rows are the query's */
} vpred;

/* A write's changes (plus, minus, gains, losses, work) live in relations made for it and
 * dropped once it is applied; up to this many are kept, emptied, for the next write: a
 * keyed write made and freed two, an allocation of the relation and of its node pool
 * each. */
enum { VIEW_SPARES = 8 };

struct view {
    il_engine *e;      /* the engine, for rebuilds */
    kg_graph *g;       /* NULL once the graph is dropped */
    char *text;        /* the query statement, parsed again on each rebuild */
    il_arena arena;    /* the parsed query and its rule (the program points into them) */
    plan_program prog; /* the program; valid while `built` */
    bool built;
    vpred *preds;               /* per program predicate */
    uint32_t arity;             /* the query's columns */
    uint64_t version;           /* the graph's version the program was built against */
    rel_t *pend_plus;           /* rows appeared since the last view_take_delta */
    rel_t *pend_minus;          /* rows vanished since then */
    char *error;                /* why the view is empty, or NULL */
    bool overran;               /* the error: the maintenance budget ran out */
    uint64_t groups_recomputed; /* aggregate groups recomputed by writes (for tests) */
    bool refuse_clock;          /* view_opts */
    bool lazy;                  /* view_opts */
    bool own_clauses;           /* view_opts */
    rel_t *spares[VIEW_SPARES]; /* emptied change relations, for the next write */
    uint32_t nspares;
};

static _Thread_local char g_err[1024];

/* The maintenance budget of the view being brought up to date now (for one commit, or
 * one build): its end on CLOCK_MONOTONIC (0: none), and whether it ran out. Checked per
 * stratum, per round of a recursion (the only work that may not end) and every few
 * thousand tuples a clause walks (a stratum that is merely huge). */
static _Thread_local uint64_t g_budget_end;
static _Thread_local bool g_overrun;

static bool out_of_budget(void) {
    if (!g_budget_end || g_overrun) return g_overrun;
    g_overrun = exec_clock_ns() >= g_budget_end;
    return g_overrun;
}

static void budget_start(uint64_t ns) {
    g_overrun = false;
    g_budget_end = ns ? exec_clock_ns() + ns : 0;
}

/* ---- small helpers ---- */

static bool nonempty(const rel_t *r) {
    return r && rel_count(r) > 0;
}

static bool changed(const vpred *p) {
    return nonempty(p->plus) || nonempty(p->minus);
}

/* The tuples of a version of a predicate. */
static vsrc pred_src(const view_t *v, uint32_t pred, bool new_state) {
    const vpred *p = &v->preds[pred];
    vsrc s = {0};
    if (p->kind == VK_BASE) {
        s.a = p->stored;
        if (!new_state) {
            s.skip = p->plus;
            s.extra = p->minus;
        }
    } else {
        s.a = p->main;
        if (new_state) {
            s.skip = p->minus;
            s.extra = p->plus;
        }
    }
    return s;
}

/* The predicate whose rows are the view's: the query's, or the one it aliases. */
static vpred *query_vpred(const view_t *v) {
    vpred *q = &v->preds[v->prog.query_pred];
    return q->kind == VK_ALIAS ? &v->preds[q->alias] : q;
}

static rel_t *spare_or_new(view_t *v, uint32_t arity, bool counted) {
    for (uint32_t i = v->nspares; i-- > 0;) {
        rel_t *r = v->spares[i];
        if (rel_arity(r) == arity && rel_is_counted(r) == counted) {
            v->spares[i] = v->spares[--v->nspares];
            return r;
        }
    }
    return counted ? rel_new_counted(arity) : rel_new(arity);
}

/* Drops a change relation: kept, emptied, as a spare when there is room. */
static void recycle(view_t *v, rel_t **r) {
    if (!*r) return;
    if (v->nspares < VIEW_SPARES) {
        rel_clear(*r);
        v->spares[v->nspares++] = *r;
    } else {
        rel_free(*r);
    }
    *r = NULL;
}

static rel_t *ensure(view_t *v, rel_t **r, uint32_t arity) {
    if (!*r) *r = spare_or_new(v, arity, false);
    return *r;
}

static rel_t *ensure_counted(view_t *v, rel_t **r, uint32_t arity) {
    if (!*r) *r = spare_or_new(v, arity, true);
    return *r;
}

static void free_rel(rel_t **r) {
    if (*r) rel_free(*r);
    *r = NULL;
}

/* Calls fn for every tuple of r (the relation must not change meanwhile). */
#define FOR_TUPLES(r, t)                                                                           \
    for (rel_cursor cur_##t, *once_##t = (rel_seek((r), 0, NULL, 0, &cur_##t), &cur_##t);          \
         once_##t; once_##t = NULL)                                                                \
        for (const val_t *t; (t = rel_next(&cur_##t, NULL));)

/* ---- running clause variants ---- */

typedef struct state_of {
    const view_t *v;
    bool new_state;
} state_of;

static vsrc state_src(const void *ctx, uint32_t pred) {
    const state_of *st = ctx;
    return pred_src(st->v, pred, st->new_state);
}

/* Runs clause c with atoms reading `new_state` versions; with seed >= 0, op `seed`
 * first iterates `seed_src` (vx_run_clause). */
static void run_variant(const view_t *v, const plan_clause *c, int32_t seed, vsrc seed_src,
                        bool new_state, vemit_fn emit, void *ctx, const val_t *pre,
                        const bool *prebound) {
    vexec x = {.emit = emit, .ctx = ctx, .spent = out_of_budget};
    state_of st = {v, new_state};
    vx_run_clause(&x, c, seed, seed_src, state_src, &st, pre, prebound);
}

static void emit_binding(vexec *x, const val_t *regs, void *ctx) {
    (void)x;
    tupleset_insert(ctx, regs);
}

static void emit_found(vexec *x, const val_t *regs, void *ctx) {
    (void)regs;
    *(bool *)ctx = true;
    x->stop = true;
}

typedef struct head_out {
    tupleset *set;     /* head tuples */
    const val_t *want; /* when set: only report whether this head is produced */
    bool found;
} head_out;

static void emit_head(vexec *x, const val_t *regs, void *ctx) {
    head_out *h = ctx;
    val_t t[REL_MAX_ARITY];
    vx_head(x->c, regs, t);
    if (h->want) {
        uint32_t w = x->c->nhead ? x->c->nhead : 1;
        if (memcmp(t, h->want, w * sizeof *t) == 0) {
            h->found = true;
            x->stop = true;
        }
        return;
    }
    tupleset_insert(h->set, t);
}

/* Whether a complete binding satisfies the clause in a state. */
static bool binding_valid(const view_t *v, const plan_clause *c, const val_t *b, bool new_state) {
    uint32_t ns = c->nslots ? c->nslots : 1;
    bool all_small[64];
    bool *all = ns <= 64 ? all_small : malloc(ns);
    memset(all, 1, ns);
    bool found = false;
    run_variant(v, c, -1, (vsrc){0}, new_state, emit_found, &found, b, all);
    if (all != all_small) free(all);
    return found;
}

static uint32_t slots_width(const plan_clause *c) {
    return c->nslots ? c->nslots : 1;
}

/* ---- non-recursive strata: counting ---- */

/* The candidate bindings a write may have taken from the clause (lost, found in OLD) and
 * given to it (gained, found in NEW), each deduplicated. The caller checks each against
 * the other state: a candidate may still hold there. */
static void changed_bindings(view_t *v, const plan_clause *c, tupleset *lost, tupleset *gained) {
    for (uint32_t i = 0; i < c->nops; i++) {
        const plan_op *op = &c->ops[i];
        if (op->kind != POP_SCAN && op->kind != POP_NEG) continue;
        const vpred *p = &v->preds[op->pred];
        /* what breaks a binding: a positive atom's tuple deleted, a negated one's added */
        const rel_t *breaks = op->kind == POP_SCAN ? p->minus : p->plus;
        const rel_t *makes = op->kind == POP_SCAN ? p->plus : p->minus;
        if (nonempty(breaks))
            run_variant(v, c, (int32_t)i, (vsrc){breaks, NULL, NULL}, false, emit_binding, lost,
                        NULL, NULL);
        if (nonempty(makes))
            run_variant(v, c, (int32_t)i, (vsrc){makes, NULL, NULL}, true, emit_binding, gained,
                        NULL, NULL);
    }
}

/* Every distinct binding of the clause in the state before this write. */
static void all_bindings_before(view_t *v, const plan_clause *c, tupleset *out) {
    run_variant(v, c, -1, (vsrc){0}, false, emit_binding, out, NULL, NULL);
}

/* Counts the derivations of a counted stratum built lazily (its rows came from
 * evaluation), from the state before this write: the strata below it have not applied
 * their changes yet, so they still hold it beside the change. */
static void count_materialize(view_t *v, const plan_stratum *st) {
    vpred *h = &v->preds[st->preds[0]];
    rel_t *counted = rel_new_counted(h->arity);
    val_t t[REL_MAX_ARITY];
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &v->prog.clauses.v[st->clauses[i]];
        uint32_t w = slots_width(c);
        tupleset b;
        tupleset_init(&b, w);
        all_bindings_before(v, c, &b);
        for (uint32_t k = 0; k < b.n; k++) {
            vx_head(c, &b.tuples[(size_t)k * w], t);
            rel_add_count(counted, t, 1);
        }
        tupleset_free(&b);
    }
    /* in place: cached programs read the maintained rows through this pointer */
    rel_swap(h->main, counted);
    rel_free(counted);
    h->lazy = false;
}

/* Whether atom op's tuple is fixed by a binding of its clause: every column a slot's value
 * or a constant of one form (1 and 1.0 both match a numeric constant, so the binding would
 * not say which of the two its tuple holds). */
static bool atom_fixed_by_binding(const plan_op *op) {
    if (op->arity == 0) return false;
    bool is_prefix[REL_MAX_ARITY] = {0};
    for (uint32_t p = 0; p < op->nprefix; p++) is_prefix[op->order[p]] = true;
    val_t alt;
    for (uint32_t col = 0; col < op->arity; col++) {
        if (is_prefix[col]) {
            if (op->prefix_slot[col] >= 0 || op->prefix_bind[col] >= 0 ||
                op->prefix_check[col] >= 0)
                continue;
            if (exec_numeric_alternative(op->prefix_const[col], &alt)) return false;
        } else if (op->act[col] != PCOL_BIND && op->act[col] != PCOL_CHECK_SLOT &&
                   (op->act[col] != PCOL_CHECK_CONST ||
                    exec_numeric_alternative(op->act_const[col], &alt))) {
            return false;
        }
    }
    return true;
}

/* Whether every binding changed_bindings finds gained (gains) or lost (!gains) through
 * clause c certainly did not hold in the other state, so that binding_valid need not ask:
 * each came from an atom seeded with a tuple the write added to (or removed from) its
 * predicate, a tuple the other state cannot hold when the change is net (a stored
 * relation's delta, or a counted predicate's) and the binding fixes the whole tuple. */
static bool changes_certain(const view_t *v, const plan_clause *c, bool gains) {
    for (uint32_t i = 0; i < c->nops; i++) {
        const plan_op *op = &c->ops[i];
        if (op->kind != POP_SCAN && op->kind != POP_NEG) continue;
        const vpred *p = &v->preds[op->pred];
        if (!nonempty((op->kind == POP_SCAN) == gains ? p->plus : p->minus)) continue;
        if ((p->kind != VK_BASE && p->kind != VK_COUNT) || !atom_fixed_by_binding(op)) return false;
    }
    return true;
}

static void count_clause(view_t *v, const plan_clause *c) {
    vpred *h = &v->preds[c->head_pred];
    uint32_t w = slots_width(c);
    tupleset lost, gained;
    tupleset_init(&lost, w);
    tupleset_init(&gained, w);
    changed_bindings(v, c, &lost, &gained);
    /* A keyed write's one new binding was half its view's upkeep when asked again. */
    bool lost_certain = lost.n && changes_certain(v, c, false);
    bool gained_certain = gained.n && changes_certain(v, c, true);
    val_t t[REL_MAX_ARITY];
    for (uint32_t k = 0; k < lost.n; k++) {
        const val_t *b = &lost.tuples[(size_t)k * w];
        if (!lost_certain && binding_valid(v, c, b, true)) continue;
        vx_head(c, b, t);
        rel_add_count(ensure_counted(v, &h->loss, h->arity), t, 1);
    }
    for (uint32_t k = 0; k < gained.n; k++) {
        const val_t *b = &gained.tuples[(size_t)k * w];
        if (!gained_certain && binding_valid(v, c, b, false)) continue;
        vx_head(c, b, t);
        rel_add_count(ensure_counted(v, &h->gain, h->arity), t, 1);
    }
    tupleset_free(&lost);
    tupleset_free(&gained);
}

/* Turns the derivation changes of a counted predicate into its plus and minus. */
static void count_delta(view_t *v, vpred *h) {
    if (h->gain) {
        int64_t g;
        rel_cursor cur;
        rel_seek(h->gain, 0, NULL, 0, &cur);
        const val_t *t;
        while ((t = rel_next(&cur, &g))) {
            int64_t l = h->loss ? rel_get_count(h->loss, t) : 0;
            int64_t old = rel_get_count(h->main, t);
            if (old <= 0 && old + g - l > 0) rel_insert(ensure(v, &h->plus, h->arity), t);
            if (old > 0 && old + g - l <= 0) rel_insert(ensure(v, &h->minus, h->arity), t);
        }
    }
    if (h->loss) {
        int64_t l;
        rel_cursor cur;
        rel_seek(h->loss, 0, NULL, 0, &cur);
        const val_t *t;
        while ((t = rel_next(&cur, &l))) {
            if (h->gain && rel_get_count(h->gain, t)) continue;
            int64_t old = rel_get_count(h->main, t);
            if (old > 0 && old - l <= 0) rel_insert(ensure(v, &h->minus, h->arity), t);
        }
    }
}

/* ---- aggregating strata: recomputed ---- */

static void recompute_pred(view_t *v, const plan_stratum *st, uint32_t pred) {
    vpred *h = &v->preds[pred];
    h->fresh = rel_new(h->arity);
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &v->prog.clauses.v[st->clauses[i]];
        if (c->head_pred != pred) continue;
        if (c->is_agg) {
            tupleset b;
            tupleset_init(&b, slots_width(c));
            run_variant(v, c, -1, (vsrc){0}, true, emit_binding, &b, NULL, NULL);
            exec_aggregate(c, b.tuples, b.n, h->fresh);
            tupleset_free(&b);
        } else {
            tupleset hs;
            tupleset_init(&hs, h->arity);
            head_out out = {.set = &hs};
            run_variant(v, c, -1, (vsrc){0}, true, emit_head, &out, NULL, NULL);
            for (uint32_t k = 0; k < hs.n; k++)
                rel_insert(h->fresh, &hs.tuples[(size_t)k * h->arity]);
            tupleset_free(&hs);
        }
    }
    FOR_TUPLES(h->fresh, t) {
        if (!rel_contains(h->main, t)) rel_insert(ensure(v, &h->plus, h->arity), t);
    }
    FOR_TUPLES(h->main, t) {
        if (!rel_contains(h->fresh, t)) rel_insert(ensure(v, &h->minus, h->arity), t);
    }
}

/* Aggregates one group again from the kept bindings (`key` = its group values) and
 * records how its rows changed. */
static void regroup(view_t *v, vpred *h, const val_t *key, rel_t *scratch) {
    const plan_clause *c = h->agg;
    uint32_t w = slots_width(c), ng = c->ngroup;
    IL_VEC(val_t) rows = {0};
    const uint32_t *order = rel_index_order(h->bindings, h->group_index);
    rel_cursor cur;
    rel_seek(h->bindings, h->group_index, key, ng, &cur);
    for (const val_t *t; (t = rel_next(&cur, NULL));) {
        il_vec_reserve(rows, rows.n + w);
        for (uint32_t p = 0; p < w; p++) rows.v[rows.n + order[p]] = t[p];
        rows.n += w;
    }
    rel_clear(scratch);
    exec_aggregate(c, rows.v, rows.n / w, scratch);
    il_vec_free(rows);
    FOR_TUPLES(scratch, t) {
        if (!rel_contains(h->main, t)) rel_insert(ensure(v, &h->plus, h->arity), t);
    }
    /* the group's old rows: the head starts with the group values */
    rel_seek(h->main, 0, key, ng, &cur);
    for (const val_t *t; (t = rel_next(&cur, NULL));)
        if (!rel_contains(scratch, t)) rel_insert(ensure(v, &h->minus, h->arity), t);
    v->groups_recomputed++;
}

/* The aggregating clause's bindings for a stratum built lazily (its rows came from
 * evaluation), from the state before this write, indexed by the group variables. */
static void groups_materialize(view_t *v, vpred *h) {
    const plan_clause *c = h->agg;
    uint32_t w = slots_width(c);
    tupleset b;
    tupleset_init(&b, w);
    all_bindings_before(v, c, &b);
    h->bindings = rel_new(w);
    /* loaded sorted, the tree is built bottom-up; no guard runs here, so the sort ends */
    if (!b.n || !tuple_sort(b.tuples, b.n, w) || !rel_load_sorted(h->bindings, b.tuples, b.n))
        for (uint32_t k = 0; k < b.n; k++) rel_insert(h->bindings, &b.tuples[(size_t)k * w]);
    tupleset_free(&b);
    h->group_index = c->ngroup ? rel_index(h->bindings, c->group_slots, c->ngroup) : 0;
    h->lazy = false;
}

static void groups_stratum(view_t *v, uint32_t pred) {
    vpred *h = &v->preds[pred];
    const plan_clause *c = h->agg;
    if (h->lazy) groups_materialize(v, h);
    uint32_t w = slots_width(c), ng = c->ngroup;
    tupleset lost, gained, touched;
    tupleset_init(&lost, w);
    tupleset_init(&gained, w);
    tupleset_init(&touched, ng ? ng : 1);
    changed_bindings(v, c, &lost, &gained);
    /* The bindings are read by nothing but this aggregate: updated in place. */
    val_t key[REL_MAX_ARITY] = {0};
    for (int side = 0; side < 2; side++) {
        const tupleset *set = side ? &gained : &lost;
        for (uint32_t k = 0; k < set->n; k++) {
            const val_t *b = &set->tuples[(size_t)k * w];
            bool moved = side ? rel_insert(h->bindings, b)
                              : !binding_valid(v, c, b, true) && rel_delete(h->bindings, b);
            if (!moved) continue;
            for (uint32_t i = 0; i < ng; i++) key[i] = b[c->group_slots[i]];
            tupleset_insert(&touched, key);
        }
    }
    rel_t *scratch = rel_new(h->arity);
    for (uint32_t k = 0; k < touched.n; k++)
        regroup(v, h, &touched.tuples[(size_t)k * (ng ? ng : 1)], scratch);
    rel_free(scratch);
    tupleset_free(&lost);
    tupleset_free(&gained);
    tupleset_free(&touched);
}

/* ---- recursive strata: DRed ---- */

typedef struct dred {
    view_t *v;
    const plan_stratum *st;
    uint32_t sidx; /* the stratum's index */
} dred;

static bool in_stratum(const dred *d, uint32_t pred) {
    return d->v->prog.preds.v[pred].stratum == d->sidx;
}

/* Moves every predicate's next frontier into its current one; false when all empty. */
static bool advance(dred *d) {
    bool any = false;
    for (uint32_t i = 0; i < d->st->npreds; i++) {
        vpred *p = &d->v->preds[d->st->preds[i]];
        if (p->kind != VK_DRED) continue;
        recycle(d->v, &p->work);
        p->work = p->worknext;
        p->worknext = NULL;
        if (nonempty(p->work)) any = true;
    }
    return any;
}

/* Runs a clause variant and hands every head tuple to `take` (after the run: a run never
 * writes what it reads). */
static void variant_heads(dred *d, const plan_clause *c, int32_t seed, vsrc src, bool new_state,
                          void (*take)(dred *, vpred *, const val_t *)) {
    vpred *h = &d->v->preds[c->head_pred];
    tupleset hs;
    tupleset_init(&hs, h->arity);
    head_out out = {.set = &hs};
    run_variant(d->v, c, seed, src, new_state, emit_head, &out, NULL, NULL);
    for (uint32_t k = 0; k < hs.n; k++) take(d, h, &hs.tuples[(size_t)k * h->arity]);
    tupleset_free(&hs);
}

static void take_overdelete(dred *d, vpred *h, const val_t *t) {
    view_t *v = d->v;
    if (!rel_contains(h->main, t) || (h->minus && rel_contains(h->minus, t))) return;
    rel_insert(ensure(v, &h->minus, h->arity), t);
    rel_insert(ensure(v, &h->worknext, h->arity), t);
}

static void take_insert(dred *d, vpred *h, const val_t *t) {
    view_t *v = d->v;
    bool in_main = rel_contains(h->main, t);
    bool present = (in_main && !(h->minus && rel_contains(h->minus, t))) ||
                   (h->plus && rel_contains(h->plus, t));
    if (present) return;
    if (in_main)
        rel_delete(h->minus, t); /* re-derived */
    else
        rel_insert(ensure(v, &h->plus, h->arity), t);
    rel_insert(ensure(v, &h->worknext, h->arity), t);
}

/* Seeds from the changes of lower strata: `breaking` selects deletions of positive atoms
 * and additions of negated ones (over-delete), otherwise the reverse (insert). */
static void seed_from_inputs(dred *d, bool breaking, bool new_state,
                             void (*take)(dred *, vpred *, const val_t *)) {
    for (uint32_t i = 0; i < d->st->nclauses; i++) {
        const plan_clause *c = &d->v->prog.clauses.v[d->st->clauses[i]];
        if (c->delta_op >= 0) continue; /* our own variants replace the compiled ones */
        for (uint32_t o = 0; o < c->nops; o++) {
            const plan_op *op = &c->ops[o];
            if ((op->kind != POP_SCAN && op->kind != POP_NEG) || in_stratum(d, op->pred)) continue;
            const vpred *p = &d->v->preds[op->pred];
            const rel_t *r = (op->kind == POP_SCAN) == breaking ? p->minus : p->plus;
            if (nonempty(r))
                variant_heads(d, c, (int32_t)o, (vsrc){r, NULL, NULL}, new_state, take);
        }
    }
}

/* Semi-naive rounds: each positive atom over the stratum reads the frontier in turn. */
static void propagate(dred *d, bool new_state, void (*take)(dred *, vpred *, const val_t *)) {
    while (!out_of_budget() && advance(d)) {
        for (uint32_t i = 0; i < d->st->nclauses; i++) {
            const plan_clause *c = &d->v->prog.clauses.v[d->st->clauses[i]];
            if (c->delta_op >= 0) continue;
            for (uint32_t o = 0; o < c->nops; o++) {
                const plan_op *op = &c->ops[o];
                if (op->kind != POP_SCAN || !in_stratum(d, op->pred)) continue;
                const vpred *p = &d->v->preds[op->pred];
                if (nonempty(p->work))
                    variant_heads(d, c, (int32_t)o, (vsrc){p->work, NULL, NULL}, new_state, take);
            }
        }
    }
}

/* Whether tuple t of pred has a derivation in NEW (clauses with the head bound). */
static bool rederivable(dred *d, uint32_t pred, const val_t *t) {
    for (uint32_t i = 0; i < d->st->nclauses; i++) {
        const plan_clause *c = &d->v->prog.clauses.v[d->st->clauses[i]];
        if (c->delta_op >= 0 || c->head_pred != pred) continue;
        uint32_t ns = slots_width(c);
        val_t pre[ns];
        bool bound[ns];
        memset(bound, 0, sizeof bound);
        bool possible = true;
        for (uint32_t k = 0; k < c->nhead && possible; k++) {
            if (c->head[k]->kind != PX_SLOT) continue;
            uint32_t s = c->head[k]->slot;
            if (bound[s] && pre[s] != t[k]) possible = false;
            pre[s] = t[k];
            bound[s] = true;
        }
        if (!possible) continue;
        head_out out = {.want = t};
        run_variant(d->v, c, -1, (vsrc){0}, true, emit_head, &out, pre, bound);
        if (out.found) return true;
    }
    return false;
}

static void dred_stratum(view_t *v, const plan_stratum *st, uint32_t sidx) {
    dred d = {v, st, sidx};
    /* 1. over-delete, in OLD */
    seed_from_inputs(&d, true, false, take_overdelete);
    propagate(&d, false, take_overdelete);
    /* 2. re-derive what still has a derivation in NEW */
    for (uint32_t i = 0; i < st->npreds; i++) {
        uint32_t pred = st->preds[i];
        vpred *p = &v->preds[pred];
        if (p->kind != VK_DRED || !nonempty(p->minus)) continue;
        size_t n = rel_count(p->minus), k = 0;
        val_t *list = malloc(n * p->arity * sizeof *list);
        FOR_TUPLES(p->minus, t) {
            memcpy(&list[k++ * p->arity], t, p->arity * sizeof *t);
        }
        for (k = 0; k < n; k++) {
            const val_t *t = &list[k * p->arity];
            if (!rederivable(&d, pred, t)) continue;
            rel_delete(p->minus, t);
            rel_insert(ensure(v, &p->worknext, p->arity), t);
        }
        free(list);
    }
    /* 3. insert, in NEW: from the re-derived tuples and the inputs' additions */
    seed_from_inputs(&d, false, true, take_insert);
    propagate(&d, true, take_insert);
}

/* ---- a write ---- */

static bool stratum_inputs_changed(const view_t *v, const plan_stratum *st) {
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &v->prog.clauses.v[st->clauses[i]];
        for (uint32_t o = 0; o < c->nops; o++) {
            const plan_op *op = &c->ops[o];
            if ((op->kind == POP_SCAN || op->kind == POP_NEG) && changed(&v->preds[op->pred]))
                return true;
        }
    }
    return false;
}

/* Brings every stratum whose inputs changed up to date with this write (the query's
 * stratum too, unless it aliases a predicate). Nothing is applied yet. */
static void run_strata(view_t *v) {
    for (uint32_t s = 0; s < v->prog.strata.n && !out_of_budget(); s++) {
        const plan_stratum *st = &v->prog.strata.v[s];
        if (!st->nclauses || !stratum_inputs_changed(v, st)) continue;
        vpred *p = &v->preds[st->preds[0]];
        if (p->kind == VK_DRED) {
            dred_stratum(v, st, s);
        } else if (p->kind == VK_GROUPS) {
            groups_stratum(v, st->preds[0]);
        } else if (p->kind == VK_RECOMPUTE) {
            recompute_pred(v, st, st->preds[0]);
        } else if (p->kind == VK_COUNT) {
            if (p->lazy) count_materialize(v, st);
            for (uint32_t i = 0; i < st->nclauses; i++)
                count_clause(v, &v->prog.clauses.v[st->clauses[i]]);
            count_delta(v, p);
        }
    }
}

static void note_pending(view_t *v, const rel_t *plus, const rel_t *minus) {
    if (plus) FOR_TUPLES(plus, t) {
            if (!rel_delete(v->pend_minus, t)) rel_insert(v->pend_plus, t);
        }
    if (minus) FOR_TUPLES(minus, t) {
            if (!rel_delete(v->pend_plus, t)) rel_insert(v->pend_minus, t);
        }
}

/* Applies every derived predicate's change and forgets the write. */
static void apply(view_t *v) {
    for (uint32_t i = 0; i < v->prog.preds.n; i++) {
        vpred *p = &v->preds[i];
        switch (p->kind) {
        case VK_BASE:
            p->plus = p->minus = NULL;
            p->stored = NULL;
            continue;
        case VK_ALIAS:
            continue;
        case VK_COUNT:
            if (p->gain) {
                int64_t g;
                rel_cursor cur;
                rel_seek(p->gain, 0, NULL, 0, &cur);
                const val_t *t;
                while ((t = rel_next(&cur, &g))) {
                    int64_t l = p->loss ? rel_get_count(p->loss, t) : 0;
                    if (g != l) rel_add_count(p->main, t, g - l);
                }
            }
            if (p->loss) {
                int64_t l;
                rel_cursor cur;
                rel_seek(p->loss, 0, NULL, 0, &cur);
                const val_t *t;
                while ((t = rel_next(&cur, &l)))
                    if (!p->gain || !rel_get_count(p->gain, t)) rel_add_count(p->main, t, -l);
            }
            break;
        case VK_DRED:
        case VK_GROUPS:
            if (p->minus) FOR_TUPLES(p->minus, t) rel_delete(p->main, t);
            if (p->plus) FOR_TUPLES(p->plus, t) rel_insert(p->main, t);
            break;
        case VK_RECOMPUTE:
            if (p->fresh) {
                /* in place: cached programs read the maintained rows through this pointer */
                rel_swap(p->main, p->fresh);
                free_rel(&p->fresh);
            }
            break;
        }
        recycle(v, &p->plus);
        recycle(v, &p->minus);
        recycle(v, &p->gain);
        recycle(v, &p->loss);
        recycle(v, &p->work);
        recycle(v, &p->worknext);
    }
}

/* Points the base predicates at the catalog's relations and this write's delta. */
static void bind_base(view_t *v, const view_delta_rel *delta, uint32_t ndelta) {
    for (uint32_t i = 0; i < v->prog.preds.n; i++) {
        vpred *p = &v->preds[i];
        if (p->kind != VK_BASE) continue;
        const char *name = v->prog.preds.v[i].name;
        p->stored = view_cat_stored(v->g, name);
        p->plus = p->minus = NULL;
        for (uint32_t k = 0; k < ndelta; k++) {
            const view_delta_rel *d = &delta[k];
            if (strcmp(d->name, name) != 0) continue;
            p->plus = d->plus;
            p->minus = d->minus;
        }
    }
}

/* Why a view stopped: while maintained (it stays failed until the rules change) or while
 * being built. */
static const char *overrun_message(const view_t *v, bool maintained) {
    snprintf(g_err, sizeof g_err,
             "%sts rows took more than %llu ms to compute (a recursion that keeps deriving "
             "new rows?)%s",
             maintained ? "The view is not maintained: i" : "I",
             (unsigned long long)(view_cat_budget_ns(v->e) / 1000000u),
             maintained ? "; it fails until the rules change" : "");
    return g_err;
}

static void drop_state(view_t *v);

static void maintain(view_t *v, const view_delta_rel *delta, uint32_t ndelta) {
    bind_base(v, delta, ndelta);
    bool any = false;
    for (uint32_t i = 0; i < v->prog.preds.n && !any; i++) any = changed(&v->preds[i]);
    if (any) {
        run_strata(v);
        if (g_overrun) {
            /* nothing was applied: the half-done change goes with the rest */
            drop_state(v);
            v->error = strdup(overrun_message(v, true));
            v->overran = true;
            return;
        }
        const vpred *q = query_vpred(v);
        note_pending(v, q->plus, q->minus);
    }
    apply(v);
}

/* ---- building ---- */

static const rel_t *stored_of(void *ctx, const char *rel) {
    return view_cat_stored(ctx, rel);
}

static void drop_state(view_t *v) {
    if (!v->built) return;
    /* A build that failed before its predicates were set up has none to free. */
    for (uint32_t i = 0; v->preds && i < v->prog.preds.n; i++) {
        vpred *p = &v->preds[i];
        if (p->kind != VK_BASE) {
            free_rel(&p->plus);
            free_rel(&p->minus);
        }
        free_rel(&p->main);
        free_rel(&p->gain);
        free_rel(&p->loss);
        free_rel(&p->fresh);
        free_rel(&p->work);
        free_rel(&p->worknext);
        free_rel(&p->bindings);
    }
    free(v->preds);
    v->preds = NULL;
    plan_program_free(&v->prog);
    v->built = false;
    il_arena_destroy(&v->arena);
}

static const char *set_err(const char *fmt, const char *what) {
    snprintf(g_err, sizeof g_err, fmt, what);
    return g_err;
}

/* The predicate the query's one clause reads as it is (`?reach(V0, V1)` over the
 * derived `reach`), or -1: the view's rows are then that predicate's, kept once. */
static int32_t alias_of(const plan_program *p) {
    const plan_pred *q = &p->preds.v[p->query_pred];
    const plan_stratum *st = &p->strata.v[q->stratum];
    if (st->npreds != 1 || st->nclauses != 1 || q->arity == 0) return -1;
    const plan_clause *c = &p->clauses.v[st->clauses[0]];
    if (c->is_agg || c->error || c->nops != 1 || c->nhead != q->arity) return -1;
    const plan_op *op = &c->ops[0];
    if (op->kind != POP_SCAN || op->version != PV_FULL || op->nprefix || op->arity != q->arity)
        return -1;
    const plan_pred *src = &p->preds.v[op->pred];
    if (src->kind != PP_DERIVED || src->arity != q->arity) return -1;
    /* every column bound to its own variable (a repeated one would be a check), in order */
    for (uint32_t col = 0; col < op->arity; col++)
        if (op->act[col] != PCOL_BIND || c->head[col]->kind != PX_SLOT ||
            c->head[col]->slot != op->act_slot[col])
            return -1;
    return (int32_t)op->pred;
}

/* The query's rows of an evaluation as a relation. */
static rel_t *rows_rel(tupleset *rows, uint32_t arity) {
    rel_t *r = rel_new(arity);
    /* loaded sorted, the tree is built bottom-up */
    if (!rows->n || !tuple_sort(rows->tuples, rows->n, arity) ||
        !rel_load_sorted(r, rows->tuples, rows->n))
        for (uint32_t k = 0; k < rows->n; k++) rel_insert(r, &rows->tuples[(size_t)k * arity]);
    return r;
}

/* Computes the view's rows as a query computes them (exec_run: semi-naive, partitioned
 * recursion) and keeps the derived relations as the view's state. What only a write
 * needs (derivation counts, an aggregate's bindings) is built at the first write that
 * needs it, so a view that is only read costs what evaluating its query costs. Runs
 * under `guard` (a statement's), or else within the maintenance budget. */
static const char *evaluate(view_t *v, exec_guard *guard, bool *stopped) {
    plan_program *p = &v->prog;
    int32_t alias = alias_of(p);
    exec_guard local;
    exec_guard *g = guard;
    uint64_t budget = view_cat_budget_ns(v->e);
    if (!g && budget) {
        exec_guard_init(&local, NULL, exec_clock_ns() + budget, 0, NULL);
        g = &local;
    }
    exec_ctx x = {.guard = g, .skip_query = alias >= 0};
    bool ran = exec_run(p, &x);
    il_stop stop = g ? g->stop : IL_STOP_NONE;
    if (g == &local) exec_guard_finish(&local);
    if (!ran) {
        plan_program_reset(p);
        if (x.error != EXEC_STOPPED) return set_err("Query execution failed: %s", x.error);
        if (guard) {
            *stopped = true;
            return il_stop_message(stop);
        }
        g_overrun = true;
        return overrun_message(v, v->pend_plus != NULL);
    }
    for (uint32_t i = 0; i < p->preds.n; i++) {
        plan_pred *pp = &p->preds.v[i];
        vpred *vp = &v->preds[i];
        if (vp->kind == VK_BASE) continue;
        if ((int32_t)i == (int32_t)p->query_pred && alias >= 0) {
            vp->kind = VK_ALIAS;
            vp->alias = (uint32_t)alias;
            continue;
        }
        if (pp->arity == 0) {
            /* no columns: the empty tuple is kept as one null word, as writes make it
               (vx_head), where evaluation keeps a relation of no columns */
            vp->main = rel_new(1);
            if ((pp->full && rel_count(pp->full)) || pp->rows.n)
                rel_insert(vp->main, (val_t[]){VAL_NULL});
        } else if (i == p->query_pred && !(pp->full && rel_count(pp->full))) {
            vp->main = rows_rel(&pp->rows, vp->arity);
        } else {
            vp->main = pp->full ? pp->full : rel_new(vp->arity);
            pp->full = NULL;
        }
        vp->lazy = vp->kind == VK_COUNT || vp->kind == VK_GROUPS;
    }
    plan_program_reset(p); /* what the run kept besides (the query's rows, seek caches) */
    return NULL;
}

/* Builds the program and computes the rows from scratch. NULL or the error; *stopped
 * when `guard` stopped it. */
static const char *build(view_t *v, exec_guard *guard, bool *stopped) {
    il_arena_init(&v->arena);
    plan_program_init(&v->prog);
    v->built = true;
    v->version = view_cat_version(v->g);
    iql_stmt st;
    const char *perr = NULL;
    if (!iql_parse(&v->arena, v->text, strlen(v->text), &st, &perr))
        return set_err("Parse error: %s", perr ? perr : "");
    if (st.kind != IQL_STMT_QUERY) return set_err("%s", "a view needs a query (?...)");
    const iql_query *q = &st.u.query;
    if (q->limit >= 0 || q->offset > 0)
        return set_err("%s", "view maintenance does not support :limit or :offset yet");
    /* The query's rule is the one `?query` runs; only the session's graph is read. */
    iql_rule rule;
    view_cat_query_rule(v->e, v->g, q, &v->arena, &rule);
    if (rule.head.nargs > REL_MAX_ARITY) return set_err("%s", "the query has too many columns");
    uint32_t nrules;
    const iql_rule **rules = view_cat_clauses(v->g, &nrules);
    for (uint32_t i = 0; v->own_clauses && i < nrules; i++) {
        iql_rule *c = il_arena_alloc(&v->arena, sizeof *c);
        iql_rule_clone(&v->arena, c, rules[i]);
        rules[i] = c;
    }
    plan_source src = {.rules = rules, .nrules = nrules, .stored = stored_of, .ctx = v->g};
    plan_build(&v->prog, &src, &rule);
    free(rules);
    plan_program *p = &v->prog;
    if (p->error) return set_err("Query execution failed: %s", p->error);
    if (p->unstratified)
        return set_err("%s", "view maintenance does not support unstratified rules");
    for (uint32_t i = 0; i < p->clauses.n; i++)
        for (uint32_t o = 0; o < p->clauses.v[i].nops; o++)
            if (p->clauses.v[i].ops[o].kind == POP_HNSW)
                return set_err("%s", "view maintenance does not support hnsw_nearest (a vector "
                                     "index is searched when read, not maintained)");
    for (uint32_t i = 0; i < p->clauses.n; i++)
        if (p->clauses.v[i].error)
            return set_err("Query execution failed: %s", p->clauses.v[i].error);
    v->arity = p->preds.v[p->query_pred].arity;
    v->preds = calloc(p->preds.n + 1, sizeof *v->preds);
    for (uint32_t i = 0; i < p->preds.n; i++) {
        vpred *vp = &v->preds[i];
        const plan_pred *pp = &p->preds.v[i];
        vp->arity = pp->arity ? pp->arity : 1;
        if (pp->kind == PP_BASE) {
            vp->kind = VK_BASE;
            continue;
        }
        const plan_stratum *st = &p->strata.v[pp->stratum];
        bool agg = false;
        for (uint32_t k = 0; k < st->nclauses; k++) agg |= p->clauses.v[st->clauses[k]].is_agg;
        if (st->recursive && agg)
            return set_err("%s", "view maintenance does not support aggregates in recursion");
        vp->kind = st->recursive ? VK_DRED : agg ? VK_RECOMPUTE : VK_COUNT;
        const plan_clause *only = st->nclauses == 1 ? &p->clauses.v[st->clauses[0]] : NULL;
        if (agg && only && only->nslots && only->nslots <= REL_MAX_ARITY && st->npreds == 1) {
            vp->kind = VK_GROUPS;
            vp->agg = only;
        }
    }
    if (v->refuse_clock && view_reads_clock(v))
        return set_err("%s", "the view's rows change with the clock (time_now)");
    return evaluate(v, guard, stopped);
}

/* Builds what the lazy strata left for the first write (view_opts.lazy), from the state
 * the view's rows were just computed from. */
static void build_write_state(view_t *v) {
    bind_base(v, NULL, 0);
    /* the rows are the stored facts' as they are now: no write's change applies to them */
    for (uint32_t i = 0; i < v->prog.preds.n; i++)
        if (v->preds[i].kind == VK_BASE) v->preds[i].plus = v->preds[i].minus = NULL;
    for (uint32_t s = 0; s < v->prog.strata.n; s++) {
        const plan_stratum *st = &v->prog.strata.v[s];
        if (!st->nclauses) continue;
        vpred *p = &v->preds[st->preds[0]];
        if (p->lazy && p->kind == VK_COUNT) count_materialize(v, st);
        if (p->lazy && p->kind == VK_GROUPS) groups_materialize(v, p);
    }
    apply(v); /* forgets the base bindings; nothing else changed */
}

/* Rebuilds after a change of rules; the difference of the rows becomes pending delta. */
static void rebuild(view_t *v) {
    rel_t *old = rel_new(v->arity ? v->arity : 1);
    if (v->built && !v->error) FOR_TUPLES(query_vpred(v)->main, t) rel_insert(old, t);
    drop_state(v);
    free(v->error);
    v->error = NULL;
    v->overran = false;
    bool stopped = false;
    const char *err = v->g ? build(v, NULL, &stopped) : "the knowledge graph was dropped";
    if (!err && !v->lazy) build_write_state(v);
    rel_t *now = rel_new(rel_arity(old));
    if (err) {
        v->error = strdup(err);
        v->overran = g_overrun;
    } else if (v->arity == rel_arity(old)) {
        FOR_TUPLES(query_vpred(v)->main, t) rel_insert(now, t);
    }
    if (v->arity != rel_arity(old) && !err) {
        /* the query's width changed: start over */
        rel_clear(v->pend_plus);
        rel_clear(v->pend_minus);
    } else {
        rel_t *plus = rel_new(rel_arity(old)), *minus = rel_new(rel_arity(old));
        rel_difference(old, now, plus, minus);
        note_pending(v, plus, minus);
        rel_free(plus);
        rel_free(minus);
    }
    rel_free(old);
    rel_free(now);
}

/* ---- public API ---- */

view_t *view_open(il_session *s, const char *query_text, const char **err) {
    bool stopped;
    return view_open_with(s, query_text, (view_opts){0}, err, &stopped);
}

view_t *view_open_with(il_session *s, const char *query_text, view_opts o, const char **err,
                       bool *stopped) {
    view_t *v = calloc(1, sizeof *v);
    v->e = view_cat_engine(s);
    v->g = view_cat_graph(s);
    v->text = strdup(query_text);
    v->refuse_clock = o.refuse_clock;
    v->lazy = o.lazy;
    v->own_clauses = o.own_clauses;
    *stopped = false;
    budget_start(view_cat_budget_ns(v->e));
    const char *e = build(v, o.guard, stopped);
    if (!e && !v->lazy) build_write_state(v);
    if (e) {
        *err = e;
        drop_state(v);
        free(v->text);
        free(v);
        return NULL;
    }
    v->pend_plus = rel_new(v->arity ? v->arity : 1);
    v->pend_minus = rel_new(v->arity ? v->arity : 1);
    view_cat_attach(v->g, v);
    *err = NULL;
    return v;
}

void view_close(view_t *v) {
    if (!v) return;
    if (v->g) view_cat_detach(v->g, v);
    drop_state(v);
    rel_free(v->pend_plus);
    rel_free(v->pend_minus);
    for (uint32_t i = 0; i < v->nspares; i++) rel_free(v->spares[i]);
    free(v->error);
    free(v->text);
    free(v);
}

size_t view_state_tuples(const view_t *v) {
    size_t n = 0;
    for (uint32_t i = 0; v->built && v->preds && i < v->prog.preds.n; i++) {
        const vpred *p = &v->preds[i];
        n += (p->main ? rel_count(p->main) : 0) + (p->bindings ? rel_count(p->bindings) : 0);
    }
    return n;
}

uint64_t view_groups_recomputed(const view_t *v) {
    return v->groups_recomputed;
}

static bool expr_reads_clock(const plan_expr *x) {
    if (!x) return false;
    if (x->kind == PX_CALL) {
        if (x->fn && strcmp(x->fn->name, "time_now") == 0) return true;
        for (uint32_t i = 0; i < x->nargs; i++)
            if (expr_reads_clock(x->args[i])) return true;
    }
    if (x->kind == PX_ARITH) return expr_reads_clock(x->l) || expr_reads_clock(x->r);
    return false;
}

bool view_reads_clock(const view_t *v) {
    if (!v->built) return false;
    for (uint32_t i = 0; i < v->prog.clauses.n; i++) {
        const plan_clause *c = &v->prog.clauses.v[i];
        for (uint32_t k = 0; k < c->nhead; k++)
            if (expr_reads_clock(c->head[k])) return true;
        for (uint32_t o = 0; o < c->nops; o++) {
            const plan_op *op = &c->ops[o];
            if ((op->kind == POP_FILTER || op->kind == POP_ASSIGN) &&
                (expr_reads_clock(op->lhs) || expr_reads_clock(op->rhs)))
                return true;
        }
    }
    return false;
}

const rel_t *view_current_rows(const view_t *v) {
    if (!v->built || v->error || !v->g || v->version != view_cat_version(v->g) ||
        view_cat_pending(v->g))
        return NULL;
    return query_vpred(v)->main;
}

bool view_reads_stored(const view_t *v, const char *rel) {
    for (uint32_t i = 0; v->built && v->preds && i < v->prog.preds.n; i++)
        if (v->preds[i].kind == VK_BASE && strcmp(v->prog.preds.v[i].name, rel) == 0) return true;
    return false;
}

void view_rehome(view_t *v, kg_graph *g) {
    if (v->g) view_cat_detach(v->g, v);
    v->g = g;
    view_cat_attach(g, v);
}

uint32_t view_arity(const view_t *v) {
    return v->arity;
}

const char *view_error(const view_t *v) {
    return v->error;
}

static size_t rel_rows(const rel_t *r, uint32_t arity, val_t **rows) {
    *rows = NULL;
    size_t n = r ? rel_count(r) : 0; /* rows of no columns count too */
    if (!n) return 0;
    val_t *out = malloc(n * (arity ? arity : 1) * sizeof *out);
    size_t k = 0;
    FOR_TUPLES(r, t) {
        memcpy(&out[k++ * arity], t, arity * sizeof *t);
    }
    *rows = out;
    return n;
}

size_t view_rows(const view_t *v, val_t **rows) {
    if (!v->built || v->error) {
        *rows = NULL;
        return 0;
    }
    return rel_rows(query_vpred(v)->main, v->arity, rows);
}

void view_take_delta(view_t *v, val_t **added, size_t *nadded, val_t **removed, size_t *nremoved) {
    *nadded = rel_rows(v->pend_plus, v->arity, added);
    *nremoved = rel_rows(v->pend_minus, v->arity, removed);
    rel_clear(v->pend_plus);
    rel_clear(v->pend_minus);
}

void view_graph_commit(view_t *const *views, uint32_t n, const view_delta_rel *delta,
                       uint32_t ndelta) {
    for (uint32_t k = 0; k < n; k++) {
        view_t *v = views[k];
        uint64_t version = view_cat_version(v->g);
        /* one that ran out of budget stays failed until the rules change: trying it
           again would cost every write the whole budget */
        if (v->overran && v->version == version) continue;
        budget_start(view_cat_budget_ns(v->e));
        if (!v->built || v->error || v->version != version)
            rebuild(v);
        else if (ndelta)
            maintain(v, delta, ndelta);
    }
}

void view_graph_detach(view_t *const *views, uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        view_t *v = views[k];
        v->g = NULL;
        rebuild(v); /* every row vanishes */
    }
}
