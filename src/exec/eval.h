/* Running an evaluation program (plan/plan.h): every stratum in order, recursive ones
 * to a fixpoint. Afterwards each derived predicate's `full` relation holds its rows. */
#ifndef IL_EXEC_EVAL_H
#define IL_EXEC_EVAL_H

#include "exec/guard.h"
#include "plan/plan.h"

typedef struct exec_ctx {
    /* The statement's stop conditions, checked every few thousand tuples and installed on
       the thread while the program runs; NULL: the program runs to its end. */
    exec_guard *guard;
    const char *error; /* the first error; evaluation stops at it */
    uint64_t ticks;    /* work done, in tuples visited and rounds run, for the stop checks */
    /* the query predicate's stratum is not run: the caller reads the rows of the
       predicate it copies instead (a maintained view aliasing a rule) */
    bool skip_query;
    /* clauses made from session rules do not run (plan_clause.session): the graph's own
       answer, with the session's rules planned in (kg/provenance.c) */
    bool skip_session;
    /* out: the most threads one step of the evaluation ran on (guard->threads allows) */
    uint32_t threads_used;
} exec_ctx;

/* The error of a program stopped by its guard; guard->stop says why. */
extern const char *const EXEC_STOPPED;

bool exec_run(plan_program *p, exec_ctx *x);

/* Adds n units of work to x's count and checks its guard when a check falls due; true
 * once the evaluation must stop (x->error set). eval.c's own tick, for many at once. */
bool exec_tick_n(exec_ctx *x, uint64_t n);

#endif
