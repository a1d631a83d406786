/* Row provenance of a query on a session with facts or rules of its own (protocol.md 2.4,
 * `row_provenance` and `metadata`): each row is persistent when the graph's stored facts
 * and persistent rules alone give it, ephemeral when only the session's do.
 *
 * The relations the query reads (through persistent and session rules, transitively) say
 * which of the session's facts and rules can reach it. When none can, every row is
 * persistent and the query runs as any other. Otherwise it runs once, in two steps
 * (prov_delta.c): its program, planned over the graph's rules and the session's, first
 * runs without the session's clauses and facts, which gives the graph's own answer (the
 * persistent candidates); then the session's facts and rules are applied to that state
 * stratum by stratum, only to the strata they reach: as an insertion delta where they
 * only add, and by evaluating a stratum again where it reads what they change through a
 * negation or an aggregate, or reads a relation that lost rows. A row of the answer is
 * persistent when the graph's answer has it, ephemeral otherwise; rows of the graph's
 * answer the session takes away are not in the answer.
 *
 * Some programs are not run that way (prov_delta_sound): a recursion the session may take
 * tuples from or that reads what it changes through a negation or an aggregate
 * (evaluating it again by the delta's clause steps is far slower than a run), an unstratified
 * program (session rules in a cycle through a negation or an aggregate), a clause of the
 * session that cannot be compiled. (Session facts of a relation that also has rules join
 * it through the clause of its stored facts, which the program then has even while the
 * graph stores none: plan_source.facts_apart.) Then, as before,
 * the query runs with the session and once more without it, and a row is persistent when the second
 * run has it too. */
#include <stdlib.h>
#include <string.h>

#include "base/json_str.h"
#include "exec/tuplesort.h"
#include "kg/kg.h"

static bool has_name(const kg_name_vec *v, const char *name) {
    for (uint32_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], name) == 0) return true;
    return false;
}

static void add_body(kg_name_vec *todo, const iql_rule *r) {
    for (uint32_t i = 0; i < r->nbody; i++)
        if (r->body[i].kind != IQL_LIT_CMP && !has_name(todo, r->body[i].atom.rel))
            il_vec_push(*todo, r->body[i].atom.rel);
}

/* The session's facts (relations) and rules (clauses) that the query
 * can read. */
static void session_reach(il_session *s, const iql_rule *q, kg_name_vec *sources,
                          uint32_t *nrules) {
    kg_name_vec todo = {0};
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

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* `metadata`, the sources sorted by name. */
static void metadata(il_result *r, kg_name_vec *sources, uint32_t nrules) {
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

const char *kg_query_rows_split(il_session *s, const iql_rule *q, val_t **rows, size_t *nrows,
                                uint32_t *arity, kg_split *split) {
    session_reach(s, q, &split->sources, &split->nrules);
    split->rows = NULL;
    split->nrows = 0;
    if (!split->sources.n && !split->nrules) {
        split->kind = KG_SPLIT_ALL_PERSISTENT;
        return kg_query_rows(s, q, true, rows, nrows, arity);
    }
    const char *err = kg_query_rows_delta(s, q, rows, nrows, arity, split);
    if (err || split->kind == KG_SPLIT_EPHEMERAL) return err;
    /* not sound as a delta: the graph's answer by a run of its own */
    err = kg_query_rows(s, q, true, rows, nrows, arity);
    if (err || !*nrows) return err; /* no row to tell apart */
    uint32_t parity;
    const char *perr = kg_query_rows(s, q, false, &split->rows, &split->nrows, &parity);
    if (perr || (split->nrows && parity != *arity)) {
        /* no row is known to hold without the session */
        il_mem_free(split->rows);
        split->rows = NULL;
        split->nrows = 0;
    }
    return NULL;
}

void kg_split_free(kg_split *split) {
    il_mem_free(split->rows);
    split->rows = NULL;
    split->nrows = 0;
    il_vec_free(split->sources);
}

void kg_provenance(il_result *r, kg_split *split) {
    if (r->kind != IL_RESULT_TABLE) return;
    r->provenance = calloc(r->nrows + 1, 1);
    uint32_t w = (uint32_t)r->width;
    for (size_t i = 0; i < r->nrows; i++) {
        /* a row of no columns is the one row there is */
        bool listed =
            w ? kg_rows_have(split->rows, split->nrows, w, &r->cells.v[i * w]) : split->nrows > 0;
        bool persistent = split->kind == KG_SPLIT_ALL_PERSISTENT ||
                          (split->kind == KG_SPLIT_EPHEMERAL ? !listed : listed);
        r->provenance[i] = persistent ? IL_PROV_PERSISTENT : IL_PROV_EPHEMERAL;
    }
    metadata(r, &split->sources, split->nrules);
}
