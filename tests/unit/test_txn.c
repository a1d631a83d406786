/* Unit tests of transactions (il_txn_begin, src/kg/txn.c): a rollback undoes every kind
 * of change (facts, relations, schemas, rules, clears, session state) exactly, maintained
 * views end as a fresh evaluation says (a recursive rule, a negation, a rule change),
 * the change hook hears a committed transaction once with its net change and a
 * rolled-back one never, a committed transaction is one log record and a rolled-back one
 * none, and a restart finds the committed transaction whole and the rolled-back one
 * absent. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "exec/tuplesort.h"
#include "inputlayer.h"
#include "unit_fixture.h"
#include "kg/kg.h"
#include "store/store.h"
#include "value/value.h"
#include "views/read_policy.h"
#include "views/view.h"

static il_engine *EN;
static il_session *S;
static char DIR_[64];

static void setup(void) {
    EN = unit_engine_open(&S);
}

static void teardown(void) {
    unit_engine_close(EN);
}

TestSuite(txn, .init = setup, .fini = teardown);

/* The result's text: every line, or every row of a table. */
static char *text_of(il_result *r) {
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b, "[%d]", (int)il_result_kind_of(r));
    if (il_result_kind_of(r) == IL_RESULT_TABLE) {
        for (size_t i = 0; i < il_result_nrows(r); i++) {
            size_t w;
            const il_value *row = il_result_row(r, i, &w);
            for (size_t k = 0; k < il_result_ncols(r); k++) {
                char cell[128];
                il_value_format(row[k], cell, sizeof cell);
                il_buf_printf(&b, "%s%s", k ? "," : " (", cell);
            }
            il_buf_puts(&b, ")");
        }
    } else {
        for (size_t i = 0; i < il_result_nlines(r); i++)
            il_buf_printf(&b, "\n%s", il_result_line(r, i));
    }
    return il_buf_take(&b);
}

static char *exec_text(il_session *s, const char *stmt) {
    il_result *r = il_execute(s, stmt, strlen(stmt));
    char *t = text_of(r);
    il_result_free(r);
    return t;
}

static void run(const char *stmt) {
    unit_run(S, stmt);
}

static void expect_error(const char *stmt) {
    il_result *r = il_execute(S, stmt, strlen(stmt));
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_ERROR, "%s did not fail", stmt);
    il_result_free(r);
}

/* Everything a client can see of the graph and the session, as one text. */
static char *state(void) {
    static const char *const probes[] = {
        ".rel",     ".rule list", ".rule def r", ".rule def t", ".rule def u", ".session", "?a(X)",
        "?b(X, Y)", "?c(X)",      "?r(X)",       "?t(X)",       "?u(X)",       "?sr(X)",   "?sf(X)",
    };
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
        char *t = exec_text(S, probes[i]);
        il_buf_printf(&b, "%s => %s\n", probes[i], t);
        free(t);
    }
    return il_buf_take(&b);
}

Test(txn, rollback_undoes_every_kind_of_change) {
    run("+a[(1), (2), (3)]");
    run("+c[(7), (8)]");
    run("+b(x: int, y: int)");
    run("+r(X) <- a(X)");
    run("+r(X) <- c(X)");
    run("+u(X) <- a(X), X > 1");
    run("sf(1)");
    run("sr(X) <- a(X), X < 3");
    char *before = state();
    cr_assert(il_txn_begin(S));
    cr_assert(!il_txn_begin(S), "one transaction at a time");
    run("+a(1)"); /* already there: changes nothing, and must not be undone into a delete */
    run("+a(4)");
    run("-a(2)");
    run("+b(1, 2)");
    run("+d[(1), (2)]");       /* a new relation */
    run("+e(z: string)");      /* a new schema */
    run("+b(p: int, q: int)"); /* a schema replaced */
    run("+r(X) <- d(X)");      /* a clause added */
    run("+t(X) <- a(X)");      /* a rule created */
    run(".rule remove r 1");   /* a clause removed */
    run(".rule clear u");
    run(".rule drop t");
    run("+t(X) <- c(X)"); /* created again under the dropped name */
    run(".clear prefix c");
    run("+c(9)");
    run("-c(9)");
    run("sf(2)");
    run("sr(X) <- d(X)");
    run("+z[(1, 2)]");
    run("+x:(A, B) <- z(A, B)");
    char *inside = exec_text(S, "?a(X)"); /* the transaction's own writes are visible */
    cr_assert_str_eq(inside, "[1] (1) (3) (4)");
    free(inside);
    il_txn_rollback(S);
    char *after = state();
    cr_assert_str_eq(after, before);
    /* the graph works on as before: a write, a rule, a query */
    run("+a(5)");
    run("+t(X) <- a(X), X > 4");
    char *t = exec_text(S, "?t(X)");
    cr_assert_str_eq(t, "[1] (5)");
    free(t);
    free(before);
    free(after);
}

