/* The catalog: knowledge graphs, their stored relations and persistent rules. Relations
 * and rules are found by name through a hash map each (a graph may hold thousands, and
 * every statement looks names up); graphs, at most max_knowledge_graphs, by a scan. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "iql/parser.h"
#include "kg/kg.h"
#include "kg/record.h"
#include "store/store.h"
#include "views/read_policy.h"
#include "views/view.h"

kg_graph *kg_graph_find(il_engine *e, const char *name) {
    for (uint32_t i = 0; i < e->graphs.n; i++)
        if (strcmp(e->graphs.v[i]->name, name) == 0) return e->graphs.v[i];
    return NULL;
}

kg_graph *kg_graph_create(il_engine *e, const char *name) {
    kg_graph *g = calloc(1, sizeof *g);
    g->name = strdup(name);
    g->e = e;
    g->serial = ++e->graph_serials;
    il_arena_init(&g->arena);
    il_vec_push(e->graphs, g);
    e->graphs_moved = true;
    return g;
}

void kg_rule_free(kg_rule *r) {
    free(r->name);
    il_vec_free(r->clauses);
    il_arena_destroy(&r->arena);
    free(r);
}

void kg_catalog_free(kg_graph *g) {
    for (uint32_t i = 0; i < g->rels.n; i++) {
        kg_relation *r = g->rels.v[i];
        if (r->data && rel_is_snapshot(r->data))
            rel_snapshot_release(r->data);
        else if (r->data)
            rel_free(r->data);
        free(r->name);
        free(r);
    }
    il_vec_free(g->rels);
    il_strmap_free(&g->rel_names);
    for (uint32_t i = 0; i < g->rules.n; i++) kg_rule_free(g->rules.v[i]);
    il_vec_free(g->rules);
    il_strmap_free(&g->rule_names);
}

void kg_graph_drop(il_engine *e, kg_graph *g) {
    for (uint32_t i = 0; i < e->graphs.n; i++) {
        if (e->graphs.v[i] != g) continue;
        memmove(&e->graphs.v[i], &e->graphs.v[i + 1], (e->graphs.n - i - 1) * sizeof(kg_graph *));
        e->graphs.n--;
        e->graphs_moved = true;
        break;
    }
    kg_unpublish(g);
    kg_pin_rules_release(g);
    kg_catalog_free(g);
    read_policy_graph_free(g);
    kg_indexes_free(g);
    kg_plan_cache_free(g);
    view_graph_detach(g->views.v, g->views.n); /* open views outlive their graph, empty */
    g->views.n = 0;
    kg_delta_clear(g);
    il_vec_free(g->views);
    il_arena_destroy(&g->arena);
    free(g->name);
    free(g);
}

kg_relation *kg_rel_find(kg_graph *g, const char *name) {
    return il_strmap_get(&g->rel_names, name);
}

kg_relation *kg_rel_get(kg_graph *g, const char *name) {
    kg_relation *r = kg_rel_find(g, name);
    if (r) return r;
    r = calloc(1, sizeof *r);
    r->name = strdup(name);
    il_vec_push(g->rels, r);
    il_strmap_put(&g->rel_names, r->name, r);
    kg_undo_rel_created(g, r);
    return r;
}

rel_t *kg_rel_data(kg_graph *g, kg_relation *r, uint32_t arity) {
    if (!r->data) {
        r->data = rel_new(arity);
        g->version++; /* plans saw no facts here */
        kg_undo_data_created(g, r);
    }
    return r->data;
}

void kg_rel_drop_data(kg_graph *g, kg_relation *r) {
    if (!r->data) return;
    kg_index_rel_dropped(g, r->name);
    rel_free(r->data);
    r->data = NULL;
    g->version++;
}

void kg_rule_changed(kg_rule *r) {
    static _Atomic uint64_t generations;
    r->gen = atomic_fetch_add_explicit(&generations, 1, memory_order_relaxed) + 1;
}

kg_rule *kg_rule_find(kg_graph *g, const char *name) {
    return il_strmap_get(&g->rule_names, name);
}

kg_rule *kg_rule_get(kg_graph *g, const char *name) {
    kg_rule *r = kg_rule_find(g, name);
    if (r) return r;
    r = calloc(1, sizeof *r);
    r->name = strdup(name);
    il_arena_init(&r->arena);
    kg_rule_changed(r);
    il_vec_push(g->rules, r);
    il_strmap_put(&g->rule_names, r->name, r);
    g->version++;
    kg_undo_rule_created(g, r);
    return r;
}

void kg_rule_drop(kg_graph *g, kg_rule *r) {
    uint32_t at = 0;
    for (uint32_t i = 0; i < g->rules.n; i++) {
        if (g->rules.v[i] != r) continue;
        memmove(&g->rules.v[i], &g->rules.v[i + 1], (g->rules.n - i - 1) * sizeof(kg_rule *));
        g->rules.n--;
        at = i;
        break;
    }
    if (il_strmap_get(&g->rule_names, r->name) == r) il_strmap_del(&g->rule_names, r->name);
    /* an open transaction keeps it until it commits, to put it back on a rollback */
    if (!kg_undo_rule_dropped(g, r, at)) kg_rule_free(r);
    g->version++;
}

void kg_rule_push_clause(kg_rule *r, const iql_rule *clause) {
    iql_rule *c = il_arena_alloc(&r->arena, sizeof *c);
    iql_rule_clone(&r->arena, c, clause);
    il_vec_push(r->clauses, c);
}

void kg_rule_add_clause(kg_graph *g, kg_rule *r, const iql_rule *clause) {
    kg_rule_push_clause(r, clause);
    kg_rule_changed(r);
    g->version++;
    kg_undo_clause_added(g, r);
}

bool kg_head_has_agg(const iql_atom *head) {
    for (uint32_t i = 0; i < head->nargs; i++)
        if (head->args[i]->kind == IQL_T_AGG) return true;
    return false;
}

uint32_t kg_head_arity(const iql_atom *head) {
    bool agg = kg_head_has_agg(head);
    uint32_t n = 0;
    for (uint32_t i = 0; i < head->nargs; i++) {
        const iql_term *t = head->args[i];
        if (t->kind == IQL_T_PLACEHOLDER && !agg) continue;
        if (t->kind == IQL_T_AGG && t->u.agg.nspecs)
            n += t->u.agg.nspecs;
        else
            n++;
    }
    return n;
}

/* ---- the netted delta handed to maintained views ---- */

void kg_delta_clear(kg_graph *g) {
    for (uint32_t i = 0; i < g->delta.n; i++) {
        free(g->delta.v[i].name);
        rel_free(g->delta.v[i].plus);
        rel_free(g->delta.v[i].minus);
    }
    il_vec_free(g->delta);
    g->delta_used = 0;
}
