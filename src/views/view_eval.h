/* The clause interpreter of maintained views: runs one compiled clause (plan/plan.h)
 * with every atom reading a chosen version of its relation, optionally seeded by a
 * change set and with some variables bound in advance. Private to src/views, and to the
 * session delta of row provenance (kg/prov_delta.c), which adds a session's facts and
 * rules to a query's state as a commit adds to a view's.
 *
 * Why not the executor of exec/eval.c: maintenance reads each relation in one of two
 * versions (before and after a write) without copying it, starts a clause from the atom
 * whose relation changed rather than from the compiled join order, and checks single
 * bindings with every variable bound. Those are three different ways of walking the same
 * operations; a separate small walker keeps the query executor untouched. */
#ifndef IL_VIEWS_VIEW_EVAL_H
#define IL_VIEWS_VIEW_EVAL_H

#include "plan/plan.h"

/* A version of a relation without a copy: the tuples of `a` that are not in `skip`,
 * then the tuples of `extra` (the two never overlap). Any part may be NULL (empty). */
typedef struct vsrc {
    const rel_t *a;
    const rel_t *skip;
    const rel_t *extra;
} vsrc;

/* One step of a run: an operation of the clause, reading `src` when it is an atom. A
 * seed step iterates `src` (a change set) with the columns of atom `op`, binding its
 * variables, whatever the operation's kind; it always comes first. */
typedef struct vstep {
    uint32_t op;
    vsrc src;
    bool seed;
} vstep;

typedef struct vexec vexec;
/* Called for each complete binding; regs holds every slot (unbound slots are Null). */
typedef void (*vemit_fn)(vexec *x, const val_t *regs, void *ctx);

struct vexec {
    const plan_clause *c;
    const vstep *steps;
    uint32_t nsteps;
    vemit_fn emit;
    void *ctx;
    bool stop; /* set by an emitter that has seen enough */
    /* Asked every few thousand tuples walked (may be NULL): true stops the run, as
       `stop` does (its output is then incomplete: the caller must throw it away). */
    bool (*spent)(void);
    /* Walk rather than index: an atom that only a seed of at most this many tuples binds
       reads a relation lacking the index it needs by walking it once per seed tuple, where
       building the index costs several walks (0: always index). For a caller whose
       relations live for one run (kg/prov_delta.c), not a view's, which keep the index
       for every later commit. */
    uint32_t walk_below;
};

/* Runs the steps. `pre` (nslots values) and `prebound` (nslots flags) give variables
 * bound before the first step; both may be NULL. */
void vx_run(vexec *x, const val_t *pre, const bool *prebound);

/* The version of predicate `pred` an atom reads (the caller's choice of state). */
typedef vsrc (*vx_src_fn)(const void *ctx, uint32_t pred);
/* Runs clause c as vx_run does (x->c, x->steps and x->nsteps set here): every operation
 * in compiled order, each atom reading src(ctx, its predicate); with seed >= 0, op `seed`
 * first iterates seed_src, and is skipped at its own place unless it is a negation
 * (which must still hold in the state). */
void vx_run_clause(vexec *x, const plan_clause *c, int32_t seed, vsrc seed_src, vx_src_fn src,
                   const void *ctx, const val_t *pre, const bool *prebound);

/* The head tuple of a binding (arity = clause head width, at least one value). */
void vx_head(const plan_clause *c, const val_t *regs, val_t *out);

#endif
