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
/* Whether every aggregate of c's head is a count and it has no group: its one row then
 * depends only on how many bindings there are (exec_aggregate_count). */
bool exec_aggregate_counts_only(const plan_clause *c);
/* exec_aggregate of such a clause over n bindings, without the bindings. */
void exec_aggregate_count(const plan_clause *c, size_t n, rel_t *target);

#endif
