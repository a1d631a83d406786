/* Unit tests of prepared statements (il_prepare, src/kg/prepared.c): a program is split
 * as a script is and each statement parsed once; the kinds, meta commands, arguments,
 * graphs, transaction parts and relations read and written are the parser's; running a
 * prepared statement answers as il_execute does and parses nothing; `.why` and its kin
 * parse their query with the statement; a NUL is data as for il_execute. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "inputlayer.h"
#include "unit_fixture.h"

TestSuite(prepared, .init = unit_suite_open, .fini = unit_suite_close);

/* The result's lines or rows as text, for comparing two results. */
static char *text_of(il_result *r) {
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b, "%d:", (int)il_result_kind_of(r));
    for (size_t i = 0; i < il_result_nlines(r); i++) il_buf_printf(&b, "%s|", il_result_line(r, i));
    for (size_t i = 0; i < il_result_nrows(r); i++) {
        size_t w;
        const il_value *row = il_result_row(r, i, &w);
        for (size_t k = 0; k < w; k++) {
            char cell[128];
            il_value_format(row[k], cell, sizeof cell);
            il_buf_printf(&b, "%s,", cell);
        }
        il_buf_puts(&b, ";");
    }
    return il_buf_take(&b);
}

typedef struct rels {
    il_buf b;
} rels;

static void note_rel(void *ctx, const char *name, bool writes) {
    il_buf_printf(&((rels *)ctx)->b, "%s%s ", writes ? "+" : "", name);
}

static char *relations(const il_prepared *p, size_t i) {
    rels r;
    il_buf_init(&r.b);
    il_prepared_relations(p, i, note_rel, &r);
    il_buf_puts(&r.b, "");
    return il_buf_take(&r.b);
}

static void check_relations(const il_prepared *p, size_t i, const char *want) {
    char *got = relations(p, i);
    cr_assert_str_eq(got, want, "statement %zu", i);
    free(got);
}

Test(prepared, kinds_and_what_authorization_needs) {
    const char *prog = "+e[(1, 2), (2, 3)]\n"
                       "?e(1, Y), f(Y)\n"
                       "-e(1, 2)\n"
                       "+p(X, Z) <- e(X, Y), p(Y, Z), !q(X)\n"
                       "-e(X, Y) <- e(X, Y), X > 3\n"
                       "s(X) <- e(X, _)\n"
                       "t(1)\n"
                       ".kg use other\n"
                       ".kg acl grant g1 bob viewer\n"
                       ".why ?e(1, Y)\n"
                       "?e(X Y)\n"
                       "?e(1, \n";
    uint64_t before = il_statements_parsed();
    il_prepared *p = il_prepare(prog, strlen(prog));
    cr_assert_eq(il_prepared_count(p), 12);
    /* every statement once, the unterminated one not at all, `.why`'s query with it */
    cr_assert_eq(il_statements_parsed() - before, 11);
    il_statement_kind want[] = {
        IL_STATEMENT_INSERT,       IL_STATEMENT_QUERY,       IL_STATEMENT_DELETE,
        IL_STATEMENT_RULE,         IL_STATEMENT_COND_DELETE, IL_STATEMENT_SESSION_RULE,
        IL_STATEMENT_SESSION_FACT, IL_STATEMENT_META,        IL_STATEMENT_META,
        IL_STATEMENT_META,         IL_STATEMENT_INVALID,     IL_STATEMENT_UNTERMINATED,
    };
    for (size_t i = 0; i < 12; i++)
        cr_assert_eq(il_prepared_kind(p, i), want[i], "statement %zu", i);
    size_t len;
    cr_assert_str_eq(il_prepared_text(p, 1, &len), "?e(1, Y), f(Y)");
    cr_assert_eq(len, strlen("?e(1, Y), f(Y)"));
    cr_assert_eq(il_prepared_meta(p, 0), IL_META_NONE);
    cr_assert_eq(il_prepared_meta(p, 7), IL_META_KG_USE);
    cr_assert_str_eq(il_prepared_graph(p, 7), "other");
    cr_assert_eq(il_prepared_meta(p, 8), IL_META_KG_ACL_GRANT);
    cr_assert_str_eq(il_prepared_graph(p, 8), "g1");
    cr_assert_str_eq(il_prepared_arg(p, 8, 1), "bob");
    cr_assert_str_eq(il_prepared_arg(p, 8, 2), "viewer");
    cr_assert_null(il_prepared_graph(p, 9));
    cr_assert_eq(il_prepared_meta(p, 9), IL_META_WHY);
    cr_assert_str_eq(il_prepared_meta_text(p, 9), "?e(1, Y)");
    cr_assert_not_null(il_prepared_error(p, 10));
    cr_assert_null(il_prepared_error(p, 0));
    cr_assert_eq(il_prepared_txn_part(p, 0), IL_TXN_WRITES);
    cr_assert_eq(il_prepared_txn_part(p, 1), IL_TXN_READS);
    cr_assert_eq(il_prepared_txn_part(p, 7), IL_TXN_OUTSIDE);
    cr_assert_eq(il_prepared_txn_part(p, 10), IL_TXN_READS);
    cr_assert_eq(il_prepared_txn_part(p, 11), IL_TXN_READS);
    check_relations(p, 0, "+e ");
    check_relations(p, 1, "e f ");
    check_relations(p, 3, "+p e p q ");
    check_relations(p, 4, "+e e ");
    check_relations(p, 5, "e ");
    check_relations(p, 7, "");
    il_prepared_free(p);
}

