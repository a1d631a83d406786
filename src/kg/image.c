/* The checkpoint image of the catalog (store/ckpt.h keeps it): taking a snapshot of the
 * stored state, and loading an image into a fresh engine. The image is, with the value
 * and schema encodings of the log (store/store_codec.h, record.h):
 *
 *   ngraphs, per graph: name, nrels,
 *     per relation: name, flags (1 schema, 2 facts), [schema], [arity, count, values],
 *   nrules, per rule: name, nclauses, per clause: the text of a statement adding it
 *
 * then, when any graph has vector indexes, their definitions (images without this part
 * have none): nindexes, per index: graph name, definition (kg_rec_put_index)
 *
 * in catalog order, so listings come back in the same order. A relation with facts but
 * none left (after `.clear`) and a rule without clauses (after `.rule clear`) are kept
 * as they are: they answer differently from absent ones. */
#include <stdlib.h>
#include <string.h>

#include "iql/parser.h"
#include "iql/print.h"
#include "kg/record.h"
#include "store/ckpt.h"

enum { HAS_SCHEMA = 1, HAS_FACTS = 2 };

/* Copies the words of every tuple: a stored value's string, long integer or vector is
 * interned for good (base/intern.h), so the words stay meaningful after the relation
 * changes. */
static void copy_tuples(ckpt_snapshot *s, const rel_t *r) {
    uint32_t arity = rel_arity(r);
    size_t n = rel_count(r) * arity;
    val_t *vals = malloc((n ? n : 1) * sizeof *vals);
    rel_cursor c;
    rel_seek(r, 0, NULL, 0, &c);
    size_t i = 0;
    for (const val_t *t; (t = rel_next(&c, NULL)) && i < n; i += arity)
        memcpy(vals + i, t, arity * sizeof *t);
    ckpt_snapshot_add_values(s, vals, i);
}

static void put_rules(il_buf *b, const kg_graph *g) {
    codec_put_uvar(b, g->rules.n);
    il_buf text;
    il_buf_init(&text);
    for (uint32_t i = 0; i < g->rules.n; i++) {
        const kg_rule *r = g->rules.v[i];
        codec_put_str(b, r->name);
        codec_put_uvar(b, r->clauses.n);
        for (uint32_t j = 0; j < r->clauses.n; j++) {
            il_buf_clear(&text);
            il_buf_putc(&text, '+');
            iql_fmt_rule(r->clauses.v[j], &text);
            codec_put_bytes(b, text.data, text.len);
        }
    }
    il_buf_free(&text);
}

ckpt_snapshot *kg_image_snapshot(il_engine *e, uint64_t lsn) {
    ckpt_snapshot *s = ckpt_snapshot_new(lsn);
    il_buf *b = ckpt_snapshot_bytes(s);
    codec_put_uvar(b, e->graphs.n);
    for (uint32_t gi = 0; gi < e->graphs.n; gi++) {
        const kg_graph *g = e->graphs.v[gi];
        codec_put_str(b, g->name);
        codec_put_uvar(b, g->rels.n);
        for (uint32_t ri = 0; ri < g->rels.n; ri++) {
            const kg_relation *kr = g->rels.v[ri];
            codec_put_str(b, kr->name);
            codec_put_u8(b, (uint8_t)((kr->schema ? HAS_SCHEMA : 0) | (kr->data ? HAS_FACTS : 0)));
            if (kr->schema) kg_rec_put_schema(b, kr->schema);
            if (!kr->data) continue;
            codec_put_uvar(b, rel_arity(kr->data));
            codec_put_uvar(b, rel_count(kr->data));
            copy_tuples(s, kr->data);
            b = ckpt_snapshot_bytes(s);
        }
        put_rules(b, g);
    }
    uint64_t nindexes = 0;
    for (uint32_t gi = 0; gi < e->graphs.n; gi++) nindexes += e->graphs.v[gi]->indexes.n;
    if (nindexes) {
        codec_put_uvar(b, nindexes);
        for (uint32_t gi = 0; gi < e->graphs.n; gi++)
            for (uint32_t i = 0; i < e->graphs.v[gi]->indexes.n; i++) {
                codec_put_str(b, e->graphs.v[gi]->name);
                kg_rec_put_index(b, &e->graphs.v[gi]->indexes.v[i]->def);
            }
    }
    return s;
}

/* ---- loading ---- */

