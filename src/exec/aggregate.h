/* Aggregation of a clause's distinct body bindings into head rows (iql-language.md 3.6):
 * count (distinct bindings), count_distinct, sum (i64, saturating), min, max, avg
 * (always a float), and the ranking aggregates top_k, top_k_threshold, within_radius. */
#ifndef IL_EXEC_AGGREGATE_H
#define IL_EXEC_AGGREGATE_H

#include "plan/plan.h"

/* Groups the distinct bindings `rows` (nrows of them, one value per clause slot; they
 * are reordered) by the clause's group slots and inserts one row per group (several for
 * ranking aggregates) into `target`. Returns false, with only some groups inserted, when
 * the running statement's guard (exec/guard.h) says to stop. */
bool exec_aggregate(const plan_clause *c, val_t *rows, size_t nrows, rel_t *target);

#endif
