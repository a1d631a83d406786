/* Collecting a statement's effects into one log payload (the format is in
 * store_record.h). The engine calls a note for each change it really made; runs of
 * tuple changes to one relation share one header, so a bulk insert costs its values
 * and a few bytes. */
#include <stdlib.h>
#include <string.h>

#include "iql/print.h"
#include "store/store_codec.h"
#include "store/store_record.h"

void store_effects_init(store_effects *fx) {
    memset(fx, 0, sizeof *fx);
    il_buf_init(&fx->payload);
    il_buf_init(&fx->run_vals);
}

void store_effects_reset(store_effects *fx) {
    free(fx->run_rel);
    fx->run_rel = NULL;
    free(fx->graph);
    fx->graph = NULL;
    il_buf_clear(&fx->payload);
    il_buf_clear(&fx->run_vals);
}

void store_effects_free(store_effects *fx) {
    store_effects_reset(fx);
    il_buf_free(&fx->payload);
    il_buf_free(&fx->run_vals);
}

void store_effects_flush(store_effects *fx) {
    if (!fx->run_rel) return;
    codec_put_u8(&fx->payload, fx->run_sign > 0 ? OP_INSERT : OP_DELETE);
    codec_put_str(&fx->payload, fx->run_rel);
    codec_put_uvar(&fx->payload, fx->run_arity);
    codec_put_uvar(&fx->payload, fx->run_count);
    il_buf_put(&fx->payload, fx->run_vals.data, fx->run_vals.len);
    il_buf_clear(&fx->run_vals);
    free(fx->run_rel);
    fx->run_rel = NULL;
}

/* Starts an operation on graph g (NULL: an operation that names its own graph). */
static store_effects *begin(store *st, const kg_graph *g) {
    if (!st) return NULL;
    store_effects *fx = &st->fx;
    store_effects_flush(fx);
    if (g && (!fx->graph || strcmp(fx->graph, g->name) != 0)) {
        codec_put_u8(&fx->payload, OP_GRAPH);
        codec_put_str(&fx->payload, g->name);
        free(fx->graph);
        fx->graph = strdup(g->name);
    }
    return fx;
}

void store_note_tuple(store *st, const kg_graph *g, const char *rel, const val_t *t, uint32_t arity,
                      int sign) {
    if (!st) return;
    store_effects *fx = &st->fx;
    bool same = fx->run_rel && fx->run_sign == sign && fx->run_arity == arity &&
                strcmp(fx->run_rel, rel) == 0 && fx->graph && strcmp(fx->graph, g->name) == 0;
    if (!same) {
        begin(st, g);
        fx->run_rel = strdup(rel);
        fx->run_sign = sign;
        fx->run_arity = arity;
        fx->run_count = 0;
    }
    for (uint32_t i = 0; i < arity; i++) codec_put_val(&fx->run_vals, t[i]);
    fx->run_count++;
}

static void note_name(store *st, const kg_graph *g, enum store_op op, const char *name) {
    store_effects *fx = begin(st, g);
    if (!fx) return;
    codec_put_u8(&fx->payload, (uint8_t)op);
    codec_put_str(&fx->payload, name);
}

void store_note_rel_clear(store *st, const kg_graph *g, const char *rel) {
    note_name(st, g, OP_REL_CLEAR, rel);
}

void store_note_rel_drop(store *st, const kg_graph *g, const char *rel) {
    note_name(st, g, OP_REL_DROP, rel);
}

void store_put_schema(il_buf *b, const iql_schema *sc) {
    codec_put_str(b, sc->rel);
    codec_put_uvar(b, sc->ncols);
    for (uint32_t i = 0; i < sc->ncols; i++) {
        const iql_column *c = &sc->cols[i];
        codec_put_str(b, c->name);
        codec_put_u8(b, (uint8_t)c->type.kind);
        codec_put_uvar(b, c->type.dim);
        codec_put_u8(b, c->type.name != NULL);
        if (c->type.name) codec_put_str(b, c->type.name);
    }
}

