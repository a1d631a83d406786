/* Unit tests of statement guards (include/inputlayer.h, il_limits): a deadline ends a
 * recursion without a fixpoint, a cancel flag set from another thread ends a running
 * query and one set before stops a statement before it starts, the per-statement memory
 * limit and the shared budget refuse a cross product, a stopped conditional delete or
 * atomic update applies nothing, the budget is back to zero after each statement, the
 * peak of counted memory and the threads a statement ran on are reported; and the sorts that
 * have no tuple ticks stop too. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "exec/guard.h"
#include "exec/stable_sort.h"
#include "exec/tuplesort.h"
#include "inputlayer.h"
#include "unit_fixture.h"
#include "value/value.h"

#define MIB (1024u * 1024u)

static const char *const DEADLINE_TEXT =
    "Request deadline exceeded before it began committing; nothing was applied";
static const char *const CANCEL_TEXT =
    "Request cancelled before it began committing; nothing was applied";
static const char *const MEMORY_TEXT =
    "Request exceeded the per-query memory limit (storage.performance.max_query_memory_bytes) "
    "before it began committing; nothing was applied. Narrow the query or bind more of its "
    "arguments";
static const char *const BUDGET_TEXT =
    "Request stopped: the queries running on the server hold their whole memory budget "
    "(storage.performance.max_total_query_memory_bytes); it was stopped before it began "
    "committing and nothing was applied. Retry later";

TestSuite(guards, .init = unit_suite_open, .fini = unit_suite_close, .timeout = 60);

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static il_result *run(const char *stmt) {
    il_result *r = il_execute(unit_session, stmt, strlen(stmt));
    cr_assert_not_null(r);
    return r;
}

/* Executes a statement that must succeed. */
static void ok(const char *stmt) {
    il_result *r = run(stmt);
    il_result_kind k = il_result_kind_of(r);
    cr_assert(k == IL_RESULT_MESSAGE || k == IL_RESULT_TABLE, "`%s` failed: %s", stmt,
              il_result_nlines(r) ? il_result_line(r, 0) : "?");
    cr_assert_eq(il_result_stop(r), IL_STOP_NONE, "`%s`", stmt);
    il_result_free(r);
}

/* The rows of a query that must succeed. */
static size_t rows_of(const char *query) {
    il_result *r = run(query);
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE, "`%s`: %s", query,
                 il_result_nlines(r) ? il_result_line(r, 0) : "not a table");
    size_t n = il_result_nrows(r);
    il_result_free(r);
    return n;
}

/* Executes a statement that the guards must stop for `why`, with that stop's text. */
static void expect_stop(const char *stmt, il_stop why, const char *text) {
    il_result *r = run(stmt);
    cr_expect_eq(il_result_stop(r), why, "`%s`: stop %d, want %d (%s)", stmt,
                 (int)il_result_stop(r), (int)why,
                 il_result_nlines(r) ? il_result_line(r, 0) : "no text");
    cr_expect_eq(il_result_kind_of(r), IL_RESULT_ERROR, "`%s`", stmt);
    cr_expect_eq(il_result_nlines(r), 1, "`%s`: one line", stmt);
    if (il_result_nlines(r)) cr_expect_str_eq(il_result_line(r, 0), text);
    il_result_free(r);
}

/* Inserts 0 .. n-1 into a unary relation. */
static void load_range(const char *rel, int n) {
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b, "+%s[", rel);
    for (int i = 0; i < n; i++) il_buf_printf(&b, "%s(%d)", i ? ", " : "", i);
    il_buf_putc(&b, ']');
    ok(il_buf_str(&b));
    il_buf_free(&b);
}

/* A recursion with no fixpoint: each round derives the next number (a session rule). */
static void endless_recursion(void) {
    ok("+n(0)");
    ok("n(Y) <- n(X), Y = X + 1");
}

/* The same as persistent rules, which `.why` reads. */
static void endless_persistent_recursion(void) {
    ok("+start(0)");
    ok("+n(X) <- start(X)");
    ok("+n(Y) <- n(X), Y = X + 1");
}

static void set_limits(const volatile int *cancel, uint64_t deadline_ns, uint64_t max_bytes,
                       il_mem_budget *budget) {
    il_limits l = {.cancel = cancel,
                   .deadline_ns = deadline_ns,
                   .max_memory_bytes = max_bytes,
                   .budget = budget};
    il_session_set_limits(unit_session, &l);
}

/* ---- deadline ------------------------------------------------------------------- */

