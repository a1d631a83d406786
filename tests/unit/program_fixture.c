/* Stored relations and parsed rules for the unit tests of plans and evaluation
 * (program_fixture.h). */
#include "program_fixture.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "iql/parser.h"
#include "plan/build.h"
#include "value/value.h"

il_arena pf_arena;
const iql_rule *pf_rules[PF_MAX_RULES];
uint32_t pf_nrules;

static struct {
    const char *name;
    rel_t *rel;
} rels[PF_MAX_RELS];
static uint32_t nrels;

void pf_setup(void) {
    il_arena_init(&pf_arena);
    nrels = 0;
    pf_nrules = 0;
}

void pf_teardown(void) {
    for (uint32_t i = 0; i < nrels; i++) rel_free(rels[i].rel);
    nrels = 0;
    il_arena_destroy(&pf_arena);
    val_shutdown();
}

const rel_t *pf_lookup(void *ctx, const char *name) {
    (void)ctx;
    for (uint32_t i = 0; i < nrels; i++)
        if (strcmp(rels[i].name, name) == 0) return rels[i].rel;
    return NULL;
}

rel_t *pf_stored_rel(const char *name, uint32_t arity) {
    for (uint32_t i = 0; i < nrels; i++)
        if (strcmp(rels[i].name, name) == 0) return rels[i].rel;
    cr_assert(nrels < PF_MAX_RELS);
    rels[nrels].name = name;
    rels[nrels].rel = rel_new(arity);
    return rels[nrels++].rel;
}

void pf_fact1(const char *name, int64_t a) {
    val_t t[1] = {val_int(a)};
    rel_insert(pf_stored_rel(name, 1), t);
}

void pf_fact2(const char *name, int64_t a, int64_t b) {
    val_t t[2] = {val_int(a), val_int(b)};
    rel_insert(pf_stored_rel(name, 2), t);
}

iql_rule *pf_parse_rule(const char *text, iql_stmt_kind want) {
    iql_stmt st;
    const char *err = NULL;
    bool ok = iql_parse(&pf_arena, text, strlen(text), &st, &err);
    cr_assert(ok, "parse of `%s` failed: %s", text, err ? err : "?");
    cr_assert_eq(st.kind, want, "`%s` parsed as kind %d", text, (int)st.kind);
    iql_rule *r = il_arena_alloc(&pf_arena, sizeof *r);
    *r = st.u.rule;
    return r;
}

void pf_rule(const char *text) {
    cr_assert(pf_nrules < PF_MAX_RULES);
    pf_rules[pf_nrules++] = pf_parse_rule(text, IQL_STMT_PERSIST_RULE);
}

pf_outcome pf_run(const char *query, exec_guard *g) {
    const iql_rule *q = pf_parse_rule(query, IQL_STMT_SESSION_RULE);
    plan_source src = {.rules = pf_rules, .nrules = pf_nrules, .stored = pf_lookup, .ctx = NULL};
    plan_program p;
    plan_program_init(&p);
    cr_assert(plan_build(&p, &src, q), "%s", p.error);
    exec_ctx x = {.guard = g};
    pf_outcome o = {.error = exec_run(&p, &x) ? NULL : x.error, .used = x.threads_used};
    const plan_pred *qp = &p.preds.v[p.query_pred];
    o.arity = qp->arity;
    if (!o.error && qp->full && rel_count(qp->full)) {
        o.n = rel_count(qp->full);
        o.words = malloc((o.n * o.arity + 1) * sizeof *o.words);
        rel_cursor cur;
        rel_seek(qp->full, 0, NULL, 0, &cur);
        const val_t *t;
        for (size_t k = 0; (t = rel_next(&cur, NULL)); k++)
            memcpy(&o.words[k * o.arity], t, o.arity * sizeof *t);
    } else if (!o.error) {
        o.n = qp->rows.n;
        o.words = malloc((o.n * o.arity + 1) * sizeof *o.words);
        memcpy(o.words, qp->rows.tuples, o.n * o.arity * sizeof *o.words);
    }
    plan_program_free(&p);
    return o;
}
