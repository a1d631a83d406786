/* The session's part of a query as a delta (see provenance.c). The program, planned over
 * the graph's rules and the session's but with the session's facts left out, has run
 * without its session clauses (exec_ctx.skip_session): every derived predicate holds the
 * graph's own fixpoint. Here the session's facts and rules are applied to that state
 * stratum by stratum, in order, each stratum handing the ones above it the tuples it
 * gained (plus) and lost (minus):
 *
 * - a stratum none of whose inputs changed, and with no session clause, keeps its rows;
 * - one whose inputs only grew, read positively and by no aggregate, takes the additions
 *   semi-naively, as maintained views add a commit (views/view_eval.h runs the clause
 *   variants): a session clause runs once over the whole state, a clause of the graph
 *   once per changed atom seeded by that atom's new tuples, then recursive strata repeat
 *   with each round's new tuples until none come;
 * - one that reads a changed relation through a negation or an aggregate, has a session
 *   aggregate, or reads a relation that lost tuples, is evaluated again on its own from
 *   the new state of its inputs, and its difference from the graph's rows is its plus
 *   and minus.
 *
 * The query predicate's graph rows stay as they were (the persistent candidates): its new
 * rows go to the caller, as additions, or as the whole answer when its stratum was
 * evaluated again. Only the strata the session's part reaches run here, each once.
 * prov_delta_sound says when a program can take this way. */
#include "kg/prov_delta.h"

#include <stdlib.h>
#include <string.h>

#include "exec/aggregate.h"
#include "exec/closure.h"
#include "views/view_eval.h"

/* Per predicate: base ones, the session's facts the graph has not (plus); derived ones,
 * the tuples the session adds to the graph's (plus) and takes from them (minus), and
 * those of a recursion's last and this round. A derived predicate's `full` holds its new
 * state once its stratum is done. */
typedef struct dpred {
    rel_t *plus;
    rel_t *minus;
    rel_t *delta;
    rel_t *next;
    bool in_stratum;
} dpred;

typedef struct drun {
    plan_program *p;
    dpred *d;
    tupleset found; /* a variant's new head tuples, added once it has ended */
    tupleset *eph;  /* the query's new rows, or its whole answer when `whole` */
    bool whole;
    uint32_t head;
    /* the running stratum's: its plus comes from the difference afterwards (evaluated
       again), not from each addition; a recursion follows (new tuples go to `next`) */
    bool diffed, rounds;
} drun;

/* How a stratum takes the session's part (see the top of the file). */
typedef enum stratum_way { WAY_KEEP, WAY_ADD, WAY_REDO } stratum_way;

/* A seed of fewer tuples than this walks a relation lacking the index it would need: a
 * walk visits a tuple for about a tenth of what indexing it costs. */
#define PROV_WALK_BELOW 8

static _Thread_local exec_ctx *g_x;

static bool spent(void) {
    return exec_tick_n(g_x, 4096);
}

static bool nonempty(const rel_t *r) {
    return r && rel_count(r);
}

/* The session's facts of a base predicate that the graph does not hold, or NULL. */
static rel_t *session_plus(il_session *s, const plan_pred *pp) {
    sess_facts *f = sess_facts_find(s, pp->name);
    if (!f || f->arity != pp->arity || !rel_count(f->set)) return NULL;
    if (pp->stored && rel_arity(pp->stored) != f->arity) return NULL;
    rel_t *plus = rel_new_counted(f->arity);
    for (uint32_t i = 0; i < f->vals.n; i += sess_fact_stride(f))
        if (!pp->stored || !rel_contains(pp->stored, &f->vals.v[i]))
            rel_insert(plus, &f->vals.v[i]);
    return plus;
}

static bool reads(const plan_op *op) {
    return op->kind == POP_SCAN || op->kind == POP_NEG;
}

/* The way a stratum takes the session's part, given which predicates below it may gain
 * tuples (grows) and may lose some (shrinks). The same rule decides before the run, over
 * what may change, and during it, over what did. */
