/* The clause interpreter of maintained views (see view_eval.h). Before a run, a planning
 * pass follows which variables each step binds and picks, for every atom, an index whose
 * leading columns are the ones bound at that point (constants and variables bound by
 * earlier steps, the seed included), creating it if needed: indexes are made before any
 * cursor is open, because making one while a cursor walks the relation is not safe. */
#include "views/view_eval.h"

#include <stdlib.h>
#include <string.h>

#include "exec/expr.h"
#include "exec/snapidx.h"
#include "exec/vsearch.h"

/* Tuples walked on this thread; every TICK_MASK + 1 of them the run's `spent` is asked. */
static _Thread_local uint32_t g_ticks;
#define TICK_MASK 4095u

/* How an atom's columns are matched at one step, for one relation it reads. */
typedef struct vcolplan {
    uint32_t np;                   /* leading index columns sought */
    uint32_t pcol[REL_MAX_ARITY];  /* natural column of prefix position i */
    int32_t pslot[REL_MAX_ARITY];  /* its slot, or -1 for a constant */
    val_t pconst[REL_MAX_ARITY];   /* the constant */
    uint32_t nalt;                 /* numeric constants sought in both forms */
    uint32_t altpos[3];            /* their prefix positions */
    val_t altval[3];               /* their other form */
    uint32_t nbind;                /* columns binding a slot */
    uint32_t bcol[REL_MAX_ARITY];  /* natural column */
    uint32_t bslot[REL_MAX_ARITY]; /* slot */
    uint32_t ncheck;               /* columns that must equal a slot bound in this atom */
    uint32_t ccol[REL_MAX_ARITY];  /* natural column */
    uint32_t cslot[REL_MAX_ARITY]; /* slot */
} vcolplan;

/* Per step: the column plan and the index used in each relation of the source. */
typedef struct vstepplan {
    vcolplan cp;
    int idx_a, idx_extra; /* index ids, or -1: walk the primary and compare */
    bool assign_check;    /* an assignment to a variable bound earlier: a check */
    bool hnsw_check[2];   /* a vector search's key, distance bound earlier: checked */
} vstepplan;

typedef struct vrun {
    vexec *x;
    vstepplan *plans;
    val_t *regs;
} vrun;

/* Builds the column plan of atom `op` given the bound slots, and marks what it binds. */
static void plan_columns(const plan_op *op, bool seed, bool *bound, vcolplan *cp) {
    /* Only the counts: every array entry below a count is written before it is read, and
       clearing the whole plan (about 2 KB) cost more than the rest of a small step. */
    cp->np = cp->nalt = cp->nbind = cp->ncheck = 0;
    bool is_prefix[REL_MAX_ARITY] = {0};
    for (uint32_t p = 0; p < op->nprefix; p++) is_prefix[op->order[p]] = true;
    uint32_t bound_here[REL_MAX_ARITY];
    uint32_t nhere = 0;
    bool binds = op->kind == POP_SCAN || seed;
    for (uint32_t col = 0; col < op->arity; col++) {
        int32_t slot = -1;
        bool konst = false;
        val_t c = VAL_NULL;
        int32_t cbind = -1;
        if (is_prefix[col]) {
            if (op->prefix_slot[col] >= 0) {
                slot = op->prefix_slot[col];
            } else {
                konst = true;
                c = op->prefix_const[col];
                /* the stored value binds the folded variable, or (bound before the atom
                   when compiled) is checked against it: whichever it is at this step */
                cbind = op->prefix_bind[col] >= 0 ? op->prefix_bind[col] : op->prefix_check[col];
            }
        } else if (op->act[col] == PCOL_BIND || op->act[col] == PCOL_CHECK_SLOT) {
            slot = (int32_t)op->act_slot[col];
        } else if (op->act[col] == PCOL_CHECK_CONST) {
            konst = true;
            c = op->act_const[col];
        }
        if (konst) {
            uint32_t p = cp->np++;
            cp->pcol[p] = col;
            cp->pslot[p] = -1;
            cp->pconst[p] = c;
            if (cp->nalt < 3 && exec_numeric_alternative(c, &cp->altval[cp->nalt]))
                cp->altpos[cp->nalt++] = p;
            slot = cbind; /* the stored value may also bind a variable */
            if (slot < 0) continue;
        } else if (slot < 0) {
            continue; /* a placeholder */
        }
        bool in_here = false;
        for (uint32_t k = 0; k < nhere; k++) in_here |= bound_here[k] == (uint32_t)slot;
        if (bound[slot] && !in_here && !konst) {
            uint32_t p = cp->np++;
            cp->pcol[p] = col;
            cp->pslot[p] = slot;
        } else if (bound[slot]) {
            cp->ccol[cp->ncheck] = col;
            cp->cslot[cp->ncheck++] = (uint32_t)slot;
        } else if (binds) {
            cp->bcol[cp->nbind] = col;
            cp->bslot[cp->nbind++] = (uint32_t)slot;
            bound[slot] = true;
            bound_here[nhere++] = (uint32_t)slot;
        }
    }
}