/* A rollback is the transaction's delta inverted, with the changes of structure undone
 * in their places: a relation created, its facts cleared and written again, and a rule
 * over it all go, and the graph goes on as before. */
Test(txn, rollback_interleaves_tuples_and_structure) {
    run("+keep(1)");
    char *before = state();
    cr_assert(il_txn_begin(S));
    run("+n[(1), (2)]");
    run(".clear prefix n");
    run("+n(3)");
    run("+t(X) <- n(X)");
    run("-n(3)");
    run("+n(4)");
    run("-keep(1)");
    run("+keep(2)");
    char *inside = exec_text(S, "?t(X)");
    cr_assert_str_eq(inside, "[1] (4)");
    free(inside);
    il_txn_rollback(S);
    char *after = state();
    cr_assert_str_eq(after, before);
    char *kept = exec_text(S, "?keep(X)");
    cr_assert_str_eq(kept, "[1] (1)");
    free(kept);
    cr_assert_eq(EN->delta.entries.n, 0);
    run("+n(5)");
    char *k = exec_text(S, "?n(X)");
    cr_assert_str_eq(k, "[1] (5)");
    free(k);
    free(before);
    free(after);
}

/* What the commit's delta held when the hook heard of the commit. */
static uint32_t HOOK_ENTRIES, HOOK_VALUES;
static void delta_probe(void *ctx, const il_change *c, size_t n) {
    (void)c;
    (void)n;
    il_engine *e = ctx;
    HOOK_ENTRIES = e->delta.entries.n;
    HOOK_VALUES = e->delta.vals.n;
}

/* One delta per commit, held once: its values are kept only when something reads them
 * (here a rollback), and it is gone after the commit. */
Test(txn, the_delta_keeps_values_only_for_a_reader) {
    il_engine_set_change_hook(EN, delta_probe, EN);
    run("+a[(1), (2), (3)]");
    cr_assert_eq(HOOK_ENTRIES, 1, "one run");
    cr_assert_eq(HOOK_VALUES, 0, "in memory, without views or indexes, nothing reads them");
    cr_assert_eq(EN->delta.entries.n, 0);
    cr_assert(il_txn_begin(S));
    run("+a[(4), (5)]");
    run("-a(1)");
    run("+b(1, 2)");
    char *err = NULL;
    cr_assert(il_txn_commit(S, &err), "%s", err ? err : "?");
    cr_assert_eq(HOOK_ENTRIES, 3);
    cr_assert_eq(HOOK_VALUES, 2 + 1 + 2, "a rollback could have needed them");
    cr_assert_eq(EN->delta.entries.n, 0);
    cr_assert_eq(EN->delta.vals.n, 0);
    il_engine_set_change_hook(EN, NULL, NULL);
}

