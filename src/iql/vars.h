/* Walking the variables of a term: the planner, the validator and the query builder all
 * need a term's variables (directly, inside arithmetic and call arguments, and for heads
 * inside aggregates) in the order they are written. */
#ifndef IL_IQL_VARS_H
#define IL_IQL_VARS_H

#include "iql/ast.h"

/* Calls fn for each variable occurrence of t, left to right, including those inside
 * arithmetic and call arguments, and, when `aggs`, an aggregate's variable and the
 * variables of its specs. Stops as soon as fn returns false, and then returns false. */
bool iql_term_each_var(const iql_term *t, bool aggs, bool (*fn)(const char *var, void *ctx),
                       void *ctx);

#endif
