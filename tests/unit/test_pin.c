/* Unit tests of pinned sessions (il_session_pin, src/kg/pin.c): a pinned session reads
 * the revision of its pin, whole, while another session writes, drops and recreates;
 * maintained rows are read as they were; a query needing an index the stored relation
 * lacks gets a private copy, and the next serialized statement after the unpin adds the
 * index; a vector index is searched at the pinned revision; what cannot be pinned is
 * refused; a graph dropped under a pin moves the session
 * at the unpin; old versions past their bound stop the oldest pinned read. (Threads: the
 * oracle test tests/threads/pinned.c.) */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "exec/rel.h"
#include "inputlayer.h"
#include "kg/kg.h"
#include "unit_fixture.h"
#include "views/read_policy.h"

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
        cr_expect_str_eq(got_, want, "%s: %s", q, got_);                                           \
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

Test(pin, an_index_the_relation_lacks_is_built_for_the_pin_and_added_after_the_unpin) {
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
    /* The unpin may run beside serialized statements: it leaves the index to the next of
       them, any session's. */
    il_session_unpin(unit_session);
    cr_expect_lt(rel_find_index(edge->data, &second, 1), 0);
    il_session *other = il_session_open(unit_engine);
    EXPECT_ANSWER(other, "?edge(1, Y)", "(1, 2)");
    cr_expect_geq(rel_find_index(edge->data, &second, 1), 0, "the next statement adds it");
    EXPECT_ANSWER(unit_session, "?edge(X, 3)", "(2, 3) (5, 3)");
    il_session_close(other);
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
    const char *unbound = "?reach(X, Y)", *write = "+edge(5, 6)";
    il_prepared *u = il_prepare(unbound, strlen(unbound));
    il_prepared *w = il_prepare(write, strlen(write));
    cr_expect(il_prepared_pinnable(u, 0), "the first unbound read too");
    cr_expect(!il_prepared_pinnable(w, 0));
    il_prepared_free(u);
    il_prepared_free(w);
    /* explanations and listings (of the session's graph, and of the engine's graphs: a
       pin holds their list) read only; what writes does not run pinned */
    static const struct {
        const char *text;
        bool pinnable;
    } metas[] = {{".why ?reach(1, Y)", true}, {".why full ?reach(1, Y)", true},
                 {".why_not reach(1, 9)", true}, {".kg", true}, {".rel", true},
                 {".rel edge", true}, {".rule", true}, {".rule reach", true},
                 {".rule def reach", true}, {".session", true}, {".kg list", true},
                 {".status", true}, {".rule drop reach", false}, {".kg create g", false},
                 {".session clear", false}, {".rel drop edge", false}, {".compact", false}};
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
        il_prepared *p = il_prepare(metas[i].text, strlen(metas[i].text));
        cr_expect_eq(il_prepared_pinnable(p, 0), metas[i].pinnable, "%s", metas[i].text);
        il_prepared_free(p);
    }
}

/* A first unbound read of a rule as a pinned read: reach's rows, its view made on the
 * pin; the graph adopts it at the next serialized statement after the unpin, caught up
 * with the writes made meanwhile, and maintains it from then on. */
