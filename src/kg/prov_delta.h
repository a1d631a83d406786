/* The session's part of a query as an insertion delta over the graph's own answer
 * (prov_delta.c): how a query on a session tells its persistent rows from its ephemeral
 * ones in one evaluation. */
#ifndef IL_KG_PROV_DELTA_H
#define IL_KG_PROV_DELTA_H

#include "exec/eval.h"
#include "kg/kg.h"

/* Whether the session's facts and rules can be added to p's answer as a delta: p (planned
 * with the session's rules, without its facts) is stratified and no negation, aggregate
 * or vector search reads what the session may change. */
bool prov_delta_sound(const plan_program *p, il_session *s);

/* After p ran with x (skip_session): adds the session's facts and rules to its state,
 * the query rows it derives going to eph (initialised with the query's arity; some may be
 * the graph's too); the query predicate's rows stay the graph's. Returns the error or
 * stop, or NULL. */
const char *prov_delta_run(plan_program *p, il_session *s, exec_ctx *x, tupleset *eph);

#endif
