/* Unit tests of the read policy of maintained views (src/views/read_policy.h): which
 * rules become maintained, that reads of them answer exactly what evaluation answers
 * (session rules and facts included), that time-dependent rules are never maintained,
 * and a randomized differential test of writes, rule additions and queries against a
 * fresh engine that evaluates everything from scratch. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/tuplesort.h"
#include "inputlayer.h"
#include "unit_fixture.h"
#include "kg/kg.h"
#include "plan/plan.h"
#include "value/value.h"
#include "views/read_policy.h"

TestSuite(read_policy, .init = unit_suite_open, .fini = unit_suite_close);

static void run(const char *text) {
    unit_run(unit_session, text);
}

/* A query's answer as text: "N rows" then one line per row in the query's order, or
 * its error line. */
static char *answer(il_session *s, const char *query) {
    il_result *r = il_execute(s, query, strlen(query));
    size_t cap = 256, len = 0;
    char *out = malloc(cap);
    if (il_result_kind_of(r) != IL_RESULT_TABLE) {
        snprintf(out, cap, "error: %s", il_result_nlines(r) ? il_result_line(r, 0) : "?");
        il_result_free(r);
        return out;
    }
    size_t n = il_result_nrows(r);
    len = (size_t)snprintf(out, cap, "%zu rows\n", n);
    for (size_t i = 0; i < n; i++) {
        size_t width;
        const il_value *row = il_result_row(r, i, &width);
        for (size_t k = 0; k < width; k++) {
            char buf[64];
            il_value_format(row[k], buf, sizeof buf);
            while (len + strlen(buf) + 3 > cap) out = realloc(out, cap *= 2);
            len += (size_t)snprintf(out + len, cap - len, "%s%s", buf, k + 1 < width ? "," : "\n");
        }
    }
    il_result_free(r);
    return out;
}

static uint32_t maintained(void) {
    return read_policy_count(unit_session->kg);
}

