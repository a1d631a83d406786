/* The plan interpreter and the semi-naive fixpoint.
 *
 * A clause runs as nested index seeks over its operations, depth first, with variable
 * values in a register array; each complete binding emits a head tuple (or, for an
 * aggregating clause, the whole binding, grouped afterwards: a count is the number of
 * distinct bindings in the group). Strata run in order; a recursive stratum repeats
 * its delta variants until a round adds nothing. The statement's guard (exec/guard.h:
 * cancel, deadline, memory) is checked every few thousand ticks, a tick being a tuple
 * visited, a round run or a partition started, so that it can end long evaluations; the
 * working data (delta lists, bindings, seek caches, derived relations) is counted by the
 * guard's meter (base/meter.h). Big recursive work may be shared out to several threads
 * (exec/parallel_fixpoint.h), whose workers run clauses here (exec/worker_clause.h). */
#include "exec/eval.h"

#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "exec/aggregate.h"
#include "exec/closure.h"
#include "exec/expr.h"
#include "exec/snapidx.h"
#include "exec/stable_sort.h"
#include "exec/parallel_fixpoint.h"
#include "exec/team.h"
#include "exec/tuplesort.h"
#include "exec/tupleset.h"
#include "exec/vsearch.h"
#include "exec/worker_clause.h"

enum { STOP_CHECK_MASK = 4095 };

const char *const EXEC_STOPPED = "Query execution stopped";

/* What a scan does with the columns of each tuple, resolved once per clause run for
 * the index actually used: positions to copy into slots, then positions to check. */
typedef struct col_step {
    uint32_t pos;  /* position in the index's tuples */
    uint32_t slot; /* BIND, CHECK_SLOT */
    val_t c;       /* CHECK_CONST */
    plan_col_action act;
} col_step;

typedef struct exec_scan_plan {
    col_step steps[REL_MAX_ARITY]; /* binds first, then checks */
    uint32_t nbind, nsteps;
    bool numeric_prefix; /* a constant of the prefix is a number */
} scan_plan;

typedef struct runner {
    plan_program *p;
    exec_ctx *x;
    const plan_clause *c;
    val_t *regs;
    rel_t **rels;       /* per op: the relation it reads (NULL: empty) */
    scan_plan *scans;   /* per op: column steps for the index it seeks */
    int *idx;           /* per op: the index it seeks */
    rel_t *target;      /* where head tuples go */
    const rel_t *check; /* when set, tuples already here are not emitted */
    plan_tuples *added; /* when set, tuples new to `target` (or `tset`) are also appended here */
    tupleset *tset;     /* when set, head tuples go here instead of `target` */
    bool tset_distinct; /* and no two are equal: they are appended without hashing */
    const plan_tuples *delta;     /* when set, what the clause's delta operation walks */
    plan_seek_cache *seek_caches; /* per op: the caches of its seeks into stored facts */
    exec_team *team; /* on a worker of a team (exec/team.h): its stops, not x's, are polled */
    uint32_t worker;
    uint64_t *ticks;    /* the tick count it adds to: x's, or a team worker's own */
    tupleset *bindings; /* aggregating clauses: the distinct body bindings */
    IL_VEC(val_t)
    flat; /* aggregating clauses whose bindings are distinct by construction
             (counted: il_mvec_*) */
    bool flat_bindings;
    bool head_slots; /* every head column is a plain variable: copied, not evaluated */
    bool abort;
} runner;

/* Records that the guard stopped the program. */
static void stopped(exec_ctx *x) {
    if (!x->error) x->error = EXEC_STOPPED;
}

static __attribute__((noinline)) bool check_guard(exec_ctx *x) {
    if (!x->guard || !exec_guard_check(x->guard)) return false;
    stopped(x);
    return true;
}

/* Counts a tick; every STOP_CHECK_MASK + 1 ticks, checks the guard. True once the
 * program must stop. */
static inline bool tick(exec_ctx *x) {
    return (++x->ticks & STOP_CHECK_MASK) == 0 && check_guard(x);
}

bool exec_tick_n(exec_ctx *x, uint64_t n) {
    uint64_t before = x->ticks;
    x->ticks += n;
    if ((before | STOP_CHECK_MASK) < x->ticks) return check_guard(x) || x->error;
    return x->error != NULL;
}

/* A check fell due: the statement's guard, or on a team's worker the team's stops
 * (exec/team.h). */
static __attribute__((noinline)) bool stop_due(runner *r) {
    return r->team ? exec_team_poll(r->team, r->worker, STOP_CHECK_MASK + 1) : check_guard(r->x);
}

static inline bool poll_stop(runner *r) {
    if ((++*r->ticks & STOP_CHECK_MASK) == 0 && stop_due(r)) r->abort = true;
    return r->abort;
}

