/* The session's part of a query as a delta over the graph's own answer (prov_delta.c):
 * how a query on a session tells its persistent rows from its ephemeral ones in one
 * evaluation. */
#ifndef IL_KG_PROV_DELTA_H
#define IL_KG_PROV_DELTA_H

#include "exec/eval.h"
#include "kg/kg.h"

/* Whether the session's facts and rules can be applied to p's answer as a delta: p
 * (planned with the session's rules, without its facts) is stratified, and every clause
 * the delta may run compiled and has no vector search. */
bool prov_delta_sound(const plan_program *p, il_session *s);

/* After p ran with x (skip_session): applies the session's facts and rules to its state.
 * The query's rows it derives go to eph (initialised with the query's arity): with
 * *whole false, rows to add to the graph's (some may be the graph's too); with *whole
 * true, the query's whole answer (its stratum was evaluated again, and may have lost rows
 * of the graph's). The query predicate's own rows stay the graph's. Returns the error or
 * stop, or NULL. */
const char *prov_delta_run(plan_program *p, il_session *s, exec_ctx *x, tupleset *eph, bool *whole);

#endif