Test(guards, a_deadline_ends_a_recursion_without_fixpoint) {
    endless_recursion();
    uint64_t t0 = now_ns();
    set_limits(NULL, t0 + 200 * 1000000ull, 0, NULL);
    expect_stop("?n(X)", IL_STOP_DEADLINE, DEADLINE_TEXT);
    uint64_t took = now_ns() - t0;
    cr_expect_geq(took, 200 * 1000000ull, "stopped before its deadline: %.1f ms", took / 1e6);
    cr_expect_lt(took, 2000 * 1000000ull, "stopped %.1f ms after a 200 ms deadline", took / 1e6);
    /* the session goes on: without limits, and with a deadline not yet passed */
    il_session_set_limits(unit_session, NULL);
    ok(".session clear");
    cr_expect_eq(rows_of("?n(X)"), 1);
    set_limits(NULL, now_ns() + 60 * 1000000000ull, 0, NULL);
    ok("+m(1)");
    cr_expect_eq(rows_of("?m(X)"), 1);
}

Test(guards, a_passed_deadline_stops_a_write_before_it_starts) {
    set_limits(NULL, now_ns() - 1, 0, NULL);
    expect_stop("+p(1)", IL_STOP_DEADLINE, DEADLINE_TEXT);
    il_session_set_limits(unit_session, NULL);
    il_result *r = run("?p(X)");
    cr_expect_eq(il_result_nrows(r), 0, "the stopped insert applied nothing");
    il_result_free(r);
}

Test(guards, a_deadline_stops_why) {
    endless_persistent_recursion();
    set_limits(NULL, now_ns() + 100 * 1000000ull, 0, NULL);
    expect_stop(".why ?n(X)", IL_STOP_DEADLINE, DEADLINE_TEXT);
}

/* ---- cancel --------------------------------------------------------------------- */

typedef struct canceller {
    volatile int *flag;
    unsigned after_ms;
} canceller;

static void *cancel_later(void *arg) {
    canceller *c = arg;
    struct timespec ts = {c->after_ms / 1000, (long)(c->after_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    __atomic_store_n(c->flag, 1, __ATOMIC_RELAXED);
    return NULL;
}

Test(guards, a_cancel_from_another_thread_stops_a_running_query) {
    endless_recursion();
    static volatile int flag = 0;
    set_limits(&flag, 0, 0, NULL);
    canceller c = {&flag, 150};
    pthread_t t;
    uint64_t t0 = now_ns();
    cr_assert_eq(pthread_create(&t, NULL, cancel_later, &c), 0);
    expect_stop("?n(X)", IL_STOP_CANCELLED, CANCEL_TEXT);
    uint64_t took = now_ns() - t0;
    pthread_join(t, NULL);
    cr_expect_lt(took, 1500 * 1000000ull, "stopped %.1f ms after a cancel at 150 ms", took / 1e6);
}

Test(guards, a_cancel_set_before_stops_before_starting) {
    load_range("a", 3);
    static volatile int flag = 1;
    set_limits(&flag, 0, 0, NULL);
    expect_stop("+a(7)", IL_STOP_CANCELLED, CANCEL_TEXT);
    expect_stop("-a(0)", IL_STOP_CANCELLED, CANCEL_TEXT);
    expect_stop("+r(X) <- a(X)", IL_STOP_CANCELLED, CANCEL_TEXT);
    expect_stop("?a(X)", IL_STOP_CANCELLED, CANCEL_TEXT);
    flag = 0;
    cr_expect_eq(rows_of("?a(X)"), 3, "nothing was inserted or deleted");
    il_result *r = run(".rule list");
    cr_expect_str_eq(il_result_line(r, 0), "No rules defined.");
    il_result_free(r);
}

/* ---- memory ------------------------------------------------------------------------ */

Test(guards, a_cross_product_is_refused_at_the_memory_limit) {
    load_range("a", 3000);
    load_range("b", 3000);
    set_limits(NULL, 0, 16 * MIB, NULL);
    uint64_t t0 = now_ns();
    expect_stop("?a(X), b(Y)", IL_STOP_MEMORY, MEMORY_TEXT);
    cr_expect_lt(now_ns() - t0, 5000 * 1000000ull, "refused early, not after the whole product");
    /* the same session answers what fits under the limit, exactly */
    load_range("c", 300);
    il_result *r = run("?c(X), c(Y)");
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE);
    cr_assert_eq(il_result_nrows(r), 90000);
    for (size_t i = 0; i < 90000; i++) {
        size_t w;
        const il_value *row = il_result_row(r, i, &w);
        cr_assert_eq(w, 2);
        cr_assert_eq(val_get_int(row[0]), (int64_t)(i / 300), "row %zu", i);
        cr_assert_eq(val_get_int(row[1]), (int64_t)(i % 300), "row %zu", i);
    }
    cr_expect_gt(il_result_peak_bytes(r), 90000 * 16, "the query's rows were counted");
    cr_expect_leq(il_result_peak_bytes(r), 16 * MIB);
    il_result_free(r);
}

Test(guards, a_product_over_the_limit_answers_without_it) {
    load_range("a", 1000);
    load_range("b", 1000);
    set_limits(NULL, 0, 16 * MIB, NULL);
    expect_stop("?a(X), b(Y)", IL_STOP_MEMORY, MEMORY_TEXT);
    il_session_set_limits(unit_session, NULL);
    il_result *r = run("?a(X), b(Y)");
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE);
    cr_expect_eq(il_result_nrows(r), 100000, "a million rows, cut at max_result_rows");
    cr_expect_gt(il_result_peak_bytes(r), 16 * MIB, "the peak the limit refused");
    size_t w;
    const il_value *last = il_result_row(r, 99999, &w);
    cr_expect_eq(val_get_int(last[0]), 99);
    cr_expect_eq(val_get_int(last[1]), 999);
    il_result_free(r);
}

