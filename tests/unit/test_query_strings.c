/* What a query interns lives as long as its result (base/intern.h, docs/engine.md
 * "Values"): queries and explanations with strings, long integers and vectors of their
 * own leave the intern table as they found it, and whatever keeps such a value beyond the
 * query (a write, a maintained view, the plan cache) keeps it whole. Under
 * AddressSanitizer a value freed while something still refers to it is reported when it
 * is read. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "kg/kg.h"
#include "plan/plan.h"
#include "unit_fixture.h"

TestSuite(query_strings, .init = unit_suite_open, .fini = unit_suite_close);

static void run_and_free(const char *stmt) {
    il_result *r = il_execute(unit_session, stmt, strlen(stmt));
    cr_assert_neq(il_result_kind_of(r), IL_RESULT_ERROR, "%s", stmt);
    cr_assert_neq(il_result_kind_of(r), IL_RESULT_PARSE_ERROR, "%s", stmt);
    il_result_free(r);
}

static void expect_answer(const char *q, const char *want) {
    char *got = unit_answer_str(unit_session, q);
    cr_assert_str_eq(got, want);
    free(got);
}

Test(query_strings, queries_of_their_own_strings_leave_nothing) {
    /* the graph's plan cache holds the last 64 programs' constants: dropping the graph
       at the end frees them; nothing is kept idle here */
    il_intern_set_idle_limits(0, 0);
    unit_run(unit_session, ".kg create probes");
    unit_run(unit_session, ".kg use probes");
    unit_run(unit_session, "+f(\"a\", 1)");
    unit_run(unit_session, "+name(\"alice\")");
    unit_run(unit_session, "+doc(1, [0.5, 0.25])");
    /* each with a string, long integer or vector of its own for every i */
    static const char *const probes[] = {
        "?f(\"probe-%d\", X)",
        "?f(X, Y), X = \"cmp-%d\"",
        "?name(N), G = concat(N, \"-\", \"%d\")",
        "?f(X, Y), Z = Y + 500000000000%03d",
        "?doc(I, V), W = [%d.5, 1.0], D = euclidean(V, W)",
        ".why ?f(X, Y), Z = concat(X, \"why-\", \"%d\")",
        ".why_not f(\"absent-%d\", 1)",
    };
    char q[256];
    /* one of each first: whatever the first query of a kind interns for good */
    for (int round = 0; round < 2; round++) {
        il_intern_stats before = il_intern_stats_now();
        for (int i = round * 100; i < round * 100 + 100; i++) {
            for (size_t k = 0; k < sizeof probes / sizeof *probes; k++) {
                snprintf(q, sizeof q, probes[k], i);
                run_and_free(q);
            }
        }
        if (round == 0) continue;
        /* what the cache holds, at most 64 programs' constants */
        il_intern_stats after = il_intern_stats_now();
        cr_assert_leq(after.strings, before.strings + 64 * 4, "%llu values before, %llu after",
                      (unsigned long long)before.strings, (unsigned long long)after.strings);
        unit_run(unit_session, ".kg use default");
        unit_run(unit_session, ".kg drop probes");
        after = il_intern_stats_now();
        cr_assert_leq(after.strings, before.strings);
        cr_assert_eq(after.transient, 0);
    }
}

Test(query_strings, a_query_run_again_finds_its_strings_idle) {
    il_intern_set_idle_limits(1000, 1 << 20); /* (none by default under AddressSanitizer) */
    unit_run(unit_session, "+name(\"alice\")");
    unit_run(unit_session, "+name(\"bob\")");
    const char *q = "?name(N), G = concat(N, \"-\", \"again\")";
    expect_answer(q, "?name(N), G = concat(N, \"-\", \"again\") -> (\"alice\", \"alice-again\") "
                     "(\"bob\", \"bob-again\")\n");
    il_intern_stats first = il_intern_stats_now();
    cr_assert_geq(first.idle, 2);
    expect_answer(q, "?name(N), G = concat(N, \"-\", \"again\") -> (\"alice\", \"alice-again\") "
                     "(\"bob\", \"bob-again\")\n");
    il_intern_stats second = il_intern_stats_now();
    cr_assert_eq(second.strings, first.strings, "the same strings, found idle");
    /* (its program may be cached by now, holding its constants) */
    cr_assert_eq(second.idle + second.transient, first.idle + first.transient);
}