Test(pin, a_pinned_first_read_makes_the_view_the_graph_adopts_caught_up) {
    il_session *w = il_session_open(unit_engine);
    chain(w);
    ok(w, "+edge(3, 4)");
    kg_graph *live = w->kg;
    cr_assert(il_session_pin(unit_session));
    ok(w, "-edge(1, 2)"); /* before the read, which sees its pin's revision */
    EXPECT_ANSWER(unit_session, "?reach(X, Y)", "(1, 2) (1, 3) (1, 4) (2, 3) (2, 4) (3, 4)");
    cr_expect_eq(read_policy_count(live), 0, "the live graph is not touched");
    ok(w, "+edge(4, 5)");
    EXPECT_ANSWER(unit_session, "?reach(X, 4)", "(1, 4) (2, 4) (3, 4)"); /* its rows */
    il_session_unpin(unit_session);
    cr_expect_eq(read_policy_count(live), 0, "adopted by a serialized statement");
    EXPECT_ANSWER(w, "?edge(1, Y)", "");
    cr_expect_eq(read_policy_count(live), 1);
    const rel_t *maintained = read_policy_rows(live, "reach");
    cr_assert_not_null(maintained);
    cr_expect_eq(rel_count(maintained), 6, "caught up with both writes");
    EXPECT_ANSWER(w, "?reach(X, Y)", "(2, 3) (2, 4) (2, 5) (3, 4) (3, 5) (4, 5)");
    ok(w, "+edge(5, 2)"); /* maintained from then on: a cycle */
    EXPECT_ANSWER(unit_session, "?reach(5, Y)", "(5, 2) (5, 3) (5, 4) (5, 5)");
    cr_expect_eq(read_policy_rows(live, "reach"), maintained, "the same view");
    cr_expect_eq(rel_count(maintained), 16);
    /* the same rows as evaluating them: a session with facts of its own evaluates */
    ok(unit_session, "mine(1)");
    char *evaluated = rows(unit_session, "?reach(X, Y)");
    EXPECT_ANSWER(w, "?reach(X, Y)", evaluated);
    free(evaluated);
    il_session_close(w);
}

/* The view a pinned read made is closed, not adopted, when the rules changed meanwhile
 * (it would be rebuilt) or when a serialized read decided on the rule first. */
Test(pin, a_view_made_on_a_pin_is_not_adopted_when_the_graph_moved_on) {
    il_session *w = il_session_open(unit_engine);
    chain(w);
    kg_graph *live = w->kg;
    cr_assert(il_session_pin(unit_session));
    EXPECT_ANSWER(unit_session, "?reach(X, Y)", "(1, 2) (1, 3) (2, 3)");
    ok(w, "+reach(X, Y) <- edge(Y, X)");
    il_session_unpin(unit_session);
    EXPECT_ANSWER(w, "?edge(1, Y)", "(1, 2)");
    cr_expect_eq(read_policy_count(live), 0, "another version: closed");

    cr_assert(il_session_pin(unit_session));
    const char *all = "(1, 2) (1, 3) (2, 1) (2, 2) (2, 3) (3, 2) (3, 3)";
    EXPECT_ANSWER(unit_session, "?reach(1, Y)", "(1, 2) (1, 3)");
    EXPECT_ANSWER(unit_session, "?reach(X, Y)", all);
    EXPECT_ANSWER(w, "?reach(X, 1)", "(2, 1)");
    EXPECT_ANSWER(w, "?reach(X, Y)", all);
    const rel_t *decided = read_policy_rows(live, "reach");
    cr_assert_not_null(decided, "a serialized read decided first");
    il_session_unpin(unit_session);
    EXPECT_ANSWER(w, "?edge(1, Y)", "(1, 2)");
    cr_expect_eq(read_policy_count(live), 1);
    cr_expect_eq(read_policy_rows(live, "reach"), decided, "its view stays");
    il_session_close(w);
}

/* A graph dropped and made again under the same name at the same version is another
 * graph: the view made on the old one's pin is closed. */
