/* Row provenance of a query on a session with facts or rules of its own (protocol.md 2.4,
 * `row_provenance` and `metadata`): each row is persistent when the graph's stored facts
 * and persistent rules alone give it, ephemeral when only the session's do.
 *
 * The relations the query reads (through persistent and session rules, transitively) say
 * which of the session's facts and rules can reach it. When none can, every row is
 * persistent and nothing more runs. Otherwise the query runs once more without the
 * session (its program is the graph's cached one), and a row is persistent when that run
 * has it too. */
#include <stdlib.h>
#include <string.h>

#include "base/json_str.h"
#include "exec/tuplesort.h"
#include "kg/kg.h"

typedef IL_VEC(const char *) name_vec;

static bool has_name(const name_vec *v, const char *name) {
    for (uint32_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], name) == 0) return true;
    return false;
}

static void add_body(name_vec *todo, const iql_rule *r) {
    for (uint32_t i = 0; i < r->nbody; i++)
        if (r->body[i].kind != IQL_LIT_CMP && !has_name(todo, r->body[i].atom.rel))
            il_vec_push(*todo, r->body[i].atom.rel);
}

/* The session's facts (relations) and rules (clauses) that the query
 * can read. */
static void session_reach(il_session *s, const iql_rule *q, name_vec *sources, uint32_t *nrules) {
    name_vec todo = {0};
    add_body(&todo, q);
    *nrules = 0;
    for (uint32_t i = 0; i < todo.n; i++) {
        const char *rel = todo.v[i];
        sess_facts *f = sess_facts_find(s, rel);
        if (f && rel_count(f->set) && !has_name(sources, rel)) il_vec_push(*sources, rel);
        for (uint32_t j = 0; j < s->rules.n; j++) {
            if (strcmp(s->rules.v[j]->head.rel, rel) != 0) continue;
            (*nrules)++;
            add_body(&todo, s->rules.v[j]);
        }
        kg_rule *r = kg_rule_find(s->kg, rel);
        for (uint32_t j = 0; r && j < r->clauses.n; j++) add_body(&todo, r->clauses.v[j]);
    }
    il_vec_free(todo);
}

static int words_cmp(const val_t *a, const val_t *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Whether the row is among the n rows (sorted by tuple_sort, word order). */
static bool has_row(const val_t *rows, size_t n, uint32_t w, const val_t *row) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = words_cmp(&rows[mid * w], row, w);
        if (c == 0) return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* `metadata`, the sources sorted by name. */
static void metadata(il_result *r, name_vec *sources, uint32_t nrules) {
    if (sources->n > 1) qsort(sources->v, sources->n, sizeof *sources->v, cmp_names);
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "{\"has_ephemeral\":true");
    if (sources->n) {
        il_buf_puts(&b, ",\"ephemeral_sources\":[");
        for (uint32_t i = 0; i < sources->n; i++) {
            if (i) il_buf_putc(&b, ',');
            il_json_str(&b, sources->v[i], strlen(sources->v[i]));
        }
        il_buf_putc(&b, ']');
    }
    if (sources->n || nrules) {
        il_buf w;
        il_buf_init(&w);
        il_buf_puts(&b, ",\"warnings\":[");
        if (sources->n) {
            il_buf_printf(&w, "Results include session data from %u relation%s: ", sources->n,
                          sources->n == 1 ? "" : "s");
            for (uint32_t i = 0; i < sources->n; i++)
                il_buf_printf(&w, "%s%s", i ? ", " : "", sources->v[i]);
            il_json_str(&b, w.data, w.len);
        }
        if (nrules) {
            il_buf_clear(&w);
            il_buf_printf(&w, "Results use %u session rule%s", nrules, nrules == 1 ? "" : "s");
            if (sources->n) il_buf_putc(&b, ',');
            il_json_str(&b, w.data, w.len);
        }
        il_buf_putc(&b, ']');
        il_buf_free(&w);
    }
    il_buf_putc(&b, '}');
    r->metadata_json = il_buf_take(&b);
}

void kg_provenance(il_session *s, const iql_rule *q, il_result *r) {
    if (r->kind != IL_RESULT_TABLE) return;
    name_vec sources = {0};
    uint32_t nrules;
    session_reach(s, q, &sources, &nrules);
    r->provenance = calloc(r->nrows + 1, 1);
    if (!sources.n && !nrules) {
        memset(r->provenance, IL_PROV_PERSISTENT, r->nrows);
    } else if (r->nrows && r->width) {
        val_t *rows;
        size_t n;
        uint32_t arity;
        const char *err = kg_query_rows(s, q, false, &rows, &n, &arity);
        bool ok = !err && (n == 0 || arity == r->width);
        for (size_t i = 0; i < r->nrows; i++)
            r->provenance[i] = ok && has_row(rows, n, (uint32_t)r->width, &r->cells.v[i * r->width])
                                   ? IL_PROV_PERSISTENT
                                   : IL_PROV_EPHEMERAL;
        il_mem_free(rows);
    }
    metadata(r, &sources, nrules);
    il_vec_free(sources);
}
