/* Relations: sets of fixed-arity tuples of values (value/value.h), stored inline in
 * sorted indexes (B+-trees), with no per-tuple heap object.
 *
 * Every relation has a primary index over its columns in natural order, which gives
 * set semantics. Further indexes, each a permutation of the columns, are added on
 * demand (rel_index) and then kept in step with every change. A seek takes a prefix
 * of values in an index's column order and visits exactly the tuples that start with
 * it, in that index's order (raw word order, not the value order of value.h).
 *
 * A counted relation also keeps, per tuple, a signed derivation count: a tuple is
 * present while its count is positive. Incremental maintenance adds and subtracts
 * derivations and learns from the result whether the tuple appeared or vanished.
 *
 * Not thread-safe: one writer, and no reader while it writes. Cursors are invalidated
 * by any change to the relation. */
#ifndef IL_EXEC_REL_H
#define IL_EXEC_REL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

#define REL_MAX_ARITY   64
#define REL_MAX_INDEXES 8

typedef struct rel rel_t;

/* NULL when arity > REL_MAX_ARITY. */
rel_t *rel_new(uint32_t arity);
rel_t *rel_new_counted(uint32_t arity);
void rel_free(rel_t *r);
/* Removes every tuple; keeps the arity and the indexes. */
void rel_clear(rel_t *r);

uint32_t rel_arity(const rel_t *r);
size_t rel_count(const rel_t *r);
/* A counter that moves whenever a tuple appears or vanishes or the relation is cleared:
 * whoever mirrors the relation (a vector index) can tell whether it missed a change. */
uint64_t rel_changes(const rel_t *r);
bool rel_is_counted(const rel_t *r);
/* Bytes held by the relation's nodes, all indexes included (node memory is taken in
 * chunks; freed nodes stay with the relation until it is cleared or becomes empty). */
size_t rel_bytes(const rel_t *r);

/* Set operations, tuple in natural column order. Insert returns true when the tuple
 * is new; delete returns true when it was present. On a counted relation, insert and
 * delete set the count to 1 and 0. */
bool rel_insert(rel_t *r, const val_t *tuple);
bool rel_delete(rel_t *r, const val_t *tuple);
bool rel_contains(const rel_t *r, const val_t *tuple);

/* Fills an empty, uncounted relation from n distinct tuples already in ascending word
 * order (natural column order), building full nodes bottom-up: the fast path for a
 * result computed elsewhere. Returns false, changing nothing, when the relation is not
 * empty, is counted, or the tuples are not strictly ascending. */
bool rel_load_sorted(rel_t *r, const val_t *tuples, size_t n);
/* rel_load_sorted over tuples held in nparts consecutive runs (parts[i]: counts[i]
 * tuples), ascending across them. */
bool rel_load_sorted_parts(rel_t *r, const val_t *const *parts, const size_t *counts,
                           size_t nparts);

/* Exchanges the contents of two relations: whoever holds a pointer to `a` now reads what
 * `b` held (a maintained relation that cached programs read in place is replaced so). */
void rel_swap(rel_t *a, rel_t *b);

/* Counted relations: adds `delta` (may be negative) to the tuple's count. Returns
 * +1 if the tuple appeared (count went from <= 0 to > 0), -1 if it vanished (from > 0
 * to <= 0), 0 otherwise. A tuple whose count returns to 0 is removed. (On a set, a
 * positive delta inserts and a negative one deletes.) */
int rel_add_count(rel_t *r, const val_t *tuple, int64_t delta);
int64_t rel_get_count(const rel_t *r, const val_t *tuple); /* 0 when absent */

/* Returns the id of an index whose column order begins with cols[0..ncols) (the rest
 * of the columns follow in natural order), creating and filling it if none exists.
 * Index 0 is the primary index (natural order). Returns -1 past REL_MAX_INDEXES, or
 * when cols repeats a column or names one >= arity. Adding an index to a populated
 * relation sorts the tuples and builds it in bulk. */
int rel_index(rel_t *r, const uint32_t *cols, uint32_t ncols);
/* The column order of an index: order[i] is the natural column stored at position i. */
const uint32_t *rel_index_order(const rel_t *r, int index);

/* A cursor over the tuples of one index that start with a given prefix. Caller-owned
 * (usually on the stack); holds no heap memory, so it needs no release. The fields are
 * private to rel.c. */
typedef struct rel_cursor {
    const rel_t *rel;
    const void *leaf; /* current leaf node, NULL when past the end */
    const val_t *cur; /* next entry to return, in leaf */
    const val_t *end; /* one past the last entry of the range in leaf */
    uint32_t stride;  /* words per leaf entry (arity, plus a count in a counted primary) */
    uint32_t nprefix; /* number of prefix words */
    int index;
    uint8_t mode; /* what to do when cur reaches end (rel.c) */
    val_t prefix[REL_MAX_ARITY];
} rel_cursor;

/* Positions the cursor before the first tuple of `index` that starts with prefix
 * (nprefix values in the index's column order; 0 visits everything). */
void rel_seek(const rel_t *r, int index, const val_t *prefix, uint32_t nprefix, rel_cursor *c);
/* Positions the cursor where an earlier rel_seek with the same arguments started (its
 * `leaf` and `cur` right after the seek), skipping the descent. Only while the relation
 * has not changed since. */
void rel_seek_resume(const rel_t *r, int index, const val_t *prefix, uint32_t nprefix,
                     const void *leaf, const val_t *cur, rel_cursor *c);
/* Returns the next tuple in the index's column order (a pointer into the tree, valid
 * until the relation changes), or NULL when the prefix range is exhausted. For a
 * counted relation *count (if not NULL) receives the tuple's count (through a secondary
 * index that costs a lookup in the primary); a set gives 1. */
const val_t *rel_next(rel_cursor *c, int64_t *count);
/* The next tuples as one run of *n (>= 1) tuples *stride words apart, the rest of the
 * range within the current leaf (one tuple at a time where the range ends inside it),
 * or NULL when the range is exhausted. Valid until the relation changes. For scans that
 * handle many tuples per call. */
const val_t *rel_next_run(rel_cursor *c, size_t *n, uint32_t *stride);

#endif