static void emit_head(runner *r) {
    const plan_clause *c = r->c;
    if (c->is_agg) {
        if (r->flat_bindings)
            for (uint32_t i = 0; i < c->nslots; i++) il_mvec_push(r->flat, r->regs[i]);
        else
            tupleset_insert(r->bindings, r->regs);
        return;
    }
    val_t t[REL_MAX_ARITY];
    t[0] = 0; /* the word a head of no columns stands for */
    if (r->head_slots)
        for (uint32_t i = 0; i < c->nhead; i++) t[i] = r->regs[c->head[i]->slot];
    else
        for (uint32_t i = 0; i < c->nhead; i++) t[i] = exec_eval(c->head[i], r->regs);
    if (r->tset && r->tset_distinct) { /* one scan's rows: no check, nothing to hash */
        tupleset_push_distinct(r->tset, t);
        return;
    }
    if (r->check && rel_contains(r->check, t)) return;
    if (r->tset) {
        if (tupleset_insert(r->tset, t) && r->added)
            exec_push_tuple(r->added, t, exec_flat_width(c->nhead));
        return;
    }
    if (rel_insert(r->target, t) && r->added)
        exec_push_tuple(r->added, t, exec_flat_width(c->nhead));
}

static void run_from(runner *r, uint32_t i);

static void plan_scan(const plan_op *op, const uint32_t *order, scan_plan *sp) {
    sp->nbind = sp->nsteps = 0;
    sp->numeric_prefix = false;
    for (uint32_t p = 0; p < op->nprefix; p++) {
        uint32_t col = order[p];
        if (op->prefix_slot[col] >= 0) continue;
        val_type t = val_type_of(op->prefix_const[col]);
        if (t == VT_INT || t == VT_FLOAT) sp->numeric_prefix = true;
        if (op->prefix_bind[col] >= 0)
            sp->steps[sp->nsteps++] = (col_step){p, (uint32_t)op->prefix_bind[col], 0, PCOL_BIND};
    }
    for (uint32_t p = op->nprefix; p < op->arity; p++) {
        uint32_t col = order[p];
        if (op->act[col] == PCOL_BIND)
            sp->steps[sp->nsteps++] = (col_step){p, op->act_slot[col], 0, PCOL_BIND};
    }
    sp->nbind = sp->nsteps;
    for (uint32_t p = 0; p < op->nprefix; p++) {
        uint32_t col = order[p];
        if (op->prefix_slot[col] < 0 && op->prefix_check[col] >= 0)
            sp->steps[sp->nsteps++] =
                (col_step){p, (uint32_t)op->prefix_check[col], 0, PCOL_CHECK_SLOT};
    }
    for (uint32_t p = op->nprefix; p < op->arity; p++) {
        uint32_t col = order[p];
        if (op->act[col] == PCOL_CHECK_SLOT || op->act[col] == PCOL_CHECK_CONST)
            sp->steps[sp->nsteps++] =
                (col_step){p, op->act_slot[col], op->act_const[col], op->act[col]};
    }
}

static inline bool bind_columns(runner *r, const scan_plan *sp, const val_t *t) {
    for (uint32_t k = 0; k < sp->nbind; k++) r->regs[sp->steps[k].slot] = t[sp->steps[k].pos];
    for (uint32_t k = sp->nbind; k < sp->nsteps; k++) {
        const col_step *s = &sp->steps[k];
        if (s->act == PCOL_CHECK_SLOT ? r->regs[s->slot] != t[s->pos]
                                      : !exec_const_matches(t[s->pos], s->c))
            return false;
    }
    return true;
}

/* A one-value seek into stored facts, through the scan's cache of seek starts. */
static void cached_seek(plan_seek_cache *sc, const rel_t *rel, int idx, const val_t *prefix,
                        rel_cursor *cur) {
    if (!sc->e) {
        rel_seek(rel, idx, prefix, 1, cur);
        if (++sc->seeks == PLAN_SEEK_CACHE_AFTER)
            sc->e = il_mem_calloc(PLAN_SEEK_CACHE_SIZE, sizeof *sc->e);
        return;
    }
    plan_seek_entry *e = &sc->e[val_hash(prefix[0]) & (PLAN_SEEK_CACHE_SIZE - 1)];
    if (e->used && e->key == prefix[0]) {
        rel_seek_resume(rel, idx, prefix, 1, e->leaf, e->cur, cur);
        return;
    }
    rel_seek(rel, idx, prefix, 1, cur);
    e->key = prefix[0];
    e->leaf = cur->leaf;
    e->cur = cur->cur;
    e->used = true;
}

/* A scan whose next operation is an assignment with a bound filter (plan_op.bound_filter)
 * over a column the scan binds, `vectors(Id, V), D = cosine(V, Q), D < 0.5`: the scan
 * itself rejects the rows the bounds fail, before binding anything. */
typedef struct row_bounds {
    const plan_op *assign, *filter;
    double c; /* the filter's number */
    val_t args[2];
    uint32_t arg; /* which argument comes from the row */
    uint32_t pos; /* its position in the index's tuples */
} row_bounds;

