/* Unit tests of the engine's change hook (il_engine_set_change_hook): the exact records
 * each kind of statement reports (facts per relation, netted; rules; graphs; schemas),
 * one call per statement that changed something, and nothing for no-ops, failures,
 * session state and reads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "inputlayer.h"
#include "unit_fixture.h"
#include "value/value.h"
#include "views/view.h"

static il_engine *EN;
static il_session *S;
/* What the hook received since the last look: one line per call, its records joined
 * by " | ", each "KIND graph name operation count". */
static il_buf SEEN;
static int CALLS;

static const char *const KINDS[] = {"FACTS", "RULE", "GRAPH", "SCHEMA"};

static void record(void *ctx, const il_change *c, size_t n) {
    cr_assert_eq(ctx, &SEEN);
    cr_assert_gt(n, 0, "the hook is never called without changes");
    CALLS++;
    for (size_t i = 0; i < n; i++) {
        il_buf_printf(&SEEN, "%s%s %s %s %s", i ? " | " : "", KINDS[c[i].kind], c[i].graph,
                      c[i].name ? c[i].name : "-", c[i].operation);
        if (c[i].kind == IL_CHANGE_FACTS)
            il_buf_printf(&SEEN, " %llu", (unsigned long long)c[i].count);
        else
            cr_expect_eq(c[i].count, 0);
    }
    il_buf_putc(&SEEN, '\n');
}

static void setup(void) {
    EN = il_engine_open(NULL, NULL);
    cr_assert_not_null(EN);
    S = il_session_open(EN);
    il_buf_init(&SEEN);
    CALLS = 0;
    il_engine_set_change_hook(EN, record, &SEEN);
}

static void teardown(void) {
    il_engine_close(EN);
    il_buf_free(&SEEN);
    val_shutdown();
}

TestSuite(changes, .init = setup, .fini = teardown);

/* Runs a statement and returns what the hook saw during it (without the final newline);
 * at most one call per statement. */
static char *run(const char *stmt) {
    il_buf_clear(&SEEN);
    int before = CALLS;
    il_result *r = il_execute(S, stmt, strlen(stmt));
    il_result_free(r);
    cr_assert_leq(CALLS - before, 1, "`%s`: %d calls", stmt, CALLS - before);
    char *out = strdup(il_buf_str(&SEEN));
    size_t len = strlen(out);
    if (len && out[len - 1] == '\n') out[len - 1] = 0;
    return out;
}

/* Runs a statement for its effect (setting the stage for the one under test). */
static void exec(const char *stmt) {
    free(run(stmt));
}

static void expect_changes(const char *stmt, const char *want) {
    char *got = run(stmt);
    cr_expect_str_eq(got, want, "`%s`\n--- got:  %s\n--- want: %s", stmt, got, want);
    free(got);
}

#define NONE(stmt) expect_changes(stmt, "")

/* ---- facts ---- */

Test(changes, insert_reports_the_new_facts_only) {
    expect_changes("+edge[(1, 2), (2, 3), (3, 4)]", "FACTS default edge insert 3");
    expect_changes("+edge(4, 5)", "FACTS default edge insert 1");
    NONE("+edge[(1, 2), (2, 3)]");
    expect_changes("+edge[(1, 2), (7, 8), (7, 8)]", "FACTS default edge insert 1");
    NONE("+edge[]");
}

Test(changes, failed_inserts_report_nothing) {
    expect_changes("+edge(1, 2)", "FACTS default edge insert 1");
    NONE("+edge(1, 2, 3)");           /* arity of the relation */
    NONE("+edge[(5, 6), (5, 6, 7)]"); /* arity within the batch */
    NONE("+edge(X, 2)");              /* not a constant */
    expect_changes("+typed(n: int)", "SCHEMA default typed created");
    NONE("+typed(\"text\")"); /* schema type */
    expect_changes("+view(X) <- edge(X, _)", "RULE default view registered");
    NONE("+view(9)"); /* a derived relation */
}

Test(changes, delete_reports_the_removed_facts_only) {
    exec("+edge[(1, 2), (2, 3), (3, 4)]");
    expect_changes("-edge(1, 2)", "FACTS default edge delete 1");
    NONE("-edge(1, 2)");
    NONE("-missing(1, 2)");
    NONE("-edge(1, 2, 3)");
    expect_changes("-edge[(2, 3), (9, 9), (3, 4)]", "FACTS default edge delete 2");
    NONE("-edge[(2, 3)]");
}

