/* Collecting a statement's effects into one log record (the format is in record.h). The
 * engine calls a note for each change it really made; runs of tuple changes to one
 * relation share one header, so a bulk insert costs its values and a few bytes. */
#include <stdlib.h>
#include <string.h>

#include "iql/print.h"
#include "kg/record.h"

/* The buffer records are encoded into, kept from one commit to the next. */
typedef struct kg_record {
    il_buf payload;
} kg_record;

void kg_rec_free(il_engine *e) {
    if (!e->rec) return;
    il_buf_free(&e->rec->payload);
    free(e->rec);
    e->rec = NULL;
}

/* Starts an operation on graph g (NULL: an operation that names its own graph) in the
 * commit's delta; NULL when nothing is logged. */
static il_buf *begin(il_engine *e, const kg_graph *g) {
    return kg_delta_op(e, g, false);
}

static il_buf *note_name(il_engine *e, const kg_graph *g, enum kg_rec_op op, const char *name) {
    il_buf *b = begin(e, g);
    if (!b) return NULL;
    codec_put_u8(b, (uint8_t)op);
    codec_put_str(b, name);
    return b;
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
    il_buf *b = begin(g->e, g);
    if (!b) return;
    codec_put_u8(b, OP_SCHEMA);
    kg_rec_put_schema(b, sc);
}

void kg_rec_rule_add(const kg_graph *g, const char *text, size_t len, const iql_rule *clause) {
    il_buf *out = begin(g->e, g);
    if (!out) return;
    codec_put_u8(out, OP_RULE_ADD);
    if (text) {
        codec_put_bytes(out, text, len);
        return;
    }
    il_buf b;
    il_buf_init(&b);
    il_buf_putc(&b, '+');
    iql_fmt_rule(clause, &b);
    codec_put_bytes(out, b.data, b.len);
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
    il_buf *b = begin(g->e, g);
    if (!b) return;
    codec_put_u8(b, OP_INDEX_CREATE);
    kg_rec_put_index(b, def);
}

void kg_rec_index_drop(const kg_graph *g, const char *name) {
    note_name(g->e, g, OP_INDEX_DROP, name);
}

void kg_rec_rule_drop(const kg_graph *g, const char *name) {
    note_name(g->e, g, OP_RULE_DROP, name);
}

void kg_rec_rule_remove(const kg_graph *g, const char *name, uint32_t index) {
    il_buf *b = note_name(g->e, g, OP_RULE_REMOVE, name);
    if (b) codec_put_uvar(b, index);
}

void kg_rec_rule_clear(const kg_graph *g, const char *name) {
    note_name(g->e, g, OP_RULE_CLEAR, name);
}

void kg_rec_kg_create(il_engine *e, const char *name) {
    note_name(e, NULL, OP_KG_CREATE, name);
}

void kg_rec_kg_drop(il_engine *e, const char *name) {
    /* a graph created again under this name is a new graph: the log names it afresh */
    il_buf *b = kg_delta_op(e, NULL, true);
    if (!b) return;
    codec_put_u8(b, OP_KG_DROP);
    codec_put_str(b, name);
}

/* The record of the commit's delta, in its order: operations name their graph when it
 * is not the one before; adjacent runs of one relation, direction and width are one. */
static void encode(const kg_delta *d, il_buf *out) {
    const char *graph = NULL; /* the graph the record's operations apply to now */
    uint32_t n = d->entries.n;
    for (uint32_t i = 0; i < n; i++) {
        const kg_dentry *x = &d->entries.v[i];
        if (x->kind == KD_CLEARED) continue; /* its operation follows */
        if (x->graph && (!graph || strcmp(graph, x->graph) != 0)) {
            codec_put_u8(out, OP_GRAPH);
            codec_put_str(out, x->graph);
            graph = x->graph;
        }
        if (x->kind == KD_OP) {
            size_t end = d->ops.len;
            for (uint32_t j = i + 1; j < n; j++)
                if (d->entries.v[j].kind == KD_OP) {
                    end = d->entries.v[j].at;
                    break;
                }
            il_buf_put(out, d->ops.data + x->at, end - x->at);
            if (x->resets_graph) graph = NULL;
            continue;
        }
        uint32_t last = i;
        uint64_t count = x->count;
        while (last + 1 < n) {
            const kg_dentry *y = &d->entries.v[last + 1];
            if (y->kind != KD_TUPLES || y->g != x->g || y->sign != x->sign ||
                y->arity != x->arity || strcmp(y->rel, x->rel) != 0)
                break;
            count += y->count;
            last++;
        }
        codec_put_u8(out, x->sign > 0 ? OP_INSERT : OP_DELETE);
        codec_put_str(out, x->rel);
        codec_put_uvar(out, x->arity);
        codec_put_uvar(out, count);
        for (uint32_t j = i; j <= last; j++) {
            const kg_dentry *y = &d->entries.v[j];
            const val_t *v = d->vals.v + y->at;
            for (size_t k = 0, m = (size_t)y->count * y->arity; k < m; k++)
                codec_put_val(out, v[k]);
        }
        i = last;
    }
}

bool kg_rec_commit(il_engine *e, bool undoable, bool *written, char **err) {
    if (!e->store) return store_commit(NULL, NULL, 0, undoable, written, err);
    if (!e->rec) {
        e->rec = calloc(1, sizeof *e->rec);
        il_buf_init(&e->rec->payload);
    }
    il_buf *b = &e->rec->payload;
    il_buf_clear(b);
    encode(&e->delta, b);
    bool ok = store_commit(e->store, b->data, b->len, undoable, written, err);
    /* a bulk write's record goes back at once rather than waiting for the next one */
    if (b->cap > 65536) il_buf_free(b);
    return ok;
}
