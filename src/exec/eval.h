/* Running an evaluation program (plan/plan.h): every stratum in order, recursive ones
 * to a fixpoint. Afterwards each derived predicate's `full` relation holds its rows. */
#ifndef IL_EXEC_EVAL_H
#define IL_EXEC_EVAL_H

#include "plan/plan.h"

typedef struct exec_ctx {
    const volatile int *stop; /* set by a deadline or a cancel; polled every few thousand tuples */
    const char *error;        /* the first error; evaluation stops at it */
    uint64_t ticks;           /* tuples visited, for the stop poll */
} exec_ctx;

bool exec_run(plan_program *p, exec_ctx *x);

#endif
