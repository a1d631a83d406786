/* Unit tests of pinned sessions (il_session_pin, src/kg/pin.c): a pinned session reads
 * the revision of its pin, whole, while another session writes, drops and recreates;
 * maintained rows are read as they were; a query needing an index the stored relation
 * lacks gets a private copy, and the unpin adds the index; what cannot be pinned is
 * refused; a graph dropped under a pin moves the session at the unpin. (Threads: the
 * oracle test tests/threads/pinned.c.) */
#include <criterion/criterion.h>
#include <string.h>

#include "base/buf.h"
#include "exec/rel.h"
#include "inputlayer.h"
#include "kg/kg.h"
#include "unit_fixture.h"

TestSuite(pin, .init = unit_suite_open, .fini = unit_suite_close, .timeout = 60);

static void ok(il_session *s, const char *stmt) {
    unit_run(s, stmt);
}

/* A query's rows, "(1, 2) (1, 3)", or its error line. */
static char *rows(il_session *s, const char *q) {
    il_result *r = il_execute(s, q, strlen(q));
    il_buf b;
    il_buf_init(&b);
    if (il_result_kind_of(r) != IL_RESULT_TABLE) il_buf_puts(&b, il_result_line(r, 0));
    for (size_t i = 0; il_result_kind_of(r) == IL_RESULT_TABLE && i < il_result_nrows(r); i++) {
        if (i) il_buf_putc(&b, ' ');
        unit_row_text(r, i, &b);
    }
    il_result_free(r);
    return il_buf_take(&b);
}

#define EXPECT_ANSWER(s, q, want)                                                                  \
    do {                                                                                           \
        char *got_ = rows(s, q);                                                                   \
        cr_expect_str_eq(got_, want, "%s", q);                                                     \
        free(got_);                                                                                \
    } while (0)