Test(prepared, runs_as_execute_without_parsing) {
    const char *prog = "+e[(1, 2), (2, 3), (3, 4)]\n"
                       "+p(X, Y) <- e(X, Y)\n"
                       "+p(X, Z) <- e(X, Y), p(Y, Z)\n"
                       "?p(1, Y)\n"
                       ".why ?p(1, Y)\n"
                       ".why_not e(9, 9)\n"
                       ".debug ?p(1, Y)\n"
                       ".why ?p(1 Y)\n"
                       "?e(X Y)\n"
                       "+e(1, Y)\n"
                       "?e(1, \n";
    il_prepared *p = il_prepare(prog, strlen(prog));
    size_t n = il_prepared_count(p);
    cr_assert_eq(n, 11);
    /* the same statements on a second engine, through il_execute */
    il_session *s2;
    il_engine *e2 = unit_engine_open(&s2);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *text = il_prepared_text(p, i, &len);
        uint64_t before = il_statements_parsed();
        il_result *a = il_execute_prepared(unit_session, p, i);
        cr_assert_eq(il_statements_parsed(), before, "statement %zu parsed again", i);
        il_result *b = il_execute(s2, text, len);
        char *ta = text_of(a), *tb = text_of(b);
        if (il_prepared_kind(p, i) != IL_STATEMENT_UNTERMINATED)
            cr_assert_str_eq(ta, tb, "statement %zu: %s", i, text);
        else
            cr_assert_eq(il_result_kind_of(a), IL_RESULT_PARSE_ERROR);
        if (i == 4) cr_assert_not_null(il_result_proof_trees(a));
        free(ta);
        free(tb);
        il_result_free(a);
        il_result_free(b);
    }
    il_result *q = il_query_stored_prepared(unit_session, p, 3, 1);
    cr_assert_eq(il_result_nrows(q), 1);
    cr_assert_eq(il_result_total_rows(q), 3);
    il_result_free(q);
    unit_engine_close(e2);
    il_prepared_free(p);
}

Test(prepared, nul_is_data) {
    const char prog[] = "+s(\"a\0b\")\n?s(X)";
    il_prepared *p = il_prepare(prog, sizeof prog - 1);
    cr_assert_eq(il_prepared_count(p), 2);
    size_t len;
    il_prepared_text(p, 0, &len);
    cr_assert_eq(len, strlen("+s(\"a") + 1 + strlen("b\")"));
    il_result *a = il_execute_prepared(unit_session, p, 0);
    il_result *b = il_execute(unit_session, il_prepared_text(p, 0, NULL), len);
    cr_assert_eq(il_result_kind_of(a), il_result_kind_of(b));
    il_result_free(a);
    il_result_free(b);
    il_prepared_free(p);
}

Test(prepared, empty_program) {
    il_prepared *p = il_prepare("// nothing\n", 11);
    cr_assert_eq(il_prepared_count(p), 0);
    il_prepared_free(p);
    size_t n = il_engine_graphs(unit_engine, NULL, NULL);
    cr_assert_geq(n, 1);
    il_result *r = il_session_use(unit_session, "nosuch");
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_ERROR);
    il_result_free(r);
}
