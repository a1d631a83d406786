/* Recovery: opening the store of a data directory with the engine as its host, and
 * replaying a log record into the catalog (format in record.h). Recovery calls it
 * twice per record: first only decoding (doit false), then applying, so a record
 * that does not decode changes nothing and the log is cut before it. Applying mirrors
 * what the statement did, without re-validating: the statement was validated when it
 * ran, and the catalog is in the same state now as it was then. */
#include <stdlib.h>
#include <string.h>

#include "iql/parser.h"
#include "kg/record.h"

typedef struct applier {
    il_engine *e;
    codec_reader r;
    bool doit;
    kg_graph *g; /* the current graph (doit only) */
} applier;

static kg_graph *need_graph(applier *a) {
    if (!a->g) a->g = kg_graph_find(a->e, "default");
    return a->g;
}

static bool apply_tuples(applier *a, int sign) {
    char *rel = codec_get_strdup(&a->r);
    uint64_t arity = codec_get_uvar(&a->r), n = codec_get_uvar(&a->r);
    bool ok = a->r.ok && arity <= REL_MAX_ARITY;
    /* of no columns there is one tuple, the empty one: a run of them applies it once (and
       a count, which no value bytes back, is never walked) */
    if (arity == 0 && n > 1) n = 1;
    kg_relation *kr = NULL;
    if (ok && a->doit) {
        kg_graph *g = need_graph(a);
        kr = sign > 0 ? kg_rel_get(g, rel) : kg_rel_find(g, rel);
        if (kr && sign > 0) kg_rel_data(g, kr, (uint32_t)arity);
        if (kr && (!kr->data || rel_arity(kr->data) != arity)) kr = NULL;
    }
    val_t t[REL_MAX_ARITY];
    for (uint64_t i = 0; ok && i < n; i++) {
        for (uint64_t j = 0; j < arity; j++) t[j] = codec_get_val(&a->r);
        ok = a->r.ok;
        if (ok && kr) {
            if (sign > 0)
                rel_insert(kr->data, t);
            else
                rel_delete(kr->data, t);
        }
    }
    free(rel);
    return ok;
}

static bool apply_schema(applier *a) {
    il_arena ar;
    il_arena_init(&ar);
    iql_schema sc;
    bool ok = kg_rec_get_schema(&a->r, &ar, &sc);
    if (ok && a->doit) {
        kg_graph *g = need_graph(a);
        kg_rel_get(g, sc.rel)->schema = kg_schema_copy(&g->arena, &sc);
    }
    il_arena_destroy(&ar);
    return ok;
}

static bool apply_rule_add(applier *a) {
    size_t len;
    const char *text = codec_get_bytes(&a->r, &len);
    if (!a->r.ok) return false;
    il_arena ar;
    il_arena_init(&ar);
    iql_stmt st;
    const char *err = NULL;
    bool ok = iql_parse(&ar, text, len, &st, &err) &&
              (st.kind == IQL_STMT_PERSIST_RULE || st.kind == IQL_STMT_SESSION_RULE);
    if (ok && a->doit) {
        kg_graph *g = need_graph(a);
        kg_rule_add_clause(g, kg_rule_get(g, st.u.rule.head.rel), &st.u.rule);
    }
    il_arena_destroy(&ar);
    return ok;
}

static bool apply_rule_op(applier *a, enum kg_rec_op op) {
    char *name = codec_get_strdup(&a->r);
    uint64_t index = op == OP_RULE_REMOVE ? codec_get_uvar(&a->r) : 0;
    if (!a->r.ok) return false;
    kg_graph *g = a->doit ? need_graph(a) : NULL;
    kg_rule *r = g ? kg_rule_find(g, name) : NULL;
    if (r) {
        if (op == OP_RULE_DROP) {
            kg_rule_drop(g, r);
        } else if (op == OP_RULE_CLEAR) {
            r->clauses.n = 0;
            kg_rule_changed(r);
            g->version++;
        } else if (index >= 1 && index <= r->clauses.n) {
            uint32_t i = (uint32_t)(index - 1);
            memmove(&r->clauses.v[i], &r->clauses.v[i + 1],
                    (r->clauses.n - i - 1) * sizeof(iql_rule *));
            r->clauses.n--;
            kg_rule_changed(r);
            g->version++;
            if (r->clauses.n == 0) kg_rule_drop(g, r); /* as `.rule remove` of the last one */
        }
    }
    free(name);
    return true;
}

