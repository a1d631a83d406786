/* Programs cached by query shape (plan/params.h, kg.h): queries that differ only in
 * their int and string constants share one compiled program, which answers each of them
 * exactly as a program of its own would (numeric constants matching both numeric forms,
 * equal constants staying equal), and shapes whose programs depend on the values are
 * cached by text as before. The reference is evaluation in a session with a session
 * fact, whose queries are never cached. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kg/kg.h"
#include "unit_fixture.h"

static il_session *reference;

static void open_suite(void) {
    unit_suite_open();
    unit_run(unit_session, ".kg create g");
    unit_run(unit_session, ".kg use g");
    reference = il_session_open(unit_engine);
    unit_run(reference, ".kg use g");
}

TestSuite(plan_params, .init = open_suite, .fini = unit_suite_close);

/* q answered through the plan cache as from scratch; returns its row count */
static size_t same_as_fresh(const char *q) {
    unit_rows got = unit_rows_of(unit_session, q), want = unit_rows_fresh(reference, q);
    cr_assert(unit_rows_same(&got, &want), "%s: %zu rows, from scratch %zu", q, got.n, want.n);
    size_t n = got.n;
    free(got.v);
    free(want.v);
    return n;
}

static kg_plan_entry *entry(const char *key) {
    kg_graph *g = unit_session->kg;
    for (uint32_t i = 0; i < KG_PLAN_CACHE_SIZE; i++)
        if (g->plans[i].key && strcmp(g->plans[i].key, key) == 0) return &g->plans[i];
    return NULL;
}

static uint32_t entries(void) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < KG_PLAN_CACHE_SIZE; i++) n += unit_session->kg->plans[i].key != NULL;
    return n;
}

Test(plan_params, lookups_by_key_share_one_program_and_answer_as_their_own) {
    /* 3.0 and 6.0 are stored as floats: the constants 3 and 6 match them numerically,
       through the other numeric form the shared program takes for each value */
    unit_run(unit_session, "+e[(1, 2), (2, 3), (3.0, 4), (4, 1), (5, 6.0), (6.0, 6.0), (7, 7)]");
    unit_run(unit_session, "+reach(X, Y) <- e(X, Y)");
    unit_run(unit_session, "+reach(X, Z) <- reach(X, Y), e(Y, Z)");
    unit_run(unit_session, "+big(X) <- e(X, Y), Y > 3");
    static const char *const shapes[] = {
        "?e(%d, Y)",          "?reach(%d, Y)",        "?reach(X, %d)", "?e(X, Y), Y > %d",
        "?e(%d, Y), !big(Y)", "?reach(X, Y), X = %d", "?big(%d)",      "?e(X, %d), reach(X, X)"};
    size_t rows = 0;
    for (int k = 0; k <= 8; k++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            char q[64];
            snprintf(q, sizeof q, shapes[s], k);
            rows += same_as_fresh(q);
        }
    cr_assert_gt(rows, 40);
    /* one program per shape, none per text */
    cr_assert_eq(entries(), sizeof shapes / sizeof *shapes);
    /* (the rules are read as maintained views: read_policy.h) */
    kg_plan_entry *e = entry("[maintained] __query__(_c0, Y) <- reach(_c0, Y), _c0 = $0i");
    cr_assert(e && e->prog && e->params.n > 0);
    cr_assert_null(entry("[maintained] __query__(_c0, Y) <- reach(_c0, Y), _c0 = 3"));
}

Test(plan_params, string_keys) {
    unit_run(unit_session,
             "+knows[(\"alice\", \"bob\"), (\"bob\", \"carol\"), (\"carol\", \"alice\"), "
             "(\"dave\", \"dave\")]");
    unit_run(unit_session, "+friend(X, Y) <- knows(X, Y)");
    unit_run(unit_session, "+friend(X, Z) <- friend(X, Y), knows(Y, Z)");
    static const char *const names[] = {"alice", "bob", "carol", "dave", "erin", ""};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char q[96];
        snprintf(q, sizeof q, "?friend(\"%s\", Y)", names[i]);
        same_as_fresh(q);
        snprintf(q, sizeof q, "?knows(X, Y), Y = \"%s\", !knows(Y, X)", names[i]);
        same_as_fresh(q);
    }
    cr_assert_eq(entries(), 2);
}

