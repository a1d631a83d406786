/* Text of a compiled program, for `.debug`. */
#ifndef IL_PLAN_EXPLAIN_H
#define IL_PLAN_EXPLAIN_H

#include "base/buf.h"
#include "plan/plan.h"

/* Appends the predicates and, stratum by stratum, every clause's operations. */
void plan_explain(const plan_program *p, il_buf *out);

#endif