Test(pin, a_view_made_on_a_pin_is_not_adopted_by_a_graph_made_again) {
    il_session *w = il_session_open(unit_engine);
    ok(unit_session, ".kg create g3");
    chain(unit_session);
    cr_assert(il_session_pin(unit_session));
    EXPECT_ANSWER(unit_session, "?reach(X, Y)", "(1, 2) (1, 3) (2, 3)");
    ok(w, ".kg drop g3");
    ok(w, ".kg create g3");
    chain(w);
    kg_graph *again = w->kg;
    il_session_unpin(unit_session);
    EXPECT_ANSWER(w, "?edge(1, Y)", "(1, 2)");
    cr_expect_eq(read_policy_count(again), 0);
    il_session_close(w);
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

/* Vectors [0.5 + a/100, 0.5 + b/100, 0.5 + c/100, 0.5] for ids from..to-1, each its own. */
static void vectors(il_session *w, int from, int to) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+emb[");
    for (int i = from; i < to; i++)
        il_buf_printf(&b, "%s(%d, [%.2f, %.2f, %.2f, 0.5])", i > from ? ", " : "", i,
                      0.5 + (i % 10) / 100.0, 0.5 + (i / 10 % 5) / 100.0,
                      0.5 + (i / 50 % 5) / 100.0);
    il_buf_puts(&b, "]");
    ok(w, il_buf_str(&b));
    il_buf_free(&b);
}

Test(pin, a_graph_with_a_vector_index_is_pinned_and_searched_at_its_revision) {
    il_session *w = il_session_open(unit_engine);
    ok(w, "+emb(id: int, vec: vector)");
    ok(w, ".index create e on emb(vec) metric euclidean");
    vectors(w, 0, 250); /* more than KG_INDEX_EXACT_BELOW: the graph is walked */
    ok(w, "-emb(X, V) <- emb(X, V), X >= 240");
    /* the session's own fact layers on the pin, for the distance filter */
    ok(unit_session, "emb(2000, [0.5, 0.5, 0.51, 0.5])");
    const char *near = "?hnsw_nearest(\"e\", [0.5, 0.5, 0.5, 0.5], 4, Id, D, 500)";
    const char *close = "?emb(Id, V), D = euclidean(V, [0.5, 0.5, 0.5, 0.5]), D < 0.015";
    char *near_then = rows(unit_session, near), *close_then = rows(unit_session, close);
    cr_assert(il_session_pin(unit_session), "a graph with a vector index is pinned");
    /* the nearest go, an exact match comes, a removed pair comes back */
    ok(w, "-emb(X, V) <- emb(X, V), X < 125");
    ok(w, "+emb(1000, [0.5, 0.5, 0.5, 0.5])");
    ok(w, "+emb(245, [0.55, 0.54, 0.54, 0.5])");
    char *near_now = rows(w, near);
    cr_expect(strstr(near_now, "(1000, 0") && !strstr(near_now, "(0, 0"), "%s", near_now);
    EXPECT_ANSWER(unit_session, near, near_then);
    EXPECT_ANSWER(unit_session, close, close_then);
    cr_expect(strstr(close_then, "(2000, "), "%s", close_then);
    /* the live index rebuilt, then dropped: the pin keeps searching its revision */
    ok(w, ".index rebuild e");
    EXPECT_ANSWER(w, near, near_now);
    ok(w, ".index drop e");
    EXPECT_ANSWER(unit_session, near, near_then);
    il_session_unpin(unit_session);
    EXPECT_ANSWER(unit_session, near, "Query execution failed: hnsw_nearest: index 'e' not found");
    free(near_then);
    free(close_then);
    free(near_now);
    il_session_close(w);
}

/* Writes that replace most of edge's nodes: 400 edges deleted and 400 others inserted. */
static void churn(il_session *w, int round) {
    il_buf b;
    il_buf_init(&b);
    for (int sign = 0; sign < 2; sign++) {
        il_buf_puts(&b, sign ? "+edge[" : "-edge[");
        for (int i = 0; i < 400; i++)
            il_buf_printf(&b, "%s(%d, %d)", i ? ", " : "", i, sign ? 100000 + round : i + 1);
        il_buf_putc(&b, ']');
        ok(w, b.data);
        il_buf_clear(&b);
    }
    il_buf_free(&b);
}

/* The session's pinned read stops for old versions past their bound. */
static void expect_too_old(il_session *s) {
    il_result *r = il_execute(s, "?edge(1000, Y)", strlen("?edge(1000, Y)"));
    cr_expect_eq(il_result_stop(r), IL_STOP_SNAPSHOT_TOO_OLD);
    cr_expect_str_eq(il_result_line(r, 0), il_stop_message(IL_STOP_SNAPSHOT_TOO_OLD));
    il_result_free(r);
}

Test(pin, old_versions_past_the_bound_stop_the_oldest_read) {
    il_session *w = il_session_open(unit_engine), *newer = il_session_open(unit_engine);
    uint64_t base = il_snapshot_memory_bytes();
    ok(w, "+edge(1000, 1001)");
    churn(w, 0); /* 400 edges (i, i + 1) out, (i, 100000) in, then back below */
    for (int i = 0; i < 400; i++) {
        char q[64];
        snprintf(q, sizeof q, "+edge(%d, %d)", i, i + 1);
        ok(w, q);
    }
    cr_assert(il_session_pin(unit_session));
    cr_expect_eq(il_snapshot_memory_bytes(), base, "a pin alone keeps nothing");
    churn(w, 1);
    uint64_t kept_by_one = il_snapshot_memory_bytes() - base;
    cr_expect_gt(kept_by_one, 0, "the nodes the writes replaced are kept for the pin");
    cr_assert(il_session_pin(newer));
    churn(w, 2);
    cr_expect_gt(il_snapshot_memory_bytes() - base, kept_by_one);
    /* Unbounded (the library's default): every pinned read goes on. */
    EXPECT_ANSWER(unit_session, "?edge(1000, Y)", "(1000, 1001)");
    /* Past the bound: the oldest stops, the newer goes on. */
    il_engine_set_snapshot_memory(unit_engine, 1);
    EXPECT_ANSWER(newer, "?edge(1000, Y)", "(1000, 1001)");
    expect_too_old(unit_session);
    il_session_unpin(unit_session);
    uint64_t left = il_snapshot_memory_bytes() - base;
    cr_expect_lt(left, kept_by_one * 2, "what only the oldest kept is freed at its unpin");
    cr_expect_gt(left, 0, "what the newer pin reaches stays");
    /* Still past it: the newer is now the oldest. */
    expect_too_old(newer);
    il_session_unpin(newer);
    cr_expect_eq(il_snapshot_memory_bytes(), base);
    /* A relation dropped under a pin: its whole pool is kept for it, and counted. */
    il_engine_set_snapshot_memory(unit_engine, 0);
    cr_assert(il_session_pin(unit_session));
    ok(w, ".rel drop edge");
    cr_expect_gt(il_snapshot_memory_bytes() - base, 400 * 2 * sizeof(val_t));
    EXPECT_ANSWER(unit_session, "?edge(1000, Y)", "(1000, 1001)");
    il_engine_set_snapshot_memory(unit_engine, 1);
    expect_too_old(unit_session);
    il_session_unpin(unit_session);
    cr_expect_eq(il_snapshot_memory_bytes(), base);
    il_engine_set_snapshot_memory(unit_engine, 0);
    il_session_close(newer);
    il_session_close(w);
}

/* A conditional delete whose body joins edge four times: long enough to be caught running. */
static void *long_delete(void *arg) {
    ok(arg, "-edge(A, B) <- edge(A, B), edge(C, D), edge(E, F), edge(G, H), A < 60, "
            "A + C + E + G = B + D + F + H + 150");
    return NULL;
}

static size_t count_rows(il_session *s, const char *q) {
    il_result *r = il_execute(s, q, strlen(q));
    size_t n = il_result_kind_of(r) == IL_RESULT_TABLE ? il_result_nrows(r) : 0;
    il_result_free(r);
    return n;
}

/* 60 edges for long_delete to join. */
static void sixty_edges(il_session *w) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+edge[");
    for (int i = 0; i < 60; i++)
        il_buf_printf(&b, "%s(%d, %d)", i ? ", " : "", i, (i * 7 + 3) % 60);
    il_buf_putc(&b, ']');
    ok(w, b.data);
    il_buf_free(&b);
}

/* Until a write running on another thread has published its revision, pins s on it. */
static bool pin_while_published(il_session *s) {
    for (int i = 0; i < 60000; i++) {
        if (il_session_pin_published(s)) return true;
        usleep(500);
    }
    return false;
}

Test(pin, a_write_publishes_the_revision_before_it_for_readers_that_cannot_wait) {
    il_session *w = il_session_open(unit_engine);
    sixty_edges(w);
    cr_expect(!il_session_pin_published(unit_session), "nothing is published between writes");
    /* a pin lately: the next write publishes the revision before it */
    cr_assert(il_session_pin(unit_session));
    il_session_unpin(unit_session);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, long_delete, w), 0);
    cr_assert(pin_while_published(unit_session), "the write published its revision before it");
    cr_expect_eq(count_rows(unit_session, "?edge(X, Y)"), 60, "the revision before the write");
    pthread_join(t, NULL);
    cr_expect(!il_session_pin_current(unit_session), "the write committed since");
    cr_expect_eq(count_rows(unit_session, "?edge(X, Y)"), 60);
    il_session_unpin(unit_session);
    cr_expect(!il_session_pin_published(unit_session), "its commit withdrew the publication");
    cr_expect_lt(count_rows(unit_session, "?edge(X, Y)"), 60, "the write deleted edges");
    il_session_close(w);
}

