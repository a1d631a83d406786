/* Linear closure by graph search: the partitioned recursion of eval.c, for a stratum
 * whose one recursive clause steps along a binary relation of an earlier stratum,
 * p(X, Z) <- p(X, Y), e(Y, Z), run as a breadth-first search per partition over e's
 * adjacency lists, with a visited stamp per node where the generic fixpoint joins each
 * round's delta through the index of e and deduplicates in a hash set. When the seeds
 * are many for the size of e (a full closure), e's lists are built whole, nodes numbered
 * in value order so that each partition's rows come out sorted; otherwise (a bound
 * query over a large graph) a node's list is read from e's index the first time the
 * search reaches it, so that the work stays with the part of e the search reaches. */
#ifndef IL_EXEC_CLOSURE_H
#define IL_EXEC_CLOSURE_H

#include "exec/eval.h"

/* The step of a linear closure: the stepping relation and which of its columns holds the
 * node stepped from (from_col) and the node stepped to. */
typedef struct exec_closure_step {
    uint32_t pred;
    uint32_t from_col, to_col;
    const uint32_t *order; /* the step's index order (from_col first), for lazy lists */
} exec_closure_step;

/* Whether stratum st (one binary predicate partitioned on column col, eval.c's
 * partition_column) is a linear closure; fills *step when it is. */
bool exec_closure_match(const plan_program *p, const plan_stratum *st, uint32_t col,
                        exec_closure_step *step);

/* Computes the stratum's predicate into its `full` relation from its base tuples (nbase
 * distinct tuples, sorted by column col): each partition's base tuples and every node
 * their other column reaches along the step. False when it stopped (x->error set). */
bool exec_closure_run(plan_program *p, exec_ctx *x, const plan_stratum *st, uint32_t col,
                      const exec_closure_step *step, const val_t *base, size_t nbase);

#endif