/* Tuple width: a derived relation of no columns is kept with one placeholder column
 * (vx_head), so an atom of no columns reads a relation of width 1 too; a stored relation
 * with a real column does not match it (walk). */
static inline uint32_t width(uint32_t arity) {
    return arity ? arity : 1;
}

/* The index step k reads *rel by; *rel may become a copy holding it when it is a snapshot
 * without it (a pinned session's query, exec/snapidx.h). */
static int pick_index(const rel_t **rel, const plan_op *op, const vcolplan *cp) {
    if (!*rel || rel_count(*rel) == 0 || width(rel_arity(*rel)) != width(op->arity)) return -1;
    if (cp->np == 0) return 0;
    rel_t *r = (rel_t *)*rel;
    int idx = exec_rel_index(&r, cp->pcol, cp->np);
    *rel = r;
    return idx;
}

/* Whether step plan cp reads rel by walking it (walk: few probes) because rel lacks the
 * index the step needs. */
static bool walks(const rel_t *rel, const vcolplan *cp, bool walk) {
    return walk && rel && cp->np && rel_find_index(rel, cp->pcol, cp->np) < 0;
}

static void run_step(vrun *r, uint32_t k);

/* Walks one relation for step k: every tuple matching the prefix, not in `skip`. With
 * `probe`, returns at the first match (existence test) without binding anything. */
static bool walk(vrun *r, uint32_t k, const rel_t *rel, int idx, const rel_t *skip, bool probe) {
    const plan_op *op = &r->x->c->ops[r->x->steps[k].op];
    if (!rel || rel_count(rel) == 0 || width(rel_arity(rel)) != width(op->arity)) return false;
    const vcolplan *cp = &r->plans[k].cp;
    uint32_t w = op->arity;
    bool full = idx < 0; /* no usable index: walk the primary and compare the prefix */
    if (full) idx = 0;
    const uint32_t *order = rel_index_order(rel, idx);
    val_t prefix[REL_MAX_ARITY], orig[3];
    /* where each prefix column sits in a stored tuple, for a whole walk */
    uint32_t at[REL_MAX_ARITY];
    for (uint32_t p = 0; full && p < cp->np; p++)
        for (uint32_t q = 0; q < w; q++)
            if (order[q] == cp->pcol[p]) at[p] = q;
    for (uint32_t p = 0; p < cp->np; p++)
        prefix[p] = cp->pslot[p] >= 0 ? r->regs[cp->pslot[p]] : cp->pconst[p];
    for (uint32_t a = 0; a < cp->nalt; a++) orig[a] = prefix[cp->altpos[a]];
    bool skipping = skip && rel_count(skip) && width(rel_arity(skip)) == width(w);
    bool placeholder = w == 0 && rel_arity(rel) == 1;
    for (uint32_t combo = 0; combo < (1u << cp->nalt); combo++) {
        for (uint32_t a = 0; a < cp->nalt; a++)
            prefix[cp->altpos[a]] = (combo >> a) & 1 ? cp->altval[a] : orig[a];
        rel_cursor cur;
        rel_seek(rel, idx, prefix, full ? 0 : cp->np, &cur);
        const val_t *t;
        size_t run = 0;
        uint32_t stride = 0;
        const val_t *next = NULL;
        for (;;) {
            if (full) {
                /* a whole walk: the prefix is compared in place, a leaf's run at a time,
                   before anything else is done for a tuple (most do not match) */
                bool found = false;
                while (!found) {
                    if (!run) {
                        next = rel_next_run(&cur, &run, &stride);
                        if (!next) break;
                        g_ticks += (uint32_t)run;
                        if (g_ticks > TICK_MASK) {
                            g_ticks = 0;
                            if (r->x->spent && r->x->spent()) {
                                r->x->stop = true;
                                return false;
                            }
                        }
                    }
                    if (cp->np == 1) {
                        const val_t want = prefix[0];
                        const uint32_t col = at[0];
                        while (run && next[col] != want) {
                            next += stride;
                            run--;
                        }
                        found = run > 0;
                    } else {
                        for (; run && !found; next += stride, run--) {
                            found = true;
                            for (uint32_t p = 0; p < cp->np && found; p++)
                                found = next[at[p]] == prefix[p];
                            if (found) break;
                        }
                    }
                }
                if (!found) break;
                t = next;
                next += stride;
                run--;
            } else {
                if (!(t = rel_next(&cur, NULL))) break;
                if ((++g_ticks & TICK_MASK) == 0 && r->x->spent && r->x->spent()) {
                    r->x->stop = true;
                    return false;
                }
            }
            if (placeholder && t[0] != VAL_NULL) continue; /* facts of one column */
            val_t nat[REL_MAX_ARITY];
            nat[0] = VAL_NULL; /* the placeholder of no columns (vx_head) */
            for (uint32_t p = 0; p < w; p++) nat[order[p]] = t[p];
            bool ok = true;
            if (skipping && rel_contains(skip, nat)) continue;
            if (probe) {
                /* a negation's prefix is all it tests (other columns are wildcards) */
                return true;
            }
            for (uint32_t b = 0; b < cp->nbind; b++) r->regs[cp->bslot[b]] = nat[cp->bcol[b]];
            for (uint32_t c = 0; c < cp->ncheck && ok; c++)
                ok = r->regs[cp->cslot[c]] == nat[cp->ccol[c]];
            if (ok) run_step(r, k + 1);
            if (r->x->stop) return false;
            /* the cursor stays valid: nothing a run writes is a relation it reads */
        }
    }
    return false;
}

