/* Vector indexes of a knowledge graph (`.index`, kg.h): their definitions, the HNSW
 * graphs that mirror the indexed relations' stored facts, and the meta commands.
 *
 * A graph follows its relation's changes at each commit, from the commit's delta
 * (kg_indexes_commit). Each index remembers the relation's change counter
 * (rel_changes) as of the last change it followed; when the two disagree, some change
 * reached the facts by another path (a rolled-back transaction, a clear, a replayed
 * log), and the graph is rebuilt from the facts before its next use. Removed facts
 * leave tombstones; once they outnumber the live vectors the graph is rebuilt too.
 *
 * A pinned copy of a graph reads a revision of each HNSW graph (kg_indexes_pin): it holds a
 * reference on it, so a rebuild meanwhile makes a new graph for the live index and leaves
 * the old one, no longer changed, to the pins that hold it; the last frees it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "kg/kg.h"
#include "kg/record.h"
#include "store/store.h"

/* Defaults of `.index create` (those of the original). */
enum { DEFAULT_M = 16, DEFAULT_EF_CONSTRUCTION = 200, DEFAULT_EF_SEARCH = 50 };
/* Tombstones beyond which (and beyond the live count) a graph is rebuilt. */
enum { TOMBSTONE_REBUILD = 1024 };

kg_index *kg_index_find(kg_graph *g, const char *name) {
    for (uint32_t i = 0; i < g->indexes.n; i++)
        if (strcmp(g->indexes.v[i]->def.name, name) == 0) return g->indexes.v[i];
    return NULL;
}

void kg_index_def_free(kg_index_def *d) {
    free(d->name);
    free(d->rel);
    free(d->column);
    memset(d, 0, sizeof *d);
}

static void index_free(kg_index *ix) {
    hnsw_free(ix->graph);
    kg_index_def_free(&ix->def);
    free(ix);
}

kg_index *kg_index_add(kg_graph *g, const kg_index_def *def) {
    kg_index *ix = calloc(1, sizeof *ix);
    if (!ix) abort();
    ix->def = *def;
    ix->def.name = strdup(def->name);
    ix->def.rel = strdup(def->rel);
    ix->def.column = strdup(def->column);
    ix->g = g;
    il_vec_push(g->indexes, ix);
    g->version++; /* cached plans resolved hnsw_nearest against the old set */
    return ix;
}

bool kg_index_drop(kg_graph *g, const char *name) {
    for (uint32_t i = 0; i < g->indexes.n; i++) {
        if (strcmp(g->indexes.v[i]->def.name, name) != 0) continue;
        index_free(g->indexes.v[i]);
        memmove(&g->indexes.v[i], &g->indexes.v[i + 1],
                (g->indexes.n - i - 1) * sizeof g->indexes.v[0]);
        g->indexes.n--;
        g->version++;
        return true;
    }
    return false;
}

void kg_indexes_free(kg_graph *g) {
    for (uint32_t i = 0; i < g->indexes.n; i++) index_free(g->indexes.v[i]);
    il_vec_free(g->indexes);
}

static const rel_t *index_facts(const kg_index *ix) {
    kg_relation *kr = kg_rel_find(ix->g, ix->def.rel);
    return kr ? kr->data : NULL;
}

static bool in_sync(const kg_index *ix, const rel_t *data) {
    return ix->graph && ix->synced == data && (data ? rel_changes(data) : 0) == ix->synced_changes;
}

static void invalidate(kg_index *ix) {
    hnsw_free(ix->graph);
    ix->graph = NULL;
    ix->synced = NULL;
    ix->synced_changes = 0;
}

/* The id a search returns for a tuple: its first column other than the vector's (the
 * vector itself in a relation of one column). */
static val_t tuple_key(const kg_index *ix, const val_t *t, uint32_t arity) {
    if (arity == 1) return t[0];
    return t[ix->def.col == 0 ? 1 : 0];
}

static hnsw *new_graph(const kg_index *ix) {
    hnsw_params p = {ix->def.metric, ix->def.m, ix->def.ef_construction, 42};
    hnsw *h = hnsw_new(&p);
    if (!h) abort();
    return h;
}