Test(txn, refused_statements) {
    il_session *other = il_session_open(EN);
    cr_assert(il_txn_begin(S));
    run("+a(1)");
    /* what cannot be undone, and other sessions' statements, are refused */
    expect_error(".kg create g2");
    expect_error(".rel");
    expect_error(".rel drop a");
    expect_error(".compact");
    expect_error(".session clear");
    il_result *r = il_execute(other, "?a(X)", 5);
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_ERROR);
    il_result_free(r);
    cr_assert(il_txn_commit(S, NULL));
    char *t = exec_text(other, "?a(X)");
    cr_assert_str_eq(t, "[1] (1)");
    free(t);
    cr_assert_eq(il_statement_txn_part("+a(1)", 5), IL_TXN_WRITES);
    cr_assert_eq(il_statement_txn_part(".rule drop x", 12), IL_TXN_WRITES);
    cr_assert_eq(il_statement_txn_part(".clear prefix x", 15), IL_TXN_WRITES);
    cr_assert_eq(il_statement_txn_part("?a(X)", 5), IL_TXN_READS);
    cr_assert_eq(il_statement_txn_part("s(X) <- a(X)", 12), IL_TXN_READS);
    cr_assert_eq(il_statement_txn_part(".kg use x", 9), IL_TXN_OUTSIDE);
    cr_assert_eq(il_statement_txn_part(".rule list", 10), IL_TXN_OUTSIDE);
    il_session_close(other);
}

Test(txn, a_stopped_statement_is_rolled_back_with_the_rest) {
    run("+nat(0)");
    run("+nat(Y) <- nat(X), Y = X + 1");
    cr_assert(il_txn_begin(S));
    run("+a(1)");
    volatile int cancel = 1;
    il_limits lim = {.cancel = &cancel};
    il_session_set_limits(S, &lim);
    il_result *r = il_execute(S, "?nat(X)", 7);
    cr_assert_eq(il_result_stop(r), IL_STOP_CANCELLED);
    il_result_free(r);
    il_session_set_limits(S, NULL);
    il_txn_rollback(S);
    char *t = exec_text(S, "?a(X)");
    cr_assert_str_eq(t, "[1]");
    free(t);
}

/* ---- views ---- */

typedef unit_rows rows;

/* `?query` evaluated from scratch (unit_rows_fresh), its session fact taken back. */
static rows fresh(const char *query) {
    rows out = unit_rows_fresh(S, query);
    run(".session clear");
    return out;
}

/* The view equals a fresh evaluation, and its delta is exactly what changed since
 * `before` (nothing, after a rollback). */
static void check(view_t *v, const char *query, rows *before) {
    rows now = fresh(query), got = unit_rows_of_view(v);
    cr_assert(unit_rows_same(&now, &got), "view %s: %zu rows, fresh %zu", query, got.n, now.n);
    val_t *add, *rem;
    size_t nadd, nrem;
    view_take_delta(v, &add, &nadd, &rem, &nrem);
    size_t want_add = 0, want_rem = 0;
    for (size_t i = 0; i < now.n; i++) want_add += !unit_rows_has(before, &now.v[i * now.w]);
    for (size_t i = 0; i < before->n; i++) want_rem += !unit_rows_has(&now, &before->v[i * now.w]);
    cr_assert_eq(nadd, want_add, "%s: %zu added, want %zu", query, nadd, want_add);
    cr_assert_eq(nrem, want_rem, "%s: %zu removed, want %zu", query, nrem, want_rem);
    free(add);
    free(rem);
    free(got.v);
    free(before->v);
    *before = now;
}

static view_t *open_view(const char *query) {
    const char *err;
    view_t *v = view_open(S, query, &err);
    cr_assert_not_null(v, "view_open(%s): %s", query, err ? err : "?");
    return v;
}

