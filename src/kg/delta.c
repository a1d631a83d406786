/* The delta of a commit (kg.h, kg_delta): every change a statement or a transaction makes
 * to stored state, in the order it makes it, held once. Runs of tuples of one relation
 * and one direction share an entry; their values are kept only when something will read
 * them: the log (a record is encoded from the delta at the commit, record.c), a rollback
 * (the delta undone backwards, txn.c), the graph's maintained views (netted per relation
 * at the commit, view_catalog.c), its vector indexes (indexes.c) and a change hook that
 * nets tuple by tuple (changes.c). Without any of them a bulk write costs a counter. */
#include <stdlib.h>
#include <string.h>

#include "kg/kg.h"

static kg_dentry *push(kg_delta *d, kg_dkind kind, const kg_graph *g) {
    kg_dentry x;
    memset(&x, 0, sizeof x);
    x.kind = (uint8_t)kind;
    x.g = (kg_graph *)g;
    x.graph = g ? strdup(g->name) : NULL;
    x.change = UINT32_MAX;
    x.at = kind == KD_OP ? d->ops.len : d->vals.n;
    il_vec_push(d->entries, x);
    return &d->entries.v[d->entries.n - 1];
}

static void put_vals(kg_delta *d, const val_t *t, uint32_t arity) {
    /* room for one more word: a tuple of no columns, which takes none, is still read
       through a pointer into the array */
    il_vec_reserve(d->vals, d->vals.n + arity + 1);
    if (arity) memcpy(d->vals.v + d->vals.n, t, arity * sizeof *t);
    d->vals.n += arity;
}

/* Whether a tuple of g must be kept: for the log, a rollback, views or indexes (a netting
 * change hook asks through its own flag). */
static bool keeps_values(const kg_graph *g) {
    const il_engine *e = g->e;
    return e->store || e->txn || g->views.n || g->indexes.n;
}

void kg_delta_note(kg_graph *g, const char *rel, const val_t *t, uint32_t arity, int sign) {
    kg_delta *d = &g->e->delta;
    kg_dentry *last = d->entries.n ? &d->entries.v[d->entries.n - 1] : NULL;
    bool views = g->views.n > 0;
    bool same = last && last->kind == KD_TUPLES && last->g == g && last->sign == sign &&
                last->arity == arity && last->for_views == views && strcmp(last->rel, rel) == 0;
    if (!same) {
        last = push(d, KD_TUPLES, g);
        last->sign = (int8_t)sign;
        last->arity = arity;
        last->rel = strdup(rel);
        last->for_views = views;
        bool net = false;
        last->change = kg_change_facts(g, rel, arity, &net);
        last->net = net;
        last->vals = keeps_values(g) || net;
    }
    if (last->vals) put_vals(d, t, arity);
    last->count++;
    if (views) g->view_pending++;
}

void kg_delta_note_all_deleted(kg_graph *g, kg_relation *r) {
    if (!r->data) return;
    kg_delta *d = &g->e->delta;
    uint32_t arity = rel_arity(r->data);
    kg_dentry *x = push(d, KD_CLEARED, g);
    x->sign = -1;
    x->arity = arity;
    x->rel = strdup(r->name);
    x->count = rel_count(r->data);
    x->for_views = g->views.n > 0;
    bool net = false;
    x->change = kg_change_facts(g, r->name, arity, &net);
    /* the log records the clear or drop as one operation: only a rollback, views and a
       change hook netting over a transaction read the tuples */
    x->net = kg_txn_nets_changes(g->e) && net;
    x->vals = g->e->txn || x->for_views || x->net;
    if (x->for_views) g->view_pending++;
    if (!x->vals) return;
    rel_cursor cur;
    rel_seek(r->data, 0, NULL, 0, &cur);
    for (const val_t *t; (t = rel_next(&cur, NULL));) put_vals(d, t, arity);
}

il_buf *kg_delta_op(il_engine *e, const kg_graph *g, bool resets_graph) {
    if (!e->store) return NULL;
    kg_dentry *x = push(&e->delta, KD_OP, g);
    x->resets_graph = resets_graph;
    return &e->delta.ops;
}

uint32_t kg_delta_len(const il_engine *e) {
    return e->delta.entries.n;
}

void kg_delta_net(const kg_delta *d, const kg_dentry *x, rel_t *plus, rel_t *minus) {
    for (uint64_t k = 0; k < x->count; k++) {
        const val_t *t = &d->vals.v[x->at + k * x->arity];
        if (x->sign > 0) {
            if (!rel_delete(minus, t)) rel_insert(plus, t);
        } else if (!rel_delete(plus, t)) {
            rel_insert(minus, t);
        }
    }
}

static void entry_free(kg_dentry *x) {
    free(x->graph);
    free(x->rel);
}

/* Undoes one entry: its tuples back to where they were, the last first. */
static void undo_entry(kg_delta *d, const kg_dentry *x) {
    if (x->kind == KD_OP || !x->vals) return;
    kg_relation *r = kg_rel_find(x->g, x->rel);
    if (!r || !r->data) return;
    if (x->kind == KD_CLEARED) {
        for (uint64_t k = 0; k < x->count; k++)
            rel_insert(r->data, &d->vals.v[x->at + k * x->arity]);
        return;
    }
    for (uint64_t k = x->count; k-- > 0;) {
        const val_t *t = &d->vals.v[x->at + k * x->arity];
        if (x->sign > 0)
            rel_delete(r->data, t);
        else
            rel_insert(r->data, t);
    }
}

void kg_delta_undo_to(il_engine *e, uint32_t at) {
    kg_delta *d = &e->delta;
    while (d->entries.n > at) {
        kg_dentry *x = &d->entries.v[d->entries.n - 1];
        undo_entry(d, x);
        if (x->kind == KD_OP)
            d->ops.len = x->at;
        else
            d->vals.n = x->at;
        entry_free(x);
        d->entries.n--;
    }
}

void kg_delta_reset(il_engine *e) {
    kg_delta *d = &e->delta;
    for (uint32_t i = 0; i < d->entries.n; i++) entry_free(&d->entries.v[i]);
    d->entries.n = 0;
    d->vals.n = 0;
    il_buf_clear(&d->ops);
    /* a bulk write's values go back at once rather than waiting for the next one */
    if (d->vals.cap > 4096) il_vec_free(d->vals);
    if (d->ops.cap > 65536) il_buf_free(&d->ops);
    for (uint32_t i = 0; i < e->graphs.n; i++) e->graphs.v[i]->view_pending = 0;
}

void kg_delta_free(il_engine *e) {
    kg_delta_reset(e);
    il_vec_free(e->delta.entries);
    il_vec_free(e->delta.vals);
    il_buf_free(&e->delta.ops);
}
