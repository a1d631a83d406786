/* Hash sets of fixed-arity tuples for evaluation temporaries: deduplication where no
 * ordered index is needed. Tuples are stored in insertion order in one flat array, so a
 * set doubles as the list of what it holds. Measured: on the full closure of the 2,000 /
 * 4,000 random graph, deduplicating each partition of a recursive relation here instead
 * of in its B+-tree cut evaluation time by more than half (see BENCHMARKS.md). */
#ifndef IL_EXEC_TUPLESET_H
#define IL_EXEC_TUPLESET_H

#include <stdbool.h>
#include <stdint.h>

#include "value/value.h"

typedef struct tupleset {
    uint32_t arity;
    uint32_t n;      /* tuples held */
    uint32_t cap;    /* tuples the flat array can hold */
    val_t *tuples;   /* n tuples, arity words each, in insertion order; a counted block
                        (base/meter.h): whoever takes it frees it with il_mem_free */
    uint32_t *slots; /* open addressing: tuple index + 1, 0 = empty; size is a power of two */
    uint32_t nslots;
    uint64_t slots_meter; /* the meter that counted the slots (base/meter.h), or 0 */
} tupleset;

void tupleset_init(tupleset *s, uint32_t arity);
void tupleset_free(tupleset *s);
/* Empties the set, keeping its memory for reuse. */
void tupleset_clear(tupleset *s);
/* Adds a tuple; returns false when it was already present. */
bool tupleset_insert(tupleset *s, const val_t *t);
/* Appends a tuple the caller knows is not in the set, without hashing it (the rows of a
 * scan of one relation, say). The set is indexed again only if tupleset_insert is called
 * on it later. */
void tupleset_push_distinct(tupleset *s, const val_t *t);

#endif