static bool plan_row_bounds(const runner *r, uint32_t i, const scan_plan *sp, row_bounds *rb) {
    const plan_clause *c = r->c;
    if (i + 1 >= c->nops) return false;
    const plan_op *a = &c->ops[i + 1];
    if (a->kind != POP_ASSIGN || !a->bound_filter || a->rhs->nargs != 2) return false;
    bool from_row = false;
    for (uint32_t k = 0; k < 2; k++) {
        const plan_expr *e = a->rhs->args[k];
        if (e->kind == PX_CONST) {
            rb->args[k] = e->c;
            continue;
        }
        if (e->kind != PX_SLOT) return false;
        uint32_t s;
        for (s = 0; s < sp->nbind && sp->steps[s].slot != e->slot; s++) {
        }
        if (s == sp->nbind) {
            rb->args[k] = r->regs[e->slot]; /* bound before this scan */
            continue;
        }
        if (from_row) return false;
        from_row = true;
        rb->arg = k;
        rb->pos = sp->steps[s].pos;
    }
    if (!from_row) return false;
    rb->assign = a;
    rb->filter = &c->ops[a->bound_filter];
    rb->c = val_to_f64(rb->filter->rhs->c);
    return true;
}

/* Counts n ticks at once (poll_stop for a run of tuples). */
static bool poll_stop_many(runner *r, size_t n) {
    uint64_t before = *r->ticks;
    *r->ticks += n;
    if (((before ^ *r->ticks) & ~(uint64_t)STOP_CHECK_MASK) && stop_due(r)) r->abort = true;
    return r->abort;
}

/* The rest of a bounded scan (row_bounds): the bounds of a whole run of tuples come from
 * one call, and only the tuples they do not reject are bound. False once the program
 * must stop. */
static bool scan_bounded(runner *r, uint32_t i, const scan_plan *sp, row_bounds *rb,
                         rel_cursor *cur) {
    enum { BATCH = 256 };
    double lo[BATCH], hi[BATCH];
    const val_t *run;
    size_t n;
    uint32_t stride;
    while ((run = rel_next_run(cur, &n, &stride))) {
        if (poll_stop_many(r, n)) return false;
        for (size_t done = 0; done < n; done += BATCH) {
            size_t m = n - done < BATCH ? n - done : BATCH;
            const val_t *first = run + done * stride;
            rb->assign->bounds(rb->args, rb->arg, first + rb->pos, stride, m, lo, hi);
            for (size_t k = 0; k < m; k++) {
                if (exec_bounds_exclude(rb->filter->cmp, rb->c, lo[k], hi[k])) continue;
                if (!bind_columns(r, sp, first + k * stride)) continue;
                run_from(r, i + 1);
                if (r->abort) return false;
            }
        }
    }
    return true;
}

static void scan(runner *r, uint32_t i, bool negated) {
    const plan_op *op = &r->c->ops[i];
    rel_t *rel = r->rels[i];
    if (!rel) {
        if (negated) run_from(r, i + 1);
        return;
    }
    int idx = r->idx[i];
    const uint32_t *order = rel_index_order(rel, idx);
    const scan_plan *sp = &r->scans[i];
    val_t prefix[REL_MAX_ARITY];
    uint32_t alt_pos[3];
    val_t alt_val[3];
    uint32_t nalt = 0;
    for (uint32_t p = 0; p < op->nprefix; p++) {
        uint32_t col = order[p];
        if (op->prefix_slot[col] >= 0) {
            prefix[p] = r->regs[op->prefix_slot[col]];
        } else {
            prefix[p] = op->prefix_const[col];
            if (sp->numeric_prefix && nalt < 3 &&
                exec_numeric_alternative(prefix[p], &alt_val[nalt]))
                alt_pos[nalt++] = p;
        }
    }
    val_t orig[3];
    for (uint32_t a = 0; a < nalt; a++) orig[a] = prefix[alt_pos[a]];
    row_bounds rb;
    bool use_bounds = !negated && plan_row_bounds(r, i, sp, &rb);
    for (uint32_t combo = 0; combo < (1u << nalt); combo++) {
        for (uint32_t a = 0; a < nalt; a++)
            prefix[alt_pos[a]] = (combo >> a) & 1 ? alt_val[a] : orig[a];
        rel_cursor cur;
        if (nalt == 0 && op->nprefix == 1 && r->p->preds.v[op->pred].kind == PP_BASE)
            cached_seek(&r->seek_caches[i], rel, idx, prefix, &cur);
        else
            rel_seek(rel, idx, prefix, op->nprefix, &cur);
        const val_t *t;
        if (negated) {
            if (rel_next(&cur, NULL)) return;
            continue;
        }
        if (use_bounds) {
            if (!scan_bounded(r, i, sp, &rb, &cur)) return;
            continue;
        }
        while ((t = rel_next(&cur, NULL))) {
            if (poll_stop(r)) return;
            if (!bind_columns(r, sp, t)) continue;
            run_from(r, i + 1);
            if (r->abort) return;
        }
    }
    if (negated) run_from(r, i + 1);
}

