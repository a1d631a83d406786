/* Keyed families of standing queries: the query with the integer and string constants of
 * its goal atom lifted to fresh variables, so that subscriptions which differ only in
 * those constants can share one maintained view (docs/server.md, "Standing queries"). */
#ifndef IL_VIEWS_LIFT_H
#define IL_VIEWS_LIFT_H

#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

typedef struct view_lifted {
    char *text;     /* the family's query text (malloc'ed) */
    uint32_t nkeys; /* lifted constants; 0 = the query as written */
    uint32_t *cols; /* the goal positions (= result columns) they stood at */
    val_t *consts;  /* their values */
} view_lifted;

/* Lifts the goal's int and string constants of `?query`. Anything else (constants in
 * other literals, comparisons or arithmetic, floats and booleans, sort annotations,
 * a query that does not parse) stays as written; with nothing to lift, text is the
 * query trimmed and nkeys 0. Never fails. */
void view_lift(const char *query, size_t len, view_lifted *out);
void view_lifted_free(view_lifted *l);

#endif