Test(query_strings, a_write_of_a_string_a_live_result_holds_keeps_it) {
    unit_run(unit_session, "+f(\"a\", 1)");
    const char *q = "?f(X, Y), Z = concat(X, \"!\", \"new\")";
    il_result *held = il_execute(unit_session, q, strlen(q));
    cr_assert_eq(il_result_nrows(held), 1);
    unit_run(unit_session, "+g(\"a!new\")");
    il_result_free(held);
    expect_answer("?g(X)", "?g(X) -> (\"a!new\")\n");
}

Test(query_strings, a_cached_program_keeps_its_query_s_strings) {
    unit_run(unit_session, "+f(\"a\", 1)");
    expect_answer("?f(\"zz\", X)", "?f(\"zz\", X) ->\n");
    expect_answer("?f(\"zz\", X)", "?f(\"zz\", X) ->\n");
    /* other new strings take the freed ids meanwhile, and keep them */
    il_result *held[50];
    for (int i = 0; i < 50; i++) {
        char q[64];
        snprintf(q, sizeof q, "?f(\"other-%d\", X)", i);
        held[i] = il_execute(unit_session, q, strlen(q));
    }
    unit_run(unit_session, "+f(\"zz\", 2)");
    expect_answer("?f(\"zz\", X)", "?f(\"zz\", X) -> (\"zz\", 2)\n");
    for (int i = 0; i < 50; i++) il_result_free(held[i]);
}

Test(query_strings, a_rule_maintained_by_a_read_keeps_what_it_computes) {
    unit_run(unit_session, "+f(\"a\", 1)");
    unit_run(unit_session, "+f(\"b\", 2)");
    unit_run(unit_session, "+r(X, Y) <- f(X, _), Y = concat(X, \"-\", \"r\")");
    /* unbound: the read makes the rule maintained, its view built after the query */
    expect_answer("?r(X, Y)", "?r(X, Y) -> (\"a\", \"a-r\") (\"b\", \"b-r\")\n");
    for (int i = 0; i < 50; i++) {
        char q[64];
        snprintf(q, sizeof q, "?f(X, _), Y = concat(X, \"-\", \"%d\")", i);
        run_and_free(q);
    }
    unit_run(unit_session, "+f(\"c\", 3)");
    expect_answer("?r(X, Y)", "?r(X, Y) -> (\"a\", \"a-r\") (\"b\", \"b-r\") (\"c\", \"c-r\")\n");
}

Test(query_strings, a_cached_program_used_outside_a_query_interns_its_strings_for_good) {
    il_intern_set_idle_limits(0, 0);
    unit_run(unit_session, ".kg create g");
    unit_run(unit_session, ".kg use g");
    unit_run(unit_session, "+f(1)");
    run_and_free("?f(X), Y = \"brand-new\"");
    cr_assert_eq(il_intern_stats_now().transient, 1, "held by the cached program");
    /* anything but a read (which runs in a scope) might store what the program yields */
    kg_plan_entry *e = kg_plan_lookup(unit_session->kg, "__query__(X, Y) <- f(X), Y = $0s");
    cr_assert(e && e->prog);
    plan_program_reset(e->prog);
    il_intern_stats kept = il_intern_stats_now();
    cr_assert_eq(kept.transient, 0);
    /* the graph and its plan cache gone, the string stays */
    unit_run(unit_session, ".kg use default");
    unit_run(unit_session, ".kg drop g");
    cr_assert_eq(il_intern_stats_now().strings, kept.strings);
}
