/* Maintained views: the rows of a query over a knowledge graph's persistent rules and
 * stored facts, kept current as statements change the stored facts, with the rows that
 * appeared and vanished since the last look (docs/engine.md, "Maintained views"). The
 * server's `.subscribe` holds one per standing query; read_policy.h keeps one per
 * persistent rule that queries read from instead of evaluating it.
 *
 * The engine hands the views of a graph every commit's delta (view_graph_commit), and
 * views read the catalog only through views/catalog.h. A change of rules (or of which
 * relations exist) rebuilds the view from scratch instead. Not thread-safe, like the
 * engine. */
#ifndef IL_VIEWS_VIEW_H
#define IL_VIEWS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "inputlayer.h"
#include "exec/guard.h"
#include "exec/rel.h"
#include "value/value.h"

typedef struct view view_t;
typedef struct kg_graph kg_graph;

/* Opens a view of `?query` (the text of a query statement) over the session's current
 * graph; session rules and facts take no part. Returns NULL and sets *err (valid until
 * the next call on this thread) when the query does not parse, does not run, or uses
 * what maintenance does not support (`:limit`, `:offset`, unstratified rules). */
view_t *view_open(il_session *s, const char *query_text, const char **err);
/* How view_open_with opens a view. */
typedef struct view_opts {
    /* Computing the rows runs under this guard (a statement's: it is that statement's
       evaluation); NULL: within the maintenance budget (il_engine_set_view_budget). */
    exec_guard *guard;
    bool refuse_clock; /* refuse a program that calls time_now(), before computing it */
    /* build what only writes need (derivation counts, aggregate bindings) at the first
       write that needs it, not now: for a view that may only be read (read_policy.h); a
       standing query's view is built whole, so that its first delta costs no more */
    bool lazy;
    /* the program keeps copies of the graph's clauses, not the graph's: for a view made
       on a pinned copy of a graph (kg/pin.c), which goes before the view does */
    bool own_clauses;
} view_opts;

/* view_open with options: *stopped says the guard stopped it (*err is then the stop's
 * message). */
view_t *view_open_with(il_session *s, const char *query_text, view_opts o, const char **err,
                       bool *stopped);
void view_close(view_t *v);

/* The width of the view's rows (the query's columns). */
uint32_t view_arity(const view_t *v);
/* The current rows, the same set `?query` returns, in word order: *rows gets a malloc'ed
 * array of arity values per row (NULL when empty). Returns the number of rows. */
size_t view_rows(const view_t *v, val_t **rows);
/* The rows that appeared and the rows that vanished since the last call (or since the
 * view opened), each malloc'ed and in word order: exactly the difference between the two
 * states, so a row that came and went in between is in neither. */
void view_take_delta(view_t *v, val_t **added, size_t *nadded, val_t **removed, size_t *nremoved);
/* Whether the view reads the stored facts of `rel`. */
bool view_reads_stored(const view_t *v, const char *rel);
/* Moves the view to graph g, which has the version and the stored facts the view was
 * computed over, or is handed their difference next (view_graph_commit): a view built on
 * a pinned copy of g (kg/pin.c) adopted by g. */
void view_rehome(view_t *v, kg_graph *g);
/* Why the view has no rows any more (its graph was dropped, or a rebuild after a rule
 * change failed), or NULL. */
const char *view_error(const view_t *v);

/* Aggregate groups recomputed by writes since the view opened: writes recompute only
 * the groups whose bindings changed (for tests and measurements). */
uint64_t view_groups_recomputed(const view_t *v);
/* The tuples the view holds (its relations, kept derivation counts and aggregate
 * bindings), for tests of what a view keeps. */
size_t view_state_tuples(const view_t *v);
/* Whether the view's program calls time_now(): its rows change with the clock, which
 * no write announces, so they cannot be maintained. */
bool view_reads_clock(const view_t *v);
/* The current rows as a relation owned by the view, for reading in place, or NULL when
 * they are not the graph's present state: the view failed or is detached, or a statement
 * has changed rules or facts since the last commit. Valid until the next statement. */
const rel_t *view_current_rows(const view_t *v);

/* ---- engine hooks (src/kg) ---- */
/* One stored relation's change in a commit, netted: the tuples inserted and deleted. */
typedef struct view_delta_rel {
    char *name;
    rel_t *plus, *minus;
} view_delta_rel;
/* After a commit: maintains a graph's open views from the commit's delta (ndelta
 * relations), or rebuilds those built against another version of the graph. */
void view_graph_commit(view_t *const *views, uint32_t n, const view_delta_rel *delta,
                       uint32_t ndelta);
/* Their graph is being dropped: the views lose their rows and are detached. */
void view_graph_detach(view_t *const *views, uint32_t n);

#endif
