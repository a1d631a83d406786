/* Pinned graphs: a session reads one revision of its graph while other sessions write
 * (il_session_pin; docs/engine.md, "Concurrency").
 *
 * The pin is a copy of the graph's catalog made where statements are serialized: each
 * stored relation a copy-on-write snapshot (exec/rel.h, O(indexes) each), each rule a
 * copy of its clauses, each maintained rule's rows a snapshot. Nothing in it is shared
 * with the live graph but what snapshots share, so a writer may change or drop anything
 * meanwhile. The copy has no views and no plan cache of its own beyond the pin: a query
 * that would make a rule maintained evaluates it instead, and the writer's next read makes
 * the view. A snapshot lacking an index a query needs is copied, once per pin, into a
 * private relation holding it (exec/snapidx.h); the index is added to the stored relation
 * at the unpin, so the next pinned read of that shape finds it. */
#include <stdlib.h>
#include <string.h>

#include "exec/snapidx.h"
#include "iql/parser.h"
#include "kg/kg.h"
#include "views/read_policy.h"

typedef struct pin_copy {
    const rel_t *snap;
    rel_t *copy;
} pin_copy;

typedef struct pin_want {
    char *rel;
    uint32_t ncols;
    uint32_t cols[REL_MAX_ARITY];
} pin_want;

typedef struct kg_pin {
    il_strmap rows;                  /* maintained rule -> snapshot of its rows */
    IL_VEC(char *) row_names;        /* the keys of rows, owned */
    IL_VEC(const rel_t *) row_snaps; /* their snapshots */
    IL_VEC(pin_copy) copies;         /* private copies with indexes snapshots lack */
    IL_VEC(pin_want) wants;          /* indexes to add to the stored relations */
    exec_snapidx provider;
    const exec_snapidx *previous; /* the provider installed before the pin's */
} kg_pin;

static const iql_schema *schema_copy(il_arena *a, const iql_schema *s) {
    iql_schema *c = il_arena_alloc(a, sizeof *c);
    c->rel = il_arena_strdup(a, s->rel);
    c->ncols = s->ncols;
    c->cols = s->ncols ? il_arena_alloc(a, s->ncols * sizeof *c->cols) : NULL;
    for (uint32_t i = 0; i < s->ncols; i++) {
        c->cols[i] = s->cols[i];
        c->cols[i].name = il_arena_strdup(a, s->cols[i].name);
    }
    return c;
}

/* The stored relation of the pinned graph whose snapshot is snap, or NULL. */
static kg_relation *stored_of(kg_graph *g, const rel_t *snap) {
    for (uint32_t i = 0; i < g->rels.n; i++)
        if (g->rels.v[i]->data == snap) return g->rels.v[i];
    return NULL;
}

static rel_t *copy_with_index(void *ctx, const rel_t *snap, const uint32_t *cols, uint32_t ncols) {
    kg_graph *g = ctx;
    kg_pin *p = g->pin;
    rel_t *copy = NULL;
    for (uint32_t i = 0; i < p->copies.n && !copy; i++)
        if (p->copies.v[i].snap == snap) copy = p->copies.v[i].copy;
    if (!copy) {
        copy = rel_new(rel_arity(snap));
        if (!copy) return NULL;
        rel_cursor cur;
        rel_seek(snap, 0, NULL, 0, &cur);
        const val_t *t;
        while ((t = rel_next(&cur, NULL))) rel_insert(copy, t);
        il_vec_push(p->copies, ((pin_copy){snap, copy}));
    }
    bool had = rel_find_index(copy, cols, ncols) >= 0;
    if (rel_index(copy, cols, ncols) < 0) return NULL;
    kg_relation *r = had ? NULL : stored_of(g, snap);
    if (r) {
        pin_want w = {.rel = strdup(r->name), .ncols = ncols};
        memcpy(w.cols, cols, ncols * sizeof *cols);
        il_vec_push(p->wants, w);
    }
    return copy;
}