/* The delta of a recursive predicate is a flat list: the variant's first operation
 * walks it, matching the bound columns. */
static void scan_delta(runner *r, uint32_t i) {
    const plan_op *op = &r->c->ops[i];
    const plan_pred *pp = &r->p->preds.v[op->pred];
    uint32_t w = pp->arity, fw = exec_flat_width(w);
    if (w != op->arity) return;
    const plan_tuples *delta = r->delta && (int32_t)i == r->c->delta_op ? r->delta : &pp->delta;
    for (uint32_t k = 0; k + fw <= delta->n; k += fw) {
        const val_t *t = &delta->v[k];
        bool ok = true;
        for (uint32_t p = 0; p < op->nprefix && ok; p++) {
            uint32_t col = op->order[p];
            if (op->prefix_slot[col] >= 0)
                ok = r->regs[op->prefix_slot[col]] == t[col];
            else
                ok = exec_const_matches(t[col], op->prefix_const[col]) &&
                     (op->prefix_check[col] < 0 || r->regs[op->prefix_check[col]] == t[col]);
        }
        if (!ok) continue;
        for (uint32_t p = 0; p < op->nprefix; p++) {
            uint32_t col = op->order[p];
            if (op->prefix_slot[col] < 0 && op->prefix_bind[col] >= 0)
                r->regs[op->prefix_bind[col]] = t[col];
        }
        for (uint32_t p = op->nprefix; p < w; p++) {
            uint32_t col = op->order[p];
            if (op->act[col] == PCOL_BIND) r->regs[op->act_slot[col]] = t[col];
        }
        for (uint32_t p = op->nprefix; p < w && ok; p++) {
            uint32_t col = op->order[p];
            if (op->act[col] == PCOL_CHECK_SLOT)
                ok = r->regs[op->act_slot[col]] == t[col];
            else if (op->act[col] == PCOL_CHECK_CONST)
                ok = exec_const_matches(t[col], op->act_const[col]);
        }
        if (!ok) continue;
        if (poll_stop(r)) return;
        run_from(r, i + 1);
        if (r->abort) return;
    }
}

/* hnsw_nearest: each of the k nearest binds (or must equal) the key and the distance. */
typedef struct index_walk {
    runner *r;
    uint32_t next; /* the operation after the search */
} index_walk;

static bool index_hit(void *ctx, bool matched) {
    index_walk *w = ctx;
    if (poll_stop(w->r)) return false;
    if (matched) run_from(w->r, w->next);
    return !w->r->abort;
}

static void search_index(runner *r, uint32_t i) {
    const plan_op *op = &r->c->ops[i];
    /* what the compiled order bound before the search is compared */
    const bool check[2] = {op->act[0] == PCOL_CHECK_SLOT, op->act[1] == PCOL_CHECK_SLOT};
    index_walk w = {r, i + 1};
    exec_vsearch_each(op, r->regs, check, index_hit, &w);
}

static void run_from(runner *r, uint32_t i) {
    const plan_clause *c = r->c;
    if (i == c->nops) {
        emit_head(r);
        return;
    }
    const plan_op *op = &c->ops[i];
    switch (op->kind) {
    case POP_SCAN:
        if (op->version == PV_DELTA)
            scan_delta(r, i);
        else
            scan(r, i, false);
        break;
    case POP_NEG:
        scan(r, i, true);
        break;
    case POP_FILTER:
        if (exec_filter(op, r->regs)) run_from(r, i + 1);
        break;
    case POP_HNSW:
        search_index(r, i);
        break;
    case POP_ASSIGN: {
        if (op->bound_filter && exec_bounds_reject(op, &c->ops[op->bound_filter], r->regs)) break;
        val_t saved = r->regs[op->slot];
        r->regs[op->slot] = exec_eval(op->rhs, r->regs);
        run_from(r, i + 1);
        r->regs[op->slot] = saved;
        break;
    }
    }
}

static rel_t *pred_rel(plan_program *p, uint32_t pred) {
    plan_pred *pp = &p->preds.v[pred];
    if (pp->kind == PP_BASE) return (rel_t *)pp->stored;
    return pp->full;
}

/* A clause that is one scan binding every column to its own variable sees each binding
 * once: its bindings need no deduplication. */
static bool distinct_by_construction(const plan_clause *c) {
    if (c->nops != 1 || c->ops[0].kind != POP_SCAN || c->ops[0].nprefix) return false;
    const plan_op *op = &c->ops[0];
    if (op->arity != c->nslots) return false;
    for (uint32_t i = 0; i < op->arity; i++)
        if (op->act[i] != PCOL_BIND) return false;
    return true;
}

/* Whether a clause's head tuples are distinct by construction: one scan binding every
 * column to its own variable, each variable in the head exactly once. */