Test(pin, pins_of_one_version_share_its_rules_and_a_rule_change_makes_a_new_copy) {
    il_session *w = il_session_open(unit_engine), *other = il_session_open(unit_engine);
    chain(w);
    kg_graph *live = w->kg;
    cr_assert(il_session_pin(unit_session));
    struct kg_rules_copy *first = live->rules_copy;
    cr_assert(first, "the first pin copied the rules");
    cr_assert(il_session_pin(other));
    cr_expect_eq(live->rules_copy, first, "the second pin shares them");
    /* a rule changed under both pins: they keep the rules of their revision */
    ok(w, "+reach(X, Y) <- edge(Y, X)");
    EXPECT_ANSWER(unit_session, "?reach(X, 1)", "");
    il_session_unpin(unit_session);
    EXPECT_ANSWER(unit_session, "?reach(X, 1)", "(2, 1)");
    cr_assert(il_session_pin(unit_session));
    cr_expect_neq(live->rules_copy, first, "a new version, a new copy");
    EXPECT_ANSWER(unit_session, "?reach(X, 1)", "(2, 1)");
    EXPECT_ANSWER(other, "?reach(X, 1)", "");
    /* the rule dropped under the newer pin: it still reads it */
    ok(w, ".rule drop reach");
    EXPECT_ANSWER(unit_session, "?reach(X, 1)", "(2, 1)");
    il_session_unpin(unit_session);
    il_session_unpin(other);
    EXPECT_ANSWER(unit_session, "?reach(X, 1)", "");
    /* a rule added (the next copy patches the last one's names), then one dropped and
       made again under its name (a new rule: its old copy is not taken) */
    ok(w, "+q(X) <- edge(X, _)");
    cr_assert(il_session_pin(unit_session));
    EXPECT_ANSWER(unit_session, "?q(X)", "(1) (2)");
    il_session_unpin(unit_session);
    ok(w, ".rule drop q");
    ok(w, "+q(X) <- edge(_, X)");
    cr_assert(il_session_pin(unit_session));
    EXPECT_ANSWER(unit_session, "?q(X)", "(2) (3)");
    EXPECT_ANSWER(unit_session, "?reach(X, 1)", "");
    il_session_unpin(unit_session);
    il_session_close(w);
    il_session_close(other);
}

