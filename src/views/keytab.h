/* Chained hash tables from a key of nkeys values (hashed by view_key_hash) to entries: the
 * key index of a family's members (family.c) and the row groups of keyrows.c. An
 * entry begins with its view_keynode, and the table knows where in an entry its key lies;
 * the entries belong to the caller. The buckets double when the entries outnumber them. */
#ifndef IL_VIEWS_KEYTAB_H
#define IL_VIEWS_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

typedef struct view_keynode {
    struct view_keynode *next; /* in its bucket */
    uint64_t hash;             /* view_key_hash of the entry's key */
} view_keynode;

typedef struct view_keytab {
    view_keynode **buckets;
    size_t nbuckets, n;
    uint32_t nkeys;
    size_t key_offset; /* where an entry's nkeys values start, from the entry's start */
} view_keytab;

void view_keytab_init(view_keytab *t, size_t nbuckets, uint32_t nkeys, size_t key_offset);
/* Frees the buckets; the entries are the caller's. */
void view_keytab_free(view_keytab *t);
/* The entry with this key (hash = view_key_hash(key, nkeys)), or NULL. */
view_keynode *view_keytab_find(const view_keytab *t, const val_t *key, uint64_t hash);
/* Adds an entry whose hash is set and whose key is not in the table yet. */
void view_keytab_add(view_keytab *t, view_keynode *e);
void view_keytab_remove(view_keytab *t, view_keynode *e);

#endif