/* hnsw_nearest: each of the k nearest of the index binds, or must equal, the key and the
 * distance, what is bound decided by this run's order of steps (vstepplan.hnsw_check). */
typedef struct index_walk {
    vrun *r;
    uint32_t next; /* the step after the search */
} index_walk;

static bool index_hit(void *ctx, bool matched) {
    index_walk *w = ctx;
    if (matched) run_step(w->r, w->next);
    return !w->r->x->stop;
}

static void search_index(vrun *r, uint32_t k, const plan_op *op, const vstepplan *sp) {
    index_walk w = {r, k + 1};
    exec_vsearch_each(op, r->regs, sp->hnsw_check, index_hit, &w);
}

static void run_step(vrun *r, uint32_t k) {
    vexec *x = r->x;
    if (x->stop) return;
    if (k == x->nsteps) {
        x->emit(x, r->regs, x->ctx);
        return;
    }
    const vstep *s = &x->steps[k];
    const plan_op *op = &x->c->ops[s->op];
    const vstepplan *sp = &r->plans[k];
    if (s->seed || op->kind == POP_SCAN) {
        walk(r, k, s->src.a, sp->idx_a, s->src.skip, false);
        if (!x->stop) walk(r, k, s->src.extra, sp->idx_extra, NULL, false);
        return;
    }
    switch (op->kind) {
    case POP_NEG:
        if (walk(r, k, s->src.a, sp->idx_a, s->src.skip, true)) return;
        if (walk(r, k, s->src.extra, sp->idx_extra, NULL, true)) return;
        run_step(r, k + 1);
        return;
    case POP_FILTER:
        if (exec_filter(op, r->regs)) run_step(r, k + 1);
        return;
    case POP_HNSW:
        search_index(r, k, op, sp);
        return;
    case POP_ASSIGN: {
        val_t v = exec_eval(op->rhs, r->regs);
        if (sp->assign_check) {
            if (v == r->regs[op->slot]) run_step(r, k + 1);
            return;
        }
        val_t saved = r->regs[op->slot];
        r->regs[op->slot] = v;
        run_step(r, k + 1);
        r->regs[op->slot] = saved;
        return;
    }
    default:
        return;
    }
}

static bool expr_ready(const plan_expr *e, const bool *bound) {
    if (!e) return true;
    switch (e->kind) {
    case PX_SLOT:
        return bound[e->slot];
    case PX_ARITH:
        return expr_ready(e->l, bound) && expr_ready(e->r, bound);
    case PX_CALL:
        for (uint32_t i = 0; i < e->nargs; i++)
            if (!expr_ready(e->args[i], bound)) return false;
        return true;
    default:
        return true;
    }
}

