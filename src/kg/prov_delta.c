/* The session's part of a query as an insertion delta (see provenance.c). The program,
 * planned over the graph's rules and the session's but with the session's facts left
 * out, has run without its session clauses (exec_ctx.skip_session): every derived
 * predicate holds the graph's own fixpoint. Here the session's facts and rules are
 * added to it stratum by stratum, semi-naively, as maintained views add a commit
 * (views/view_eval.h runs the clause variants): a session clause runs once over the
 * whole state, a clause of the graph once per changed atom seeded by that atom's new
 * tuples, then recursive strata repeat with each round's new tuples until none come.
 * Every tuple found here is new, so a query row found here is ephemeral and every other
 * is persistent. Only monotone programs take this way: prov_delta_sound says which. */
#include "kg/prov_delta.h"

#include <stdlib.h>
#include <string.h>

#include "exec/closure.h"
#include "views/view_eval.h"

/* Per predicate: base ones, the session's facts the graph has not; derived ones, the
 * tuples found here (also inserted into `full`) and those of the last and this round. */
typedef struct dpred {
    rel_t *plus;
    rel_t *delta;
    rel_t *next;
    bool in_stratum;
} dpred;

typedef struct drun {
    plan_program *p;
    dpred *d;
    tupleset found; /* a variant's new head tuples, added once it has ended */
    tupleset *eph;  /* the query's new rows */
    uint32_t head;
} drun;

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

static bool has_rules(il_session *s, const char *rel) {
    kg_rule *r = kg_rule_find(s->kg, rel);
    if (r && r->clauses.n) return true;
    for (uint32_t i = 0; i < s->rules.n; i++)
        if (strcmp(s->rules.v[i]->head.rel, rel) == 0) return true;
    return false;
}

bool prov_delta_sound(const plan_program *p, il_session *s) {
    if (p->error || p->unstratified) return false;
    uint32_t np = p->preds.n;
    bool *changes = calloc(np + 1, 1);
    bool sound = true;
    /* session facts of a relation with rules reach it through a clause of its stored
       facts, which the program has only when the graph holds some */
    for (uint32_t i = 0; i < s->facts.n && sound; i++)
        if (rel_count(s->facts.v[i]->set) && has_rules(s, s->facts.v[i]->rel)) sound = false;
    for (uint32_t i = 0; i < np && sound; i++) {
        const plan_pred *pp = &p->preds.v[i];
        if (pp->kind != PP_BASE) continue;
        sess_facts *f = sess_facts_find(s, pp->name);
        if (f && rel_count(f->set)) changes[i] = true;
    }
    /* what the session may change: its facts, its clauses' heads, and onwards */
    for (bool grew = true; grew && sound;) {
        grew = false;
        for (uint32_t i = 0; i < p->clauses.n; i++) {
            const plan_clause *c = &p->clauses.v[i];
            if (changes[c->head_pred]) continue;
            bool reads = c->session;
            for (uint32_t k = 0; k < c->nops && !reads; k++)
                reads = c->ops[k].kind == POP_SCAN && changes[c->ops[k].pred];
            if (reads) changes[c->head_pred] = grew = true;
        }
    }
    /* a negation or an aggregate over what changes may lose rows of the graph's answer,
       and a vector search is not a step view_eval runs */
    for (uint32_t i = 0; i < p->clauses.n && sound; i++) {
        const plan_clause *c = &p->clauses.v[i];
        bool reads = c->session;
        for (uint32_t k = 0; k < c->nops; k++) {
            const plan_op *op = &c->ops[k];
            if (op->kind == POP_NEG && changes[op->pred]) sound = false;
            if (op->kind == POP_SCAN && changes[op->pred]) reads = true;
        }
        if (!reads) continue;
        if (c->is_agg || c->error) sound = false;
        for (uint32_t k = 0; k < c->nops; k++)
            if (c->ops[k].kind == POP_HNSW) sound = false;
    }
    free(changes);
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

/* Runs clause c, seeded at op `seed` with the tuples of `from` (seed < 0: unseeded),
 * every other atom reading the whole state; its new tuples join the state. */
static void run_variant(drun *r, const plan_clause *c, int32_t seed, const rel_t *from) {
    r->head = c->head_pred;
    plan_pred *h = &r->p->preds.v[c->head_pred];
    tupleset_init(&r->found, h->arity);
    vexec x = {.emit = emit, .ctx = r, .spent = spent};
    vx_run_clause(&x, c, seed, (vsrc){from, NULL, NULL}, src_of, r, NULL, NULL);
    dpred *d = &r->d[c->head_pred];
    for (uint32_t i = 0; i < r->found.n && !x.stop; i++) {
        const val_t *t = &r->found.tuples[(size_t)i * h->arity];
        if (!rel_insert(h->full, t)) continue;
        if (!d->plus) d->plus = rel_new_counted(h->arity);
        if (!d->next) d->next = rel_new_counted(h->arity);
        rel_insert(d->plus, t);
        rel_insert(d->next, t);
    }
    tupleset_free(&r->found);
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

const char *prov_delta_run(plan_program *p, il_session *s, exec_ctx *x, tupleset *eph) {
    exec_ctx *outer_x = g_x;
    g_x = x;
    exec_guard *outer = x->guard ? exec_guard_enter(x->guard) : NULL;
    drun r = {.p = p, .eph = eph};
    r.d = calloc(p->preds.n + 1, sizeof *r.d);
    for (uint32_t i = 0; i < p->preds.n; i++)
        if (p->preds.v[i].kind == PP_BASE) r.d[i].plus = session_plus(s, &p->preds.v[i]);
    for (uint32_t si = 0; si < p->strata.n && !stopped(x); si++) {
        const plan_stratum *st = &p->strata.v[si];
        for (uint32_t i = 0; i < st->npreds; i++) r.d[st->preds[i]].in_stratum = true;
        run_seeded(&r, st, true, x);
        while (st->recursive && !stopped(x)) {
            bool any = false;
            for (uint32_t i = 0; i < st->npreds; i++) {
                dpred *d = &r.d[st->preds[i]];
                if (d->delta) rel_free(d->delta);
                d->delta = d->next;
                d->next = NULL;
                any |= nonempty(d->delta);
            }
            if (!any) break;
            run_seeded(&r, st, false, x);
        }
        for (uint32_t i = 0; i < st->npreds; i++) {
            dpred *d = &r.d[st->preds[i]];
            d->in_stratum = false;
            if (d->delta) rel_free(d->delta);
            if (d->next) rel_free(d->next);
            d->delta = d->next = NULL;
        }
    }
    for (uint32_t i = 0; i < p->preds.n; i++)
        if (r.d[i].plus) rel_free(r.d[i].plus);
    free(r.d);
    const char *err = x->error;
    if (!err && x->guard && x->guard->stop) err = EXEC_STOPPED;
    if (x->guard) exec_guard_leave(outer);
    g_x = outer_x;
    return err;
}
