/* The read policy of maintained views: which persistent rules are kept as maintained
 * relations, and the rows a query reads instead of evaluating such a rule
 * (docs/engine.md, "Maintained views").
 *
 * A rule becomes maintained (with everything it depends on, in one view) when a query
 * reads it with no argument bound, where demand cannot restrict the work (a standing
 * query has a view of its own and does not make the rule maintained). It stays maintained until the
 * graph's version moves (rules change, or a relation starts or stops holding facts). A rule whose
 * program calls time_now() is never maintained. Queries over session rules or session facts do not
 * read maintained relations. Not thread-safe, like the engine. */
#ifndef IL_VIEWS_READ_POLICY_H
#define IL_VIEWS_READ_POLICY_H

#include "inputlayer.h"
#include "iql/ast.h"
#include "exec/rel.h"
#include "views/view.h"

typedef struct kg_graph kg_graph;

/* A `?query` statement is about to run in the session: maintains its goal's rule when
 * the goal binds nothing and the rule can be maintained. */
void read_policy_note_query(il_session *s, const iql_query *q);

/* A pinned read (kg/pin.c), which must not change the live graph, of a query that would
 * make its goal's rule maintained: the rule's view, computed on the session's pinned copy
 * as the read's own evaluation, for the writer to adopt (read_policy_adopt). NULL when
 * none is made (the read evaluates the rule); *stopped when the guard stopped it. */
view_t *read_policy_build(il_session *s, const iql_query *q, bool *stopped);
/* Whether graph g has not decided on maintaining rule `rel` at its current version. */
bool read_policy_undecided(kg_graph *g, const char *rel);
/* Keeps v, a view of rule `rel` made by read_policy_build on a pinned copy of g, moved to
 * g (view_rehome) and caught up with g's stored facts, as g's maintained `rel`; only
 * while read_policy_undecided(g, rel), at the version the copy had. */
void read_policy_adopt(kg_graph *g, const char *rel, view_t *v);

/* Whether queries over the graph's own rules and facts may read maintained relations
 * now: some rule is maintained and every maintained relation is current. */
bool read_policy_active(kg_graph *g);
/* The maintained rows of relation `rel` (a persistent rule), or NULL to evaluate it.
 * Meaningful only while read_policy_active. */
const rel_t *read_policy_rows(kg_graph *g, const char *rel);
/* The rules the policy decided on (a pin reads each maintained one's rows), by position:
 * how many, and the i-th's name and rows as read_policy_rows gives them (NULL: not
 * maintained). Meaningful only while read_policy_active. */
uint32_t read_policy_entries(kg_graph *g);
const rel_t *read_policy_entry(kg_graph *g, uint32_t i, const char **rel);
/* The number of maintained rules of the graph (for tests). */
uint32_t read_policy_count(kg_graph *g);
/* The tuples their views hold (view_state_tuples; for tests). */
size_t read_policy_state_tuples(kg_graph *g);

/* ---- engine hooks (src/kg) ---- */
/* After a commit, before the graph's views catch up: a moved graph version ends
 * maintenance (so nothing is rebuilt for nobody). */
void read_policy_graph_commit(kg_graph *g);
/* Maintained views turned off (il_engine_set_maintained_views): the graph's maintained
 * rules are closed. */
void read_policy_graph_clear(kg_graph *g);
/* The graph is being dropped: its maintained views are closed. */
void read_policy_graph_free(kg_graph *g);

#endif