/* Columns of an atom given by constants or bound variables. */
static uint32_t bound_columns(const plan_op *op, const bool *bound) {
    uint32_t n = op->nprefix;
    for (uint32_t p = 0; p < op->nprefix; p++) {
        uint32_t col = op->order[p];
        if (op->prefix_slot[col] >= 0 && !bound[op->prefix_slot[col]]) n--;
    }
    for (uint32_t p = op->nprefix; p < op->arity; p++) {
        uint32_t col = op->order[p];
        if ((op->act[col] == PCOL_BIND || op->act[col] == PCOL_CHECK_SLOT) &&
            bound[op->act_slot[col]])
            n++;
    }
    return n;
}

/* Whether a non-scan operation can run: its inputs are bound (a negation's variables
 * must be, or they would turn into wildcards). */
static bool op_ready(const plan_op *op, const bool *bound) {
    switch (op->kind) {
    case POP_NEG:
        for (uint32_t p = 0; p < op->nprefix; p++) {
            int32_t s = op->prefix_slot[op->order[p]];
            if (s >= 0 && !bound[s]) return false;
        }
        return true;
    case POP_FILTER:
        return expr_ready(op->lhs, bound) && expr_ready(op->rhs, bound);
    case POP_ASSIGN:
    case POP_HNSW: /* its query vector */
        return expr_ready(op->rhs, bound);
    default:
        return true;
    }
}

/* Marks what a vector search binds: its key and distance slots. */
static void hnsw_binds(const plan_op *op, bool *bound) {
    for (uint32_t c = 0; c < 2; c++)
        if (op->act[c] != PCOL_CHECK_CONST && op->act_slot[c] != UINT32_MAX)
            bound[op->act_slot[c]] = true;
}

/* Orders the steps after the seed: the compiled order assumed a different first atom,
 * so, as the compiler does, ready checks first, then the atom with the most bound
 * columns (a recursive atom seeded from a delta binds what the compiled order expected
 * from an atom that now comes later). */
static size_t source_size(const vsrc *src) {
    return (src->a ? rel_count(src->a) : 0) + (src->extra ? rel_count(src->extra) : 0);
}

static void reorder(const plan_clause *c, const vstep *in, uint32_t n, vstep *out, bool *bound) {
    bool done_small[32];
    bool *done = n <= 32 ? done_small : calloc(n, 1);
    memset(done, 0, n);
    uint32_t k = 0;
    if (n && in[0].seed) {
        out[k++] = in[0];
        done[0] = true;
        vcolplan cp;
        plan_columns(&c->ops[in[0].op], true, bound, &cp);
    }
    while (k < n) {
        int32_t pick = -1;
        for (uint32_t i = 0; i < n && pick < 0; i++)
            if (!done[i] && c->ops[in[i].op].kind != POP_SCAN && op_ready(&c->ops[in[i].op], bound))
                pick = (int32_t)i;
        if (pick < 0) {
            /* The atom with the most bound columns; between equals, the smaller relation
             * (re-deriving reach(X,Z) must seek edge(_,Z), not a closure's reach(X,_)). */
            int32_t best_score = -1;
            size_t best_size = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (done[i] || c->ops[in[i].op].kind != POP_SCAN) continue;
                int32_t sc = (int32_t)bound_columns(&c->ops[in[i].op], bound);
                size_t size = source_size(&in[i].src);
                if (sc > best_score || (sc == best_score && size < best_size)) {
                    best_score = sc;
                    best_size = size;
                    pick = (int32_t)i;
                }
            }
        }
        if (pick < 0) /* nothing ready: fall back to the compiled order */
            for (uint32_t i = 0; i < n && pick < 0; i++)
                if (!done[i]) pick = (int32_t)i;
        done[pick] = true;
        out[k++] = in[pick];
        const plan_op *op = &c->ops[in[pick].op];
        if (op->kind == POP_SCAN) {
            vcolplan cp;
            plan_columns(op, false, bound, &cp);
        } else if (op->kind == POP_ASSIGN) {
            bound[op->slot] = true;
        } else if (op->kind == POP_HNSW) {
            hnsw_binds(op, bound);
        }
    }
    if (done != done_small) free(done);
}