/* A statement's rows and its proof trees (or its lines), as one string. */
static char *explained(il_session *s, const char *stmt) {
    il_result *r = il_execute(s, stmt, strlen(stmt));
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; il_result_kind_of(r) == IL_RESULT_TABLE && i < il_result_nrows(r); i++) {
        unit_row_text(r, i, &b);
        il_buf_putc(&b, ' ');
    }
    const char *trees = il_result_proof_trees(r);
    il_buf_puts(&b, trees ? trees : "");
    for (size_t i = 0; il_result_kind_of(r) != IL_RESULT_TABLE && i < il_result_nlines(r); i++)
        il_buf_puts(&b, il_result_line(r, i));
    il_result_free(r);
    return il_buf_take(&b);
}

Test(pin, explanations_run_pinned_on_the_pinned_revision) {
    il_session *w = il_session_open(unit_engine);
    chain(w);
    ok(w, "+node[(1), (2), (3), (4)]");
    ok(w, "+far(X) <- node(X), !reach(1, X)");
    char *why = explained(unit_session, ".why ?reach(1, Y)");
    char *why_not = explained(unit_session, ".why_not reach(1, 4)");
    char *why_far = explained(unit_session, ".why full ?far(X)");
    cr_assert(il_session_pin(unit_session));
    ok(w, "+edge(3, 4)"); /* after the pin: the explanations do not see it */
    char *got = explained(unit_session, ".why ?reach(1, Y)");
    cr_expect_str_eq(got, why);
    free(got);
    got = explained(unit_session, ".why_not reach(1, 4)");
    cr_expect_str_eq(got, why_not);
    free(got);
    got = explained(unit_session, ".why full ?far(X)");
    cr_expect_str_eq(got, why_far);
    free(got);
    il_session_unpin(unit_session);
    got = explained(unit_session, ".why ?reach(1, Y)");
    cr_expect_str_neq(got, why, "the write is seen once unpinned");
    free(got);
    free(why);
    free(why_not);
    free(why_far);
    il_session_close(w);
}

