/* The changes a statement made to persistent state, handed to the engine's change hook
 * (il_engine_set_change_hook) once it has committed: the facts added and removed per
 * relation, and rules, graphs and schemas created or dropped, in the order they were
 * first changed. The records are noted as the statement runs (a relation's at its first
 * run of tuples in the commit's delta); the facts' counts are read from the delta at the
 * end. Nothing is collected while no hook is set. */
#include <stdlib.h>
#include <string.h>

#include "kg/kg.h"

/* Nothing in the system graph is reported: it holds credentials, and no client may see
 * even that it changed. */
static bool reported(const il_engine *e, const char *graph) {
    return e->change_fn && strcmp(graph, "_internal") != 0;
}

static kg_change *push(il_engine *e, il_change_kind kind, const char *graph, const char *name,
                       const char *operation) {
    kg_change c = {.kind = kind,
                   .graph = strdup(graph),
                   .name = name ? strdup(name) : NULL,
                   .operation = operation};
    il_vec_push(e->changes, c);
    return &e->changes.v[e->changes.n - 1];
}

/* The FACTS record of a relation, created on its first change. A statement changes few
 * relations, and most often the one it changed last. */
static kg_change *facts_of(kg_graph *g, const char *rel) {
    il_engine *e = g->e;
    for (uint32_t i = e->changes.n; i-- > 0;) {
        kg_change *c = &e->changes.v[i];
        if (c->kind == IL_CHANGE_FACTS && strcmp(c->name, rel) == 0 &&
            strcmp(c->graph, g->name) == 0)
            return c;
    }
    return push(e, IL_CHANGE_FACTS, g->name, rel, NULL);
}

uint32_t kg_change_facts(kg_graph *g, const char *rel, uint32_t arity, bool *net) {
    *net = false;
    if (!reported(g->e, g->name)) return UINT32_MAX;
    kg_change *c = facts_of(g, rel);
    /* a transaction reports its net change: every relation is netted tuple by tuple */
    if (kg_txn_nets_changes(g->e) && !c->plus) {
        c->plus = rel_new(arity);
        c->minus = rel_new(arity);
    }
    *net = c->plus && rel_arity(c->plus) == arity;
    return (uint32_t)(c - g->e->changes.v);
}

void kg_change_net_facts(kg_graph *g, const char *rel, uint32_t arity) {
    if (!reported(g->e, g->name)) return;
    kg_change *c = facts_of(g, rel);
    if (c->plus) return;
    c->plus = rel_new(arity);
    c->minus = rel_new(arity);
}

void kg_change_note(il_engine *e, il_change_kind kind, const char *graph, const char *name,
                    const char *operation) {
    if (reported(e, graph)) push(e, kind, graph, name, operation);
}

static void facts_settle(kg_change *c) {
    if (c->plus) {
        c->added += rel_count(c->plus);
        c->removed += rel_count(c->minus);
    }
    c->operation = !c->removed ? "insert" : !c->added ? "delete" : "update";
}

static void forget(il_engine *e) {
    for (uint32_t i = 0; i < e->changes.n; i++) {
        kg_change *c = &e->changes.v[i];
        free(c->graph);
        free(c->name);
        if (c->plus) rel_free(c->plus);
        if (c->minus) rel_free(c->minus);
    }
    e->changes.n = 0;
}

/* The facts' counts of the commit's delta, netted tuple by tuple where the hook nets. */
static void count_delta(il_engine *e) {
    const kg_delta *d = &e->delta;
    for (uint32_t i = 0; i < d->entries.n; i++) {
        const kg_dentry *x = &d->entries.v[i];
        if (x->kind == KD_OP || x->change >= e->changes.n) continue;
        kg_change *c = &e->changes.v[x->change];
        if (!x->net || !x->vals) {
            if (x->sign > 0)
                c->added += x->count;
            else
                c->removed += x->count;
            continue;
        }
        kg_delta_net(d, x, c->plus, c->minus); /* as the views' delta is netted */
    }
}

void kg_changes_end(il_engine *e, bool committed) {
    if (!e->changes.n) return;
    if (committed && e->change_fn) {
        count_delta(e);
        il_change *out = malloc(e->changes.n * sizeof *out);
        size_t n = 0;
        for (uint32_t i = 0; i < e->changes.n; i++) {
            kg_change *c = &e->changes.v[i];
            uint64_t count = 0;
            if (c->kind == IL_CHANGE_FACTS) {
                facts_settle(c);
                count = c->added + c->removed;
                if (!count) continue; /* everything it did was undone in the same statement */
            }
            out[n++] = (il_change){c->kind, c->graph, c->name, c->operation, count};
        }
        if (n) e->change_fn(e->change_ctx, out, n);
        free(out);
    }
    forget(e);
}

void il_engine_set_change_hook(il_engine *e, il_change_fn fn, void *ctx) {
    e->change_fn = fn;
    e->change_ctx = ctx;
}
