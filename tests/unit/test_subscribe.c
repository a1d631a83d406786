/* Unit tests of standing queries through the embedding API alone (il_subscribe and its
 * deltas): a subscription's rows and headers, the rows each write adds and removes,
 * keyed families sharing one view and routing each row only to the members of its key
 * (numbers by value: the stored 2.0 reaches the key 2), held changes netted, failures
 * refused with a reason, the standing-query check, and closing (also by the engine). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputlayer.h"
#include "unit_fixture.h"

TestSuite(subscribe, .init = unit_suite_open, .fini = unit_suite_close);

static void run(const char *text) {
    unit_run(unit_session, text);
}

static il_sub *subscribe(const char *query, void *ctx) {
    char *err = NULL;
    il_sub *sub = il_subscribe(unit_session, query, strlen(query), ctx, &err);
    cr_assert(sub, "subscribing to %s: %s", query, err ? err : "(no reason)");
    return sub;
}

/* Rows as text, "(a,b)" each, sorted, joined by spaces: for comparing sets. */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *rows_text(const il_value *rows, size_t n, uint32_t arity) {
    char **each = calloc(n + 1, sizeof *each);
    size_t total = 1;
    for (size_t i = 0; i < n; i++) {
        char buf[512] = "(";
        for (uint32_t k = 0; k < arity; k++) {
            char v[128];
            il_value_format(rows[i * arity + k], v, sizeof v);
            if (k) strcat(buf, ",");
            strcat(buf, v);
        }
        strcat(buf, ")");
        each[i] = strdup(buf);
        total += strlen(buf) + 1;
    }
    qsort(each, n, sizeof *each, cmp_str);
    char *out = calloc(total, 1);
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(out, " ");
        strcat(out, each[i]);
        free(each[i]);
    }
    free(each);
    return out;
}

static void expect_rows(const il_sub *sub, const char *want) {
    il_value *rows = NULL;
    size_t n = il_sub_rows(sub, &rows);
    char *got = rows_text(rows, n, il_sub_arity(sub));
    cr_assert_str_eq(got, want);
    free(got);
    free(rows);
}

static void expect_delta(const il_sub *sub, const char *added, const char *removed) {
    il_sub_delta d = il_sub_changes(sub);
    char *a = rows_text(d.added, d.nadded, il_sub_arity(sub));
    char *r = rows_text(d.removed, d.nremoved, il_sub_arity(sub));
    cr_assert_str_eq(a, added);
    cr_assert_str_eq(r, removed);
    free(a);
    free(r);
}

/* Whether sub is in the list il_subs_route returned. */
static bool touched(il_sub *list, const il_sub *sub) {
    for (il_sub *m = list; m; m = il_sub_next_touched(m))
        if (m == sub) return true;
    return false;
}

static size_t count(il_sub *list) {
    size_t n = 0;
    for (il_sub *m = list; m; m = il_sub_next_touched(m)) n++;
    return n;
}

Test(subscribe, rows_headers_and_deltas) {
    run("+edge[(1, 2), (2, 3)]");
    run("+path(X, Y) <- edge(X, Y)");
    run("+path(X, Z) <- path(X, Y), edge(Y, Z)");
    int tag;
    il_sub *sub = subscribe("?path(X, Y)", &tag);
    cr_assert_eq(il_sub_ctx(sub), &tag);
    cr_assert_eq(il_sub_arity(sub), 2);
    cr_assert_str_eq(il_sub_column(sub, 0), "X");
    cr_assert_str_eq(il_sub_column(sub, 1), "Y");
    cr_assert_null(il_sub_column(sub, 2));
    cr_assert_null(il_sub_error(sub));
    expect_rows(sub, "(1,2) (1,3) (2,3)");
    /* the snapshot is no change */
    bool failed = false;
    cr_assert_null(il_subs_route(unit_engine, &failed));

    run("+edge(3, 4)");
    il_sub *list = il_subs_route(unit_engine, &failed);
    cr_assert_eq(list, sub);
    cr_assert_eq(count(list), 1);
    cr_assert_not(failed);
    expect_delta(sub, "(1,4) (2,4) (3,4)", "");
    il_sub_clear(sub);
    expect_delta(sub, "", "");

    run("-edge(1, 2)");
    list = il_subs_route(unit_engine, &failed);
    cr_assert_eq(list, sub);
    expect_delta(sub, "", "(1,2) (1,3) (1,4)");
    il_sub_clear(sub);
    expect_rows(sub, "(2,3) (2,4) (3,4)");

    /* a session fact is no persistent change */
    run("edge(9, 9)");
    cr_assert_null(il_subs_route(unit_engine, &failed));
    il_sub_close(sub);
    uint64_t views = 9, subs = 9;
    il_engine_subscriptions(unit_engine, &views, &subs);
    cr_assert_eq(views, 0);
    cr_assert_eq(subs, 0);
}

