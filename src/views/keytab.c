/* Chained hash tables keyed by values (keytab.h). */
#include "views/keytab.h"

#include <stdlib.h>
#include <string.h>

void view_keytab_init(view_keytab *t, size_t nbuckets, uint32_t nkeys, size_t key_offset) {
    t->buckets = calloc(nbuckets, sizeof *t->buckets);
    t->nbuckets = nbuckets;
    t->n = 0;
    t->nkeys = nkeys;
    t->key_offset = key_offset;
}

void view_keytab_free(view_keytab *t) {
    free(t->buckets);
    t->buckets = NULL;
    t->nbuckets = t->n = 0;
}

static const val_t *key_of(const view_keytab *t, const view_keynode *e) {
    return (const val_t *)((const char *)e + t->key_offset);
}

view_keynode *view_keytab_find(const view_keytab *t, const val_t *key, uint64_t hash) {
    for (view_keynode *e = t->buckets[hash % t->nbuckets]; e; e = e->next)
        if (e->hash == hash && memcmp(key_of(t, e), key, t->nkeys * sizeof *key) == 0) return e;
    return NULL;
}

static void grow(view_keytab *t) {
    size_t n = t->nbuckets * 2;
    view_keynode **b = calloc(n, sizeof *b);
    for (size_t i = 0; i < t->nbuckets; i++)
        for (view_keynode *e = t->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash % n];
            b[e->hash % n] = e;
        }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

void view_keytab_add(view_keytab *t, view_keynode *e) {
    if (t->n + 1 > t->nbuckets) grow(t);
    e->next = t->buckets[e->hash % t->nbuckets];
    t->buckets[e->hash % t->nbuckets] = e;
    t->n++;
}

void view_keytab_remove(view_keytab *t, view_keynode *e) {
    for (view_keynode **pp = &t->buckets[e->hash % t->nbuckets]; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            t->n--;
            return;
        }
}