/* Builds the graph from the facts as they are now. */
static void rebuild(kg_index *ix) {
    invalidate(ix);
    const rel_t *data = index_facts(ix);
    ix->graph = new_graph(ix);
    if (data && ix->def.col < rel_arity(data)) {
        uint32_t arity = rel_arity(data);
        rel_cursor c;
        rel_seek(data, 0, NULL, 0, &c);
        for (const val_t *t; (t = rel_next(&c, NULL));)
            hnsw_add(ix->graph, tuple_key(ix, t, arity), t[ix->def.col]);
    }
    ix->synced = data;
    ix->synced_changes = data ? rel_changes(data) : 0;
}

static void ensure_built(kg_index *ix) {
    if (!in_sync(ix, index_facts(ix))) rebuild(ix);
}

void kg_indexes_build(kg_graph *g) {
    for (uint32_t i = 0; i < g->indexes.n; i++) ensure_built(g->indexes.v[i]);
}

/* The index follows the commit's changes of its relation, in order. The graph mirrored the
 * facts before them when its change counter plus theirs is the relation's now; otherwise
 * some change reached the facts by another path, and it is rebuilt before its next use. */
static void index_commit(kg_index *ix, const kg_delta *d) {
    uint64_t n = 0;
    bool held = true;
    for (uint32_t i = 0; i < d->entries.n; i++) {
        const kg_dentry *x = &d->entries.v[i];
        if (x->kind != KD_TUPLES || x->g != ix->g || strcmp(x->rel, ix->def.rel) != 0) continue;
        n += x->count;
        held &= x->vals;
    }
    const rel_t *data = index_facts(ix);
    if (!n || in_sync(ix, data)) return; /* nothing new, or rebuilt since */
    bool fresh = !ix->synced && hnsw_live(ix->graph) + hnsw_tombstones(ix->graph) == 0;
    if (!held || !data || (ix->synced != data && !fresh) ||
        ix->synced_changes + n != rel_changes(data)) {
        invalidate(ix);
        return;
    }
    ix->synced = data;
    ix->synced_changes += n;
    for (uint32_t i = 0; i < d->entries.n && ix->graph; i++) {
        const kg_dentry *x = &d->entries.v[i];
        if (x->kind != KD_TUPLES || x->g != ix->g || strcmp(x->rel, ix->def.rel) != 0) continue;
        if (ix->def.col >= x->arity) continue;
        for (uint64_t k = 0; k < x->count && ix->graph; k++) {
            const val_t *t = &d->vals.v[x->at + k * x->arity];
            if (x->sign > 0)
                hnsw_add(ix->graph, tuple_key(ix, t, x->arity), t[ix->def.col]);
            else
                hnsw_remove(ix->graph, tuple_key(ix, t, x->arity), t[ix->def.col]);
            size_t dead = hnsw_tombstones(ix->graph);
            if (dead > TOMBSTONE_REBUILD && dead > hnsw_live(ix->graph)) invalidate(ix);
        }
    }
}

void kg_indexes_commit(il_engine *e) {
    if (!e->delta.entries.n) return;
    for (uint32_t gi = 0; gi < e->graphs.n; gi++) {
        kg_graph *g = e->graphs.v[gi];
        for (uint32_t i = 0; i < g->indexes.n; i++)
            if (g->indexes.v[i]->graph) index_commit(g->indexes.v[i], &e->delta);
    }
}

void kg_index_rel_dropped(kg_graph *g, const char *rel) {
    for (uint32_t i = 0; i < g->indexes.n; i++)
        if (strcmp(g->indexes.v[i]->def.rel, rel) == 0) invalidate(g->indexes.v[i]);
}

