/* What the views benchmark expects the server to answer; see views_model.h. */
#include "views_model.h"

#include <stdlib.h>

#include "gen_graph.h"

enum { HOT_STRIDE = 400, FRESH_NODE_GAP = 1000, CHAIN_EDGES = 3 };

void vm_init(vm_model *m, size_t edges) {
    *m = (vm_model){0};
    m->chains = gg_chain_count(edges);
    m->hot = gg_hot_count(m->chains);
    m->edges_loaded = CHAIN_EDGES * m->chains;
    m->fresh_base = 4 * (int64_t)m->chains + FRESH_NODE_GAP;
}

void vm_free(vm_model *m) {
    for (size_t k = 0; k < m->nkeys; k++) free(m->keys[k].fresh);
    free(m->keys);
    *m = (vm_model){0};
}

int64_t vm_head(long key) {
    return HOT_STRIDE * (int64_t)key;
}

int64_t vm_fresh(const vm_model *m, long w) {
    return m->fresh_base + w;
}

bool vm_write(vm_model *m, long key) {
    if ((size_t)key >= m->nkeys) {
        size_t n = (size_t)key + 1;
        vm_key *keys = realloc(m->keys, n * sizeof *keys);
        if (!keys) return false;
        for (size_t k = m->nkeys; k < n; k++) keys[k] = (vm_key){0};
        m->keys = keys, m->nkeys = n;
    }
    vm_key *k = &m->keys[key];
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 8;
        int64_t *fresh = realloc(k->fresh, cap * sizeof *fresh);
        if (!fresh) return false;
        k->fresh = fresh, k->cap = cap;
    }
    k->fresh[k->n++] = vm_fresh(m, m->writes++);
    return true;
}

static bool chain_exists(const vm_model *m, long key) {
    return vm_head(key) < 4 * (int64_t)m->chains;
}

/* How many rows rel(400 key, Y) has. */
static size_t key_rows(const vm_model *m, vm_relation rel, long key) {
    bool hot = (size_t)key < m->hot, chain = chain_exists(m, key);
    size_t written = (size_t)key < m->nkeys ? m->keys[key].n : 0;
    switch (rel) {
    case VM_EDGE:
        return chain + written;
    case VM_PATH:
        return (chain ? CHAIN_EDGES : 0) + written;
    case VM_R1:
        return hot ? 1 + written : 0;
    case VM_HOT_REACH:
        return hot ? CHAIN_EDGES + written : 0;
    }
    return 0;
}

/* Appends the rows of rel(400 key, Y). */
static void add_key_rows(const vm_model *m, vm_relation rel, long key, fx_row *out, size_t *n) {
    if (key_rows(m, rel, key) == 0) return;
    int64_t h = vm_head(key);
    int chain_rows = rel == VM_PATH || rel == VM_HOT_REACH ? CHAIN_EDGES : 1;
    if (chain_exists(m, key))
        for (int i = 1; i <= chain_rows; i++) out[(*n)++] = (fx_row){h, h + i};
    if ((size_t)key < m->nkeys)
        for (size_t i = 0; i < m->keys[key].n; i++)
            out[(*n)++] = (fx_row){h, m->keys[key].fresh[i]};
}

fx_row *vm_rows(const vm_model *m, vm_relation rel, long key, size_t *n) {
    long first = key < 0 ? 0 : key, end = key < 0 ? (long)m->hot : key + 1;
    size_t total = 0;
    for (long k = first; k < end; k++) total += key_rows(m, rel, k);
    fx_row *rows = malloc((total ? total : 1) * sizeof *rows);
    *n = 0;
    if (!rows) return NULL;
    for (long k = first; k < end; k++) add_key_rows(m, rel, k, rows, n);
    *n = fx_rows_sort_unique(rows, *n);
    return rows;
}
