/* Chained hash tables from a key of nkeys values (hashed by srv_key_hash) to entries: the
 * key index of a family's members (srv_subfam.c) and the row groups of srv_keyrows.c. An
 * entry begins with its srv_keynode, and the table knows where in an entry its key lies;
 * the entries belong to the caller. The buckets double when the entries outnumber them. */
#ifndef IL_SERVER_SRV_KEYTAB_H
#define IL_SERVER_SRV_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

typedef struct srv_keynode {
    struct srv_keynode *next; /* in its bucket */
    uint64_t hash;            /* srv_key_hash of the entry's key */
} srv_keynode;

typedef struct srv_keytab {
    srv_keynode **buckets;
    size_t nbuckets, n;
    uint32_t nkeys;
    size_t key_offset; /* where an entry's nkeys values start, from the entry's start */
} srv_keytab;

void srv_keytab_init(srv_keytab *t, size_t nbuckets, uint32_t nkeys, size_t key_offset);
/* Frees the buckets; the entries are the caller's. */
void srv_keytab_free(srv_keytab *t);
/* The entry with this key (hash = srv_key_hash(key, nkeys)), or NULL. */
srv_keynode *srv_keytab_find(const srv_keytab *t, const val_t *key, uint64_t hash);
/* Adds an entry whose hash is set and whose key is not in the table yet. */
void srv_keytab_add(srv_keytab *t, srv_keynode *e);
void srv_keytab_remove(srv_keytab *t, srv_keynode *e);

#endif