static bool load_facts(codec_reader *r, kg_graph *g, kg_relation *kr) {
    uint64_t arity = codec_get_uvar(r), n = codec_get_uvar(r);
    /* every value takes at least a byte: a count beyond that is damage, not data */
    if (!r->ok || arity > REL_MAX_ARITY) return false;
    /* a relation of no columns holds at most the empty tuple */
    if (arity == 0 ? n > 1 : n > (size_t)(r->end - r->p) / arity) return false;
    rel_t *rel = kg_rel_data(g, kr, (uint32_t)arity);
    if (rel_arity(rel) != arity) return false;
    size_t nv = (size_t)(n * arity);
    val_t *vals = malloc((nv ? nv : 1) * sizeof *vals);
    for (size_t i = 0; i < nv; i++) vals[i] = codec_get_val(r);
    bool ok = r->ok;
    /* Tuples were written in word order; where the words of their values are the same
       in this process (numbers, booleans), the tree is built in one pass. */
    if (ok && arity == 0 && n)
        rel_insert(rel, vals);
    else if (ok && !rel_load_sorted(rel, vals, (size_t)n))
        for (size_t i = 0; i < n; i++) rel_insert(rel, vals + i * arity);
    free(vals);
    return ok;
}

static bool load_relation(codec_reader *r, kg_graph *g) {
    char *name = codec_get_strdup(r);
    uint8_t flags = codec_get_u8(r);
    bool ok = r->ok && !(flags & ~(HAS_SCHEMA | HAS_FACTS));
    kg_relation *kr = ok ? kg_rel_get(g, name) : NULL;
    if (ok && (flags & HAS_SCHEMA)) {
        il_arena ar;
        il_arena_init(&ar);
        iql_schema sc;
        ok = kg_rec_get_schema(r, &ar, &sc);
        if (ok) kr->schema = kg_schema_copy(&g->arena, &sc);
        il_arena_destroy(&ar);
    }
    if (ok && (flags & HAS_FACTS)) ok = load_facts(r, g, kr);
    free(name);
    return ok;
}

static bool load_rule(codec_reader *r, kg_graph *g) {
    char *name = codec_get_strdup(r);
    uint64_t n = codec_get_uvar(r);
    bool ok = r->ok;
    kg_rule *rule = ok ? kg_rule_get(g, name) : NULL;
    for (uint64_t i = 0; ok && i < n; i++) {
        size_t len;
        const char *text = codec_get_bytes(r, &len);
        if (!r->ok) return free(name), false;
        il_arena ar;
        il_arena_init(&ar);
        iql_stmt st;
        const char *err = NULL;
        ok = iql_parse(&ar, text, len, &st, &err) && st.kind == IQL_STMT_PERSIST_RULE &&
             strcmp(st.u.rule.head.rel, name) == 0;
        if (ok) kg_rule_add_clause(g, rule, &st.u.rule);
        il_arena_destroy(&ar);
    }
    free(name);
    return ok;
}

bool kg_image_load(il_engine *e, const void *image, size_t len) {
    codec_reader r;
    codec_reader_init(&r, image, len);
    uint64_t ngraphs = codec_get_uvar(&r);
    bool ok = r.ok;
    for (uint64_t gi = 0; ok && gi < ngraphs; gi++) {
        char *name = codec_get_strdup(&r);
        if (!r.ok) return false;
        kg_graph *g = kg_graph_find(e, name);
        if (!g) g = kg_graph_create(e, name);
        free(name);
        uint64_t nrels = codec_get_uvar(&r);
        for (uint64_t i = 0; r.ok && ok && i < nrels; i++) ok = load_relation(&r, g);
        uint64_t nrules = ok ? codec_get_uvar(&r) : 0;
        for (uint64_t i = 0; r.ok && ok && i < nrules; i++) ok = load_rule(&r, g);
        ok = ok && r.ok;
    }
    uint64_t nindexes = ok && !codec_at_end(&r) ? codec_get_uvar(&r) : 0;
    for (uint64_t i = 0; ok && r.ok && i < nindexes; i++) {
        char *gname = codec_get_strdup(&r);
        kg_index_def d;
        kg_graph *g = gname ? kg_graph_find(e, gname) : NULL;
        ok = g && kg_rec_get_index(&r, &d);
        if (ok) {
            kg_index_drop(g, d.name);
            kg_index_add(g, &d);
            kg_index_def_free(&d);
        }
        free(gname);
    }
    return ok && r.ok && codec_at_end(&r);
}

void kg_image_reset(il_engine *e) {
    while (e->graphs.n) kg_graph_drop(e, e->graphs.v[e->graphs.n - 1]);
    kg_graph_create(e, "default");
}
