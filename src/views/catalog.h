/* What maintained views need of the catalog, declared here and implemented by the engine
 * (src/kg/view_catalog.c): views read a graph's rules, stored facts and version through
 * these calls and never reach into the catalog's structures. The engine, in turn, hands
 * views each commit's delta (view_graph_commit) and tells them of a dropped graph. A
 * graph is opaque here. */
#ifndef IL_VIEWS_CATALOG_H
#define IL_VIEWS_CATALOG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "exec/guard.h"
#include "exec/rel.h"
#include "inputlayer.h"
#include "iql/ast.h"

typedef struct kg_graph kg_graph;
typedef struct view view_t;
struct read_policy;

/* The session's engine, its current graph, the guard of the statement it runs, and whether it has
 * session facts or rules (queries over them do not read maintained relations). */
il_engine *view_cat_engine(il_session *s);
kg_graph *view_cat_graph(il_session *s);
exec_guard *view_cat_guard(il_session *s);
bool view_cat_session_involved(const il_session *s);
/* The maintenance budget (il_engine_set_view_budget; 0: none) and whether reads may
 * make rules maintained (il_engine_set_maintained_views). */
uint64_t view_cat_budget_ns(const il_engine *e);
bool view_cat_maintained(const il_engine *e);

/* Bumped by every change to the graph's rules or to which relations hold facts. */
uint64_t view_cat_version(const kg_graph *g);
/* The stored facts of a relation, or NULL. */
const rel_t *view_cat_stored(kg_graph *g, const char *rel);
/* The clauses of the graph's persistent rules, in catalog order: a malloc'ed array of *n. */
const iql_rule **view_cat_clauses(const kg_graph *g, uint32_t *n);
/* The width of the persistent rule `rel`'s rows; false when it has no clause. */
bool view_cat_rule_arity(kg_graph *g, const char *rel, uint32_t *arity);
/* The rule `?query` runs over the graph's own rules and stored facts (no session part),
 * in the arena. */
void view_cat_query_rule(il_engine *e, kg_graph *g, const iql_query *q, il_arena *a, iql_rule *out);
/* Whether a statement has changed stored facts since the views last caught up. */
bool view_cat_pending(const kg_graph *g);
/* Empties the graph's plan cache: cached programs may point into maintained rows. */
void view_cat_flush_plans(kg_graph *g);
/* The graph's open views: a view registers when it opens and leaves when it closes, and
 * the engine maintains the registered ones at each commit. */
void view_cat_attach(kg_graph *g, view_t *v);
void view_cat_detach(kg_graph *g, view_t *v);
/* Where the graph keeps its read policy (read_policy.h; NULL until first needed). */
struct read_policy **view_cat_policy(kg_graph *g);

#endif
