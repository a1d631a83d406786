/* A stable comparison sort that the running statement's guard (exec/guard.h) can stop:
 * result rows, aggregate bindings and partitions can number millions, and one qsort of
 * them would run for seconds without a stop check. */
#ifndef IL_EXEC_STABLE_SORT_H
#define IL_EXEC_STABLE_SORT_H

#include <stdbool.h>
#include <stddef.h>

/* Sorts n elements of `size` bytes, equal elements keeping their order. Returns false,
 * leaving the elements in no useful order, when the statement must stop. */
bool exec_stable_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