/* ---- the shared budget ------------------------------------------------------------- */

Test(guards, a_budget_smaller_than_the_need_stops_the_statement) {
    load_range("a", 3000);
    load_range("b", 3000);
    il_mem_budget *b = il_mem_budget_new(4 * MIB);
    set_limits(NULL, 0, 0, b);
    expect_stop("?a(X), b(Y)", IL_STOP_BUDGET, BUDGET_TEXT);
    cr_expect_eq(il_mem_budget_used(b), 0, "the stopped statement gave its memory back");
    cr_expect_eq(rows_of("?a(X), X < 10"), 10, "a small query fits");
    cr_expect_eq(il_mem_budget_used(b), 0);
    il_mem_budget_free(b);
}

Test(guards, the_per_query_limit_applies_within_a_larger_budget) {
    load_range("a", 3000);
    load_range("b", 3000);
    il_mem_budget *b = il_mem_budget_new(1024 * MIB);
    set_limits(NULL, 0, 16 * MIB, b);
    expect_stop("?a(X), b(Y)", IL_STOP_MEMORY, MEMORY_TEXT);
    cr_expect_eq(il_mem_budget_used(b), 0);
    cr_expect_eq(rows_of("?a(X), b(Y), X = 5"), 3000);
    cr_expect_eq(il_mem_budget_used(b), 0, "used returns to 0 after a statement");
    il_mem_budget_free(b);
}

/* A statement on a worker thread, as the server runs them. */
typedef struct worker {
    il_session *s;
    const char *stmt;
    il_stop stop;
} worker;

static void *run_on_worker(void *arg) {
    worker *w = arg;
    il_result *r = il_execute(w->s, w->stmt, strlen(w->stmt));
    w->stop = il_result_stop(r);
    il_result_free(r);
    return NULL;
}

Test(guards, an_unlimited_budget_counts_a_statement_on_another_thread) {
    endless_recursion();
    il_mem_budget *b = il_mem_budget_new(0);
    static volatile int flag = 0;
    set_limits(&flag, 0, 0, b);
    worker w = {unit_session, "?n(X)", IL_STOP_NONE};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, run_on_worker, &w), 0);
    uint64_t seen = 0;
    for (int i = 0; i < 2000 && seen == 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        seen = il_mem_budget_used(b);
    }
    __atomic_store_n(&flag, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    cr_expect_gt(seen, 0, "the running statement's memory was in the budget");
    cr_expect_eq(w.stop, IL_STOP_CANCELLED);
    cr_expect_eq(il_mem_budget_used(b), 0);
    /* the next statement runs on this thread, with the same budget */
    flag = 0;
    ok("+k(1)");
    cr_expect_eq(rows_of("?k(X)"), 1);
    cr_expect_eq(il_mem_budget_used(b), 0);
    il_mem_budget_free(b);
}

/* ---- writes whose body is stopped apply nothing ------------------------------------ */

Test(guards, a_stopped_conditional_delete_deletes_nothing) {
    load_range("a", 3000);
    load_range("b", 3000);
    load_range("c", 3000);
    /* 27 billion bindings: it could never finish in time */
    set_limits(NULL, now_ns() + 100 * 1000000ull, 0, NULL);
    expect_stop("-a(X) <- a(X), b(Y), c(Z), Z >= 0", IL_STOP_DEADLINE, DEADLINE_TEXT);
    il_session_set_limits(unit_session, NULL);
    cr_expect_eq(rows_of("?a(X)"), 3000);
}