Test(subscribe, keyed_family_routes_by_key) {
    run("+score[(1, \"a\"), (2, \"b\"), (3, \"c\")]");
    il_sub *one = subscribe("?score(1, S)", NULL);
    il_sub *two = subscribe("?score(2, S)", NULL);
    il_sub *one_again = subscribe("?score(1, S)", NULL);
    il_sub *named = subscribe("?score(N, \"c\")", NULL);
    uint64_t views = 0, subs = 0;
    il_engine_subscriptions(unit_engine, &views, &subs);
    cr_assert_eq(views, 2, "the members of ?score(_, S) share one view");
    cr_assert_eq(subs, 4);
    expect_rows(one, "(1,\"a\")");
    expect_rows(two, "(2,\"b\")");
    expect_rows(named, "(3,\"c\")");

    run("+score(1, \"z\")");
    bool failed = false;
    il_sub *list = il_subs_route(unit_engine, &failed);
    cr_assert_eq(count(list), 2);
    cr_assert(touched(list, one) && touched(list, one_again));
    cr_assert_not(touched(list, two));
    expect_delta(one, "(1,\"z\")", "");
    expect_delta(one_again, "(1,\"z\")", "");
    il_sub_clear(one);
    il_sub_clear(one_again);

    /* the stored float 2.0 matches the constant 2, as the member's own query does */
    run("+score(2.0, \"c\")");
    list = il_subs_route(unit_engine, &failed);
    cr_assert_eq(count(list), 2);
    cr_assert(touched(list, two) && touched(list, named));
    expect_delta(two, "(2.0,\"c\")", "");
    expect_delta(named, "(2.0,\"c\")", "");
    il_sub_clear(two);
    il_sub_clear(named);
    expect_rows(two, "(2,\"b\") (2.0,\"c\")");

    /* a member that leaves gets nothing more; the family stays for the others */
    il_sub_close(one);
    run("-score(1, \"a\")");
    list = il_subs_route(unit_engine, &failed);
    cr_assert_eq(list, one_again);
    cr_assert_eq(count(list), 1);
    expect_delta(one_again, "", "(1,\"a\")");
    il_sub_close(one_again);
    il_sub_close(two);
    il_sub_close(named);
}

Test(subscribe, held_changes_are_netted) {
    run("+item[(1), (2)]");
    il_sub *sub = subscribe("?item(X)", NULL);
    run("+item(3)");
    bool failed = false;
    cr_assert_eq(il_subs_route(unit_engine, &failed), sub);
    il_sub_hold(sub);
    cr_assert_eq(il_sub_held(sub), 1);
    run("-item(3)");
    run("-item(1)");
    cr_assert_eq(il_subs_route(unit_engine, &failed), sub);
    il_sub_hold(sub);
    /* 3 came and went: only the removal of 1 is left to deliver */
    cr_assert_eq(il_sub_held(sub), 1);
    expect_delta(sub, "", "(1)");
    il_sub_clear(sub);
    cr_assert_eq(il_sub_held(sub), 0);
    expect_delta(sub, "", "");
    il_sub_close(sub);
}

Test(subscribe, failures_and_refusals) {
    run("+edge(1, 2)");
    char *err = NULL;
    cr_assert_null(il_subscribe(unit_session, "?edge(X, Y) Z", 13, NULL, &err));
    cr_assert_not_null(err);
    free(err);
    err = NULL;
    const char *limited = "?edge(X, Y), limit(1)";
    cr_assert_null(il_subscribe(unit_session, limited, strlen(limited), NULL, &err));
    cr_assert_not_null(err);
    free(err);

    /* a family whose graph is dropped fails and says so */
    run(".kg create other");
    il_sub *sub = subscribe("?edge(X, Y)", NULL);
    expect_rows(sub, "");
    run("+edge(5, 6)");
    bool failed = false;
    cr_assert_eq(il_subs_route(unit_engine, &failed), sub);
    expect_delta(sub, "(5,6)", "");
    il_sub_clear(sub);
    run(".kg use default");
    run(".kg drop other");
    il_subs_route(unit_engine, &failed);
    cr_assert(failed);
    cr_assert_not_null(il_sub_error(sub));
    il_sub_close(sub);
}

