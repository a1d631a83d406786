/* A recursive stratum's fixpoint on several threads (exec/team.h), when its work is big
 * enough to pay for them: the partitions of the partitioned fixpoint handed out in
 * chunks, and each big round of the general semi-naive loop cut into slices of its
 * delta. Either way the result is that of one thread: the same rows, in the same order,
 * for the partitions; the same set of tuples for the rounds. */
#ifndef IL_EXEC_PARALLEL_FIXPOINT_H
#define IL_EXEC_PARALLEL_FIXPOINT_H

#include "exec/eval.h"
#include "exec/tupleset.h"

/* The partitioned fixpoint runs its first EXEC_PARTITION_SAMPLE partitions on one
 * thread; the rest go to several when they are not tiny (tiny ones run together on one)
 * and the first ones promise at least EXEC_PARTITION_SHARE_ROWS rows more. */
enum { EXEC_PARTITION_SAMPLE = 32, EXEC_PARTITION_SHARE_ROWS = 20000 };

/* The partitions of the base tuples (sorted by column col) from tuple `first` on, each a
 * fixpoint of st's recursive clauses, on `threads` threads; their rows (each partition's
 * sorted) are appended to *all in partition order. False when it stopped (x->error). */
bool exec_partitions_on_threads(plan_program *p, exec_ctx *x, plan_stratum *st,
                                const tupleset *base, uint32_t first, uint32_t col,
                                uint32_t threads, plan_tuples *all);

/* The state of a recursive stratum's rounds on several threads, kept from round to
 * round; NULL when some recursive clause cannot run on a helper thread. */
typedef struct exec_parallel_rounds exec_parallel_rounds;
exec_parallel_rounds *exec_parallel_rounds_new(plan_program *p, exec_ctx *x, plan_stratum *st,
                                               uint32_t threads);
void exec_parallel_rounds_free(exec_parallel_rounds *pr);

/* Whether the deltas of st's predicates, ready for a round, hold enough tuples to share
 * the round out (checked before exec_parallel_rounds_new, so that small recursion makes
 * nothing for threads). */
bool exec_round_is_big(const plan_program *p, const plan_stratum *st);

/* Runs the round whose deltas are ready (advanced) on several threads when they are big
 * enough: every head tuple new to `full` goes into it and into its predicate's `added`.
 * False when the round is left to the caller's one thread; x->error when it stopped. */
bool exec_round_on_threads(exec_parallel_rounds *pr);

#endif