static stratum_way way_of(const plan_program *p, const plan_stratum *st, const bool *grows,
                          const bool *shrinks) {
    bool touched = false, redo = false;
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &p->clauses.v[st->clauses[i]];
        bool changed = c->session;
        for (uint32_t k = 0; k < c->nops; k++) {
            const plan_op *op = &c->ops[k];
            /* the stratum's own relations change only through what comes from below */
            if (!reads(op) || p->preds.v[op->pred].stratum == p->preds.v[c->head_pred].stratum)
                continue;
            if (shrinks[op->pred]) changed = redo = true;
            if (grows[op->pred]) {
                changed = true;
                /* a negation fails where it held, an aggregate's group changes */
                if (op->kind == POP_NEG) redo = true;
            }
        }
        if (changed && c->is_agg) redo = true;
        touched |= changed;
    }
    return !touched ? WAY_KEEP : redo ? WAY_REDO : WAY_ADD;
}

bool prov_delta_sound(const plan_program *p, il_session *s) {
    if (p->error || p->unstratified) return false;
    uint32_t np = p->preds.n;
    bool *grows = calloc(np + 1, 1), *shrinks = calloc(np + 1, 1);
    for (uint32_t i = 0; i < np; i++) {
        const plan_pred *pp = &p->preds.v[i];
        if (pp->kind != PP_BASE) continue;
        sess_facts *f = sess_facts_find(s, pp->name);
        if (f && rel_count(f->set)) grows[i] = true;
    }
    /* what the session may change, stratum by stratum; the clauses that would then run
       here must compile */
    bool sound = true;
    for (uint32_t si = 0; si < p->strata.n && sound; si++) {
        const plan_stratum *st = &p->strata.v[si];
        stratum_way way = way_of(p, st, grows, shrinks);
        if (way == WAY_KEEP) continue;
        /* A recursion evaluated again here runs view_eval's clause steps round after
           round, far slower than the executor's semi-naive run (stopped after minutes
           for the 2,493,790-tuple closure a run computes in 0.15 s): such a program
           runs twice instead, as a whole (provenance.c). */
        if (way == WAY_REDO && st->recursive) sound = false;
        for (uint32_t i = 0; i < st->npreds; i++) {
            grows[st->preds[i]] = true;
            if (way == WAY_REDO) shrinks[st->preds[i]] = true;
        }
        for (uint32_t i = 0; i < st->nclauses && sound; i++) {
            const plan_clause *c = &p->clauses.v[st->clauses[i]];
            if (c->delta_op >= 0) continue; /* the executor's own semi-naive variants */
            /* a recursion's rounds run every clause over the stratum */
            bool runs = way == WAY_REDO || st->recursive || c->session;
            for (uint32_t k = 0; k < c->nops && !runs; k++)
                runs = c->ops[k].kind == POP_SCAN && grows[c->ops[k].pred] &&
                       p->preds.v[c->ops[k].pred].stratum != si;
            if (!runs) continue;
            if (c->error) sound = false;
        }
    }
    free(grows);
    free(shrinks);
    return sound;
}

static vsrc src_of(const void *ctx, uint32_t pred) {
    const drun *r = ctx;
    const plan_pred *pp = &r->p->preds.v[pred];
    if (pp->kind == PP_BASE) return (vsrc){pp->stored, NULL, r->d[pred].plus};
    return (vsrc){pp->full, NULL, NULL};
}

static void emit(vexec *x, const val_t *regs, void *ctx) {
    drun *r = ctx;
    val_t t[REL_MAX_ARITY];
    vx_head(x->c, regs, t);
    if (r->head == r->p->query_pred) {
        tupleset_insert(r->eph, t);
        return;
    }
    if (!rel_contains(r->p->preds.v[r->head].full, t)) tupleset_insert(&r->found, t);
}

static void emit_binding(vexec *x, const val_t *regs, void *ctx) {
    (void)x;
    tupleset_insert(ctx, regs);
}

/* Adds a head tuple to the state: the query's to the caller's rows, another to `full`
 * and, when new there, to the predicate's plus and to the recursion's next round. */
static void add_tuple(drun *r, uint32_t pred, const val_t *t) {
    plan_pred *h = &r->p->preds.v[pred];
    dpred *d = &r->d[pred];
    if (pred == r->p->query_pred) {
        tupleset_insert(r->eph, t);
        return;
    }
    if (!rel_insert(h->full, t)) return;
    if (!r->diffed) {
        if (!d->plus) d->plus = rel_new_counted(h->arity);
        rel_insert(d->plus, t);
    }
    if (r->rounds) {
        if (!d->next) d->next = rel_new_counted(h->arity);
        rel_insert(d->next, t);
    }
}