Test(plan_params, equal_constants_are_one_parameter) {
    unit_run(unit_session, "+p[(1, 1), (1, 2), (2, 2), (2, 1), (3, 3.0)]");
    for (int a = 0; a <= 3; a++)
        for (int b = 0; b <= 3; b++) {
            char q[64];
            snprintf(q, sizeof q, "?p(%d, %d)", a, b);
            same_as_fresh(q);
            snprintf(q, sizeof q, "?p(X, Y), X = %d, Y = %d", a, b);
            same_as_fresh(q);
        }
    /* `?p(1, 1)` and `?p(1, 2)` are shapes of their own: two of each form */
    cr_assert_eq(entries(), 4);
    cr_assert_not_null(entry("__query__(_c0, _c1) <- p(_c0, _c1), _c0 = $0i, _c1 = $0i"));
    cr_assert_not_null(entry("__query__(_c0, _c1) <- p(_c0, _c1), _c0 = $0i, _c1 = $1i"));
}

Test(plan_params, a_shape_whose_programs_depend_on_the_values_is_cached_by_text) {
    unit_run(unit_session, "+emb(id: int, vec: vector)");
    unit_run(unit_session, "+emb[(1, [1.0, 0.0]), (2, [0.0, 1.0]), (3, [0.7, 0.7])]");
    unit_run(unit_session, ".index create e1 on emb(vec) metric cosine");
    /* a vector search compiles its arguments into how it searches */
    for (int k = 1; k <= 3; k++) {
        char q[96];
        snprintf(q, sizeof q, "?emb(%d, V), hnsw_nearest(\"e1\", V, 2, Id, D)", k);
        cr_assert_eq(same_as_fresh(q), 2);
    }
    kg_plan_entry *e = entry("__query__(_c0, V, Id, D) <- emb(_c0, V), _c0 = $0i, "
                             "hnsw_nearest(\"e1\", V, 2, Id, D)");
    cr_assert(e && !e->prog, "marked as cached by text");
    cr_assert(entry("__query__(_c0, V, Id, D) <- emb(_c0, V), _c0 = 2, "
                    "hnsw_nearest(\"e1\", V, 2, Id, D)"));
    /* the first query's program went with the shape's entry when the second decided it */
    cr_assert_eq(entries(), 3);
}

Test(plan_params, a_shape_program_goes_with_the_rules_it_was_built_on) {
    unit_run(unit_session, "+e[(1, 2), (2, 3)]");
    unit_run(unit_session, "+r(X, Y) <- e(X, Y)");
    cr_assert_eq(same_as_fresh("?r(1, Y)"), 1);
    unit_run(unit_session, "+r(X, Z) <- e(X, Y), e(Y, Z)");
    cr_assert_eq(same_as_fresh("?r(1, Y)"), 2);
    cr_assert_eq(same_as_fresh("?r(2, Y)"), 1);
}

Test(plan_params, a_query_with_very_many_constants_is_cached_by_text) {
    unit_run(unit_session, "+p[(1, 1), (70, 2)]");
    il_buf q;
    il_buf_init(&q);
    il_buf_puts(&q, "?p(X, Y)");
    for (int k = 2; k <= 66; k++) il_buf_printf(&q, ", X != %d", k); /* 65 values */
    cr_assert_eq(same_as_fresh(il_buf_str(&q)), 2);
    cr_assert_eq(entries(), 1);
    kg_graph *g = unit_session->kg;
    for (uint32_t i = 0; i < KG_PLAN_CACHE_SIZE; i++)
        if (g->plans[i].key) cr_assert(strstr(g->plans[i].key, "X != 66") != NULL);
    il_buf_free(&q);
}

Test(plan_params, atoms_without_arguments_beside_parameters) {
    unit_run(unit_session, "+e[(1, 2), (2, 3)]");
    unit_run(unit_session, "+g[(1), (2)]");
    /* an atom written `e()` has no argument list at all */
    for (int k = 1; k <= 3; k++) {
        char q[64];
        snprintf(q, sizeof q, "?e(%d, X), !e()", k);
        same_as_fresh(q);
    }
    unit_run(unit_session, "-g(1) <- e()");
    unit_run(unit_session, "-g(2) <- e()");
    unit_run(unit_session, "-g(3) <- e()"); /* the shape's program, with no columns */
    cr_assert_eq(same_as_fresh("?g(X)"), 2);
}
