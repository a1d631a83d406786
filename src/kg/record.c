/* Collecting a statement's effects into one log record (the format is in record.h). The
 * engine calls a note for each change it really made; runs of tuple changes to one
 * relation share one header, so a bulk insert costs its values and a few bytes. */
#include <stdlib.h>
#include <string.h>

#include "iql/print.h"
#include "kg/record.h"

/* The record being collected. */
typedef struct kg_record {
    il_buf payload;
    char *graph;   /* the graph the payload's operations apply to now, or NULL */
    char *run_rel; /* the open run of tuple changes, or NULL */
    int run_sign;  /* +1 inserts, -1 deletes */
    uint32_t run_arity;
    uint64_t run_count;
    il_buf run_vals;
} kg_record;

static void reset(kg_record *fx) {
    free(fx->run_rel);
    fx->run_rel = NULL;
    free(fx->graph);
    fx->graph = NULL;
    il_buf_clear(&fx->payload);
    il_buf_clear(&fx->run_vals);
}

void kg_rec_free(il_engine *e) {
    kg_record *fx = e->rec;
    if (!fx) return;
    reset(fx);
    il_buf_free(&fx->payload);
    il_buf_free(&fx->run_vals);
    free(fx);
    e->rec = NULL;
}

/* The record of e, or NULL when nothing is logged. */
static kg_record *record(il_engine *e) {
    if (!e->store) return NULL;
    if (!e->rec) {
        e->rec = calloc(1, sizeof *e->rec);
        il_buf_init(&e->rec->payload);
        il_buf_init(&e->rec->run_vals);
    }
    return e->rec;
}