/* Runs clause c, seeded at op `seed` with the tuples of `from` (seed < 0: unseeded),
 * every other atom reading the whole state; its new tuples join the state. */
static void run_variant(drun *r, const plan_clause *c, int32_t seed, const rel_t *from) {
    r->head = c->head_pred;
    plan_pred *h = &r->p->preds.v[c->head_pred];
    tupleset_init(&r->found, h->arity);
    /* its relations are this query's: an index built for a few seed tuples serves no
       later run (the ?unreached(X) of BENCHMARKS.md spent 282 M instructions a query
       indexing a 2.5M-tuple closure for three session edges) */
    vexec x = {.emit = emit, .ctx = r, .spent = spent, .walk_below = PROV_WALK_BELOW};
    vx_run_clause(&x, c, seed, (vsrc){from, NULL, NULL}, src_of, r, NULL, NULL);
    for (uint32_t i = 0; i < r->found.n && !x.stop; i++)
        add_tuple(r, c->head_pred, &r->found.tuples[(size_t)i * r->found.arity]);
    tupleset_free(&r->found);
}

/* Runs clause c whole over the state: an aggregate over every distinct binding of its
 * body, as the executor does. */
static void run_whole(drun *r, const plan_clause *c) {
    if (!c->is_agg) {
        run_variant(r, c, -1, NULL);
        return;
    }
    plan_pred *h = &r->p->preds.v[c->head_pred];
    tupleset bindings;
    tupleset_init(&bindings, c->nslots ? c->nslots : 1);
    vexec x = {.emit = emit_binding, .ctx = &bindings, .spent = spent};
    vx_run_clause(&x, c, -1, (vsrc){0}, src_of, r, NULL, NULL);
    /* straight into the state when nothing else needs to see each row */
    bool direct = r->diffed && !r->rounds && c->head_pred != r->p->query_pred;
    rel_t *rows = direct ? h->full : rel_new(h->arity);
    if (!x.stop && !exec_aggregate(c, bindings.tuples, bindings.n, rows) && !g_x->error)
        g_x->error = EXEC_STOPPED;
    tupleset_free(&bindings);
    if (direct) return;
    rel_cursor cur;
    rel_seek(rows, 0, NULL, 0, &cur);
    for (const val_t *t; !x.stop && !g_x->error && (t = rel_next(&cur, NULL));)
        add_tuple(r, c->head_pred, t);
    rel_free(rows);
}

static bool stopped(const exec_ctx *x) {
    return x->error != NULL || (x->guard && x->guard->stop);
}

/* Runs the stratum's clauses seeded at every atom whose predicate has tuples to seed
 * with: with `lower`, the predicates below the stratum and their new tuples (and the
 * session's clauses run whole); otherwise the stratum's own and their last round's. */
static void run_seeded(drun *r, const plan_stratum *st, bool lower, exec_ctx *x) {
    for (uint32_t i = 0; i < st->nclauses && !stopped(x); i++) {
        const plan_clause *c = &r->p->clauses.v[st->clauses[i]];
        if (c->delta_op >= 0) continue; /* the executor's own semi-naive variants */
        if (lower && c->session) {
            run_variant(r, c, -1, NULL);
            continue;
        }
        for (uint32_t k = 0; k < c->nops && !stopped(x); k++) {
            const plan_op *op = &c->ops[k];
            if (op->kind != POP_SCAN) continue;
            const dpred *d = &r->d[op->pred];
            if (d->in_stratum == lower) continue;
            const rel_t *from = lower ? d->plus : d->delta;
            if (nonempty(from)) run_variant(r, c, (int32_t)k, from);
        }
    }
}

/* Evaluates the stratum again from the new state of its inputs: its relations start
 * empty (the query's answer too: the caller then takes it whole), its clauses run whole,
 * a recursion's rounds follow in run_stratum; afterwards `old` holds the graph's rows of
 * each of its relations, for the difference. */