static void reach_rules(void) {
    run("+edge[(1, 2), (2, 3), (3, 4), (5, 6)]");
    run("+reach(X, Y) <- edge(X, Y)");
    run("+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
}

Test(read_policy, bound_reads_evaluate_on_demand) {
    reach_rules();
    char *a = answer(unit_session, "?reach(1, Y)");
    cr_assert_eq(maintained(), 0, "a bound read keeps the rule on demand");
    cr_assert(strstr(a, "3 rows"), "%s", a);
    free(a);
    a = answer(unit_session, "?reach(X, X)");
    cr_assert_eq(maintained(), 0, "a repeated variable binds the goal");
    free(a);
}

Test(read_policy, unbound_read_maintains_and_later_reads_use_it) {
    reach_rules();
    char *before_bound = answer(unit_session, "?reach(1, Y)");
    char *a = answer(unit_session, "?reach(X, Y)");
    cr_assert_eq(maintained(), 1);
    cr_assert(strstr(a, "7 rows"), "%s", a);
    char *b = answer(unit_session, "?reach(1, Y)");
    cr_assert_str_eq(b, before_bound, "a bound read of the maintained relation");
    free(a);
    free(b);
    /* writes keep it current, deletions included */
    run("+edge(4, 5)");
    a = answer(unit_session, "?reach(1, Y)");
    cr_assert(strstr(a, "5 rows"), "%s", a);
    free(a);
    run("-edge(2, 3)");
    a = answer(unit_session, "?reach(X, Y)");
    cr_assert(strstr(a, "7 rows"), "%s", a);
    free(a);
    cr_assert_eq(maintained(), 1);
    /* a rule that reads the maintained one */
    run("+far(X) <- reach(1, X), !edge(1, X)");
    free(before_bound);
    cr_assert_eq(maintained(), 0, "a change of rules ends maintenance");
    a = answer(unit_session, "?far(X)");
    cr_assert(strstr(a, "0 rows"), "%s", a);
    free(a);
}

Test(read_policy, a_first_read_keeps_only_the_rows_until_a_write_needs_more) {
    reach_rules();
    run("+n(count<X>) <- reach(X, Y)");
    char *a = answer(unit_session, "?n(C)");
    cr_assert_str_eq(a, "1 rows\n7\n");
    free(a);
    cr_assert_eq(maintained(), 1);
    /* reach's 7 rows and n's one: no copy for the query, no aggregate bindings yet */
    cr_assert_eq(read_policy_state_tuples(unit_session->kg), 8);
    run("+edge(6, 7)");
    a = answer(unit_session, "?n(C)");
    cr_assert_str_eq(a, "1 rows\n9\n");
    free(a);
    /* the write built the count's bindings (one per reach row) from the state before it */
    cr_assert_eq(read_policy_state_tuples(unit_session->kg), 9 + 1 + 9);
    run("-edge(1, 2)");
    a = answer(unit_session, "?n(C)");
    cr_assert_str_eq(a, "1 rows\n6\n");
    free(a);
}

Test(read_policy, counted_and_recomputed_rows_are_replaced_in_place) {
    /* cached programs read a maintained relation through its pointer: the counts built
       at the first write, and an aggregate of two clauses recomputed whole, must land
       in the same relation */
    run("+a[(1), (2)]");
    run("+b[(3)]");
    run("+m(X) <- a(X)");
    run("+n(count<X>) <- a(X)");
    run("+n(count<X>) <- b(X)");
    char *a = answer(unit_session, "?m(X)");
    cr_assert_str_eq(a, "2 rows\n1\n2\n");
    free(a);
    a = answer(unit_session, "?n(C)");
    cr_assert_eq(maintained(), 2);
    free(a);
    for (int i = 4; i < 8; i++) {
        char w[32];
        snprintf(w, sizeof w, "+a(%d)", i);
        run(w);
        char *got = answer(unit_session, "?m(X)");
        char want[64];
        snprintf(want, sizeof want, "%d rows\n", i - 1);
        cr_assert(strncmp(got, want, strlen(want)) == 0, "%s", got);
        free(got);
        got = answer(unit_session, "?n(C)");
        snprintf(want, sizeof want, "2 rows\n1\n%d\n", i - 1); /* a's count, b's */
        cr_assert_str_eq(got, want);
        free(got);
    }
    run("-a(1)");
    a = answer(unit_session, "?m(X)");
    cr_assert_str_eq(a, "5 rows\n2\n4\n5\n6\n7\n");
    free(a);
}

Test(read_policy, maintenance_can_be_switched_off) {
    reach_rules();
    il_engine_set_maintained_views(unit_engine, false);
    char *a = answer(unit_session, "?reach(X, Y)");
    cr_assert(strstr(a, "7 rows"), "%s", a);
    free(a);
    cr_assert_eq(maintained(), 0, "off: every read evaluates");
    il_engine_set_maintained_views(unit_engine, true);
    free(answer(unit_session, "?reach(X, Y)"));
    cr_assert_eq(maintained(), 1);
    il_engine_set_maintained_views(unit_engine, false);
    cr_assert_eq(maintained(), 0, "switching off ends maintenance");
    run("+edge(4, 5)");
    a = answer(unit_session, "?reach(1, Y)");
    cr_assert(strstr(a, "5 rows"), "%s", a);
    free(a);
}

Test(read_policy, a_moved_version_without_views_keeps_the_plan_cache) {
    run("+edge(1, 2)");
    run("+r(X, Y) <- edge(X, Y)");
    /* the graph moved (a relation began holding facts, a rule came); the read of a base
       relation makes nothing maintained, so the program it cached stays */
    free(answer(unit_session, "?edge(X, Y)"));
    cr_assert_eq(read_policy_count(unit_session->kg), 0);
    kg_plan_entry *e = kg_plan_lookup(unit_session->kg, "__query__(X, Y) <- edge(X, Y)");
    cr_assert(e && e->prog);
    plan_program_reset(e->prog);
}

Test(read_policy, time_dependent_rules_are_never_maintained) {
    run("+ev[(1, 0), (2, 4102444800000)]");
    run("+future(X) <- ev(X, T), T > time_now()");
    char *a = answer(unit_session, "?future(X)");
    cr_assert(strstr(a, "1 rows"), "%s", a);
    free(a);
    cr_assert_eq(maintained(), 0);
    /* also through a rule it depends on */
    run("+soon(X) <- future(X)");
    a = answer(unit_session, "?soon(X)");
    free(a);
    cr_assert_eq(maintained(), 0);
}

Test(read_policy, session_rules_and_facts_are_evaluated) {
    reach_rules();
    char *a = answer(unit_session, "?reach(X, Y)");
    free(a);
    cr_assert_eq(maintained(), 1);
    /* a session fact of a relation the maintained rule reads */
    run("edge(4, 9)");
    a = answer(unit_session, "?reach(1, Y)");
    cr_assert(strstr(a, "4 rows"), "the session's edge(4, 9) takes part: %s", a);
    free(a);
    /* another session without session state still reads the maintained rows */
    il_session *other = il_session_open(unit_engine);
    a = answer(other, "?reach(1, Y)");
    cr_assert(strstr(a, "3 rows"), "%s", a);
    free(a);
    /* a session rule of the maintained relation itself */
    unit_run(other, "reach(X, Y) <- edge(Y, X)");
    a = answer(other, "?reach(2, Y)");
    cr_assert(strstr(a, "4 rows"), "reach(2, 1..4) through the session rule: %s", a);
    free(a);
    il_session_close(other);
}

/* ---- randomized differential test against evaluation from scratch ---- */

static uint64_t rng_state = 7;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Rules added in random order during the run; each may read the ones before it. */
static const char *const RULES[] = {
    "+reach(X, Y) <- edge(X, Y)",
    "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
    "+hot(X, Y) <- label(X, 1), reach(X, Y)",
    "+cold(X) <- label(X, _), !hot(X, _)",
    "+deg(X, count<Y>) <- reach(X, Y)",
    "+two(X, Z) <- edge(X, Y), edge(Y, Z)",
    "+top(X, top_k<2, Y:desc>) <- two(X, Y)",
};

static const char *const QUERIES[] = {
    "?reach(X, Y)", "?reach(2, Y)", "?hot(X, Y)", "?hot(1, Y)",   "?cold(X)",    "?deg(X, N)",
    "?deg(3, N)",   "?two(X, Y)",   "?top(X, Y)", "?reach(X, 3)", "?edge(X, Y)",
};

typedef struct history {
    char **v;
    size_t n, cap;
} history;

static void remember(history *h, const char *stmt) {
    if (h->n == h->cap) h->v = realloc(h->v, (h->cap = h->cap ? h->cap * 2 : 64) * sizeof *h->v);
    h->v[h->n++] = strdup(stmt);
}

/* The answer of a fresh engine that replays the history and evaluates the query: its
 * session holds a session fact of a relation nothing reads, which keeps every query off
 * maintained relations. */
static char *reference(const history *h, const char *query) {
    char *err = NULL;
    il_engine *e = il_engine_open(NULL, &err);
    il_session *s = il_session_open(e);
    for (size_t i = 0; i < h->n; i++) unit_run(s, h->v[i]);
    unit_run(s, "evaluate_only_marker(0)");
    char *a = answer(s, query);
    cr_assert_eq(read_policy_count(s->kg), 0);
    il_engine_close(e);
    return a;
}

Test(read_policy, differential_against_evaluation, .timeout = 240) {
    history h = {0};
    char stmt[128];
    size_t nrules = 0, checks = 0, reads_maintained = 0;
    for (int round = 0; round < 6; round++) {
        snprintf(stmt, sizeof stmt, ".kg create g%d", round);
        run(stmt);
        snprintf(stmt, sizeof stmt, ".kg use g%d", round);
        run(stmt);
        for (size_t i = 0; i < h.n; i++) free(h.v[i]);
        h.n = 0;
        nrules = 0;
        int domain = 4 + round;
        for (int step = 0; step < 120; step++) {
            int kind = (int)(rnd() % 20);
            int x = 1 + (int)(rnd() % (uint64_t)domain), y = 1 + (int)(rnd() % (uint64_t)domain);
            if (kind < 8)
                snprintf(stmt, sizeof stmt, "+edge(%d, %d)", x, y);
            else if (kind < 12)
                snprintf(stmt, sizeof stmt, "-edge(%d, %d)", x, y);
            else if (kind < 14)
                snprintf(stmt, sizeof stmt, "%slabel(%d, %d)", rnd() % 2 ? "+" : "-", x, y % 2);
            else if (kind < 15)
                snprintf(stmt, sizeof stmt, "-edge(X, Y) <- edge(X, Y), X = %d", x);
            else if (kind < 16 && nrules < sizeof RULES / sizeof *RULES)
                snprintf(stmt, sizeof stmt, "%s", RULES[nrules++]);
            else
                stmt[0] = 0;
            if (stmt[0]) {
                run(stmt);
                remember(&h, stmt);
            }
            /* a query after most statements; its answer must not depend on maintenance */
            const char *q = QUERIES[rnd() % (sizeof QUERIES / sizeof *QUERIES)];
            char *got = answer(unit_session, q);
            reads_maintained += maintained() > 0;
            char *want = reference(&h, q);
            if (strcmp(got, want) != 0) {
                fprintf(stderr, "history:\n");
                for (size_t i = 0; i < h.n; i++) fprintf(stderr, "  %s\n", h.v[i]);
                cr_assert_fail("%s differs:\nmaintained:\n%s\nevaluated:\n%s", q, got, want);
            }
            free(got);
            free(want);
            checks++;
        }
    }
    cr_assert_gt(reads_maintained, checks / 4, "the policy maintained rules for many reads");
    fprintf(stderr, "read_policy differential: %zu answers checked, %zu with rules maintained\n",
            checks, reads_maintained);
    for (size_t i = 0; i < h.n; i++) free(h.v[i]);
    free(h.v);
}

Test(read_policy, rules_of_no_arguments_stay_exact_under_writes) {
    /* a view computed by evaluation keeps a rule of no columns as writes keep it: a chain
       of them, with a negation, read maintained after every write */
    run("+edge(5, 6)");
    run("+a() <- edge(5, 6)");
    run("+b() <- a()");
    run("+d() <- edge(7, 8)");
    run("+c() <- b(), !d()");
    static const struct {
        const char *write, *want;
    } steps[] = {
        {NULL, "1 rows\n"},          {"+edge(7, 8)", "0 rows\n"}, {"-edge(7, 8)", "1 rows\n"},
        {"-edge(5, 6)", "0 rows\n"}, {"+edge(5, 6)", "1 rows\n"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        if (steps[i].write) run(steps[i].write);
        char *got = answer(unit_session, "?c()");
        cr_assert_str_eq(got, steps[i].want, "after step %zu", i);
        free(got);
        cr_assert_eq(maintained(), 1);
    }
}
