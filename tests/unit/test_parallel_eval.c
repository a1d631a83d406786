/* Unit tests of recursion on several threads (exec/eval.c with exec/team.h): recursive
 * programs that are not a full closure, big enough to be shared out, give on 2 and 3
 * threads the rows of one thread, word for word, and report the threads they used; the
 * partitioned fixpoint (a column passed through) and the general semi-naive rounds
 * (same generation, mutual recursion, a non-linear rule over negation), strings computed
 * in a head among them. The guard (cancel flag, deadline, memory limit) stops them on
 * several threads as it does on one. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/intern.h"
#include "exec/eval.h"
#include "exec/rel.h"
#include "iql/parser.h"
#include "plan/build.h"
#include "program_fixture.h"
#include "value/value.h"

static uint64_t rng;

TestSuite(parallel, .init = pf_setup, .fini = pf_teardown);

static uint64_t rnd(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* edge: `edges` random edges over `nodes` nodes. */
static void random_graph(uint64_t seed, int nodes, int edges) {
    rng = seed;
    for (int i = 0; i < edges; i++)
        pf_fact2("edge", (int64_t)(rnd() % (uint64_t)nodes), (int64_t)(rnd() % (uint64_t)nodes));
}

/* p(child, parent): a random tree of `nodes` nodes rooted at 0. */
static void random_tree(uint64_t seed, int nodes) {
    rng = seed;
    for (int i = 1; i < nodes; i++) pf_fact2("p", i, (int64_t)(rnd() % (uint64_t)i));
}

static pf_outcome run_on(const char *query, uint32_t threads) {
    exec_guard g;
    exec_guard_init(&g, NULL, 0, 0, NULL);
    g.threads = threads;
    pf_outcome o = pf_run(query, &g);
    exec_guard_finish(&g);
    return o;
}

/* The query's rows on 2 and 3 threads are those of one thread, and it used them all. */
static void expect_same_on_threads(const char *what, const char *query, size_t min_rows) {
    pf_outcome one = run_on(query, 1);
    cr_assert_null(one.error, "%s: %s", what, one.error);
    cr_assert_geq(one.n, min_rows, "%s: %zu rows, too few to share out", what, one.n);
    cr_expect_eq(one.used, 0, "%s: one thread allowed, %u used", what, one.used);
    for (uint32_t threads = 2; threads <= 3; threads++) {
        pf_outcome many = run_on(query, threads);
        cr_assert_null(many.error, "%s, %u threads: %s", what, threads, many.error);
        cr_expect_eq(many.used, threads, "%s: %u threads allowed, %u used", what, threads,
                     many.used);
        cr_expect_eq(many.n, one.n, "%s, %u threads: %zu rows, one thread %zu", what, threads,
                     many.n, one.n);
        if (many.n == one.n)
            cr_expect(memcmp(many.words, one.words, one.n * one.arity * sizeof *one.words) == 0,
                      "%s, %u threads: the rows differ from one thread's", what, threads);
        free(many.words);
    }
    free(one.words);
}

Test(parallel, partitions_with_a_computed_column_give_one_threads_rows) {
    random_graph(11, 700, 1400);
    pf_rule("+walk(X, Y, 1) <- edge(X, Y)");
    pf_rule("+walk(X, Z, D) <- walk(X, Y, D0), edge(Y, Z), D = D0 + 1, D < 9");
    expect_same_on_threads("walks", "q(X, Y, D) <- walk(X, Y, D)", 50000);
}

Test(parallel, partitions_over_negation_give_one_threads_rows) {
    random_graph(12, 800, 1700);
    for (int i = 0; i < 800; i += 9) pf_fact1("blocked", i);
    pf_rule("+open(X, Y) <- edge(X, Y), !blocked(Y)");
    pf_rule("+open(X, Z) <- open(X, Y), edge(Y, Z), !blocked(Z)");
    expect_same_on_threads("open paths", "q(X, Y) <- open(X, Y)", 50000);
}

Test(parallel, same_generation_rounds_give_one_threads_rows) {
    random_tree(13, 2500);
    pf_rule("+sg(X, X) <- p(X, _)");
    pf_rule("+sg(X, Y) <- p(X, A), sg(A, B), p(Y, B)");
    expect_same_on_threads("same generation", "q(X, Y) <- sg(X, Y)", 50000);
}

Test(parallel, mutual_recursion_rounds_give_one_threads_rows) {
    random_graph(14, 600, 1100);
    pf_rule("+odd(X, Y) <- edge(X, Y)");
    pf_rule("+odd(X, Z) <- even(X, Y), edge(Y, Z)");
    pf_rule("+even(X, Z) <- odd(X, Y), edge(Y, Z)");
    expect_same_on_threads("even paths", "q(X, Y) <- even(X, Y)", 50000);
    expect_same_on_threads("odd paths", "q(X, Y) <- odd(X, Y)", 50000);
}