/* Closes the open run into the payload. */
static void flush(kg_record *fx) {
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
static kg_record *begin(il_engine *e, const kg_graph *g) {
    kg_record *fx = record(e);
    if (!fx) return NULL;
    flush(fx);
    if (g && (!fx->graph || strcmp(fx->graph, g->name) != 0)) {
        codec_put_u8(&fx->payload, OP_GRAPH);
        codec_put_str(&fx->payload, g->name);
        free(fx->graph);
        fx->graph = strdup(g->name);
    }
    return fx;
}

void kg_rec_tuple(const kg_graph *g, const char *rel, const val_t *t, uint32_t arity, int sign) {
    kg_record *fx = record(g->e);
    if (!fx) return;
    bool same = fx->run_rel && fx->run_sign == sign && fx->run_arity == arity &&
                strcmp(fx->run_rel, rel) == 0 && fx->graph && strcmp(fx->graph, g->name) == 0;
    if (!same) {
        begin(g->e, g);
        fx->run_rel = strdup(rel);
        fx->run_sign = sign;
        fx->run_arity = arity;
        fx->run_count = 0;
    }
    for (uint32_t i = 0; i < arity; i++) codec_put_val(&fx->run_vals, t[i]);
    fx->run_count++;
}

static void note_name(il_engine *e, const kg_graph *g, enum kg_rec_op op, const char *name) {
    kg_record *fx = begin(e, g);
    if (!fx) return;
    codec_put_u8(&fx->payload, (uint8_t)op);
    codec_put_str(&fx->payload, name);
}

void kg_rec_rel_clear(const kg_graph *g, const char *rel) {
    note_name(g->e, g, OP_REL_CLEAR, rel);
}

void kg_rec_rel_drop(const kg_graph *g, const char *rel) {
    note_name(g->e, g, OP_REL_DROP, rel);
}

void kg_rec_put_schema(il_buf *b, const iql_schema *sc) {
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

bool kg_rec_get_schema(codec_reader *r, il_arena *ar, iql_schema *sc) {
    memset(sc, 0, sizeof *sc);
    char *rel = codec_get_strdup(r);
    uint64_t n = codec_get_uvar(r);
    bool ok = r->ok && n <= REL_MAX_ARITY;
    if (ok) {
        sc->rel = il_arena_strdup(ar, rel);
        sc->ncols = (uint32_t)n;
        sc->cols = il_arena_calloc(ar, (n + 1) * sizeof *sc->cols);
    }
    for (uint64_t i = 0; ok && i < n; i++) {
        char *name = codec_get_strdup(r);
        uint8_t kind = codec_get_u8(r);
        uint64_t dim = codec_get_uvar(r);
        char *tname = codec_get_u8(r) ? codec_get_strdup(r) : NULL;
        ok = r->ok && kind <= IQL_TY_NAMED && dim <= UINT32_MAX;
        if (ok) {
            sc->cols[i].name = il_arena_strdup(ar, name);
            sc->cols[i].type.kind = (iql_type_kind)kind;
            sc->cols[i].type.dim = (uint32_t)dim;
            sc->cols[i].type.name = tname ? il_arena_strdup(ar, tname) : NULL;
        }
        free(name);
        free(tname);
    }
    free(rel);
    return ok;
}

void kg_rec_schema(const kg_graph *g, const iql_schema *sc) {
    kg_record *fx = begin(g->e, g);
    if (!fx) return;
    codec_put_u8(&fx->payload, OP_SCHEMA);
    kg_rec_put_schema(&fx->payload, sc);
}

void kg_rec_rule_add(const kg_graph *g, const char *text, size_t len, const iql_rule *clause) {
    kg_record *fx = begin(g->e, g);
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

void kg_rec_put_index(il_buf *b, const kg_index_def *d) {
    codec_put_str(b, d->name);
    codec_put_str(b, d->rel);
    codec_put_str(b, d->column);
    codec_put_uvar(b, d->col);
    codec_put_u8(b, (uint8_t)d->metric);
    codec_put_uvar(b, d->m);
    codec_put_uvar(b, d->ef_construction);
    codec_put_uvar(b, d->ef_search);
}

bool kg_rec_get_index(codec_reader *r, kg_index_def *d) {
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

void kg_rec_index_create(const kg_graph *g, const kg_index_def *def) {
    kg_record *fx = begin(g->e, g);
    if (!fx) return;
    codec_put_u8(&fx->payload, OP_INDEX_CREATE);
    kg_rec_put_index(&fx->payload, def);
}

void kg_rec_index_drop(const kg_graph *g, const char *name) {
    note_name(g->e, g, OP_INDEX_DROP, name);
}

void kg_rec_rule_drop(const kg_graph *g, const char *name) {
    note_name(g->e, g, OP_RULE_DROP, name);
}

void kg_rec_rule_remove(const kg_graph *g, const char *name, uint32_t index) {
    note_name(g->e, g, OP_RULE_REMOVE, name);
    if (g->e->rec) codec_put_uvar(&g->e->rec->payload, index);
}

void kg_rec_rule_clear(const kg_graph *g, const char *name) {
    note_name(g->e, g, OP_RULE_CLEAR, name);
}

void kg_rec_kg_create(il_engine *e, const char *name) {
    note_name(e, NULL, OP_KG_CREATE, name);
}

void kg_rec_kg_drop(il_engine *e, const char *name) {
    kg_record *fx = begin(e, NULL);
    if (!fx) return;
    codec_put_u8(&fx->payload, OP_KG_DROP);
    codec_put_str(&fx->payload, name);
    /* a graph created again under this name is a new graph: name it afresh */
    free(fx->graph);
    fx->graph = NULL;
}

bool kg_rec_commit(il_engine *e, bool undoable, bool *written, char **err) {
    kg_record *fx = e->store ? e->rec : NULL;
    if (fx) flush(fx);
    bool ok = store_commit(e->store, fx ? fx->payload.data : NULL, fx ? fx->payload.len : 0,
                           undoable, written, err);
    if (fx) reset(fx);
    return ok;
}

void kg_rec_discard(il_engine *e) {
    if (e->rec) reset(e->rec);
}
