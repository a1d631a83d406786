/* Sorting flat arrays of fixed-arity tuples into raw word order (the order of every
 * relation index): an LSD radix sort that skips the bytes all tuples share, so sorting
 * a partition whose values differ only in a few low bytes costs a few passes. Measured
 * on the full closure of the 2,000 / 4,000 random graph: qsort of each partition took a
 * fifth of the run; this takes a few percent. */
#ifndef IL_EXEC_TUPLESORT_H
#define IL_EXEC_TUPLESORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

/* Sorts n tuples of `arity` words in place (stable). Between passes over many tuples it
 * checks the running statement's guard (exec/guard.h): returns false, leaving the tuples
 * in no useful order, when the statement must stop. */
bool tuple_sort(val_t *tuples, size_t n, uint32_t arity);

#endif