Test(pin, listings_run_pinned_on_the_pinned_revision) {
    il_session *w = il_session_open(unit_engine);
    chain(w);
    ok(unit_session, "mine(X) <- edge(X, _)");
    static const char *const listings[] = {
        ".kg", ".rel", ".rel edge", ".rule", ".rule reach", ".rule def reach", ".session"};
    enum { N = sizeof listings / sizeof listings[0] };
    char *before[N];
    for (int i = 0; i < N; i++) before[i] = explained(unit_session, listings[i]);
    cr_assert(il_session_pin(unit_session));
    /* after the pin: a relation, a fact and a clause the listings do not see */
    ok(w, "+edge(3, 4)");
    ok(w, "+hop(X, Y) <- edge(X, Y)");
    ok(w, "+reach(X, Y) <- edge(Y, X)");
    for (int i = 0; i < N; i++) {
        char *got = explained(unit_session, listings[i]);
        cr_expect_str_eq(got, before[i], "%s", listings[i]);
        free(got);
    }
    il_session_unpin(unit_session);
    char *rules = explained(unit_session, ".rule");
    cr_expect_str_neq(rules, before[3], "the new rule is listed once unpinned");
    free(rules);
    for (int i = 0; i < N; i++) free(before[i]);
    il_session_close(w);
}

Test(pin, a_session_set_to_publish_publishes_with_no_pin_lately) {
    il_session *w = il_session_open(unit_engine);
    sixty_edges(w);
    il_session_set_publish(w, true);
    /* no pin ever ran: only the setting makes the write publish */
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, long_delete, w), 0);
    cr_assert(pin_while_published(unit_session), "the write published its revision before it");
    cr_expect_eq(count_rows(unit_session, "?edge(X, Y)"), 60, "the revision before the write");
    pthread_join(t, NULL);
    il_session_unpin(unit_session);
    cr_expect(!il_session_pin_published(unit_session), "its commit withdrew the publication");
    il_session_close(w);
}

