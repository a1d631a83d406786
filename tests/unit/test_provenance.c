/* Unit tests of row provenance on the session path (src/kg/provenance.c, prov_delta.c):
 * each row of a query on a session with facts or rules of its own is persistent when the
 * graph's stored facts and persistent rules alone give it, ephemeral otherwise; rows are
 * told apart in one evaluation, the session's part applied as a delta over the graph's
 * answer: additions where it is monotone (a session fact feeding a recursive rule, a
 * session rule over stored facts, a row derivable both ways), a stratum evaluated again
 * where it reads what the session changes through a negation or an aggregate (rows the
 * graph had may then go, and come back a stratum later). Each case is checked against the
 * definition (the query run again without the session), and so are random programs; the
 * statement's guard stops the delta too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "inputlayer.h"
#include "kg/kg.h"
#include "unit_fixture.h"

TestSuite(provenance, .init = unit_suite_open, .fini = unit_suite_close, .timeout = 60);

static void ok(const char *stmt) {
    unit_run(unit_session, stmt);
}

/* The rows of a query, each followed by p (persistent), e (ephemeral) or ? (unknown):
 * "(1, 2)p (1, 3)e". */
static char *prov(const char *q) {
    il_result *r = il_execute(unit_session, q, strlen(q));
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE, "%s: %s", q,
                 il_result_nlines(r) ? il_result_line(r, 0) : "not a table");
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < il_result_nrows(r); i++) {
        size_t w;
        const il_value *row = il_result_row(r, i, &w);
        il_buf_puts(&b, i ? " (" : "(");
        for (size_t j = 0; j < w; j++) {
            char cell[64];
            il_value_format(row[j], cell, sizeof cell);
            il_buf_printf(&b, "%s%s", j ? ", " : "", cell);
        }
        const char *p = il_result_row_provenance(r, i);
        il_buf_printf(&b, ")%c",
                      strcmp(p, "persistent") == 0  ? 'p'
                      : strcmp(p, "ephemeral") == 0 ? 'e'
                                                    : '?');
    }
    il_result_free(r);
    return il_buf_take(&b);
}

#define EXPECT_PROV(q, want)                                                                       \
    do {                                                                                           \
        char *got_ = prov(q);                                                                      \
        cr_expect_str_eq(got_, want, "%s", q);                                                     \
        free(got_);                                                                                \
    } while (0)

/* How many evaluations of a query program a statement took. */
static uint64_t evaluations(const char *q) {
    uint64_t before = unit_session->e->queries;
    il_result_free(il_execute(unit_session, q, strlen(q)));
    return unit_session->e->queries - before;
}

/* The rows of a result, each between bars: "|(1, 2)|(1, 3)|". */
static char *rows_barred(il_result *r) {
    il_buf b;
    il_buf_init(&b);
    il_buf_putc(&b, '|');
    for (size_t i = 0; il_result_kind_of(r) == IL_RESULT_TABLE && i < il_result_nrows(r); i++) {
        unit_row_text(r, i, &b);
        il_buf_putc(&b, '|');
    }
    return il_buf_take(&b);
}

/* Checks the query's provenance against the definition: a row is persistent exactly when
 * the graph's stored facts and persistent rules alone give it (the query run again without
 * the session's facts and rules), ephemeral otherwise. */
static void expect_definition(il_session *s, const char *q, const char *context) {
    il_result *got = il_execute(s, q, strlen(q));
    il_result *stored = il_query_stored(s, q, strlen(q), 0);
    cr_assert_eq(il_result_kind_of(got), IL_RESULT_TABLE, "%s %s", context, q);
    char *graph = rows_barred(stored);
    for (size_t i = 0; i < il_result_nrows(got); i++) {
        il_buf row;
        il_buf_init(&row);
        il_buf_putc(&row, '|');
        unit_row_text(got, i, &row);
        il_buf_putc(&row, '|');
        bool held = strstr(graph, il_buf_str(&row)) != NULL;
        cr_expect_str_eq(il_result_row_provenance(got, i), held ? "persistent" : "ephemeral",
                         "%s %s row %s (the graph's rows: %s)", context, q, il_buf_str(&row),
                         graph);
        il_buf_free(&row);
    }
    free(graph);
    il_result_free(got);
    il_result_free(stored);
}

