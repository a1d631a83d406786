/* What the views benchmark (bench/views_fixture.c) expects the server to answer: the hot
 * chains of docs/performance.md 3.2 (../shared/docs) for a requested edge count, the
 * views rules of 3.3 (`r1`, `path`, `hot_reach`), and the benchmark's writes so far, each
 * `+edge(400 k, fresh)` for a key k. Every answer is worked out from the chains' shape
 * rather than by evaluating the rules, so a wrong server cannot mislead it:
 *   edge(400k, Y)       (400k, 400k + 1) when chain 100k exists, plus the fresh nodes
 *                       written to key k;
 *   path(400k, Y)       the chain's three nodes after its head, plus those fresh nodes
 *                       (a fresh node has no edges out, and no edge enters a chain head);
 *   r1(400k, Y)         (400k, 400k + 1) plus the fresh nodes, when 400k is hot (k < hot);
 *   hot_reach(400k, Y)  path(400k, Y) when 400k is hot;
 * and r1(X, Y), hot_reach(X, Y) unbound: the union over the hot keys. */
#ifndef IL_BENCH_VIEWS_MODEL_H
#define IL_BENCH_VIEWS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fixture_rows.h"

typedef enum vm_relation { VM_EDGE, VM_R1, VM_PATH, VM_HOT_REACH } vm_relation;

/* Fresh nodes written to one key, in write order. */
typedef struct vm_key {
    int64_t *fresh;
    size_t n, cap;
} vm_key;

typedef struct vm_model {
    size_t chains, hot, edges_loaded; /* from the requested edge count */
    int64_t fresh_base;               /* 4 chains + 1000: the first fresh node */
    vm_key *keys;                     /* keys[k]: writes to head 400 k */
    size_t nkeys;
    long writes; /* applied so far */
} vm_model;

/* The chains for `edges` requested edges, before any write. */
void vm_init(vm_model *m, size_t edges);
void vm_free(vm_model *m);

/* Node 400 k. */
int64_t vm_head(long key);

/* The fresh node of write w (0-based, counted over the whole run). */
int64_t vm_fresh(const vm_model *m, long w);

/* Records the next write, `+edge(400 key, vm_fresh(m, m->writes))`. False on OOM. */
bool vm_write(vm_model *m, long key);

/* The rows of rel(400 key, Y), or with key < 0 of rel(X, Y) (only r1 and hot_reach),
 * sorted; a malloc'ed array (NULL only on OOM) whose length goes to *n. */
fx_row *vm_rows(const vm_model *m, vm_relation rel, long key, size_t *n);

#endif