Test(pin, a_transaction_publishes_the_revision_before_it_until_it_ends) {
    il_session *w = il_session_open(unit_engine);
    sixty_edges(w);
    il_session_set_publish(w, true);
    cr_assert(il_txn_begin(w));
    ok(w, "+edge(100, 101)");
    ok(w, "-edge(0, 3)");
    /* two statements of the transaction ran: a reader sees neither */
    cr_assert(il_session_pin_published(unit_session), "published at its begin, kept");
    cr_expect(il_session_pin_current(unit_session), "nothing committed yet");
    EXPECT_ANSWER(unit_session, "?edge(100, Y)", "");
    EXPECT_ANSWER(unit_session, "?edge(0, Y)", "(0, 3)");
    il_session_unpin(unit_session);
    cr_assert(il_txn_commit(w, NULL));
    cr_expect(!il_session_pin_published(unit_session), "its commit withdrew the publication");
    EXPECT_ANSWER(unit_session, "?edge(100, Y)", "(100, 101)");
    /* rolled back: withdrawn too, and nothing of it is seen */
    cr_assert(il_txn_begin(w));
    ok(w, "+edge(200, 201)");
    cr_assert(il_session_pin_published(unit_session));
    EXPECT_ANSWER(unit_session, "?edge(200, Y)", "");
    il_session_unpin(unit_session);
    il_txn_rollback(w);
    cr_expect(!il_session_pin_published(unit_session));
    EXPECT_ANSWER(unit_session, "?edge(200, Y)", "");
    il_session_close(w);
}

Test(pin, a_session_whose_graph_was_dropped_under_its_pin_is_cleared_before_it_reads_again) {
    il_session *w = il_session_open(unit_engine), *probe = il_session_open(unit_engine);
    sixty_edges(w);
    ok(unit_session, ".kg create g2");
    ok(unit_session, "mine(1)");
    cr_assert(il_session_pin(unit_session));
    ok(w, ".kg drop g2");
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, long_delete, w), 0);
    cr_assert(pin_while_published(probe));
    /* unpinned beside the write: on `default` now, its state to be cleared after it */
    il_session_unpin(unit_session);
    cr_expect(!il_session_pin_published(unit_session), "not before its state is cleared");
    pthread_join(t, NULL);
    il_session_unpin(probe);
    EXPECT_ANSWER(unit_session, "?mine(X)", "");
    il_session_close(probe);
    il_session_close(w);
}

/* A line of a statement's result that starts with `prefix`, or "". */
static char *line_of(il_session *s, const char *stmt, const char *prefix) {
    il_result *r = il_execute(s, stmt, strlen(stmt));
    char *got = strdup("");
    for (size_t i = 0; i < il_result_nlines(r); i++)
        if (strncmp(il_result_line(r, i), prefix, strlen(prefix)) == 0) {
            free(got);
            got = strdup(il_result_line(r, i));
        }
    il_result_free(r);
    return got;
}