static bool apply_named(applier *a, enum kg_rec_op op) {
    char *name = codec_get_strdup(&a->r);
    if (!a->r.ok) return false;
    if (a->doit) {
        switch (op) {
        case OP_GRAPH:
            a->g = kg_graph_find(a->e, name);
            if (!a->g) a->g = kg_graph_create(a->e, name); /* tolerated: nothing is lost */
            break;
        case OP_KG_CREATE:
            if (!kg_graph_find(a->e, name)) kg_graph_create(a->e, name);
            break;
        case OP_KG_DROP: {
            kg_graph *g = kg_graph_find(a->e, name);
            if (g && strcmp(name, "default") != 0) {
                if (a->g == g) a->g = NULL;
                kg_graph_drop(a->e, g);
            }
            break;
        }
        case OP_REL_CLEAR: {
            kg_relation *kr = kg_rel_find(need_graph(a), name);
            if (kr && kr->data) rel_clear(kr->data);
            break;
        }
        case OP_REL_DROP: {
            kg_graph *g = need_graph(a);
            kg_relation *kr = kg_rel_find(g, name);
            if (kr) {
                kg_rel_drop_data(g, kr);
                kr->schema = NULL;
            }
            break;
        }
        default:
            break;
        }
    }
    free(name);
    return true;
}

/* An index created again replaces the one of that name: recovery may replay a creation
   whose index a checkpoint already holds. */
static bool apply_index_create(applier *a) {
    kg_index_def d;
    if (!kg_rec_get_index(&a->r, &d)) return false;
    if (a->doit) {
        kg_graph *g = need_graph(a);
        kg_index_drop(g, d.name);
        kg_index_add(g, &d);
    }
    kg_index_def_free(&d);
    return true;
}

static bool apply_index_drop(applier *a) {
    char *name = codec_get_strdup(&a->r);
    bool ok = a->r.ok && name;
    if (ok && a->doit) kg_index_drop(need_graph(a), name);
    free(name);
    return ok;
}

bool kg_rec_apply(il_engine *e, const void *payload, size_t len, bool doit) {
    applier a = {.e = e, .doit = doit};
    codec_reader_init(&a.r, payload, len);
    bool ok = len > 0;
    while (ok && !codec_at_end(&a.r)) {
        enum kg_rec_op op = (enum kg_rec_op)codec_get_u8(&a.r);
        switch (op) {
        case OP_INSERT:
            ok = apply_tuples(&a, +1);
            break;
        case OP_DELETE:
            ok = apply_tuples(&a, -1);
            break;
        case OP_SCHEMA:
            ok = apply_schema(&a);
            break;
        case OP_RULE_ADD:
            ok = apply_rule_add(&a);
            break;
        case OP_RULE_DROP:
        case OP_RULE_REMOVE:
        case OP_RULE_CLEAR:
            ok = apply_rule_op(&a, op);
            break;
        case OP_INDEX_CREATE:
            ok = apply_index_create(&a);
            break;
        case OP_INDEX_DROP:
            ok = apply_index_drop(&a);
            break;
        case OP_GRAPH:
        case OP_KG_CREATE:
        case OP_KG_DROP:
        case OP_REL_CLEAR:
        case OP_REL_DROP:
            ok = apply_named(&a, op);
            break;
        default:
            ok = false;
        }
    }
    return ok && a.r.ok;
}

static bool host_apply(void *ctx, const void *payload, size_t len, bool doit) {
    return kg_rec_apply(ctx, payload, len, doit);
}

static bool host_load_image(void *ctx, const void *image, size_t len) {
    return kg_image_load(ctx, image, len);
}

static void host_reset(void *ctx) {
    kg_image_reset(ctx);
}

static ckpt_snapshot *host_snapshot(void *ctx, uint64_t lsn) {
    return kg_image_snapshot(ctx, lsn);
}

store *kg_store_open(il_engine *e, const char *data_dir, uint64_t seg_size, bool salvage,
                     char **err) {
    store_host host = {.ctx = e,
                       .apply = host_apply,
                       .load_image = host_load_image,
                       .reset = host_reset,
                       .snapshot = host_snapshot};
    return store_open_recover(&host, data_dir, seg_size, salvage, err);
}