static bool heads_distinct(const plan_clause *c) {
    if (c->is_agg || !c->nhead || !distinct_by_construction(c) || c->nhead != c->nslots)
        return false;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < c->nhead; i++) {
        if (c->head[i]->kind != PX_SLOT || c->head[i]->slot >= 64) return false;
        seen |= 1ull << c->head[i]->slot;
    }
    return seen == (c->nslots == 64 ? ~0ull : (1ull << c->nslots) - 1);
}

/* What each operation of c reads (rels[i], NULL: nothing), through which index (idx[i])
 * and with which column steps (*scans, allocated when some operation reads a relation;
 * the caller frees it). Builds the indexes the seeks need, so that afterwards the reads
 * change nothing: worker threads may share them. False when some scan reads nothing: the
 * clause has no binding. The delta operation is left to the caller. */
static bool resolve_reads(plan_program *p, const plan_clause *c, rel_t **rels, int *idx,
                          scan_plan **scans) {
    bool empty = false;
    *scans = NULL;
    for (uint32_t i = 0; i < c->nops; i++) {
        const plan_op *op = &c->ops[i];
        rels[i] = NULL;
        if (op->kind != POP_SCAN && op->kind != POP_NEG) continue;
        if (op->version == PV_DELTA) continue;
        rel_t *rel = pred_rel(p, op->pred);
        if (rel && (rel_count(rel) == 0 || rel_arity(rel) != op->arity)) rel = NULL;
        if (!rel && op->kind == POP_SCAN) empty = true;
        if (rel) {
            idx[i] = op->nprefix ? exec_rel_index(&rel, op->order, op->nprefix) : 0;
            if (idx[i] < 0) idx[i] = 0;
            if (!*scans) *scans = malloc(c->nops * sizeof **scans);
            plan_scan(op, rel_index_order(rel, idx[i]), &(*scans)[i]);
        }
        rels[i] = rel;
    }
    return !empty;
}

static bool delta_empty(const plan_program *p, const plan_clause *c) {
    return c->delta_op >= 0 && p->preds.v[c->ops[c->delta_op].pred].delta.n == 0;
}

static bool heads_are_slots(const plan_clause *c) {
    bool slots = !c->is_agg;
    for (uint32_t i = 0; i < c->nhead && slots; i++) slots = c->head[i]->kind == PX_SLOT;
    return slots;
}

static void run_clause_into(plan_program *p, exec_ctx *x, const plan_clause *c, rel_t *target,
                            const rel_t *check, plan_tuples *added, tupleset *tset) {
    if (x->skip_session && c->session) return;
    if (c->error) {
        if (!x->error) x->error = c->error;
        return;
    }
    runner r = {.p = p,
                .x = x,
                .c = c,
                .target = target,
                .check = check,
                .added = added,
                .tset = tset,
                .seek_caches = c->seek_caches,
                .ticks = &x->ticks,
                .head_slots = heads_are_slots(c)};
    /* the query's rows from one scan (`?edge(X, Y)`, `?reach(X, Y)`): nothing to hash */
    r.tset_distinct = tset && !added && tset->n == 0 && heads_distinct(c);
    val_t regs_small[32];
    rel_t *rels_small[32];
    int idx_small[32];
    r.regs = c->nslots <= 32 ? regs_small : malloc(c->nslots * sizeof *r.regs);
    r.rels = c->nops <= 32 ? rels_small : malloc(c->nops * sizeof *r.rels);
    r.idx = c->nops <= 32 ? idx_small : malloc(c->nops * sizeof *r.idx);
    for (uint32_t s = 0; s < c->nslots; s++) r.regs[s] = VAL_NULL;
    bool empty = !resolve_reads(p, c, r.rels, r.idx, &r.scans) || delta_empty(p, c);
    if (!empty && c->is_agg && distinct_by_construction(c) && c->ops[0].version == PV_FULL &&
        r.rels[0] && exec_aggregate_counts_only(c)) {
        /* counting the tuples of one relation, no group: its size is the answer */
        exec_aggregate_count(c, rel_count(r.rels[0]), target);
    } else if (!empty) {
        tupleset bindings;
        if (c->is_agg) {
            r.flat_bindings = distinct_by_construction(c);
            tupleset_init(&bindings, c->nslots);
            r.bindings = &bindings;
        }
        run_from(&r, 0);
        if (c->is_agg) {
            uint32_t w = c->nslots ? c->nslots : 1;
            bool done = true;
            if (!r.abort && r.flat_bindings)
                done = exec_aggregate(c, r.flat.v, r.flat.n / w, target);
            else if (!r.abort)
                done = exec_aggregate(c, bindings.tuples, bindings.n, target);
            if (!done) stopped(x);
            tupleset_free(&bindings);
            il_mvec_free(r.flat);
        }
    }
    if (r.regs != regs_small) free(r.regs);
    if (r.rels != rels_small) free(r.rels);
    if (r.idx != idx_small) free(r.idx);
    free(r.scans);
}