Test(pin, a_write_publishes_the_graphs_other_sessions_are_on_until_each_is_written) {
    il_session *w = il_session_open(unit_engine), *x = il_session_open(unit_engine);
    sixty_edges(w);
    ok(unit_session, ".kg create g2");
    ok(unit_session, "+node[(1), (2)]");
    ok(x, ".kg use g2");
    uint64_t base = il_snapshot_memory_bytes();
    cr_expect(!il_session_pin_published(unit_session), "its own write withdrew g2's");
    /* a long write to `default`: g2, which sessions other than the writer's are on, is
       published with it, as of its latest commit */
    il_session_set_publish(w, true);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, long_delete, w), 0);
    cr_assert(pin_while_published(unit_session), "the write published the graph read");
    EXPECT_ANSWER(unit_session, "?node(X)", "(1) (2)");
    pthread_join(t, NULL);
    cr_expect(il_session_pin_current(unit_session), "a commit to another graph leaves it current");
    il_session_unpin(unit_session);
    cr_expect_lt(count_rows(w, "?edge(X, Y)"), 60, "the write deleted edges");
    /* the publication outlives that write, keeping nothing while g2 is not written */
    cr_expect_eq(il_snapshot_memory_bytes(), base);
    ok(w, "+edge(1000, 1001)");
    cr_expect_eq(il_snapshot_memory_bytes(), base, "a write to another graph keeps nothing");
    cr_assert(il_session_pin_published(unit_session), "published until g2 is written");
    EXPECT_ANSWER(unit_session, "?node(X)", "(1) (2)");
    /* a write to g2 under that pin: the pin is no longer current, and reads its revision */
    ok(x, "+node(3)");
    cr_expect(!il_session_pin_current(unit_session), "g2 committed since");
    EXPECT_ANSWER(unit_session, "?node(X)", "(1) (2)");
    il_session_unpin(unit_session);
    cr_expect(!il_session_pin_published(unit_session), "g2's commit withdrew its publication");
    EXPECT_ANSWER(unit_session, "?node(X)", "(1) (2) (3)");
    cr_expect_eq(il_snapshot_memory_bytes(), base, "what the publication kept went with it");
    il_session_close(x);
    il_session_close(w);
}

Test(pin, graph_listings_run_pinned_on_the_graphs_as_of_the_pin) {
    il_session *w = il_session_open(unit_engine);
    ok(w, ".kg create g2");
    char *list = explained(unit_session, ".kg list");
    cr_expect_str_eq(list, "Knowledge Graphs:  default *  g2");
    cr_assert(il_session_pin(unit_session));
    ok(w, ".kg create g3");
    ok(w, ".kg drop g2");
    char *got = explained(unit_session, ".kg list");
    cr_expect_str_eq(got, list, "the graphs as of the pin");
    free(got);
    got = line_of(unit_session, ".status", "  Knowledge graphs:");
    cr_expect_str_eq(got, "  Knowledge graphs: 2");
    free(got);
    il_session_unpin(unit_session);
    got = explained(unit_session, ".kg list");
    cr_expect_str_eq(got, "Knowledge Graphs:  default *  g3");
    free(got);
    /* a pin on a published revision lists the graphs as of the pin too */
    il_session_set_publish(w, true);
    ok(w, ".kg use default");
    sixty_edges(w);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, long_delete, w), 0);
    cr_assert(pin_while_published(unit_session));
    got = explained(unit_session, ".kg list");
    cr_expect_str_eq(got, "Knowledge Graphs:  default *  g3");
    free(got);
    got = line_of(unit_session, ".status", "  Knowledge graphs:");
    cr_expect_str_eq(got, "  Knowledge graphs: 2");
    free(got);
    pthread_join(t, NULL);
    il_session_unpin(unit_session);
    free(list);
    il_session_close(w);
}

Test(pin, a_write_that_publishes_nothing_first_withdraws_what_another_write_published) {
    il_session *w = il_session_open(unit_engine), *x = il_session_open(unit_engine);
    ok(x, ".kg create g2");
    ok(x, "+node[(1), (2)]");
    ok(unit_session, ".kg use g2");
    il_session_set_publish(w, true);
    ok(w, "+edge(1, 2)");
    kg_graph *g2 = kg_graph_find(unit_engine, "g2");
    cr_assert(g2->published, "the write to `default` published g2");
    /* no pin in the last second: x's writes publish nothing, so a write of g2 would copy
       each node it changes for that publication alone; it goes before the write begins */
    usleep(1100 * 1000);
    cr_assert(il_txn_begin(x));
    cr_expect(!g2->published, "withdrawn before the transaction changed anything");
    ok(x, "+node(3)");
    cr_assert(il_txn_commit(x, NULL));
    EXPECT_ANSWER(unit_session, "?node(X)", "(1) (2) (3)");
    il_session_close(x);
    il_session_close(w);
}