/* The query's provenance as EXPECT_PROV writes it, in one evaluation, and as defined. */
#define EXPECT_ONE_RUN(q, want)                                                                    \
    do {                                                                                           \
        EXPECT_PROV(q, want);                                                                      \
        uint64_t runs_ = evaluations(q);                                                           \
        cr_expect_eq(runs_, 1, "%s: %llu evaluations", q, (unsigned long long)runs_);              \
        expect_definition(unit_session, q, "");                                                    \
    } while (0)

static void chain(void) {
    ok("+edge[(1, 2), (2, 3)]");
    ok("+reach(X, Y) <- edge(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
}

Test(provenance, a_session_fact_feeds_a_recursive_persistent_rule) {
    chain();
    ok("edge(3, 4)");
    ok("edge(4, 5)");
    EXPECT_PROV("?reach(1, Y)", "(1, 2)p (1, 3)p (1, 4)e (1, 5)e");
    EXPECT_PROV("?reach(X, 4)", "(1, 4)e (2, 4)e (3, 4)e");
    EXPECT_PROV("?reach(X, Y), Y < 4", "(1, 2)p (1, 3)p (2, 3)p");
    EXPECT_PROV("?edge(X, Y)", "(1, 2)p (2, 3)p (3, 4)e (4, 5)e");
}

Test(provenance, a_session_rule_over_persistent_facts) {
    chain();
    ok("hop2(X, Z) <- edge(X, Y), edge(Y, Z)");
    EXPECT_PROV("?hop2(X, Z)", "(1, 3)e");
    /* a session rule adding to a persistent rule's relation */
    ok("reach(X, Y) <- edge(Y, X)");
    EXPECT_PROV("?reach(X, Y)", "(1, 2)p (1, 3)p (2, 1)e (2, 2)e (2, 3)p (3, 2)e (3, 3)e");
}

Test(provenance, a_row_derivable_both_ways_is_persistent) {
    chain();
    /* reach(1, 3) holds through 2 without the session: the shortcut changes nothing */
    ok("edge(1, 3)");
    EXPECT_PROV("?reach(1, Y)", "(1, 2)p (1, 3)p");
    /* a session fact that repeats a stored one */
    ok("edge(1, 2)");
    EXPECT_PROV("?edge(1, Y)", "(1, 2)p (1, 3)e");
    /* a session rule that derives what a persistent one does */
    ok("reach(X, Y) <- edge(X, Y)");
    EXPECT_PROV("?reach(X, 3)", "(1, 3)p (2, 3)p");
}

Test(provenance, rows_are_told_apart_in_one_evaluation) {
    chain();
    ok("edge(3, 4)");
    cr_expect_eq(evaluations("?reach(1, Y)"), 1);
    ok("far(X) <- reach(1, X), X > 2");
    cr_expect_eq(evaluations("?far(X)"), 1);
    /* every row of a session rule is the session's */
    EXPECT_PROV("?far(X)", "(3)e (4)e");
    cr_expect_eq(evaluations("?reach(1, X), X > 2"), 1);
    EXPECT_PROV("?reach(1, X), X > 2", "(1, 3)p (1, 4)e");
}

Test(provenance, a_negation_over_an_unchanged_relation_is_a_delta) {
    ok("+node[(1), (2), (3)]");
    ok("+blocked[(2)]");
    ok("+open(X) <- node(X), !blocked(X)");
    ok("node(4)");
    EXPECT_PROV("?open(X)", "(1)p (3)p (4)e");
    cr_expect_eq(evaluations("?open(X)"), 1);
}

Test(provenance, a_negation_over_a_changed_relation_is_one_evaluation) {
    chain();
    ok("+node[(1), (2), (3), (4)]");
    ok("+unreached(X) <- node(X), !reach(1, X)");
    /* without the session 1 and 4 are unreached; with edge(3, 4), a recursion away from
       the negation, only 1 is */
    ok("edge(3, 4)");
    EXPECT_ONE_RUN("?unreached(X)", "(1)p");
    /* a session fact that a negation now fails on: the row it leaves is still the
       graph's */
    ok("+open(X) <- node(X), !shut(X)");
    ok("shut(2)");
    EXPECT_ONE_RUN("?open(X)", "(1)p (3)p (4)p");
    /* a row a negation gives only with the session's facts */
    ok("node(5)");
    EXPECT_ONE_RUN("?open(X)", "(1)p (3)p (4)p (5)e");
    EXPECT_ONE_RUN("?unreached(X)", "(1)p (5)e");
    /* the negation in the query itself */
    EXPECT_ONE_RUN("?node(X), !reach(1, X)", "(1)p (5)e");
}

Test(provenance, a_negation_loses_a_graph_row_and_gains_another) {
    ok("+node[(1), (2), (3)]");
    ok("+flagged[(2)]");
    ok("+blocked(X) <- flagged(X), !cleared(X)");
    ok("+open(X) <- node(X), !blocked(X)");
    EXPECT_PROV("?open(X)", "(1)? (3)?");
    /* blocked gains 1 and loses 2: open loses the graph's 1 and gains 2 */
    ok("flagged(1)");
    ok("cleared(2)");
    EXPECT_ONE_RUN("?open(X)", "(2)e (3)p");
    EXPECT_ONE_RUN("?blocked(X)", "(1)e");
    /* a session rule under a negation */
    ok("+kept(X) <- flagged(X), !waived(X)");
    ok("waived(X) <- node(X), X < 2");
    EXPECT_ONE_RUN("?kept(X)", "(2)p");
}

Test(provenance, a_recursion_the_session_takes_rows_from_runs_twice) {
    /* the session's blocked(2) takes ok(2, 3) away, and with it what the recursion over
       ok derived through it: that stratum would be evaluated again by clause steps, far
       slower than the executor's run, so the query runs twice as a whole */
    ok("+edge[(1, 2), (2, 3), (3, 4)]");
    ok("+ok(X, Y) <- edge(X, Y), !blocked(X)");
    ok("+path(X, Y) <- ok(X, Y)");
    ok("+path(X, Z) <- path(X, Y), ok(Y, Z)");
    ok("blocked(2)");
    ok("edge(4, 5)");
    EXPECT_PROV("?path(1, Y)", "(1, 2)p");
    EXPECT_PROV("?path(3, Y)", "(3, 4)p (3, 5)e");
    cr_expect_eq(evaluations("?path(1, Y)"), 2);
    expect_definition(unit_session, "?path(X, Y)", "");
    /* a recursion that only gains stays one run */
    ok("+reach(X, Y) <- edge(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
    EXPECT_ONE_RUN("?reach(1, Y)", "(1, 2)p (1, 3)p (1, 4)p (1, 5)e");
}

Test(provenance, session_facts_of_a_relation_with_rules) {
    /* stored facts of reach, made before its rules */
    ok("+reach(8, 1)");
    chain();
    /* the session's reach(7, 1) joins the stored part of reach (a clause of the program
       whether or not the graph stores any) and the recursion takes it on */
    ok("reach(7, 1)");
    EXPECT_ONE_RUN("?reach(7, Y)", "(7, 1)e (7, 2)e (7, 3)e");
    EXPECT_ONE_RUN("?reach(X, Y)",
                   "(1, 2)p (1, 3)p (2, 3)p (7, 1)e (7, 2)e (7, 3)e (8, 1)p (8, 2)p (8, 3)p");
    EXPECT_ONE_RUN("?reach(X, 3)", "(1, 3)p (2, 3)p (7, 3)e (8, 3)p");
    /* a session fact the graph derives anyway is persistent */
    ok("reach(1, 3)");
    EXPECT_ONE_RUN("?reach(1, Y)", "(1, 2)p (1, 3)p");
    /* downstream of a negation: the session takes cut(7) away */
    ok("+node[(1), (2), (3), (7), (8), (9)]");
    ok("+cut(X) <- node(X), !reach(X, 3)");
    EXPECT_ONE_RUN("?cut(X)", "(3)p (9)p");
    /* a relation with rules and nothing stored */
    ok("+hop(X, Y) <- edge(X, Y)");
    ok("hop(5, 6)");
    EXPECT_ONE_RUN("?hop(X, Y)", "(1, 2)p (2, 3)p (5, 6)e");
}

/* A few session tuples probe a large derived relation on columns it has no index for:
 * the delta walks it once per tuple instead of indexing it (vexec.walk_below), on one
 * column and on two; the rows must be those the definition gives. */
Test(provenance, a_few_session_tuples_walk_a_relation_without_the_index) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+link[");
    for (int i = 1; i < 300; i++) il_buf_printf(&b, "%s(%d, %d)", i > 1 ? ", " : "", i, i + 1);
    il_buf_puts(&b, "]");
    ok(il_buf_str(&b));
    il_buf_free(&b);
    ok("+r(X, Y) <- link(X, Y)");
    ok("+r(X, Z) <- r(X, Y), link(Y, Z)");
    ok("+far(X) <- r(X, 300), !r(X, 150)");
    /* r(X, 300) for the new link(300, 301): r probed on its second column */
    ok("link(300, 301)");
    EXPECT_ONE_RUN("?r(X, 301), X > 296", "(297, 301)e (298, 301)e (299, 301)e (300, 301)e");
    EXPECT_ONE_RUN("?r(298, Y)", "(298, 299)p (298, 300)p (298, 301)e");
    expect_definition(unit_session, "?far(X), X < 3", "");
    /* a probe on two columns: t(A, B, C) with B and C bound by the session's pair */
    ok("+t(A, B, C) <- link(A, B), link(B, C)");
    ok("+hit(A) <- t(A, B, C), pair(B, C)");
    ok("pair(151, 152)");
    ok("pair(299, 300)");
    EXPECT_ONE_RUN("?hit(A)", "(150)e (298)e");
    ok("+pair(10, 11)");
    EXPECT_ONE_RUN("?hit(A)", "(9)p (150)e (298)e");
}

/* A vector search in a clause the session's facts reach (its query vector from a session
 * fact) runs in the delta like any step: one run, the rows it adds ephemeral. The index
 * holds the stored vectors only, with the session's or without (as for any query). */
Test(provenance, a_vector_search_the_session_feeds) {
    ok("+emb(id: int, vec: vector)");
    ok("+emb[(1, [0.0, 1.0]), (2, [1.0, 0.0]), (3, [0.7, 0.7])]");
    ok(".index create e on emb(vec) metric euclidean");
    ok("+probe(1, [0.0, 0.9])");
    ok("+near(P, Id) <- probe(P, V), hnsw_nearest(\"e\", V, 2, Id, D)");
    ok("+lonely(Id) <- emb(Id, _), !near(_, Id)");
    ok("probe(2, [0.9, 0.1])");
    EXPECT_ONE_RUN("?near(P, Id)", "(1, 1)p (1, 3)p (2, 2)e (2, 3)e");
    /* and a negation above it: emb 2 is near the session's probe, no longer lonely */
    EXPECT_ONE_RUN("?lonely(Id)", "");
    ok("emb(4, [0.0, 0.95])");
    EXPECT_ONE_RUN("?near(P, Id)", "(1, 1)p (1, 3)p (2, 2)e (2, 3)e");
}

static void sales(void) {
    ok("+sale[(\"a\", 10), (\"a\", 5), (\"b\", 7), (\"c\", 1)]");
    ok("+total(S, sum<A>) <- sale(S, A)");
    ok("+sales(S, count<A>) <- sale(S, A)");
    ok("+lowest(S, min<A>) <- sale(S, A)");
    ok("+highest(S, max<A>) <- sale(S, A)");
    ok("+shops(count<S>) <- sale(S, _)");
}

Test(provenance, an_aggregate_over_a_changed_relation) {
    sales();
    /* a's group changes (its old row goes, its new one is the session's); d's is new;
       b's and c's are the graph's */
    ok("sale(\"a\", 20)");
    ok("sale(\"d\", 3)");
    EXPECT_ONE_RUN("?total(S, T)", "(\"a\", 35)e (\"b\", 7)p (\"c\", 1)p (\"d\", 3)e");
    EXPECT_ONE_RUN("?sales(S, N)", "(\"a\", 3)e (\"b\", 1)p (\"c\", 1)p (\"d\", 1)e");
    /* a's group changed, its minimum did not */
    EXPECT_ONE_RUN("?lowest(S, M)", "(\"a\", 5)p (\"b\", 7)p (\"c\", 1)p (\"d\", 3)e");
    EXPECT_ONE_RUN("?highest(S, M)", "(\"a\", 20)e (\"b\", 7)p (\"c\", 1)p (\"d\", 3)e");
    /* a count of every binding, the placeholder's too */
    EXPECT_ONE_RUN("?shops(N)", "(6)e");
    EXPECT_ONE_RUN("?total(\"b\", T)", "(\"b\", 7)p");
}

Test(provenance, an_aggregate_over_a_recursion_the_session_changes) {
    chain();
    ok("+edge[(7, 8)]");
    ok("+n(X, count<Y>) <- reach(X, Y)");
    EXPECT_PROV("?n(X, C)", "(1, 2)? (2, 1)? (7, 1)?");
    ok("edge(3, 4)");
    /* the counts of 1, 2 and 3 change or appear; 7's holds without the session */
    EXPECT_ONE_RUN("?n(X, C)", "(1, 3)e (2, 2)e (3, 1)e (7, 1)p");
    /* an aggregate the session does not reach */
    ok("+m(count<X>) <- node(X)");
    ok("+node[(1), (2)]");
    EXPECT_ONE_RUN("?m(C)", "(2)p");
}

Test(provenance, a_negation_downstream_of_an_aggregate) {
    sales();
    ok("+shop[(\"a\"), (\"b\"), (\"c\"), (\"d\")]");
    ok("+busy(S) <- sales(S, N), N >= 2");
    ok("+quiet(S) <- shop(S), !busy(S)");
    EXPECT_PROV("?quiet(S)", "(\"b\")? (\"c\")? (\"d\")?");
    /* b gets busy; d's one sale keeps it quiet, as the graph has it */
    ok("sale(\"b\", 2)");
    ok("sale(\"d\", 3)");
    EXPECT_ONE_RUN("?quiet(S)", "(\"c\")p (\"d\")p");
    EXPECT_ONE_RUN("?busy(S)", "(\"a\")p (\"b\")e");
    /* an aggregate over the negation's rows */
    ok("+quiets(count<S>) <- quiet(S)");
    EXPECT_ONE_RUN("?quiets(N)", "(2)e");
}

Test(provenance, a_row_removed_by_one_negation_and_restored_by_the_next) {
    ok("+base[(1), (2), (3)]");
    ok("+extra[(1)]");
    ok("+m(X) <- base(X), !s(X)");
    /* f(1) holds through m(1) without the session, through extra(1) with it */
    ok("+f(X) <- m(X)");
    ok("+f(X) <- base(X), !m(X), extra(X)");
    /* two negations: n is m's complement, g n's */
    ok("+n(X) <- base(X), !m(X)");
    ok("+g(X) <- base(X), !n(X)");
    ok("s(1)");
    ok("s(2)");
    EXPECT_ONE_RUN("?m(X)", "(3)p");
    EXPECT_ONE_RUN("?f(X)", "(1)p (3)p");
    EXPECT_ONE_RUN("?n(X)", "(1)e (2)e");
    EXPECT_ONE_RUN("?g(X)", "(3)p");
    /* a session rule that puts a removed row back at the stratum that lost it */
    ok("m(X) <- base(X), X = 2");
    EXPECT_ONE_RUN("?m(X)", "(2)p (3)p");
    EXPECT_ONE_RUN("?g(X)", "(2)p (3)p");
}

Test(provenance, a_propositional_query) {
    chain();
    ok("+linked() <- reach(1, 3)");
    ok("+far() <- reach(1, 4)");
    ok("edge(3, 4)");
    il_result *r = il_execute(unit_session, "?linked()", 9);
    cr_assert_eq(il_result_nrows(r), 1);
    cr_expect_str_eq(il_result_row_provenance(r, 0), "persistent");
    il_result_free(r);
    r = il_execute(unit_session, "?far()", 6);
    cr_assert_eq(il_result_nrows(r), 1);
    cr_expect_str_eq(il_result_row_provenance(r, 0), "ephemeral");
    il_result_free(r);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

Test(provenance, a_deadline_stops_the_delta) {
    /* without the session's go(1) the recursion never starts; with it, it never ends */
    ok("+start(0)");
    ok("+n(X) <- start(X)");
    ok("+n(Y) <- n(X), go(1), Y = X + 1");
    ok("go(1)");
    il_limits l = {.deadline_ns = now_ns() + 200 * 1000000ull};
    il_session_set_limits(unit_session, &l);
    il_result *r = il_execute(unit_session, "?n(X)", 5);
    cr_expect_eq(il_result_kind_of(r), IL_RESULT_ERROR);
    cr_expect_eq(il_result_stop(r), IL_STOP_DEADLINE);
    il_result_free(r);
    il_session_set_limits(unit_session, NULL);
    ok(".session clear");
    EXPECT_PROV("?n(X)", "(0)?");
}

/* The rows of a result as text, and each row's provenance letter beside. */
static void rows_text(il_result *r, il_buf *rows, il_buf *marks) {
    for (size_t i = 0; i < il_result_nrows(r); i++) {
        unit_row_text(r, i, rows);
        if (marks) il_buf_putc(marks, il_result_row_provenance(r, i)[0]);
    }
}

/* Statement `stmt` (a fact or a rule, without its `+`) into s, as the session's when
 * `session`, else persistent, and into ref persistent: ref holds what s's session
 * evaluation should give. */
static void both_ways(il_session *s, il_session *ref, const char *stmt, bool session) {
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b, "%s%s", session ? "" : "+", stmt);
    unit_run(s, il_buf_str(&b));
    il_buf_clear(&b);
    il_buf_printf(&b, "+%s", stmt);
    unit_run(ref, il_buf_str(&b));
    il_buf_free(&b);
}

Test(provenance, random_graphs_agree_with_a_second_run) {
    static const char *const queries[] = {"?reach(X, Y)", "?reach(3, Y)", "?reach(X, 5)",
                                          "?two(X, Y)",   "?both(X)",     "?edge(X, Y)"};
    uint64_t rnd = 42;
    for (int round = 0; round < 12; round++) {
        il_session *ref;
        il_engine *e = unit_engine_open(&ref);
        const char *rules[] = {"reach(X, Y) <- edge(X, Y)",
                               "reach(X, Z) <- reach(X, Y), edge(Y, Z)",
                               "two(X, Z) <- edge(X, Y), edge(Y, Z)", "both(X) <- reach(X, X)"};
        il_buf b;
        il_buf_init(&b);
        /* a graph of its own per round */
        il_buf_printf(&b, ".kg create g%d", round);
        unit_run(unit_session, il_buf_str(&b));
        unit_run(ref, il_buf_str(&b));
        for (int i = 0; i < 4; i++) {
            /* the last rules are the session's in some rounds */
            bool session = round % 3 == 1 && i >= 2;
            both_ways(unit_session, ref, rules[i], session);
        }
        for (int i = 0; i < 30; i++) {
            int x = (int)((unit_random(&rnd) + 1) * 6), y = (int)((unit_random(&rnd) + 1) * 6);
            bool session = i % 5 == 4;
            char fact[64];
            snprintf(fact, sizeof fact, "edge(%d, %d)", x, y);
            both_ways(unit_session, ref, fact, session);
        }
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
            const char *text = queries[q];
            il_result *got = il_execute(unit_session, text, strlen(text));
            il_result *want = il_execute(ref, text, strlen(text));
            il_result *stored = il_query_stored(unit_session, text, strlen(text), 0);
            il_buf g, w, marks, st;
            il_buf_init(&g);
            il_buf_init(&w);
            il_buf_init(&marks);
            il_buf_init(&st);
            rows_text(got, &g, &marks);
            rows_text(want, &w, NULL);
            cr_expect_str_eq(il_buf_str(&g), il_buf_str(&w), "round %d %s", round, text);
            /* persistent exactly when the graph alone answers the row */
            for (size_t i = 0; i < il_result_nrows(got); i++) {
                il_buf row;
                il_buf_init(&row);
                size_t width;
                const il_value *v = il_result_row(got, i, &width);
                il_buf_puts(&row, "(");
                for (size_t j = 0; j < width; j++) {
                    char cell[64];
                    il_value_format(v[j], cell, sizeof cell);
                    il_buf_printf(&row, "%s%s", j ? ", " : "", cell);
                }
                il_buf_puts(&row, ")");
                il_buf_clear(&st);
                rows_text(stored, &st, NULL);
                bool held = strstr(il_buf_str(&st), il_buf_str(&row)) != NULL;
                cr_expect_eq(il_buf_str(&marks)[i], held ? 'p' : 'e', "round %d %s row %s", round,
                             text, il_buf_str(&row));
                il_buf_free(&row);
            }
            il_buf_free(&g);
            il_buf_free(&w);
            il_buf_free(&marks);
            il_buf_free(&st);
            il_result_free(got);
            il_result_free(want);
            il_result_free(stored);
        }
        il_buf_free(&b);
        unit_engine_close(e);
    }
}

/* A random small program over random edges and nodes, some of each the session's: a
 * recursion, negations over it and over an aggregate, aggregates over the recursion and
 * over each other, rules of the session beside persistent ones of the same head. */
static void random_program(il_session *s, il_session *ref, uint64_t *rnd, int round) {
    int k1 = 1 + (int)((unit_random(rnd) + 1) * 2.5), k2 = 1 + (int)((unit_random(rnd) + 1));
    char rules[12][96];
    int n = 0;
    snprintf(rules[n++], sizeof rules[0], "r(X, Y) <- e(X, Y)");
    snprintf(rules[n++], sizeof rules[0], "r(X, Z) <- r(X, Y), e(Y, Z)");
    snprintf(rules[n++], sizeof rules[0], "u(X) <- v(X), !r(%d, X)", k1);
    snprintf(rules[n++], sizeof rules[0], "d(X, count<Y>) <- e(X, Y)");
    snprintf(rules[n++], sizeof rules[0], "t(X, sum<Y>) <- r(X, Y)");
    snprintf(rules[n++], sizeof rules[0], "w(X) <- d(X, C), C >= %d", k2);
    snprintf(rules[n++], sizeof rules[0], "z(X) <- v(X), !w(X)");
    snprintf(rules[n++], sizeof rules[0], "lo(X, min<Y>) <- r(X, Y)");
    snprintf(rules[n++], sizeof rules[0], "k(X) <- v(X), !u(X), !z(X)");
    snprintf(rules[n++], sizeof rules[0], "hi(max<Y>) <- lo(X, Y)");
    snprintf(rules[n++], sizeof rules[0], "q(X) <- z(X), !e(X, X)");
    /* rules from a random one on are the session's (each reads only those before it) */
    int cut = (int)((unit_random(rnd) + 1) * 0.5 * (n + 4));
    for (int i = 0; i < n; i++) both_ways(s, ref, rules[i], i >= cut);
    /* session rules beside persistent ones of the same head, under negations */
    static const char *const extra[] = {"u(X) <- v(X), X > 4", "w(X) <- v(X), X = 2",
                                        "r(X, Y) <- e(Y, X), X < 3"};
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++) {
        if (round % 4 != (int)i) continue;
        both_ways(s, ref, extra[i], true);
    }
    for (int i = 0; i < 12; i++) {
        int x = 1 + (int)((unit_random(rnd) + 1) * 3), y = 1 + (int)((unit_random(rnd) + 1) * 3);
        bool session = unit_random(rnd) > 0.4;
        char fact[64];
        snprintf(fact, sizeof fact, "e(%d, %d)", x, y);
        both_ways(s, ref, fact, session);
    }
    for (int x = 1; x <= 6; x++) {
        double p = unit_random(rnd);
        if (p < -0.6) continue;
        char fact[32];
        snprintf(fact, sizeof fact, "v(%d)", x);
        both_ways(s, ref, fact, p > 0.5);
    }
}