Test(guards, a_stopped_update_applies_nothing) {
    load_range("a", 3000);
    load_range("b", 3000);
    set_limits(NULL, 0, 16 * MIB, NULL);
    expect_stop("-a(X), +e(X, Y) <- a(X), b(Y)", IL_STOP_MEMORY, MEMORY_TEXT);
    set_limits(NULL, now_ns() + 100 * 1000000ull, 0, NULL);
    expect_stop("-a(X), +e(X) <- a(X), b(Y), b(Z), Z >= 0", IL_STOP_DEADLINE, DEADLINE_TEXT);
    il_session_set_limits(unit_session, NULL);
    cr_expect_eq(rows_of("?a(X)"), 3000, "nothing deleted");
    cr_expect_eq(rows_of("?e(X, Y)"), 0, "nothing inserted");
    cr_expect_eq(rows_of("?e(X)"), 0, "nothing inserted");
    /* under limits it does not reach, the same kind of update applies */
    set_limits(NULL, now_ns() + 60 * 1000000000ull, 16 * MIB, NULL);
    ok("-a(X), +e(X) <- a(X), X < 10");
    cr_expect_eq(rows_of("?a(X)"), 2990);
    cr_expect_eq(rows_of("?e(X)"), 10);
}

/* ---- peak bytes ------------------------------------------------------------------- */

Test(guards, the_peak_of_a_query_that_built_relations_is_reported) {
    ok("+edge[(1, 2), (2, 3), (3, 4), (4, 5)]");
    ok("+reach(X, Y) <- edge(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
    il_result *r = run("?reach(X, Y)");
    cr_assert_eq(il_result_nrows(r), 10);
    cr_expect_gt(il_result_peak_bytes(r), 0, "counted without limits set");
    il_result_free(r);
    r = run("+edge(5, 6)");
    cr_expect_eq(il_result_peak_bytes(r), 0, "an insert evaluates nothing");
    il_result_free(r);
}

/* A full closure big enough to be searched on several threads (a chain of 1,100 nodes:
 * partitions times nodes over a million) reports the threads it ran on; its limits'
 * `threads` bound them, and a statement that evaluates nothing reports one. */
Test(guards, the_threads_a_statement_ran_on_are_reported) {
    il_engine_set_maintained_views(unit_engine, false);
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+e[");
    for (int i = 0; i < 1099; i++) il_buf_printf(&b, "%s(%d, %d)", i ? ", " : "", i, i + 1);
    il_buf_putc(&b, ']');
    ok(il_buf_str(&b));
    il_buf_free(&b);
    ok("+reach(X, Y) <- e(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), e(Y, Z)");
    ok("+n(count<X>) <- reach(X, Y)");
    for (unsigned threads = 1; threads <= 2; threads++) {
        il_limits l = {.threads = threads};
        il_session_set_limits(unit_session, &l);
        il_result *r = run("?n(C)");
        cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE);
        cr_expect_eq(il_result_threads(r), threads, "limits.threads %u", threads);
        il_result_free(r);
    }
    il_result *r = run("+e(2000, 2001)");
    cr_expect_eq(il_result_threads(r), 1, "an insert evaluates nothing");
    il_result_free(r);
    il_session_set_limits(unit_session, NULL);
}

/* ---- sorts stop with the statement -------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Pairs sorted by their first word only: stability shows in the second. */
static int cmp_first(const void *a, const void *b) {
    return cmp_u64(a, b);
}

Test(guards, the_stable_sort_keeps_equal_elements_in_order) {
    size_t n = 100000;
    uint64_t *v = malloc(n * 2 * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[2 * i] = (i * 7919) % 97;
        v[2 * i + 1] = i;
    }
    cr_assert(exec_stable_sort(v, n, 2 * sizeof *v, cmp_first));
    for (size_t i = 1; i < n; i++) {
        cr_assert_leq(v[2 * (i - 1)], v[2 * i]);
        if (v[2 * (i - 1)] == v[2 * i]) cr_assert_lt(v[2 * (i - 1) + 1], v[2 * i + 1]);
    }
    free(v);
}

Test(guards, sorts_stop_when_the_guard_says_so) {
    size_t n = 200000;
    val_t *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (val_t)((n - i) * 2654435761u);
    exec_guard g;
    exec_guard_init(&g, NULL, exec_clock_ns() - 1, 0, NULL);
    exec_guard *outer = exec_guard_enter(&g);
    cr_expect_not(exec_stable_sort(v, n, sizeof *v, cmp_u64));
    cr_expect_not(tuple_sort(v, n, 1));
    exec_guard_leave(outer);
    cr_expect_eq(g.stop, IL_STOP_DEADLINE);
    exec_guard_finish(&g);
    /* with no guard installed they run to the end */
    cr_expect(tuple_sort(v, n, 1));
    for (size_t i = 1; i < n; i++) cr_assert_leq(v[i - 1], v[i]);
    free(v);
}