Test(changes, conditional_delete) {
    exec("+edge[(1, 2), (2, 3), (3, 4)]");
    expect_changes("-edge(X, Y) <- edge(X, Y), X > 1", "FACTS default edge delete 2");
    NONE("-edge(X, Y) <- edge(X, Y), X > 1");
    NONE("-edge(X, Y) <- nothing(X, Y)");
    expect_changes("-edge(X, Y) <- edge(X, Y)", "FACTS default edge delete 1");
}

Test(changes, update_reports_each_relation_it_changed) {
    exec("+a[(1), (2)]");
    exec("+b(1)");
    /* a loses both; b gains only 2, since b(1) is there */
    expect_changes("-a(X), +b(X) <- a(X)", "FACTS default a delete 2 | FACTS default b insert 1");
    NONE("-a(X), +b(X) <- a(X)"); /* no rows */
}

Test(changes, update_of_one_relation_is_netted) {
    exec("+cnt[(1), (2)]");
    /* {1, 2} becomes {3}: 1 and 2 removed, 3 added; 2 was added back and removed again */
    expect_changes("-cnt(X), +cnt(Y) <- cnt(X), Y = X + 1", "FACTS default cnt update 3");
    /* removed and added back: no change at all */
    NONE("-cnt(X), +cnt(X) <- cnt(X)");
    exec("+cnt(10)");
    expect_changes("-cnt(X), +cnt(Y) <- cnt(X), X = 10, Y = 11", "FACTS default cnt update 2");
}

Test(changes, failed_update_reports_nothing) {
    exec("+a(1)");
    exec("+v(X) <- a(X)");
    NONE("-a(X), +v(X) <- a(X)"); /* insert into a derived relation */
    NONE("-a(X), +w(X, Y) <- a(X), missing(Y)");
}

Test(changes, clear_prefix_reports_each_relation) {
    exec("+e_one[(1), (2)]");
    exec("+e_two(1)");
    exec("+e_empty(1)");
    exec("-e_empty(1)");
    exec("+other(1)");
    expect_changes(".clear prefix e_",
                   "FACTS default e_one delete 2 | FACTS default e_two delete 1");
    NONE(".clear prefix e_");
    NONE(".clear prefix zzz");
}

/* ---- rules ---- */

Test(changes, rule_registration) {
    exec("+edge(1, 2)");
    expect_changes("+reach(X, Y) <- edge(X, Y)", "RULE default reach registered");
    NONE("+reach(X, Y) <- edge(X, Y)"); /* the clause is there already */
    expect_changes("+reach(X, Z) <- reach(X, Y), edge(Y, Z)", "RULE default reach registered");
    NONE("+reach(X) <- edge(X, _)");        /* arity of the rule */
    NONE("+bad(X, Z) <- edge(X, Y)");       /* unsafe head variable */
    NONE("+neg(X) <- edge(X, _), !neg(X)"); /* not stratifiable */
}

Test(changes, rule_drops) {
    exec("+r(X) <- e(X)");
    exec("+p_a(X) <- e(X)");
    exec("+p_b(X) <- e(X)");
    exec("+q(X) <- e(X)");
    expect_changes("-r", "RULE default r dropped");
    NONE("-r");
    expect_changes(".rule drop q", "RULE default q dropped");
    NONE(".rule drop q");
    expect_changes(".rule drop prefix p_", "RULE default p_a dropped | RULE default p_b dropped");
    NONE(".rule drop prefix p_");
}

Test(changes, clause_removal_and_clear) {
    exec("+r(X) <- e(X)");
    exec("+r(X) <- f(X)");
    exec("+c(X) <- e(X)");
    NONE(".rule remove r 3");
    NONE(".rule remove nothing 1");
    expect_changes(".rule remove r 1", "RULE default r removed");
    expect_changes(".rule remove r 1", "RULE default r removed"); /* the last: r is gone */
    NONE(".rule remove r 1");
    expect_changes(".rule clear c", "RULE default c removed");
    NONE(".rule clear c");
    NONE(".rule clear nothing");
    expect_changes(".rule drop c", "RULE default c dropped");
}