static void run_clause(plan_program *p, exec_ctx *x, const plan_clause *c, rel_t *target,
                       const rel_t *check, plan_tuples *added) {
    run_clause_into(p, x, c, target, check, added, NULL);
}

/* ---- clauses on a team's workers (exec/worker_clause.h) ---- */

/* A vector index search has scratch of its own that is not shared; a clause with an
 * error reports it on the calling thread. */
static bool runs_on_workers(const plan_clause *c) {
    if (c->error || c->is_agg) return false;
    for (uint32_t i = 0; i < c->nops; i++)
        if (c->ops[i].kind == POP_HNSW) return false;
    return true;
}

void exec_shared_clause_resolve(plan_program *p, const plan_clause *c, exec_shared_clause *sc) {
    sc->c = c;
    sc->rels = malloc((c->nops ? c->nops : 1) * sizeof *sc->rels);
    sc->idx = malloc((c->nops ? c->nops : 1) * sizeof *sc->idx);
    sc->empty = !resolve_reads(p, c, sc->rels, sc->idx, &sc->scans);
}

void exec_shared_clause_free(exec_shared_clause *sc) {
    free(sc->rels);
    free(sc->idx);
    free(sc->scans);
}

bool exec_run_on_worker(plan_program *p, exec_ctx *x, const exec_shared_clause *sc, exec_team *t,
                        uint32_t worker, plan_seek_cache *caches, const plan_tuples *delta,
                        const rel_t *check, plan_tuples *added, tupleset *out) {
    const plan_clause *c = sc->c;
    if (sc->empty || delta->n == 0) return true;
    /* x is not touched by a worker: its stops go to the team */
    /* counted here and kept in the team between chunks: the workers' counts share a
       cache line, which a count per tuple would bounce between their cores */
    uint64_t *kept = exec_team_ticks(t, worker), ticks = *kept;
    runner r = {.p = p,
                .x = x,
                .c = c,
                .check = check,
                .added = added,
                .tset = out,
                .delta = delta,
                .seek_caches = caches,
                .ticks = &ticks,
                .team = t,
                .worker = worker,
                .head_slots = heads_are_slots(c),
                .rels = sc->rels,
                .idx = sc->idx,
                .scans = sc->scans};
    val_t regs_small[32];
    r.regs = c->nslots <= 32 ? regs_small : malloc(c->nslots * sizeof *r.regs);
    for (uint32_t s = 0; s < c->nslots; s++) r.regs[s] = VAL_NULL;
    run_from(&r, 0);
    *kept = ticks;
    if (r.regs != regs_small) free(r.regs);
    return !r.abort;
}

plan_seek_cache *exec_worker_caches(plan_seek_cache **mine, const plan_clause *c, uint32_t worker) {
    if (worker == 0) return c->seek_caches;
    if (!*mine) *mine = calloc(c->nops ? c->nops : 1, sizeof **mine);
    return *mine;
}

void exec_worker_caches_free(plan_seek_cache *caches, uint32_t nops) {
    if (!caches) return;
    for (uint32_t i = 0; i < nops; i++) il_mem_free(caches[i].e);
    free(caches);
}

bool exec_recursion_runs_on_workers(const plan_program *p, const plan_stratum *st) {
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &p->clauses.v[st->clauses[i]];
        if (c->delta_op >= 0 && !c->is_agg && !runs_on_workers(c)) return false;
    }
    return true;
}

/* ---- partitioned recursion ----
 * When every recursive clause of a one-predicate stratum is linear and passes one
 * column through unchanged (reach(X, Z) <- reach(X, Y), edge(Y, Z) keeps X), tuples with
 * different values in that column never meet: the fixpoint runs one partition at a
 * time with a small, cache-resident hash set, and each finished partition is appended
 * to the result. */

static int32_t partition_column(const plan_program *p, const plan_stratum *st) {
    if (st->npreds != 1) return -1;
    const plan_pred *pp = &p->preds.v[st->preds[0]];
    if (pp->kind != PP_DERIVED || pp->arity == 0) return -1;
    for (uint32_t col = 0; col < pp->arity; col++) {
        bool ok = true;
        for (uint32_t i = 0; i < st->nclauses && ok; i++) {
            const plan_clause *c = &p->clauses.v[st->clauses[i]];
            if (c->is_agg || c->error) ok = false;
            if (!ok || c->delta_op < 0) continue;
            const plan_op *d = &c->ops[c->delta_op];
            if (c->reads_stratum_full || c->delta_op != 0 || d->arity != pp->arity ||
                c->nhead != pp->arity)
                ok = false;
            else if (d->act[col] != PCOL_BIND || c->head[col]->kind != PX_SLOT ||
                     c->head[col]->slot != d->act_slot[col])
                ok = false;
            for (uint32_t k = 0; k < d->nprefix && ok; k++)
                if (d->order[k] == col) ok = false;
        }
        if (ok) return (int32_t)col;
    }
    return -1;
}