Test(provenance, random_programs_with_negation_and_aggregates_agree_with_a_second_run) {
    static const char *const queries[] = {"?r(X, Y)", "?r(1, Y)", "?u(X)", "?d(X, C)",
                                          "?t(X, S)", "?w(X)",    "?z(X)", "?lo(X, M)",
                                          "?k(X)",    "?hi(M)",   "?q(X)", "?v(X), !w(X)"};
    uint64_t rnd = 27;
    uint64_t start = now_ns();
    /* as many rounds as about two seconds allow, at least a few */
    for (int round = 0; round < 200 && (round < 8 || now_ns() - start < 2000000000ull); round++) {
        il_session *ref;
        il_engine *e = unit_engine_open(&ref);
        il_buf b;
        il_buf_init(&b);
        il_buf_printf(&b, ".kg create p%d", round);
        unit_run(unit_session, il_buf_str(&b));
        unit_run(ref, il_buf_str(&b));
        unit_run(unit_session, ".session clear");
        random_program(unit_session, ref, &rnd, round);
        for (size_t q = 0; q < sizeof queries / sizeof *queries; q++) {
            const char *text = queries[q];
            il_buf_clear(&b);
            il_buf_printf(&b, "round %d", round);
            il_result *got = il_execute(unit_session, text, strlen(text));
            il_result *want = il_execute(ref, text, strlen(text));
            char *g = rows_barred(got), *w = rows_barred(want);
            cr_expect_str_eq(g, w, "%s %s", il_buf_str(&b), text);
            free(g);
            free(w);
            il_result_free(got);
            il_result_free(want);
            uint64_t runs = evaluations(text);
            cr_expect_eq(runs, 1, "%s %s: %llu evaluations", il_buf_str(&b), text,
                         (unsigned long long)runs);
            expect_definition(unit_session, text, il_buf_str(&b));
        }
        il_buf_free(&b);
        unit_engine_close(e);
    }
}

Test(provenance, the_memory_limit_stops_the_delta) {
    /* the graph's pairs are none; the session's facts make 9 million */
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+b[");
    for (int i = 0; i < 3000; i++) il_buf_printf(&b, "%s(%d)", i ? ", " : "", i);
    il_buf_putc(&b, ']');
    ok(il_buf_str(&b));
    for (int i = 0; i < 3000; i++) {
        il_buf_clear(&b);
        il_buf_printf(&b, "a(%d)", i);
        ok(il_buf_str(&b));
    }
    il_buf_free(&b);
    ok("+pair(X, Y) <- a(X), b(Y)");
    il_limits l = {.max_memory_bytes = 16u * 1024 * 1024};
    il_session_set_limits(unit_session, &l);
    cr_expect_eq(evaluations("?pair(X, Y)"), 1);
    il_result *r = il_execute(unit_session, "?pair(X, Y)", 11);
    cr_expect_eq(il_result_kind_of(r), IL_RESULT_ERROR);
    cr_expect_eq(il_result_stop(r), IL_STOP_MEMORY);
    il_result_free(r);
    il_session_set_limits(unit_session, NULL);
    EXPECT_PROV("?pair(X, Y), X = 7, Y < 2", "(7, 0)e (7, 1)e");
}