void kg_indexes_pin(kg_graph *copy, kg_graph *from) {
    for (uint32_t i = 0; i < from->indexes.n; i++) {
        kg_index *src = from->indexes.v[i];
        if (!src->pinned) ensure_built(src);
        kg_index *ix = calloc(1, sizeof *ix);
        if (!ix) abort();
        ix->def = src->def;
        ix->def.name = strdup(src->def.name);
        ix->def.rel = strdup(src->def.rel);
        ix->def.column = strdup(src->def.column);
        ix->g = copy;
        ix->graph = src->graph;
        hnsw_ref(ix->graph);
        ix->pinned = true;
        ix->at = src->pinned ? src->at : hnsw_now(src->graph);
        il_vec_push(copy->indexes, ix);
    }
}

size_t kg_index_search(void *index, val_t q, uint32_t k, uint32_t ef, hnsw_hit *out) {
    kg_index *ix = index;
    if (ix->pinned) {
        bool exact = ix->at.live < KG_INDEX_EXACT_BELOW;
        return hnsw_search_at(ix->graph, &ix->at, q, k, ef ? ef : ix->def.ef_search, exact, out);
    }
    ensure_built(ix);
    bool exact = hnsw_live(ix->graph) < KG_INDEX_EXACT_BELOW;
    return hnsw_search(ix->graph, q, k, ef ? ef : ix->def.ef_search, exact, out);
}

/* ---- meta commands ---- */

static il_result *not_found(kg_graph *g, const char *name) {
    /* the original answers from its per-graph index engine, which exists only once an
       index was created in the graph */
    if (!g->indexes.n)
        return res_error("Index error: Index '%s' not found (no incremental engine)", name);
    return res_error("Index error: Index '%s' not found", name);
}

static bool index_valid(const kg_index *ix) {
    return in_sync(ix, index_facts(ix));
}

static size_t index_vectors(const kg_index *ix) {
    return ix->graph ? hnsw_live(ix->graph) : 0;
}

static il_result *index_list(kg_graph *g) {
    if (!g->indexes.n) return res_message("No indexes.");
    il_result *r = res_new(IL_RESULT_MESSAGE);
    char line[512];
    for (uint32_t i = 0; i < g->indexes.n; i++) {
        const kg_index *ix = g->indexes.v[i];
        snprintf(line, sizeof line,
                 "Index '%s' on %s.%s (type: hnsw, metric: %s, vectors: %zu, valid: %s)",
                 ix->def.name, ix->def.rel, ix->def.column, hnsw_metric_name(ix->def.metric),
                 index_vectors(ix), index_valid(ix) ? "true" : "false");
        res_add_line(r, line);
    }
    return r;
}

static il_result *index_stats(kg_graph *g, const char *name) {
    kg_index *ix = kg_index_find(g, name);
    if (!ix) return not_found(g, name);
    return res_message("Index '%s': relation=%s, column=%s, type=hnsw, metric=%s, vectors=%zu, "
                       "tombstones=%zu, valid=%s, dimension=%u",
                       ix->def.name, ix->def.rel, ix->def.column, hnsw_metric_name(ix->def.metric),
                       index_vectors(ix), ix->graph ? hnsw_tombstones(ix->graph) : 0,
                       index_valid(ix) ? "true" : "false", ix->graph ? hnsw_dim(ix->graph) : 0);
}

/* The next `key value` pair of the options text (validated by the parser). */
static bool next_option(const char **p, char *key, size_t kcap, char *val, size_t vcap) {
    const char *s = *p;
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) return false;
    size_t n = 0;
    while (*s && *s != ' ' && *s != '\t') {
        if (n + 1 < kcap) key[n++] = *s;
        s++;
    }
    key[n] = 0;
    while (*s == ' ' || *s == '\t') s++;
    n = 0;
    while (*s && *s != ' ' && *s != '\t') {
        if (n + 1 < vcap) val[n++] = *s;
        s++;
    }
    val[n] = 0;
    *p = s;
    return true;
}