static _Thread_local uint32_t part_col;

static bool advance_round(exec_ctx *x, plan_pred *pp);

static int cmp_partition(const void *a, const void *b) {
    val_t x = ((const val_t *)a)[part_col], y = ((const val_t *)b)[part_col];
    return x < y ? -1 : x > y;
}

static void run_partitioned(plan_program *p, exec_ctx *x, plan_stratum *st, uint32_t col) {
    plan_pred *pp = &p->preds.v[st->preds[0]];
    uint32_t w = pp->arity;
    tupleset base, local;
    plan_tuples all = {0}; /* every partition's tuples (counted: il_mvec_*) */
    tupleset_init(&base, w);
    tupleset_init(&local, w);
    for (uint32_t i = 0; i < st->nclauses && !x->error; i++) {
        const plan_clause *c = &p->clauses.v[st->clauses[i]];
        if (c->delta_op >= 0 || c->recursive_base) continue;
        run_clause_into(p, x, c, NULL, NULL, NULL, &base);
    }
    part_col = col;
    if (!x->error && !exec_stable_sort(base.tuples, base.n, w * sizeof(val_t), cmp_partition))
        stopped(x);
    exec_closure_step step;
    if (!x->error && exec_closure_match(p, st, col, &step)) {
        exec_closure_run(p, x, st, col, &step, base.tuples, base.n);
        tupleset_free(&base);
        tupleset_free(&local);
        return;
    }
    uint32_t done_parts = 0, threads = exec_team_threads(x);
    for (uint32_t g = 0; g < base.n && !x->error && !tick(x); done_parts++) {
        /* partitions that are not tiny and many more rows to come: shared out */
        if (done_parts == EXEC_PARTITION_SAMPLE && threads > 1 && all.n / w >= done_parts * 16u &&
            (uint64_t)(all.n / w) * (base.n - g) / (g ? g : 1) >= EXEC_PARTITION_SHARE_ROWS &&
            exec_recursion_runs_on_workers(p, st)) {
            if (!exec_partitions_on_threads(p, x, st, &base, g, col, threads, &all)) stopped(x);
            break;
        }
        uint32_t end = g + 1;
        while (end < base.n &&
               base.tuples[(size_t)end * w + col] == base.tuples[(size_t)g * w + col])
            end++;
        /* Tiny partitions cost more in per-round setup than they save: once they prove
           small, the rest run together as one (they never meet, so that is still exact). */
        if (done_parts >= 32 && all.n / w < (size_t)done_parts * 16) end = base.n;
        tupleset_clear(&local);
        pp->added.n = 0;
        for (uint32_t t = g; t < end; t++)
            if (tupleset_insert(&local, &base.tuples[(size_t)t * w]))
                for (uint32_t k = 0; k < w; k++)
                    il_mvec_push(pp->added, base.tuples[(size_t)t * w + k]);
        while (!x->error && advance_round(x, pp) && !tick(x)) {
            for (uint32_t i = 0; i < st->nclauses && !x->error; i++) {
                const plan_clause *c = &p->clauses.v[st->clauses[i]];
                if (c->delta_op < 0) continue;
                run_clause_into(p, x, c, NULL, NULL, &pp->added, &local);
            }
        }
        /* partitions come in ascending order of their column: sorted one by one, they
           concatenate in order when that column leads */
        if (x->error || !tuple_sort(local.tuples, local.n, w)) {
            stopped(x);
            break;
        }
        il_mvec_reserve(all, all.n + local.n * w);
        memcpy(&all.v[all.n], local.tuples, (size_t)local.n * w * sizeof(val_t));
        all.n += local.n * w;
        g = end;
    }
    /* sorted, the result builds bottom-up with full nodes */
    size_t n = x->error ? 0 : all.n / w;
    if (col != 0 && !tuple_sort(all.v, n, w)) {
        stopped(x);
        n = 0;
    }
    if (n && !rel_load_sorted(pp->full, all.v, n))
        for (size_t t = 0; t < n && !tick(x); t++) rel_insert(pp->full, &all.v[t * w]);
    il_mvec_free(all);
    tupleset_free(&base);
    tupleset_free(&local);
}

/* Ends a round: this round's additions (and the waiting `next` tuples new to `full`)
 * become the delta. Returns whether anything was added. */
static bool advance_round(exec_ctx *x, plan_pred *pp) {
    if (pp->next && rel_count(pp->next)) {
        rel_cursor cur;
        rel_seek(pp->next, 0, NULL, 0, &cur);
        const val_t *t;
        while ((t = rel_next(&cur, NULL)) && !tick(x))
            if (rel_insert(pp->full, t)) exec_push_tuple(&pp->added, t, exec_flat_width(pp->arity));
        rel_clear(pp->next);
    }
    pp->delta.n = 0;
    val_t *v = pp->delta.v;
    uint32_t cap = pp->delta.cap;
    pp->delta.v = pp->added.v;
    pp->delta.n = pp->added.n;
    pp->delta.cap = pp->added.cap;
    pp->added.v = v;
    pp->added.n = 0;
    pp->added.cap = cap;
    return pp->delta.n > 0;
}