Test(subscribe, standing_query_check) {
    char *why = NULL;
    char *text = il_standing_query("  ?edge(X,\n  Y)  ", 17, &why);
    cr_assert_not_null(text);
    cr_assert_null(why);
    cr_assert_eq(text[0], '?');
    free(text);
    struct {
        const char *q, *why;
    } bad[] = {
        {"+edge(1, 2)", "must start with '?'"},
        {"", "must start with '?'"},
        {"?edge(X, Y", "does not parse: unterminated statement (unbalanced delimiters)"},
        {"?edge(X, Y)\n?edge(Y, X)", "must be a single query"},
        {"?edge(X, Y), limit(2)", "uses limit/offset or sort annotations, which a subscription "
                                  "cannot have"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_null(il_standing_query(bad[i].q, strlen(bad[i].q), &why), "%s", bad[i].q);
        cr_assert_str_eq(why, bad[i].why);
        free(why);
    }
    cr_assert_null(il_standing_query("?edge(X, Y) Z", 13, &why));
    cr_assert(strncmp(why, "does not parse: ", 16) == 0, "%s", why);
    free(why);
}

/* Subscriptions left open are the engine's to free (ASan's leak check watches). */
Test(subscribe, engine_close_frees_open_subscriptions) {
    run("+edge[(1, 2), (2, 3)]");
    subscribe("?edge(1, Y)", NULL);
    subscribe("?edge(2, Y)", NULL);
    subscribe("?edge(X, Y)", NULL);
    run("+edge(1, 9)");
}

/* il_subscribe_beside: while the new family's view is computed on the pin, the serializer
 * is released, and other statements run then, here on a second session: they are what
 * the view must be caught up with. */
typedef struct beside_ctx {
    il_session *other;
    const char *const *stmts; /* run while released, NULL-terminated */
    int released, retaken;
    bool pinned_meanwhile; /* the subscribing session was pinned while released */
    il_session *subscriber;
    const char *subscribe_meanwhile; /* the other session subscribes to it while released */
    il_sub *theirs;
} beside_ctx;

static void beside_release(void *ctx) {
    beside_ctx *b = ctx;
    b->released++;
    b->pinned_meanwhile = il_session_pinned(b->subscriber);
    for (const char *const *p = b->stmts; p && *p; p++) unit_run(b->other, *p);
    if (b->subscribe_meanwhile) {
        char *err = NULL;
        b->theirs = il_subscribe(b->other, b->subscribe_meanwhile, strlen(b->subscribe_meanwhile),
                                 NULL, &err);
        cr_assert(b->theirs, "%s", err ? err : "");
    }
}

static void beside_retake(void *ctx) {
    ((beside_ctx *)ctx)->retaken++;
}

static il_sub *subscribe_beside(const char *query, beside_ctx *b) {
    il_serializer ser = {beside_release, beside_retake, b};
    b->subscriber = unit_session;
    b->other = b->other ? b->other : il_session_open(unit_engine);
    char *err = NULL;
    il_sub *sub = il_subscribe_beside(unit_session, query, strlen(query), NULL, &ser, &err);
    cr_assert(sub, "subscribing to %s: %s", query, err ? err : "(no reason)");
    cr_assert_eq(b->released, b->retaken);
    return sub;
}

Test(subscribe, beside_catches_up_with_commits_made_meanwhile) {
    run("+edge[(1, 2), (2, 3), (3, 4)]");
    run("+path(X, Y) <- edge(X, Y)");
    run("+path(X, Z) <- path(X, Y), edge(Y, Z)");
    const char *meanwhile[] = {"+edge(4, 5)", "-edge(1, 2)", "+edge(0, 1)", NULL};
    beside_ctx b = {.stmts = meanwhile};
    il_sub *sub = subscribe_beside("?path(X, Y)", &b);
    cr_assert_eq(b.released, 1);
    cr_assert(b.pinned_meanwhile);
    cr_assert_not(il_session_pinned(unit_session));
    /* the rows as of the return, none of them a change */
    expect_rows(sub, "(0,1) (2,3) (2,4) (2,5) (3,4) (3,5) (4,5)");
    bool failed = false;
    cr_assert_null(il_subs_route(unit_engine, &failed));
    /* and maintained from there */
    run("+edge(1, 2)");
    cr_assert_eq(il_subs_route(unit_engine, &failed), sub);
    expect_delta(sub, "(0,2) (0,3) (0,4) (0,5) (1,2) (1,3) (1,4) (1,5)", "");
    il_sub_clear(sub);
    /* a second member of the family joins the view there: nothing to compute */
    beside_ctx b2 = {.other = b.other};
    il_sub *keyed = subscribe_beside("?path(X, Y)", &b2);
    cr_assert_eq(b2.released, 0);
    expect_rows(keyed, "(0,1) (0,2) (0,3) (0,4) (0,5) (1,2) (1,3) (1,4) (1,5) (2,3) (2,4) (2,5) "
                       "(3,4) (3,5) (4,5)");
    il_sub_close(keyed);
    il_sub_close(sub);
    il_session_close(b.other);
}

Test(subscribe, beside_computes_again_after_a_rule_change) {
    run("+edge[(1, 2), (2, 3)]");
    run("+path(X, Y) <- edge(X, Y)");
    /* the view computed on the pin has the old rules: the live graph cannot take it */
    const char *meanwhile[] = {"+path(X, Z) <- path(X, Y), edge(Y, Z)", NULL};
    beside_ctx b = {.stmts = meanwhile};
    il_sub *sub = subscribe_beside("?path(X, Y)", &b);
    cr_assert_eq(b.released, 1);
    expect_rows(sub, "(1,2) (1,3) (2,3)");
    run("+edge(3, 4)");
    bool failed = false;
    cr_assert_eq(il_subs_route(unit_engine, &failed), sub);
    expect_delta(sub, "(1,4) (2,4) (3,4)", "");
    il_sub_close(sub);
    il_session_close(b.other);
}

Test(subscribe, beside_joins_a_family_opened_meanwhile) {
    run("+score[(1, \"a\"), (2, \"b\")]");
    const char *meanwhile[] = {"+score(3, \"c\")", NULL};
    beside_ctx b = {.stmts = meanwhile, .subscribe_meanwhile = "?score(2, S)"};
    il_sub *mine = subscribe_beside("?score(1, S)", &b);
    cr_assert_not_null(b.theirs);
    /* the view computed on the pin was closed: one view, two members */
    uint64_t views = 0, subs = 0;
    il_engine_subscriptions(unit_engine, &views, &subs);
    cr_assert_eq(views, 1);
    cr_assert_eq(subs, 2);
    expect_rows(mine, "(1,\"a\")");
    expect_rows(b.theirs, "(2,\"b\")");
    run("-score(1, \"a\")");
    bool failed = false;
    cr_assert_eq(il_subs_route(unit_engine, &failed), mine);
    expect_delta(mine, "", "(1,\"a\")");
    il_sub_close(b.theirs);
    il_sub_close(mine);
    il_session_close(b.other);
}

Test(subscribe, beside_reports_a_failure) {
    run("+edge(1, 2)");
    beside_ctx b = {0};
    b.subscriber = unit_session;
    b.other = il_session_open(unit_engine);
    il_serializer ser = {beside_release, beside_retake, &b};
    char *err = NULL;
    const char *limited = "?edge(X, Y), limit(1)";
    cr_assert_null(il_subscribe_beside(unit_session, limited, strlen(limited), NULL, &ser, &err));
    cr_assert_not_null(err);
    free(err);
    cr_assert_eq(b.released, b.retaken);
    cr_assert_not(il_session_pinned(unit_session));
    il_session_close(b.other);
}

Test(subscribe, all_at_once_on_one_pin) {
    run("+edge[(1, 2), (2, 3)]");
    run("+path(X, Y) <- edge(X, Y)");
    run("+path(X, Z) <- path(X, Y), edge(Y, Z)");
    beside_ctx b = {0};
    b.subscriber = unit_session;
    b.other = il_session_open(unit_engine);
    const char *meanwhile[] = {"+edge(3, 4)", NULL};
    b.stmts = meanwhile;
    il_serializer ser = {beside_release, beside_retake, &b};
    const char *queries[] = {"?path(1, Y)", "?path(2, Y)", "?edge(X, Y)"};
    size_t lens[3];
    for (int i = 0; i < 3; i++) lens[i] = strlen(queries[i]);
    il_sub *subs[3] = {0};
    size_t failed = 9;
    char *err = NULL;
    cr_assert(il_subscribe_all(unit_session, 3, queries, lens, NULL, &ser, subs, &failed, &err));
    /* one pin, one release for both new families (?path(_, Y) and ?edge(X, Y)) */
    cr_assert_eq(b.released, 1);
    uint64_t views = 0, nsubs = 0;
    il_engine_subscriptions(unit_engine, &views, &nsubs);
    cr_assert_eq(views, 2);
    cr_assert_eq(nsubs, 3);
    expect_rows(subs[0], "(1,2) (1,3) (1,4)");
    expect_rows(subs[1], "(2,3) (2,4)");
    expect_rows(subs[2], "(1,2) (2,3) (3,4)");
    for (int i = 0; i < 3; i++) il_sub_close(subs[i]);

    /* a query refused: none is made, and no view stays */
    const char *bad[] = {"?edge(X, 1)", "?edge(X, Y), Z > 1"};
    size_t blens[] = {strlen(bad[0]), strlen(bad[1])};
    b.stmts = NULL;
    cr_assert_not(il_subscribe_all(unit_session, 2, bad, blens, NULL, &ser, subs, &failed, &err));
    cr_assert_eq(failed, 1);
    cr_assert_not_null(err);
    free(err);
    il_engine_subscriptions(unit_engine, &views, &nsubs);
    cr_assert_eq(views, 0);
    cr_assert_eq(nsubs, 0);
    cr_assert_not(il_session_pinned(unit_session));
    il_session_close(b.other);
}