static void redo_start(drun *r, const plan_stratum *st, rel_t **old, exec_ctx *x) {
    for (uint32_t i = 0; i < st->npreds; i++) {
        uint32_t pred = st->preds[i];
        plan_pred *pp = &r->p->preds.v[pred];
        old[i] = NULL;
        if (pred == r->p->query_pred) {
            r->whole = true;
            continue;
        }
        old[i] = pp->full;
        pp->full = rel_new(pp->arity);
    }
    for (uint32_t i = 0; i < st->nclauses && !stopped(x); i++) {
        const plan_clause *c = &r->p->clauses.v[st->clauses[i]];
        /* a clause over the stratum's own relations finds its tuples in the rounds */
        if (c->delta_op >= 0 || c->recursive_base) continue;
        run_whole(r, c);
    }
}

/* The stratum's plus and minus, its new rows against the graph's (`old`, then freed). */
static void redo_end(drun *r, const plan_stratum *st, rel_t **old) {
    for (uint32_t i = 0; i < st->npreds; i++) {
        if (!old[i]) continue;
        plan_pred *pp = &r->p->preds.v[st->preds[i]];
        dpred *d = &r->d[st->preds[i]];
        d->plus = rel_new_counted(pp->arity);
        d->minus = rel_new_counted(pp->arity);
        rel_difference(old[i], pp->full, d->plus, d->minus);
        rel_free(old[i]);
    }
}

/* Runs one stratum the way it takes the session's part (see the top of the file). */
static void run_stratum(drun *r, const plan_stratum *st, stratum_way way, exec_ctx *x) {
    rel_t *old_small[8];
    rel_t **old = st->npreds <= 8 ? old_small : malloc(st->npreds * sizeof *old);
    for (uint32_t i = 0; i < st->npreds; i++) r->d[st->preds[i]].in_stratum = true;
    r->diffed = way == WAY_REDO;
    r->rounds = st->recursive;
    if (way == WAY_REDO)
        redo_start(r, st, old, x);
    else
        run_seeded(r, st, true, x);
    while (st->recursive && !stopped(x)) {
        bool any = false;
        for (uint32_t i = 0; i < st->npreds; i++) {
            dpred *d = &r->d[st->preds[i]];
            if (d->delta) rel_free(d->delta);
            d->delta = d->next;
            d->next = NULL;
            any |= nonempty(d->delta);
        }
        if (!any) break;
        run_seeded(r, st, false, x);
    }
    if (way == WAY_REDO) redo_end(r, st, old);
    for (uint32_t i = 0; i < st->npreds; i++) {
        dpred *d = &r->d[st->preds[i]];
        d->in_stratum = false;
        if (d->delta) rel_free(d->delta);
        if (d->next) rel_free(d->next);
        d->delta = d->next = NULL;
    }
    if (old != old_small) free(old);
}

const char *prov_delta_run(plan_program *p, il_session *s, exec_ctx *x, tupleset *eph,
                           bool *whole) {
    exec_ctx *outer_x = g_x;
    g_x = x;
    exec_guard *outer = x->guard ? exec_guard_enter(x->guard) : NULL;
    drun r = {.p = p, .eph = eph};
    uint32_t np = p->preds.n;
    r.d = calloc(np + 1, sizeof *r.d);
    bool *grows = calloc(np + 1, 1), *shrinks = calloc(np + 1, 1);
    for (uint32_t i = 0; i < np; i++) {
        if (p->preds.v[i].kind != PP_BASE) continue;
        r.d[i].plus = session_plus(s, &p->preds.v[i]);
        grows[i] = nonempty(r.d[i].plus);
    }
    for (uint32_t si = 0; si < p->strata.n && !stopped(x); si++) {
        const plan_stratum *st = &p->strata.v[si];
        stratum_way way = way_of(p, st, grows, shrinks);
        if (way == WAY_KEEP) continue;
        run_stratum(&r, st, way, x);
        for (uint32_t i = 0; i < st->npreds; i++) {
            grows[st->preds[i]] = nonempty(r.d[st->preds[i]].plus);
            shrinks[st->preds[i]] = nonempty(r.d[st->preds[i]].minus);
        }
    }
    for (uint32_t i = 0; i < np; i++) {
        if (r.d[i].plus) rel_free(r.d[i].plus);
        if (r.d[i].minus) rel_free(r.d[i].minus);
    }
    free(r.d);
    free(grows);
    free(shrinks);
    *whole = r.whole;
    const char *err = x->error;
    if (!err && x->guard && x->guard->stop) err = EXEC_STOPPED;
    if (x->guard) exec_guard_leave(outer);
    g_x = outer_x;
    return err;
}