static il_result *index_create(il_session *s, const iql_meta *m) {
    kg_graph *g = s->kg;
    kg_index_def d = {0};
    d.metric = HNSW_COSINE;
    d.m = DEFAULT_M;
    d.ef_construction = DEFAULT_EF_CONSTRUCTION;
    d.ef_search = DEFAULT_EF_SEARCH;
    kg_relation *kr = kg_rel_find(g, m->arg2);
    if (!kr || !kr->schema)
        return res_error("Index error: No schema found for relation '%s'. Register a schema first.",
                         m->arg2);
    const iql_schema *sc = kr->schema;
    uint32_t col = sc->ncols;
    for (uint32_t i = 0; i < sc->ncols; i++)
        if (strcmp(sc->cols[i].name, m->arg3) == 0) col = i;
    if (col == sc->ncols) {
        il_buf b;
        il_buf_init(&b);
        for (uint32_t i = 0; i < sc->ncols; i++)
            il_buf_printf(&b, "%s\"%s\"", i ? ", " : "", sc->cols[i].name);
        il_result *r =
            res_error("Index error: Column '%s' not found in relation '%s'. Available: [%s]",
                      m->arg3, m->arg2, il_buf_str(&b));
        il_buf_free(&b);
        return r;
    }
    const char *opts = m->text ? m->text : "";
    char key[64], val[128];
    while (next_option(&opts, key, sizeof key, val, sizeof val)) {
        unsigned long long num = strtoull(val, NULL, 10);
        if (strcasecmp(key, "type") == 0) {
            if (strcasecmp(val, "hnsw") != 0)
                return res_error(
                    "Index error: Unsupported index type '%s'. Currently only 'hnsw' is supported.",
                    val);
        } else if (strcasecmp(key, "metric") == 0) {
            if (!hnsw_metric_parse(val, &d.metric))
                return res_error("Index error: Invalid metric: '%s'. Valid metrics: cosine, "
                                 "euclidean, dot, manhattan",
                                 val);
        } else if (strcasecmp(key, "m") == 0) {
            if (num < 2)
                return res_error("Index error: HNSW parameter m must be >= 2, got %llu", num);
            if (num > 256)
                return res_error("Index error: HNSW parameter m must be <= 256, got %llu", num);
            d.m = (uint32_t)num;
        } else if (strcasecmp(key, "ef_construction") == 0 || strcasecmp(key, "efc") == 0) {
            if (num < 1 || num > 100000)
                return res_error(
                    "Index error: HNSW parameter ef_construction must be in 1..100000, got %llu",
                    num);
            d.ef_construction = (uint32_t)num;
        } else {
            if (num < 1 || num > 100000)
                return res_error(
                    "Index error: HNSW parameter ef_search must be in 1..100000, got %llu", num);
            d.ef_search = (uint32_t)num;
        }
    }
    if (kg_index_find(g, m->arg))
        return res_error("Index error: Index '%s' already exists", m->arg);
    d.name = (char *)m->arg;
    d.rel = (char *)m->arg2;
    d.column = (char *)m->arg3;
    d.col = col;
    kg_index *ix = kg_index_add(g, &d);
    kg_rec_index_create(g, &ix->def);
    rebuild(ix);
    return res_message("Index '%s' created on %s.%s.", m->arg, m->arg2, m->arg3);
}

il_result *kg_index_meta(il_session *s, const iql_meta *m) {
    kg_graph *g = s->kg;
    switch (m->kind) {
    case IQL_META_INDEX_LIST:
        return index_list(g);
    case IQL_META_INDEX_CREATE:
        return index_create(s, m);
    case IQL_META_INDEX_STATS:
        return index_stats(g, m->arg);
    case IQL_META_INDEX_DROP:
        if (!kg_index_find(g, m->arg)) return not_found(g, m->arg);
        kg_index_drop(g, m->arg);
        kg_rec_index_drop(g, m->arg);
        return res_message("Index '%s' dropped.", m->arg);
    case IQL_META_INDEX_REBUILD: {
        kg_index *ix = kg_index_find(g, m->arg);
        if (!ix) return not_found(g, m->arg);
        invalidate(ix);
        return res_message("Index '%s' will be rebuilt on next data update.", m->arg);
    }
    default:
        return res_error("This command is not available yet.");
    }
}