static kg_graph *pin_graph(kg_graph *live) {
    kg_graph *g = calloc(1, sizeof *g);
    g->name = strdup(live->name);
    g->e = live->e;
    g->version = live->version;
    il_arena_init(&g->arena);
    kg_pin *p = calloc(1, sizeof *p);
    g->pin = p;
    for (uint32_t i = 0; i < live->rels.n; i++) {
        const kg_relation *lr = live->rels.v[i];
        kg_relation *r = calloc(1, sizeof *r);
        r->name = strdup(lr->name);
        r->data = lr->data ? (rel_t *)rel_snapshot(lr->data) : NULL;
        r->schema = lr->schema ? (iql_schema *)schema_copy(&g->arena, lr->schema) : NULL;
        il_vec_push(g->rels, r);
        il_strmap_put(&g->rel_names, r->name, r);
    }
    for (uint32_t i = 0; i < live->rules.n; i++) {
        const kg_rule *lr = live->rules.v[i];
        kg_rule *r = calloc(1, sizeof *r);
        r->name = strdup(lr->name);
        il_arena_init(&r->arena);
        for (uint32_t j = 0; j < lr->clauses.n; j++) {
            iql_rule *c = il_arena_alloc(&r->arena, sizeof *c);
            iql_rule_clone(&r->arena, c, lr->clauses.v[j]);
            il_vec_push(r->clauses, c);
        }
        il_vec_push(g->rules, r);
        il_strmap_put(&g->rule_names, r->name, r);
    }
    /* What the read policy would read now, as of now. */
    if (read_policy_active(live))
        for (uint32_t i = 0; i < live->rules.n; i++) {
            const char *name = live->rules.v[i]->name;
            const rel_t *rows = read_policy_rows(live, name);
            if (!rows) continue;
            char *key = strdup(name);
            const rel_t *snap = rel_snapshot((rel_t *)rows);
            il_vec_push(p->row_names, key);
            il_vec_push(p->row_snaps, snap);
            il_strmap_put(&p->rows, key, (void *)snap);
        }
    p->provider = (exec_snapidx){.copy = copy_with_index, .ctx = g};
    return g;
}

static void pin_graph_free(kg_graph *g) {
    kg_pin *p = g->pin;
    kg_catalog_free(g);
    kg_plan_cache_free(g);
    for (uint32_t i = 0; i < p->row_names.n; i++) {
        free(p->row_names.v[i]);
        rel_snapshot_release(p->row_snaps.v[i]);
    }
    il_vec_free(p->row_names);
    il_vec_free(p->row_snaps);
    il_strmap_free(&p->rows);
    for (uint32_t i = 0; i < p->copies.n; i++) rel_free(p->copies.v[i].copy);
    il_vec_free(p->copies);
    for (uint32_t i = 0; i < p->wants.n; i++) free(p->wants.v[i].rel);
    il_vec_free(p->wants);
    free(p);
    il_arena_destroy(&g->arena);
    free(g->name);
    free(g);
}

bool il_session_pin(il_session *s) {
    if (s->pinned_live) return true;
    kg_graph *live = s->kg;
    if (s->e->txn || live->indexes.n) return false;
    s->kg = pin_graph(live);
    s->pinned_live = live;
    return true;
}

void il_session_unpin(il_session *s) {
    kg_graph *g = s->kg;
    kg_graph *live = s->pinned_live;
    if (!live) return;
    /* The indexes pinned queries built for themselves go to the relations, when they
       still exist. */
    for (uint32_t i = 0; i < g->pin->wants.n; i++) {
        const pin_want *w = &g->pin->wants.v[i];
        kg_relation *r = kg_rel_find(live, w->rel);
        if (r && r->data) rel_index(r->data, w->cols, w->ncols); /* -1 when they no longer fit */
    }
    s->kg = live;
    s->pinned_live = NULL;
    if (s->reset_at_unpin) {
        s->reset_at_unpin = false;
        sess_clear(s, NULL, NULL);
    }
    pin_graph_free(g);
}

bool il_session_pinned(const il_session *s) {
    return s->pinned_live != NULL;
}

void kg_pin_enter(kg_graph *g) {
    if (!g->pin) return;
    g->pin->previous = exec_snapidx_installed;
    exec_snapidx_installed = &g->pin->provider;
}

void kg_pin_leave(kg_graph *g) {
    if (g->pin) exec_snapidx_installed = g->pin->previous;
}

bool kg_maintained_active(kg_graph *g) {
    return g->pin ? g->pin->row_names.n > 0 : read_policy_active(g);
}

const rel_t *kg_maintained_rows(kg_graph *g, const char *rel) {
    return g->pin ? il_strmap_get(&g->pin->rows, rel) : read_policy_rows(g, rel);
}
