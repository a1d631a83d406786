/* A recursive clause run by the workers of a team (exec/team.h) over slices of a delta.
 * Its reads are resolved once on the calling thread: the indexes its seeks need are
 * built and snapshot copies made there (exec/snapidx.h is that thread's), so that the
 * workers, each with registers, seek caches and output of its own, only read what
 * nobody changes while they run. The interpreter is eval.c's. */
#ifndef IL_EXEC_WORKER_CLAUSE_H
#define IL_EXEC_WORKER_CLAUSE_H

#include "base/meter.h"
#include "exec/team.h"
#include "exec/tupleset.h"
#include "plan/plan.h"

/* Words per tuple in a flat list (delta, added) and a hash set: a tuple of no columns
 * still takes one (zero) word, so that a propositional fact counts as one entry. */
static inline uint32_t exec_flat_width(uint32_t arity) {
    return arity ? arity : 1;
}

/* Appends a tuple to a flat list without a call per value. */
static inline void exec_push_tuple(plan_tuples *list, const val_t *t, uint32_t n) {
    il_mvec_reserve(*list, list->n + n);
    val_t *dst = &list->v[list->n];
    for (uint32_t i = 0; i < n; i++) dst[i] = t[i];
    list->n += n;
}

typedef struct exec_shared_clause {
    const plan_clause *c;
    rel_t **rels;                 /* per op: the relation it reads (NULL: nothing) */
    int *idx;                     /* per op: the index it seeks */
    struct exec_scan_plan *scans; /* per op: eval.c's column steps for that index */
    bool empty;                   /* some scan reads nothing: the clause has no binding */
} exec_shared_clause;

/* Whether every recursive clause of st may run on helper threads (not one searching a
 * vector index, whose scratch is not shared, nor one with an error to report). */
bool exec_recursion_runs_on_workers(const plan_program *p, const plan_stratum *st);

/* Resolves c's reads into sc on the calling thread, as they are now; freed with
 * exec_shared_clause_free. */
void exec_shared_clause_resolve(plan_program *p, const plan_clause *c, exec_shared_clause *sc);
void exec_shared_clause_free(exec_shared_clause *sc);

/* Runs sc on worker `worker` of team t over `delta` (for its delta operation): head
 * tuples not in `check` (may be NULL) go to `out`, and those new to it to `added` too
 * (may be NULL). `caches`: the worker's seek caches for the clause (exec_worker_caches).
 * False when it stopped. */
bool exec_run_on_worker(plan_program *p, exec_ctx *x, const exec_shared_clause *sc, exec_team *t,
                        uint32_t worker, plan_seek_cache *caches, const plan_tuples *delta,
                        const rel_t *check, plan_tuples *added, tupleset *out);

/* A worker's seek caches for clause c: the clause's own on the calling thread (worker 0),
 * else *mine, made the first time; freed with exec_worker_caches_free. */
plan_seek_cache *exec_worker_caches(plan_seek_cache **mine, const plan_clause *c, uint32_t worker);
void exec_worker_caches_free(plan_seek_cache *caches, uint32_t nops);

#endif
