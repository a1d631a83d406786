/* A plan's vector-search operation (POP_HNSW, the body literal hnsw_nearest) run over
 * bound slots: the query executor (eval.c) and the view and session-delta steps
 * (views/view_eval.c) both walk its hits this way. */
#ifndef IL_EXEC_VSEARCH_H
#define IL_EXEC_VSEARCH_H

#include <stdbool.h>

#include "plan/plan.h"

/* Searches op's index for the query vector op->rhs gives over regs and, for each of the
 * k nearest in order, binds the key and the distance into their slots, or compares them
 * with what is there (check[c] for the key, c = 0, and the distance, c = 1; a constant the
 * plan gave is always compared), then calls each(ctx, matched); the slots get their
 * values back after each call. Stops when each returns false. */
void exec_vsearch_each(const plan_op *op, val_t *regs, const bool check[2],
                       bool (*each)(void *ctx, bool matched), void *ctx);

#endif