Test(txn, views_after_rollback_equal_a_fresh_evaluation) {
    run("+edge[(1, 2), (2, 3), (3, 4), (5, 6)]");
    run("+node[(1), (2), (3), (4), (5), (6), (7)]");
    run("+path(X, Y) <- edge(X, Y)");
    run("+path(X, Z) <- path(X, Y), edge(Y, Z)");
    run("+lonely(X) <- node(X), !edge(X, _)");
    const char *qp = "?path(X, Y)", *ql = "?lonely(X)";
    view_t *vp = open_view(qp), *vl = open_view(ql);
    rows bp = fresh(qp), bl = fresh(ql);
    check(vp, qp, &bp);
    check(vl, ql, &bl);
    /* a read that makes path a maintained relation (read_policy.h) */
    run("?path(A, B)");
    cr_assert_eq(read_policy_count(EN->graphs.v[0]), 1);

    /* facts only: the views were not maintained from the transaction's writes */
    cr_assert(il_txn_begin(S));
    run("+edge[(4, 5), (6, 7)]");
    run("-edge(2, 3)");
    run("-node(7)");
    char *t = exec_text(S, "?path(1, Y)");
    cr_assert_str_eq(t, "[1] (1,2)"); /* the transaction's own state, not maintained rows */
    free(t);
    il_txn_rollback(S);
    check(vp, qp, &bp);
    check(vl, ql, &bl);
    t = exec_text(S, "?path(1, Y)");
    cr_assert_str_eq(t, "[1] (1,2) (1,3) (1,4)");
    free(t);

    /* with a rule change, a clear and a new relation: the views rebuild to the same rows */
    cr_assert(il_txn_begin(S));
    run("+path(X, Y) <- edge(Y, X)");
    run(".clear prefix node");
    run("+extra(1)");
    run("+lonely(X) <- extra(X)");
    il_txn_rollback(S);
    check(vp, qp, &bp);
    check(vl, ql, &bl);

    /* a committed transaction is maintained once, with its net change */
    cr_assert(il_txn_begin(S));
    run("+edge(4, 5)");
    run("-edge(5, 6)");
    run("+edge(5, 6)");
    run("-node(1)");
    run("+node(8)");
    cr_assert(il_txn_commit(S, NULL));
    check(vp, qp, &bp);
    check(vl, ql, &bl);
    /* and single statements go on being maintained */
    run("-edge(1, 2)");
    check(vp, qp, &bp);
    check(vl, ql, &bl);
    free(bp.v);
    free(bl.v);
    view_close(vp);
    view_close(vl);
}

/* ---- the change hook ---- */

typedef struct heard {
    int calls;
    char text[1024];
} heard;

static void hear(void *ctx, const il_change *c, size_t n) {
    heard *h = ctx;
    h->calls++;
    size_t at = strlen(h->text);
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(h->text + at, sizeof h->text - at, "%d:%s:%s:%llu;", (int)c[i].kind,
                               c[i].name ? c[i].name : "", c[i].operation,
                               (unsigned long long)c[i].count);
}

Test(txn, the_hook_hears_a_committed_transaction_once_netted) {
    heard h = {0};
    run("+a(1)");
    run("+b(1)");
    il_engine_set_change_hook(EN, hear, &h);
    cr_assert(il_txn_begin(S));
    run("+a(2)");
    run("-a(2)"); /* came and went: no change */
    run("+a(3)");
    run("-a(1)");
    run(".clear prefix b");
    run("+b(1)"); /* cleared and back: no change */
    run("+r(X) <- a(X)");
    cr_assert_eq(h.calls, 0, "nothing before the commit");
    cr_assert(il_txn_commit(S, NULL));
    cr_assert_eq(h.calls, 1);
    cr_assert_str_eq(h.text, "0:a:update:2;1:r:registered:0;");
    h.calls = 0;
    h.text[0] = 0;
    cr_assert(il_txn_begin(S));
    run("+a(7)");
    run("+s(X) <- a(X)");
    il_txn_rollback(S);
    cr_assert_eq(h.calls, 0, "a rolled-back transaction is never reported");
    run("+a(8)");
    cr_assert_eq(h.calls, 1);
    il_engine_set_change_hook(EN, NULL, NULL);
}

typedef struct names_acc {
    char *list[16];
    size_t n;
} names_acc;

