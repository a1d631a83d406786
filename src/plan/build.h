/* Building an evaluation program for one query: gathers the clauses the query needs,
 * applies the demand transformation (magic sets with sideways information passing:
 * constants of the query and bindings that flow through joins and recursion restrict
 * what is computed), and compiles every resulting clause. */
#ifndef IL_PLAN_BUILD_H
#define IL_PLAN_BUILD_H

#include "plan/plan.h"

/* Where a program's rules and stored facts come from. */
struct plan_source {
    const iql_rule *const *rules; /* every rule in program order (persistent, then session) */
    uint32_t nrules;
    uint32_t nsession; /* the last nsession rules are the session's */
    /* The stored facts of a relation (NULL when it has none). */
    const rel_t *(*stored)(void *ctx, const char *rel);
    void *ctx;
    /* The vector index of that name for hnsw_nearest (NULL: none; the callback may be
       NULL where no index can be read), and how to search one. A program keeps the
       index: building or dropping an index moves the graph's version. */
    void *(*index)(void *ctx, const char *name);
    plan_index_search_fn index_search;
    /* Whether the caller holds facts of this relation apart from its stored ones, to
       apply as a delta after the run (kg/prov_delta.c): a derived relation's stored
       facts then take part as a clause even while it has none stored. May be NULL. */
    bool (*facts_apart)(void *ctx, const char *rel, uint32_t arity);
};

/* Builds into *p (initialised, empty) the program whose query predicate holds the rows
 * of `query` (a rule whose head lists the output columns). Returns false with p->error
 * set when the query cannot run (the message is the reference's "Query execution
 * failed" inner text). Demand can tie a negation or an aggregate into a recursive
 * stratum (two consumers sharing one restricted instance); the program is then built
 * again without demand, and p->unstratified stays set only if the rules themselves are
 * not stratified (session rules are not checked). */
bool plan_build(plan_program *p, const plan_source *src, const iql_rule *query);

/* True for int, float, string, bool and vector literals. */
bool plan_term_is_const(const iql_term *t);
/* The value of a constant term (int, float, string, bool, vector); Null otherwise. */
val_t plan_const_value(const iql_term *t);

#endif