Test(parallel, non_linear_rounds_over_negation_give_one_threads_rows) {
    random_graph(15, 500, 900);
    for (int i = 0; i < 500; i += 7) pf_fact1("blocked", i);
    pf_rule("+hop(X, Y) <- edge(X, Y), !blocked(X)");
    pf_rule("+hop(X, Z) <- hop(X, Y), hop(Y, Z)");
    expect_same_on_threads("non-linear", "q(X, Y) <- hop(X, Y)", 30000);
}

Test(parallel, strings_made_in_heads_give_one_threads_rows) {
    random_graph(16, 300, 700);
    pf_rule("+named(X, Y, S) <- edge(X, Y), S = concat(\"n\", \"\", \"\")");
    pf_rule("+named(X, Z, S) <- named(X, Y, S0), edge(Y, Z), len(S0) < 6, "
            "S = concat(S0, \"x\", \"\")");
    /* the strings of a statement are held by its scope: the helpers' ones too */
    il_intern_scope *sc = il_intern_scope_new();
    il_intern_scope *outer = il_intern_scope_enter(sc);
    expect_same_on_threads("strings", "q(X, Y, S) <- named(X, Y, S)", 30000);
    pf_outcome o = run_on("q(X, Y, S) <- named(X, Y, S), len(S) = 6", 2);
    cr_assert_null(o.error, "%s", o.error);
    bool all_six = o.n > 0;
    for (size_t k = 0; k < o.n; k++) {
        size_t len = 0;
        const char *s = il_intern_get((uint32_t)val_payload(o.words[k * 3 + 2]), &len);
        all_six = all_six && len == 6 && memcmp(s, "nxxxxx", 6) == 0;
    }
    cr_expect(all_six, "the longest strings made on helper threads read `nxxxxx`");
    free(o.words);
    il_intern_scope_leave(outer);
    il_intern_scope_free(sc);
}

/* Sets *flag after `ns` nanoseconds, on a thread of its own. */
typedef struct later {
    volatile int *flag;
    uint64_t ns;
    pthread_t thread;
} later;

static void *set_later(void *arg) {
    later *l = arg;
    struct timespec d = {.tv_sec = (time_t)(l->ns / 1000000000u),
                         .tv_nsec = (long)(l->ns % 1000000000u)};
    nanosleep(&d, NULL);
    *l->flag = 1;
    return NULL;
}

Test(parallel, a_guard_stops_recursion_on_threads) {
    random_graph(17, 700, 1400);
    random_tree(18, 2500);
    pf_rule("+walk(X, Y, 1) <- edge(X, Y)");
    pf_rule("+walk(X, Z, D) <- walk(X, Y, D0), edge(Y, Z), D = D0 + 1, D < 9");
    pf_rule("+sg(X, X) <- p(X, _)");
    pf_rule("+sg(X, Y) <- p(X, A), sg(A, B), p(Y, B)");
    const char *queries[] = {"q(X, Y, D) <- walk(X, Y, D)", "q(X, Y) <- sg(X, Y)"};
    for (int kind = 0; kind < 6; kind++) {
        const char *q = queries[kind / 3];
        /* the stops fall a third of the way through one thread's run: past the part that
           always runs on one thread, before two threads could be done */
        uint64_t t0 = exec_clock_ns();
        pf_outcome one = run_on(q, 1);
        uint64_t third = (exec_clock_ns() - t0) / 3;
        free(one.words);
        static volatile int cancelled;
        cancelled = 0;
        later canceller = {.flag = &cancelled, .ns = third};
        exec_guard g;
        if (kind % 3 == 0) /* the rows take tens of MB */
            exec_guard_init(&g, NULL, 0, 2u << 20, NULL);
        else if (kind % 3 == 1)
            exec_guard_init(&g, NULL, exec_clock_ns() + third, 0, NULL);
        else {
            exec_guard_init(&g, &cancelled, 0, 0, NULL);
            cr_assert_eq(pthread_create(&canceller.thread, NULL, set_later, &canceller), 0);
        }
        g.threads = 2;
        pf_outcome o = pf_run(q, &g);
        exec_guard_finish(&g);
        if (kind % 3 == 2) pthread_join(canceller.thread, NULL);
        cr_expect_not_null(o.error, "kind %d ran to its end", kind);
        if (o.error) cr_expect_str_eq(o.error, EXEC_STOPPED, "kind %d: %s", kind, o.error);
        il_stop want[] = {IL_STOP_MEMORY, IL_STOP_DEADLINE, IL_STOP_CANCELLED};
        cr_expect_eq(g.stop, want[kind % 3], "kind %d: stop %d", kind, (int)g.stop);
        cr_expect_eq(o.used, 2, "kind %d: stopped before the threads started", kind);
        free(o.words);
    }
}