static void chain(il_session *s) {
    ok(s, "+edge[(1, 2), (2, 3)]");
    ok(s, "+reach(X, Y) <- edge(X, Y)");
    ok(s, "+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
}

Test(pin, a_pinned_session_reads_its_revision) {
    il_session *w = il_session_open(unit_engine);
    chain(w);
    char *before = rows(unit_session, "?reach(1, Y)");
    cr_assert(il_session_pin(unit_session));
    cr_expect(il_session_pinned(unit_session));
    ok(w, "+edge(3, 4)");
    ok(w, "-edge(1, 2)");
    ok(w, "+reach(X, Y) <- edge(Y, X)");
    ok(w, ".rel drop edge");
    EXPECT_ANSWER(unit_session, "?reach(1, Y)", before);
    EXPECT_ANSWER(unit_session, "?edge(X, Y)", "(1, 2) (2, 3)");
    il_session_unpin(unit_session);
    cr_expect(!il_session_pinned(unit_session));
    char *after = rows(unit_session, "?reach(1, Y)");
    cr_expect_str_neq(after, before);
    free(after);
    free(before);
    il_session_close(w);
}

Test(pin, maintained_rows_are_read_as_pinned) {
    il_session *w = il_session_open(unit_engine);
    chain(w);
    /* an unbound read makes `reach` maintained; a pinned read then reads its rows */
    char *before = rows(unit_session, "?reach(X, Y)");
    cr_assert(il_session_pin(unit_session));
    ok(w, "+edge(3, 1)");
    EXPECT_ANSWER(unit_session, "?reach(X, Y)", before);
    EXPECT_ANSWER(unit_session, "?reach(X, 3)", "(1, 3) (2, 3)");
    il_session_unpin(unit_session);
    EXPECT_ANSWER(unit_session, "?reach(X, 3)", "(1, 3) (2, 3) (3, 3)");
    free(before);
    il_session_close(w);
}

Test(pin, an_index_the_relation_lacks_is_built_for_the_pin_and_added_at_the_unpin) {
    ok(unit_session, "+edge[(1, 2), (2, 3), (3, 4), (5, 3)]");
    ok(unit_session, "+tag[(3, \"x\"), (4, \"y\")]");
    kg_relation *edge = kg_rel_find(unit_session->kg, "edge");
    uint32_t second = 1;
    cr_assert_lt(rel_find_index(edge->data, &second, 1), 0);
    cr_assert(il_session_pin(unit_session));
    /* bound by the second column of edge: the plan wants an index on it */
    EXPECT_ANSWER(unit_session, "?tag(Y, T), edge(X, Y)",
                  "(3, \"x\", 2) (3, \"x\", 5) (4, \"y\", 3)");
    EXPECT_ANSWER(unit_session, "?edge(X, 3)", "(2, 3) (5, 3)");
    cr_expect_lt(rel_find_index(edge->data, &second, 1), 0, "the live relation is not touched");
    il_session_unpin(unit_session);
    cr_expect_geq(rel_find_index(edge->data, &second, 1), 0, "the unpin adds the index");
    EXPECT_ANSWER(unit_session, "?edge(X, 3)", "(2, 3) (5, 3)");
}

Test(pin, what_cannot_be_pinned_runs_serialized) {
    ok(unit_session, "+edge(1, 2)");
    cr_assert(il_txn_begin(unit_session));
    il_session *other = il_session_open(unit_engine);
    cr_expect(!il_session_pin(other), "a transaction is open");
    cr_assert(il_txn_commit(unit_session, NULL));
    cr_expect(il_session_pin(other));
    /* a pinned session runs queries only */
    il_result *r = il_execute(other, "+edge(2, 3)", 11);
    cr_expect_eq(il_result_kind_of(r), IL_RESULT_ERROR);
    il_result_free(r);
    il_session_unpin(other);
    EXPECT_ANSWER(other, "?edge(X, Y)", "(1, 2)");
    il_session_close(other);
}

Test(pin, a_graph_dropped_under_a_pin) {
    il_session *w = il_session_open(unit_engine);
    ok(unit_session, ".kg create g2");
    ok(unit_session, "+edge(7, 8)");
    cr_assert(il_session_pin(unit_session));
    ok(w, ".kg drop g2");
    EXPECT_ANSWER(unit_session, "?edge(X, Y)", "(7, 8)");
    cr_expect_str_eq(il_session_graph(unit_session), "g2");
    il_session_unpin(unit_session);
    cr_expect_str_eq(il_session_graph(unit_session), "default");
    EXPECT_ANSWER(unit_session, "?edge(X, Y)", "");
    il_session_close(w);
}

Test(pin, which_queries_may_run_pinned) {
    chain(unit_session);
    const char *unbound = "?reach(X, Y)", *bound = "?reach(1, Y)";
    il_prepared *u = il_prepare(unbound, strlen(unbound));
    il_prepared *b = il_prepare(bound, strlen(bound));
    cr_expect(il_prepared_pinnable(unit_session, b, 0));
    cr_expect(!il_prepared_pinnable(unit_session, u, 0), "the first unbound read makes a view");
    il_result_free(il_execute(unit_session, unbound, strlen(unbound)));
    cr_expect(il_prepared_pinnable(unit_session, u, 0), "once made, it is read as pinned rows");
    il_prepared_free(u);
    il_prepared_free(b);
}

Test(pin, the_session_layers_its_own_facts_and_rules_on_the_pin) {
    il_session *w = il_session_open(unit_engine);
    chain(w);
    ok(unit_session, "edge(3, 4)");
    ok(unit_session, "far(X) <- reach(1, X), X > 2");
    cr_assert(il_session_pin(unit_session));
    ok(w, "+edge(4, 5)");
    ok(w, "-edge(2, 3)");
    EXPECT_ANSWER(unit_session, "?reach(1, Y)", "(1, 2) (1, 3) (1, 4)");
    EXPECT_ANSWER(unit_session, "?far(X)", "(3) (4)");
    EXPECT_ANSWER(unit_session, "?reach(X, 4)", "(1, 4) (2, 4) (3, 4)");
    /* the other session sees none of it */
    EXPECT_ANSWER(w, "?reach(1, Y)", "(1, 2)");
    il_session_unpin(unit_session);
    EXPECT_ANSWER(unit_session, "?reach(1, Y)", "(1, 2)");
    il_session_close(w);
}