void store_note_schema(store *st, const kg_graph *g, const iql_schema *sc) {
    store_effects *fx = begin(st, g);
    if (!fx) return;
    codec_put_u8(&fx->payload, OP_SCHEMA);
    store_put_schema(&fx->payload, sc);
}

void store_note_rule_add(store *st, const kg_graph *g, const char *text, size_t len,
                         const iql_rule *clause) {
    store_effects *fx = begin(st, g);
    if (!fx) return;
    codec_put_u8(&fx->payload, OP_RULE_ADD);
    if (text) {
        codec_put_bytes(&fx->payload, text, len);
        return;
    }
    il_buf b;
    il_buf_init(&b);
    il_buf_putc(&b, '+');
    iql_fmt_rule(clause, &b);
    codec_put_bytes(&fx->payload, b.data, b.len);
    il_buf_free(&b);
}

void store_put_index(il_buf *b, const kg_index_def *d) {
    codec_put_str(b, d->name);
    codec_put_str(b, d->rel);
    codec_put_str(b, d->column);
    codec_put_uvar(b, d->col);
    codec_put_u8(b, (uint8_t)d->metric);
    codec_put_uvar(b, d->m);
    codec_put_uvar(b, d->ef_construction);
    codec_put_uvar(b, d->ef_search);
}

bool store_get_index(codec_reader *r, kg_index_def *d) {
    memset(d, 0, sizeof *d);
    d->name = codec_get_strdup(r);
    d->rel = codec_get_strdup(r);
    d->column = codec_get_strdup(r);
    uint64_t col = codec_get_uvar(r);
    uint8_t metric = codec_get_u8(r);
    uint64_t m = codec_get_uvar(r), efc = codec_get_uvar(r), efs = codec_get_uvar(r);
    bool ok = r->ok && d->name && d->rel && d->column && col < REL_MAX_ARITY &&
              metric <= HNSW_MANHATTAN && m >= 2 && m <= 256 && efc >= 1 && efc <= 100000 &&
              efs >= 1 && efs <= 100000;
    if (!ok) {
        kg_index_def_free(d);
        return false;
    }
    d->col = (uint32_t)col;
    d->metric = (hnsw_metric)metric;
    d->m = (uint32_t)m;
    d->ef_construction = (uint32_t)efc;
    d->ef_search = (uint32_t)efs;
    return true;
}

void store_note_index_create(store *st, const kg_graph *g, const kg_index_def *def) {
    store_effects *fx = begin(st, g);
    if (!fx) return;
    codec_put_u8(&fx->payload, OP_INDEX_CREATE);
    store_put_index(&fx->payload, def);
}

void store_note_index_drop(store *st, const kg_graph *g, const char *name) {
    note_name(st, g, OP_INDEX_DROP, name);
}

void store_note_rule_drop(store *st, const kg_graph *g, const char *name) {
    note_name(st, g, OP_RULE_DROP, name);
}

void store_note_rule_remove(store *st, const kg_graph *g, const char *name, uint32_t index) {
    note_name(st, g, OP_RULE_REMOVE, name);
    if (st) codec_put_uvar(&st->fx.payload, index);
}

void store_note_rule_clear(store *st, const kg_graph *g, const char *name) {
    note_name(st, g, OP_RULE_CLEAR, name);
}

void store_note_kg_create(store *st, const char *name) {
    note_name(st, NULL, OP_KG_CREATE, name);
}

void store_note_kg_drop(store *st, const char *name) {
    store_effects *fx = begin(st, NULL);
    if (!fx) return;
    codec_put_u8(&fx->payload, OP_KG_DROP);
    codec_put_str(&fx->payload, name);
    /* a graph created again under this name is a new graph: name it afresh */
    free(fx->graph);
    fx->graph = NULL;
}