static void collect(void *ctx, const char *name) {
    names_acc *acc = ctx;
    cr_assert_lt(acc->n, 16);
    acc->list[acc->n++] = strdup(name);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The scope's names, sorted, each followed by a space; empties the accumulator. */
static void joined(names_acc *acc, char *out, size_t cap) {
    qsort(acc->list, acc->n, sizeof *acc->list, cmp_str);
    out[0] = 0;
    for (size_t i = 0; i < acc->n; i++) {
        snprintf(out + strlen(out), cap - strlen(out), "%s ", acc->list[i]);
        free(acc->list[i]);
    }
    acc->n = 0;
}

Test(txn, scope_of_relations) {
    run("+e(1)");
    run("+g(1)");
    run("+h(1)");
    run("+k(x: int)");
    run("+d(X) <- e(X), g(X)");
    run("+dd(X) <- d(X)");
    names_acc acc = {0};
    char got[256];
    const char *e[] = {"e"};
    cr_assert_eq(il_graph_scope(S, e, 1, collect, &acc), 1);
    joined(&acc, got, sizeof got);
    /* e; d and dd read it; g is what d is derived from; h and k are out of scope */
    cr_assert_str_eq(got, "d dd e g ");
    const char *d[] = {"dd", "k"};
    cr_assert_eq(il_graph_scope(S, d, 2, collect, &acc), 2);
    joined(&acc, got, sizeof got);
    cr_assert_str_eq(got, "d dd e g k ");
    const char *bad[] = {"e", "nosuch"};
    cr_assert_eq(il_graph_scope(S, bad, 2, collect, &acc), 1);
    cr_assert_eq(acc.n, 0);
}

/* ---- the log ---- */

static void mkdir_tmp(void) {
    unit_mkdtemp(DIR_, sizeof DIR_, "txn");
    char *err = NULL;
    EN = il_engine_open(DIR_, &err);
    cr_assert_not_null(EN, "%s", err ? err : "?");
    S = il_session_open(EN);
}

static void rm_tree(void) {
    il_engine_close(EN);
    unit_rm_tree(DIR_);
    val_shutdown();
}

TestSuite(txn_log, .init = mkdir_tmp, .fini = rm_tree);

Test(txn_log, one_record_per_committed_transaction_none_for_a_rollback) {
    store *st = EN->store;
    uint64_t r0 = store_log_records(st);
    cr_assert(il_txn_begin(S));
    run("+a(1)");
    run("+a(2)");
    run("+r(X) <- a(X)");
    run("+b(x: int)");
    cr_assert_eq(store_log_records(st), r0, "nothing is written before the commit");
    cr_assert(il_txn_commit(S, NULL));
    cr_assert_eq(store_log_records(st), r0 + 1);
    cr_assert(il_txn_begin(S));
    run("+a(3)");
    run("-a(1)");
    run(".rule drop r");
    run("+c(1)");
    il_txn_rollback(S);
    cr_assert_eq(store_log_records(st), r0 + 1);
    /* a transaction that changed nothing writes nothing */
    cr_assert(il_txn_begin(S));
    run("+a(1)");
    run("?a(X)");
    cr_assert(il_txn_commit(S, NULL));
    cr_assert_eq(store_log_records(st), r0 + 1);
    run("+a(4)");
    cr_assert_eq(store_log_records(st), r0 + 2);

    /* a restart: the committed transaction whole, the rolled-back one absent */
    il_engine_close(EN);
    char *err = NULL;
    EN = il_engine_open(DIR_, &err);
    cr_assert_not_null(EN, "%s", err ? err : "?");
    S = il_session_open(EN);
    char *t = exec_text(S, "?a(X)");
    cr_assert_str_eq(t, "[1] (1) (2) (4)");
    free(t);
    t = exec_text(S, "?r(X)");
    cr_assert_str_eq(t, "[1] (1) (2) (4)");
    free(t);
    t = exec_text(S, "?c(X)");
    cr_assert_str_eq(t, "[1]");
    free(t);
    t = exec_text(S, ".rel");
    cr_assert(strstr(t, "b (arity: 1, columns: [x: int]"), "%s", t);
    cr_assert(!strstr(t, "c ("), "%s", t);
    free(t);
}