static bool has_session_clause(const plan_program *p, const plan_stratum *st) {
    for (uint32_t i = 0; i < st->nclauses; i++)
        if (p->clauses.v[st->clauses[i]].session) return true;
    return false;
}

static void run_stratum(plan_program *p, exec_ctx *x, plan_stratum *st) {
    for (uint32_t i = 0; i < st->npreds; i++) {
        plan_pred *pp = &p->preds.v[st->preds[i]];
        if (pp->kind != PP_DERIVED) continue;
        /* a relation of no columns holds at most the one empty tuple (rel.h) */
        pp->full = rel_new(pp->arity);
        if (st->recursive) pp->next = rel_new(pp->arity);
    }
    if (!st->recursive) {
        for (uint32_t i = 0; i < st->nclauses && !x->error; i++) {
            const plan_clause *c = &p->clauses.v[st->clauses[i]];
            plan_pred *h = &p->preds.v[c->head_pred];
            /* nothing reads the query's rows but the caller: a hash set will do */
            if (c->head_pred == p->query_pred && !c->is_agg) {
                if (!h->rows.arity) tupleset_init(&h->rows, h->arity);
                run_clause_into(p, x, c, NULL, NULL, NULL, &h->rows);
            } else {
                run_clause(p, x, c, h->full, NULL, NULL);
            }
        }
        if (st->npreds == 1 && st->preds[0] == p->query_pred) {
            plan_pred *q = &p->preds.v[p->query_pred];
            if (q->full && rel_count(q->full)) {
                /* aggregating query clauses wrote into `full` */
                if (!q->rows.arity) tupleset_init(&q->rows, q->arity);
                rel_cursor cur;
                rel_seek(q->full, 0, NULL, 0, &cur);
                const val_t *t;
                while ((t = rel_next(&cur, NULL)) && !tick(x)) tupleset_insert(&q->rows, t);
            }
        }
        return;
    }
    /* the closure runs a stratum's clauses itself: not when some must be left out */
    int32_t col = x->skip_session && has_session_clause(p, st) ? -1 : partition_column(p, st);
    if (col >= 0) {
        run_partitioned(p, x, st, (uint32_t)col);
        goto done;
    }
    for (uint32_t i = 0; i < st->nclauses && !x->error; i++) {
        const plan_clause *c = &p->clauses.v[st->clauses[i]];
        if (c->delta_op >= 0 || c->recursive_base) continue;
        plan_pred *h = &p->preds.v[c->head_pred];
        run_clause(p, x, c, h->full, NULL, &h->added);
    }
    uint32_t threads = exec_team_threads(x);
    bool shareable = threads > 1;
    exec_parallel_rounds *pr = NULL; /* made for the first round big enough to share */
    while (!x->error && !tick(x)) {
        bool any = false;
        for (uint32_t i = 0; i < st->npreds; i++) {
            plan_pred *pp = &p->preds.v[st->preds[i]];
            if (pp->kind == PP_DERIVED && advance_round(x, pp)) any = true;
        }
        if (!any) break;
        if (shareable && exec_round_is_big(p, st)) {
            if (!pr) pr = exec_parallel_rounds_new(p, x, st, threads);
            shareable = pr != NULL;
            if (pr && exec_round_on_threads(pr)) continue;
        }
        for (uint32_t i = 0; i < st->nclauses && !x->error; i++) {
            const plan_clause *c = &p->clauses.v[st->clauses[i]];
            if (c->delta_op < 0 || c->is_agg) continue;
            plan_pred *h = &p->preds.v[c->head_pred];
            if (c->reads_stratum_full)
                run_clause(p, x, c, h->next, h->full, NULL);
            else
                run_clause(p, x, c, h->full, NULL, &h->added);
        }
    }
    exec_parallel_rounds_free(pr);
done:
    for (uint32_t i = 0; i < st->npreds; i++) {
        plan_pred *pp = &p->preds.v[st->preds[i]];
        il_mvec_free(pp->delta);
        il_mvec_free(pp->added);
        if (pp->next) rel_free(pp->next);
        pp->next = NULL;
    }
}

bool exec_run(plan_program *p, exec_ctx *x) {
    exec_guard *outer = x->guard ? exec_guard_enter(x->guard) : NULL;
    for (uint32_t s = 0; s < p->strata.n && !x->error; s++) {
        plan_stratum *st = &p->strata.v[s];
        if (x->skip_query && st->npreds == 1 && st->preds[0] == p->query_pred) continue;
        run_stratum(p, x, st);
    }
    /* a limit passed since the last check still stops it: the outcome does not depend on
       where the checks fell */
    if (x->guard && !x->error) check_guard(x);
    if (x->guard) exec_guard_leave(outer);
    return x->error == NULL;
}
