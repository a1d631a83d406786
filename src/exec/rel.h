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
 * Snapshots. rel_snapshot gives an immutable handle on the relation as it is now (its
 * tuples, counts and indexes), for the read functions below, at a cost of O(indexes):
 * the trees are copy-on-write (exec/btree.h). Writes then copy the nodes they change
 * while a snapshot may see them, and nodes replaced are freed once no live snapshot can
 * reach them.
 *
 * Threads. One writer thread changes the relation (every function that takes a
 * non-const rel_t *, rel_snapshot included; rel_free and rel_clear too) and may read it.
 * While it does, any other threads may read snapshots it handed them (rel_count,
 * rel_arity, rel_changes, rel_is_counted, rel_contains, rel_get_count, rel_find_index,
 * rel_index_order, rel_seek, rel_seek_resume, rel_next, rel_next_run, rel_bytes) with no
 * lock and without waiting for the writer, and release them (rel_snapshot_release, on any
 * thread, in any order, before or after the relation itself is freed). The hand-over of
 * a snapshot to another thread must synchronize (a mutex, a queue, a release store).
 * Without snapshots: one writer, and no reader while it writes. Cursors over the live
 * relation are invalidated by any change to it; cursors over a snapshot stay valid until
 * it is released. */
#ifndef IL_EXEC_REL_H
#define IL_EXEC_REL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/btree.h"
#include "value/value.h"

#define REL_MAX_ARITY   64
#define REL_MAX_INDEXES 8

typedef struct rel rel_t;

/* NULL when arity > REL_MAX_ARITY. */
rel_t *rel_new(uint32_t arity);
rel_t *rel_new_counted(uint32_t arity);
void rel_free(rel_t *r);
/* Removes every tuple; keeps the arity, the indexes and a small first chunk of node
 * memory (at most 4 KiB, for relations emptied to be filled again: a view's changes of
 * each write). With snapshots outstanding the relation moves to new node memory and the
 * old goes when its last snapshot does. A relation emptied by deletions keeps nothing. */
void rel_clear(rel_t *r);

/* An immutable handle on r as it is now, for the read functions; never written to.
 * Taken on the writer thread; costs O(indexes), not O(tuples). A snapshot of a snapshot
 * is not allowed. */
const rel_t *rel_snapshot(rel_t *r);
/* Ends a snapshot (NULL is ignored); any thread, any order. Its cursors and tuple
 * pointers become invalid. */
void rel_snapshot_release(const rel_t *s);
bool rel_is_snapshot(const rel_t *r);

uint32_t rel_arity(const rel_t *r);
size_t rel_count(const rel_t *r);
/* A counter that moves whenever a tuple appears or vanishes or the relation is cleared:
 * whoever mirrors the relation (a vector index) can tell whether it missed a change. */
uint64_t rel_changes(const rel_t *r);
bool rel_is_counted(const rel_t *r);
/* Bytes held by the relation's nodes, all indexes included (node memory is taken in
 * chunks; freed nodes stay with the relation until it is cleared or becomes empty).
 * Nodes kept for live snapshots are included; a snapshot gives the figure of the node
 * memory it shares with the relation. */
size_t rel_bytes(const rel_t *r);

/* Set operations, tuple in natural column order. Insert returns true when the tuple
 * is new; delete returns true when it was present. On a counted relation, insert and
 * delete set the count to 1 and 0. */
bool rel_insert(rel_t *r, const val_t *tuple);
bool rel_delete(rel_t *r, const val_t *tuple);
bool rel_contains(const rel_t *r, const val_t *tuple);
/* The difference of two states of a relation (of one arity; either NULL: no tuples):
 * inserts into plus every tuple of now that was lacks, into minus every tuple of was that
 * now lacks. When was is a live snapshot of now, it costs the leaves changed since the
 * snapshot (the others are shared, and skipped), not the relation. */
void rel_difference(const rel_t *was, const rel_t *now, rel_t *plus, rel_t *minus);

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
/* rel_index that only finds: -1 when no index begins with cols (a snapshot has the
 * indexes the relation had when it was taken). */
int rel_find_index(const rel_t *r, const uint32_t *cols, uint32_t ncols);
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
    bt_path path; /* the inner nodes above leaf, for the step to the next leaf */
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
