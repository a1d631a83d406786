/* Chained hash tables keyed by values (srv_keytab.h). */
#include "server/srv_keytab.h"

#include <stdlib.h>
#include <string.h>

void srv_keytab_init(srv_keytab *t, size_t nbuckets, uint32_t nkeys, size_t key_offset) {
    t->buckets = calloc(nbuckets, sizeof *t->buckets);
    t->nbuckets = nbuckets;
    t->n = 0;
    t->nkeys = nkeys;
    t->key_offset = key_offset;
}

void srv_keytab_free(srv_keytab *t) {
    free(t->buckets);
    t->buckets = NULL;
    t->nbuckets = t->n = 0;
}

static const val_t *key_of(const srv_keytab *t, const srv_keynode *e) {
    return (const val_t *)((const char *)e + t->key_offset);
}

srv_keynode *srv_keytab_find(const srv_keytab *t, const val_t *key, uint64_t hash) {
    for (srv_keynode *e = t->buckets[hash % t->nbuckets]; e; e = e->next)
        if (e->hash == hash && memcmp(key_of(t, e), key, t->nkeys * sizeof *key) == 0) return e;
    return NULL;
}

static void grow(srv_keytab *t) {
    size_t n = t->nbuckets * 2;
    srv_keynode **b = calloc(n, sizeof *b);
    for (size_t i = 0; i < t->nbuckets; i++)
        for (srv_keynode *e = t->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash % n];
            b[e->hash % n] = e;
        }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

void srv_keytab_add(srv_keytab *t, srv_keynode *e) {
    if (t->n + 1 > t->nbuckets) grow(t);
    e->next = t->buckets[e->hash % t->nbuckets];
    t->buckets[e->hash % t->nbuckets] = e;
    t->n++;
}

void srv_keytab_remove(srv_keytab *t, srv_keynode *e) {
    for (srv_keynode **pp = &t->buckets[e->hash % t->nbuckets]; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            t->n--;
            return;
        }
}