/* ---- graphs and schemas ---- */

Test(changes, graphs) {
    expect_changes(".kg create demo", "GRAPH demo - created");
    expect_changes("+edge(1, 2)", "FACTS demo edge insert 1");
    NONE(".kg create demo");
    NONE(".kg create _internal");
    NONE(".kg create a/b");
    NONE(".kg use default");
    NONE(".kg use nothing");
    NONE(".kg drop default");
    NONE(".kg drop nothing");
    expect_changes(".kg drop demo", "GRAPH demo - dropped");
    NONE(".kg list");
}

Test(changes, schemas) {
    expect_changes("+person(name: string, age: int)", "SCHEMA default person created");
    NONE("+person(name: string, age: int)");
    expect_changes("+person(name: string, age: float)", "SCHEMA default person created");
    expect_changes("+person(who: string, age: float)", "SCHEMA default person created");
    NONE("person2(name: string)"); /* a session schema */
    NONE("type Age: int");
}

Test(changes, rel_drop_reports_its_facts_and_the_relation) {
    exec("+edge[(1, 2), (2, 3), (3, 4)]");
    expect_changes(".rel drop edge", "FACTS default edge delete 3 | SCHEMA default edge dropped");
    NONE(".rel drop edge");
    exec("+once(1)");
    exec("-once(1)");
    expect_changes(".rel drop once", "SCHEMA default once dropped");
}

/* ---- what is never reported ---- */

Test(changes, session_state_and_reads_report_nothing) {
    exec("+edge(1, 2)");
    NONE("sess(1)");
    NONE("srule(X) <- edge(X, _)");
    NONE("?edge(X, Y)");
    NONE("?srule(X)");
    NONE(".session");
    NONE(".session drop srule");
    NONE(".session clear");
    NONE(".rel");
    NONE(".rel edge");
    NONE(".rule");
    NONE(".status");
    NONE(".compact");
    NONE("?edge(X, Y");
}

Test(changes, without_a_hook_nothing_is_recorded) {
    il_engine_set_change_hook(EN, NULL, NULL);
    NONE("+edge(1, 2)");
    NONE("+r(X) <- edge(X, _)");
    il_engine_set_change_hook(EN, record, &SEEN);
    /* nothing was kept from before */
    expect_changes("+edge(2, 3)", "FACTS default edge insert 1");
    cr_expect_eq(CALLS, 1);
}

Test(changes, counts_with_a_maintained_view_open) {
    exec("+edge[(1, 2), (2, 3)]");
    exec("+reach(X, Y) <- edge(X, Y)");
    exec("+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
    const char *err = NULL;
    view_t *v = view_open(S, "?reach(X, Y)", &err);
    cr_assert_not_null(v, "%s", err ? err : "?");
    expect_changes("+edge[(3, 4), (1, 2)]", "FACTS default edge insert 1");
    expect_changes("-edge(X, Y), +edge(Y, X) <- edge(X, Y), X = 1", "FACTS default edge update 2");
    view_close(v);
}

Test(changes, durable_engine_reports_after_the_log_record) {
    char dir[64];
    unit_mkdtemp(dir, sizeof dir, "changes");
    il_engine *e = il_engine_open(dir, NULL);
    cr_assert_not_null(e);
    il_session *s = il_session_open(e);
    il_engine_set_change_hook(e, record, &SEEN);
    il_buf_clear(&SEEN);
    il_result_free(il_execute(s, "+edge[(1, 2), (1, 2)]", 21));
    il_result_free(il_execute(s, ".kg create g2", 13));
    cr_expect_str_eq(il_buf_str(&SEEN), "FACTS default edge insert 1\nGRAPH g2 - created\n");
    il_engine_close(e);
    /* recovery replays the log without a hook, and the new hook starts from nothing */
    il_buf_clear(&SEEN);
    e = il_engine_open(dir, NULL);
    cr_assert_not_null(e);
    il_engine_set_change_hook(e, record, &SEEN);
    s = il_session_open(e);
    il_result_free(il_execute(s, "+edge(1, 2)", 11));
    cr_expect_str_eq(il_buf_str(&SEEN), "");
    il_engine_close(e);
    unit_rm_tree(dir);
}
