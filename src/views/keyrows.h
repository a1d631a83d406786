/* The rows of a keyed family's view grouped by key (family.c), so that a member's
 * snapshot costs its own rows, not the whole view: a thousand subscriptions to one
 * family would otherwise each copy and filter all of it. Kept up to date from the view's
 * deltas. Also the key rule the family's index and this grouping share. */
#ifndef IL_VIEWS_KEYROWS_H
#define IL_VIEWS_KEYROWS_H

#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

/* The only key a value can match, as the indexes store it. A float can match only an int
 * key (string and int constants are all that is lifted): the nearest one, except that
 * from 2^52 on several ints are within the tolerance, so the caller scans. */
typedef enum { VIEW_KEY_NONE, VIEW_KEY_ONE, VIEW_KEY_SCAN } view_key_kind;
view_key_kind view_key_of(val_t v, val_t *key);
uint64_t view_key_hash(const val_t *key, uint32_t nkeys);

typedef struct view_keyrows view_keyrows;

/* A grouping of rows of `arity` values by the values at cols[0..nkeys). */
view_keyrows *view_keyrows_new(uint32_t arity, uint32_t nkeys, const uint32_t *cols);
void view_keyrows_free(view_keyrows *k);
void view_keyrows_add(view_keyrows *k, const val_t *row);
void view_keyrows_remove(view_keyrows *k, const val_t *row);
/* The rows whose key columns match consts as an atom's constants match stored values
 * (exec_const_matches), malloc'ed into *rows (arity values each). */
size_t view_keyrows_get(const view_keyrows *k, const val_t *consts, val_t **rows);

#endif
