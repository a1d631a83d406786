/* The catalog as maintained views see it (views/catalog.h), and handing the views of each
 * graph a commit's delta. */
#include <stdlib.h>
#include <string.h>

#include "kg/kg.h"
#include "views/catalog.h"
#include "views/read_policy.h"
#include "views/view.h"

il_engine *view_cat_engine(il_session *s) {
    return s->e;
}

kg_graph *view_cat_graph(il_session *s) {
    return s->kg;
}

exec_guard *view_cat_guard(il_session *s) {
    return s->guard;
}

bool view_cat_session_involved(const il_session *s) {
    return s->rules.n || s->facts.n;
}

uint64_t view_cat_budget_ns(const il_engine *e) {
    return e->view_budget_ns;
}

bool view_cat_maintained(const il_engine *e) {
    return !e->views_unmaintained;
}

uint64_t view_cat_version(const kg_graph *g) {
    return g->version;
}

const rel_t *view_cat_stored(kg_graph *g, const char *rel) {
    kg_relation *r = kg_rel_find(g, rel);
    return r ? r->data : NULL;
}

const iql_rule **view_cat_clauses(const kg_graph *g, uint32_t *n) {
    uint32_t count = 0;
    for (uint32_t i = 0; i < g->rules.n; i++) count += g->rules.v[i]->clauses.n;
    const iql_rule **out = malloc((count ? count : 1) * sizeof *out);
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->rules.n; i++)
        for (uint32_t j = 0; j < g->rules.v[i]->clauses.n; j++)
            out[k++] = g->rules.v[i]->clauses.v[j];
    *n = count;
    return out;
}

bool view_cat_rule_arity(kg_graph *g, const char *rel, uint32_t *arity) {
    kg_rule *r = kg_rule_find(g, rel);
    if (!r || !r->clauses.n) return false;
    *arity = kg_head_arity(&r->clauses.v[0]->head);
    return true;
}

void view_cat_query_rule(il_engine *e, kg_graph *g, const iql_query *q, il_arena *a,
                         iql_rule *out) {
    il_session tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.e = e;
    tmp.kg = g;
    query_shape shape;
    kg_query_opts opts = {.with_session = false};
    kg_query_shape(&tmp, q, opts, a, &shape);
    *out = shape.rule;
}

bool view_cat_pending(const kg_graph *g) {
    return g->view_pending > 0;
}

void view_cat_flush_plans(kg_graph *g) {
    kg_plan_cache_free(g);
}

void view_cat_attach(kg_graph *g, view_t *v) {
    il_vec_push(g->views, v);
}

void view_cat_detach(kg_graph *g, view_t *v) {
    for (uint32_t i = 0; i < g->views.n; i++)
        if (g->views.v[i] == v) {
            g->views.v[i] = g->views.v[--g->views.n];
            break;
        }
    if (!g->views.n) kg_delta_clear(g); /* nothing to keep them for */
}

struct read_policy **view_cat_policy(kg_graph *g) {
    return &g->read_policy;
}

/* How many netted-delta entries a graph keeps between commits. A commit reuses the kept
 * entry of a relation it changes (emptied, not freed: creating and freeing two relations
 * per changed relation per commit was a good part of a keyed write's cost). A write
 * touches a few relations, a transaction perhaps a dozen; 16 covers both, while a
 * workload that moves over many relations keeps only the 16 it used last (two empty
 * relations each), not one entry per relation it ever touched. */
#define KEPT_NETTED 16

static void netted_free(kg_delta_rel *d) {
    free(d->name);
    rel_free(d->plus);
    rel_free(d->minus);
}

/* The change of relation rel in g's netted delta: the entry this commit already uses, or
 * its kept entry (or a new one) moved to the front as this commit's next. */
static kg_delta_rel *netted(kg_graph *g, const char *rel, uint32_t arity) {
    for (uint32_t i = 0; i < g->delta_used; i++)
        if (strcmp(g->delta.v[i].name, rel) == 0) return &g->delta.v[i];
    uint32_t at = g->delta_used;
    while (at < g->delta.n && strcmp(g->delta.v[at].name, rel) != 0) at++;
    if (at == g->delta.n) {
        kg_delta_rel nd = {strdup(rel), rel_new(arity), rel_new(arity)};
        il_vec_push(g->delta, nd);
    }
    kg_delta_rel d = g->delta.v[at];
    /* kept from before the relation was dropped and recreated with another arity */
    if (rel_arity(d.plus) != arity) {
        rel_free(d.plus);
        rel_free(d.minus);
        d.plus = rel_new(arity);
        d.minus = rel_new(arity);
    }
    /* the kept entries stay in order of last use, for netted_keep to drop the oldest */
    memmove(&g->delta.v[g->delta_used + 1], &g->delta.v[g->delta_used],
            (at - g->delta_used) * sizeof d);
    g->delta.v[g->delta_used] = d;
    return &g->delta.v[g->delta_used++];
}

/* After the views have seen the commit: its entries are emptied and kept, but not those
 * beyond KEPT_NETTED nor those of a relation that has since been dropped (its deletions
 * were this commit's; it may come back with another arity). */
static void netted_keep(kg_graph *g) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->delta.n; i++) {
        kg_delta_rel *d = &g->delta.v[i];
        bool dropped = i < g->delta_used && rel_count(d->minus) &&
                       !view_cat_stored(g, d->name); /* only a commit that deleted asks */
        if (dropped || n == KEPT_NETTED) {
            netted_free(d);
            continue;
        }
        if (i < g->delta_used) {
            rel_clear(d->plus);
            rel_clear(d->minus);
        }
        g->delta.v[n++] = *d;
    }
    g->delta.n = n;
    g->delta_used = 0;
}

/* Nets the commit's changes of g that happened while it had views, per relation, in
 * order: a tuple deleted and inserted again did not change. */
static void net_for_views(const kg_delta *d, kg_graph *g) {
    for (uint32_t i = 0; i < d->entries.n; i++) {
        const kg_dentry *x = &d->entries.v[i];
        if (x->kind == KD_OP || x->g != g || !x->for_views || !x->vals) continue;
        kg_delta_rel *r = netted(g, x->rel, x->arity);
        /* dropped and recreated wider: the views rebuild */
        if (rel_arity(r->plus) != x->arity) continue;
        kg_delta_net(d, x, r->plus, r->minus);
    }
}

void kg_views_commit(il_engine *e) {
    /* a moved version ends the read policy's maintenance first, so that nothing is
       rebuilt for nobody */
    for (uint32_t i = 0; i < e->graphs.n; i++) read_policy_graph_commit(e->graphs.v[i]);
    for (uint32_t i = 0; i < e->graphs.n; i++) {
        kg_graph *g = e->graphs.v[i];
        if (!g->views.n) continue;
        if (g->view_pending) net_for_views(&e->delta, g);
        g->view_pending = 0; /* the views are current once maintained */
        view_graph_commit(g->views.v, g->views.n, g->delta.v, g->delta_used);
        netted_keep(g);
    }
}

void il_engine_set_view_budget(il_engine *e, uint64_t ns) {
    e->view_budget_ns = ns;
}

void il_engine_set_maintained_views(il_engine *e, bool on) {
    e->views_unmaintained = !on;
    if (!on)
        for (uint32_t i = 0; i < e->graphs.n; i++) read_policy_graph_clear(e->graphs.v[i]);
}
