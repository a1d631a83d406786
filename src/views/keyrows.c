/* Rows grouped by key (keyrows.h): a hash table from a row's canonical key to the
 * rows with it, plus the rows whose key only a scan can match (floats from 2^52 on). A
 * lookup takes the constants' group and keeps the rows that really match, so the
 * grouping may be loose (a float near an int shares its group) but never misses. */
#include "views/keyrows.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "exec/expr.h"
#include "views/keytab.h"

typedef struct group {
    view_keynode node; /* in the groups by key */
    val_t *rows;
    size_t n, cap;
    val_t key[];
} group;

struct view_keyrows {
    uint32_t arity, nkeys;
    uint32_t *cols;
    view_keytab groups; /* by key */
    group *scan;        /* rows with a key of kind VIEW_KEY_SCAN */
};

view_key_kind view_key_of(val_t v, val_t *key) {
    switch (val_type_of(v)) {
    case VT_STR:
        *key = v;
        return VIEW_KEY_ONE;
    case VT_INT:
    case VT_TS:
        *key = val_int(val_get_int(v));
        return VIEW_KEY_ONE;
    case VT_FLOAT: {
        double d = val_get_float(v);
        if (!isfinite(d)) return VIEW_KEY_NONE;
        if (fabs(d) >= 4503599627370496.0) return VIEW_KEY_SCAN;
        *key = val_int((int64_t)llround(d));
        return VIEW_KEY_ONE;
    }
    default:
        return VIEW_KEY_NONE;
    }
}

uint64_t view_key_hash(const val_t *key, uint32_t nkeys) {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t k = 0; k < nkeys; k++) h = (h ^ val_hash(key[k])) * 0x100000001b3ull;
    return h;
}

/* A group for `key` (nkeys values), or with key NULL the one for rows no key finds. */
static group *group_new(const view_keyrows *k, const val_t *key, uint64_t h) {
    group *g = calloc(1, sizeof *g + (k->nkeys + 1) * sizeof *key);
    g->node.hash = h;
    if (key && k->nkeys) memcpy(g->key, key, k->nkeys * sizeof *key);
    return g;
}

static void group_free(group *g) {
    free(g->rows);
    free(g);
}

view_keyrows *view_keyrows_new(uint32_t arity, uint32_t nkeys, const uint32_t *cols) {
    view_keyrows *k = calloc(1, sizeof *k);
    k->arity = arity;
    k->nkeys = nkeys;
    k->cols = malloc((nkeys + 1) * sizeof *cols);
    if (nkeys) memcpy(k->cols, cols, nkeys * sizeof *cols);
    view_keytab_init(&k->groups, 64, nkeys, offsetof(group, key));
    k->scan = group_new(k, NULL, 0); /* rows of keys only a scan finds: no key of its own */
    return k;
}

void view_keyrows_free(view_keyrows *k) {
    if (!k) return;
    for (size_t i = 0; i < k->groups.nbuckets; i++)
        for (view_keynode *e = k->groups.buckets[i], *next; e; e = next) {
            next = e->next;
            group_free((group *)e);
        }
    group_free(k->scan);
    view_keytab_free(&k->groups);
    free(k->cols);
    free(k);
}

/* The row's group (created when `create`), NULL for a row no key can match. */
static group *group_of(view_keyrows *k, const val_t *row, bool create) {
    val_t key[16];
    val_t *kp = k->nkeys <= 16 ? key : malloc(k->nkeys * sizeof *kp);
    group *found = NULL;
    bool scan = false, none = false;
    for (uint32_t i = 0; i < k->nkeys && !none; i++) {
        view_key_kind kind = view_key_of(row[k->cols[i]], &kp[i]);
        none = kind == VIEW_KEY_NONE;
        scan |= kind == VIEW_KEY_SCAN;
    }
    if (!none && scan) found = k->scan;
    if (!none && !scan) {
        uint64_t h = view_key_hash(kp, k->nkeys);
        found = (group *)view_keytab_find(&k->groups, kp, h);
        if (!found && create) {
            found = group_new(k, kp, h);
            view_keytab_add(&k->groups, &found->node);
        }
    }
    if (kp != key) free(kp);
    return found;
}

void view_keyrows_add(view_keyrows *k, const val_t *row) {
    group *g = group_of(k, row, true);
    if (!g) return;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 4;
        g->rows = realloc(g->rows, g->cap * k->arity * sizeof *g->rows);
    }
    memcpy(g->rows + g->n * k->arity, row, k->arity * sizeof *row);
    g->n++;
}

void view_keyrows_remove(view_keyrows *k, const val_t *row) {
    group *g = group_of(k, row, false);
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) {
        val_t *r = g->rows + i * k->arity;
        if (memcmp(r, row, k->arity * sizeof *row) != 0) continue;
        g->n--;
        memmove(r, g->rows + g->n * k->arity, k->arity * sizeof *row);
        return;
    }
}

static bool matches(const view_keyrows *k, const val_t *row, const val_t *consts) {
    for (uint32_t i = 0; i < k->nkeys; i++)
        if (!exec_const_matches(row[k->cols[i]], consts[i])) return false;
    return true;
}

static void take(const view_keyrows *k, const group *g, const val_t *consts, val_t *out,
                 size_t *n) {
    for (size_t i = 0; g && i < g->n; i++) {
        const val_t *r = g->rows + i * k->arity;
        if (matches(k, r, consts)) memcpy(out + (*n)++ * k->arity, r, k->arity * sizeof *r);
    }
}

size_t view_keyrows_get(const view_keyrows *k, const val_t *consts, val_t **rows) {
    /* A member's constants are lifted ints and strings: already their own key. */
    uint64_t h = view_key_hash(consts, k->nkeys);
    const group *hit = (const group *)view_keytab_find(&k->groups, consts, h);
    size_t cap = (hit ? hit->n : 0) + k->scan->n;
    *rows = malloc((cap + 1) * k->arity * sizeof **rows);
    size_t n = 0;
    take(k, hit, consts, *rows, &n);
    take(k, k->scan, consts, *rows, &n);
    return n;
}