void vx_run(vexec *x, const val_t *pre, const bool *prebound) {
    const plan_clause *c = x->c;
    if (c->error) return;
    uint32_t ns = c->nslots ? c->nslots : 1;
    val_t regs_small[32];
    bool bound_small[32];
    vstepplan plans_small[4];
    vstep steps_small[8];
    val_t *regs = ns <= 32 ? regs_small : malloc(ns * sizeof *regs);
    bool *bound = ns <= 32 ? bound_small : malloc(ns * sizeof *bound);
    vstepplan *plans = x->nsteps <= 4 ? plans_small : malloc(x->nsteps * sizeof *plans);
    vstep *steps = x->nsteps <= 8 ? steps_small : malloc(x->nsteps * sizeof *steps);
    for (uint32_t i = 0; i < ns; i++) bound[i] = prebound && prebound[i];
    reorder(c, x->steps, x->nsteps, steps, bound);
    const vstep *given = x->steps;
    x->steps = steps;
    for (uint32_t i = 0; i < ns; i++) {
        regs[i] = pre && prebound && prebound[i] ? pre[i] : VAL_NULL;
        bound[i] = prebound && prebound[i];
    }
    /* the bindings an atom is probed with: the seed's tuples, until an atom multiplies them */
    size_t probes = x->nsteps && steps[0].seed ? source_size(&steps[0].src) : SIZE_MAX;
    for (uint32_t k = 0; k < x->nsteps; k++) {
        const vstep *s = &x->steps[k];
        const plan_op *op = &c->ops[s->op];
        vstepplan *sp = &plans[k];
        sp->assign_check = sp->hnsw_check[0] = sp->hnsw_check[1] = false;
        sp->idx_a = sp->idx_extra = -1;
        if (s->seed || op->kind == POP_SCAN || op->kind == POP_NEG) {
            plan_columns(op, s->seed, bound, &sp->cp);
            bool walk_it = !s->seed && probes < x->walk_below;
            sp->idx_a = walks(steps[k].src.a, &sp->cp, walk_it)
                            ? -1
                            : pick_index(&steps[k].src.a, op, &sp->cp);
            sp->idx_extra = walks(steps[k].src.extra, &sp->cp, walk_it)
                                ? -1
                                : pick_index(&steps[k].src.extra, op, &sp->cp);
            if (!s->seed && op->kind == POP_SCAN) probes = SIZE_MAX;
        } else if (op->kind == POP_ASSIGN) {
            sp->assign_check = bound[op->slot];
            bound[op->slot] = true;
        } else if (op->kind == POP_HNSW) {
            for (uint32_t h = 0; h < 2; h++)
                sp->hnsw_check[h] = op->act[h] != PCOL_CHECK_CONST &&
                                    op->act_slot[h] != UINT32_MAX && bound[op->act_slot[h]];
            hnsw_binds(op, bound);
        }
    }
    vrun r = {.x = x, .plans = plans, .regs = regs};
    run_step(&r, 0);
    x->steps = given;
    if (regs != regs_small) free(regs);
    if (bound != bound_small) free(bound);
    if (plans != plans_small) free(plans);
    if (steps != steps_small) free(steps);
}

void vx_run_clause(vexec *x, const plan_clause *c, int32_t seed, vsrc seed_src, vx_src_fn src,
                   const void *ctx, const val_t *pre, const bool *prebound) {
    vstep small[16];
    vstep *steps = c->nops + 1 <= 16 ? small : malloc((c->nops + 1) * sizeof *steps);
    uint32_t n = 0;
    if (seed >= 0) steps[n++] = (vstep){(uint32_t)seed, seed_src, true};
    for (uint32_t i = 0; i < c->nops; i++) {
        const plan_op *op = &c->ops[i];
        if ((int32_t)i == seed && op->kind == POP_SCAN) continue;
        vstep st = {i, {0}, false};
        if (op->kind == POP_SCAN || op->kind == POP_NEG) st.src = src(ctx, op->pred);
        steps[n++] = st;
    }
    x->c = c;
    x->steps = steps;
    x->nsteps = n;
    vx_run(x, pre, prebound);
    if (steps != small) free(steps);
}

void vx_head(const plan_clause *c, const val_t *regs, val_t *out) {
    out[0] = VAL_NULL;
    for (uint32_t i = 0; i < c->nhead; i++) out[i] = exec_eval(c->head[i], regs);
}
