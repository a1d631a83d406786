/* Unit tests of `.why` proof trees (src/kg/why.c, docs/engine.md "Proof trees"), read
 * through il_result_proof_trees: a conclusion with two derivations holds both, a cyclic
 * recursion terminates with acyclic proofs, negations, comparisons and aggregates give
 * their nodes, the depth and count bounds hold (and `.why full` raises the count), session
 * rules and facts are invisible, the table stays the plain sorted one, and nothing is
 * left over between runs. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "base/buf.h"
#include "inputlayer.h"
#include "kg/why.h"
#include "unit_fixture.h"

TestSuite(why, .init = unit_suite_open, .fini = unit_suite_close, .timeout = 60);

static void ok(const char *stmt) {
    unit_run(unit_session, stmt);
}

/* The proof trees of a `.why` (an array, one tree per row); *rows gets the row count. */
static json_t *why(const char *stmt, size_t *rows) {
    il_result *r = il_execute(unit_session, stmt, strlen(stmt));
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE, "%s: %s", stmt,
                 il_result_nlines(r) ? il_result_line(r, 0) : "not a table");
    if (rows) *rows = il_result_nrows(r);
    const char *text = il_result_proof_trees(r);
    json_t *j = NULL;
    if (text) {
        json_error_t err;
        j = json_loads(text, 0, &err);
        cr_assert(j, "%s: invalid JSON: %s", stmt, err.text);
        cr_assert(json_is_array(j));
        cr_assert_eq(json_array_size(j), il_result_nrows(r));
    }
    il_result_free(r);
    return j;
}

static const char *str(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    cr_assert(s, "no string %s", key);
    return s;
}

static const json_t *proof(const json_t *trees, size_t row) {
    return json_object_get(json_array_get(trees, row), "proof");
}

/* Deepest nesting of conclusions below a node (a fact or truncated leaf counts 1). */
static int depth(const json_t *n) {
    const char *kind = json_string_value(json_object_get(n, "kind"));
    if (!kind || strcmp(kind, "derived") != 0) return 1;
    int best = 0;
    size_t i, j;
    json_t *d, *c;
    json_array_foreach(json_object_get(n, "derivations"), i, d) {
        json_array_foreach(json_object_get(d, "children"), j, c) {
            int k = depth(c);
            if (k > best) best = k;
        }
    }
    return best + 1;
}

/* Counts nodes of a kind anywhere below n. */
static int count_kind(const json_t *n, const char *kind) {
    if (!json_is_object(n) && !json_is_array(n)) return 0;
    int k = 0;
    if (json_is_object(n)) {
        const char *nk = json_string_value(json_object_get(n, "kind"));
        if (nk && strcmp(nk, kind) == 0) k++;
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)n, key, v) k += count_kind(v, kind);
    } else {
        size_t i;
        json_t *v;
        json_array_foreach(n, i, v) k += count_kind(v, kind);
    }
    return k;
}

/* No derived node is reached again below itself (a ref to an ancestor would be a cycle). */
static bool acyclic(const json_t *n, json_int_t *path, int depth_now) {
    const char *kind = json_string_value(json_object_get(n, "kind"));
    if (!kind) return true;
    if (strcmp(kind, "derived") != 0 && strcmp(kind, "ref") != 0) return true;
    json_int_t id = json_integer_value(json_object_get(n, "id"));
    for (int i = 0; i < depth_now; i++)
        if (path[i] == id) return false;
    if (strcmp(kind, "ref") == 0) return true;
    path[depth_now] = id;
    size_t i, j;
    json_t *d, *c;
    json_array_foreach(json_object_get(n, "derivations"), i, d) {
        json_array_foreach(json_object_get(d, "children"), j, c) {
            if (!acyclic(c, path, depth_now + 1)) return false;
        }
    }
    return true;
}

Test(why, diamond_holds_both_derivations) {
    ok("+e[(1, 2), (1, 3), (2, 4), (3, 4)]");
    ok("+two(X, Z) <- e(X, Y), e(Y, Z)");
    size_t rows;
    json_t *t = why(".why ?two(1, 4)", &rows);
    cr_assert_eq(rows, 1);
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "kind"), "derived");
    cr_assert_str_eq(str(p, "atom"), "two(1, 4)");
    const json_t *ds = json_object_get(p, "derivations");
    cr_assert_eq(json_array_size(ds), 2);
    json_int_t mids[2];
    for (size_t i = 0; i < 2; i++) {
        const json_t *d = json_array_get(ds, i);
        cr_assert_str_eq(str(d, "kind"), "rule");
        cr_assert_str_eq(str(d, "rule"), "two(X, Z) <- e(X, Y), e(Y, Z)");
        cr_assert_eq(json_integer_value(json_object_get(d, "clause")), 1);
        mids[i] = json_integer_value(json_object_get(json_object_get(d, "bindings"), "Y"));
        const json_t *ch = json_object_get(d, "children");
        cr_assert_eq(json_array_size(ch), 2);
        cr_assert_str_eq(str(json_array_get(ch, 0), "kind"), "fact");
        cr_assert_str_eq(str(json_array_get(ch, 1), "kind"), "fact");
    }
    cr_assert((mids[0] == 2 && mids[1] == 3) || (mids[0] == 3 && mids[1] == 2));
    cr_assert(json_is_false(json_object_get(p, "more")));
    json_decref(t);
}

Test(why, cycle_terminates_acyclic) {
    ok("+e[(1, 2), (2, 1), (2, 3), (3, 1)]");
    ok("+reach(X, Y) <- e(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), e(Y, Z)");
    size_t rows;
    json_t *t = why(".why ?reach(1, Y)", &rows);
    cr_assert_eq(rows, 3);
    for (size_t r = 0; r < rows; r++) {
        /* a conclusion written out for an earlier row is a ref in a later one */
        const json_t *p = proof(t, r);
        if (strcmp(str(p, "kind"), "ref") == 0) continue;
        cr_assert_str_eq(str(p, "kind"), "derived");
        cr_assert_gt(json_array_size(json_object_get(p, "derivations")), 0);
        json_int_t path[64];
        cr_assert(acyclic(p, path, 0), "row %zu has a cyclic proof", r);
    }
    /* reach(1, 1) = reach(1, 2), e(2, 1) or reach(1, 3), e(3, 1): both kept, neither
       leads back to reach(1, 1) */
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "atom"), "reach(1, 1)");
    cr_assert_eq(json_array_size(json_object_get(p, "derivations")), 2);
    json_decref(t);
}

Test(why, negation_and_comparison_nodes) {
    ok("+n[(1), (2), (3), (4)]");
    ok("+bad[(2)]");
    ok("+good(X) <- n(X), !bad(X), X > 1");
    size_t rows;
    json_t *t = why(".why ?good(X)", &rows);
    cr_assert_eq(rows, 2);
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "atom"), "good(3)");
    const json_t *d = json_array_get(json_object_get(p, "derivations"), 0);
    const json_t *ch = json_object_get(d, "children");
    cr_assert_eq(json_array_size(ch), 3);
    cr_assert_str_eq(str(json_array_get(ch, 0), "atom"), "n(3)");
    const json_t *neg = json_array_get(ch, 1);
    cr_assert_str_eq(str(neg, "kind"), "negation");
    cr_assert_str_eq(str(neg, "atom"), "bad(3)");
    cr_assert_str_eq(str(neg, "relation"), "bad");
    const json_t *cmp = json_array_get(ch, 2);
    cr_assert_str_eq(str(cmp, "kind"), "comparison");
    cr_assert_str_eq(str(cmp, "literal"), "X > 1");
    cr_assert_eq(json_integer_value(json_object_get(cmp, "lhs")), 3);
    cr_assert_eq(json_integer_value(json_object_get(cmp, "rhs")), 1);
    json_decref(t);
}

Test(why, builtin_and_computed_values) {
    ok("+n[(3), (4)]");
    ok("+sq(X, Y) <- n(X), Y = X * X");
    ok("+a(X, D) <- n(X), D = abs(0 - X)");
    json_t *t = why(".why ?sq(3, Y)", NULL);
    const json_t *d = json_array_get(json_object_get(proof(t, 0), "derivations"), 0);
    const json_t *cmp = json_array_get(json_object_get(d, "children"), 1);
    cr_assert_str_eq(str(cmp, "kind"), "comparison");
    cr_assert_eq(json_integer_value(json_object_get(cmp, "lhs")), 9);
    cr_assert_eq(json_integer_value(json_object_get(cmp, "rhs")), 9);
    json_decref(t);
    t = why(".why ?a(4, D)", NULL);
    d = json_array_get(json_object_get(proof(t, 0), "derivations"), 0);
    cmp = json_array_get(json_object_get(d, "children"), 1);
    cr_assert_str_eq(str(cmp, "kind"), "builtin");
    cr_assert_eq(json_integer_value(json_object_get(cmp, "rhs")), 4);
    json_decref(t);
}

Test(why, aggregate_samples_inputs) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+e[");
    for (int i = 0; i < 15; i++) il_buf_printf(&b, "%s(1, %d)", i ? ", " : "", 100 + i);
    il_buf_puts(&b, ", (2, 7)]");
    ok(il_buf_str(&b));
    il_buf_free(&b);
    ok("+deg(X, count<Y>) <- e(X, Y)");
    json_t *t = why(".why ?deg(1, C)", NULL);
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "atom"), "deg(1, 15)");
    const json_t *d = json_array_get(json_object_get(p, "derivations"), 0);
    cr_assert_str_eq(str(d, "kind"), "aggregate");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(d, "aggregates"), 0)),
                     "count<Y>");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(d, "group"), "X")), 1);
    cr_assert_eq(json_integer_value(json_object_get(d, "input_count")), 15);
    cr_assert_eq(json_array_size(json_object_get(d, "inputs")), 10);
    cr_assert(json_is_true(json_object_get(d, "sampled")));
    const json_t *in = json_array_get(json_object_get(d, "inputs"), 0);
    cr_assert_str_eq(str(json_array_get(json_object_get(in, "children"), 0), "relation"), "e");
    json_decref(t);
    t = why(".why full ?deg(1, C)", NULL);
    d = json_array_get(json_object_get(proof(t, 0), "derivations"), 0);
    cr_assert_eq(json_array_size(json_object_get(d, "inputs")), 15);
    cr_assert(json_is_false(json_object_get(d, "sampled")));
    json_decref(t);
}

Test(why, depth_bound) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+e[");
    for (int i = 1; i <= 70; i++) il_buf_printf(&b, "%s(%d, %d)", i > 1 ? ", " : "", i, i + 1);
    il_buf_puts(&b, "]");
    ok(il_buf_str(&b));
    il_buf_free(&b);
    ok("+reach(X, Y) <- e(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), e(Y, Z)");
    json_t *t = why(".why ?reach(1, 71)", NULL);
    const json_t *p = proof(t, 0);
    /* 50 conclusions deep at most, then a truncated leaf */
    cr_assert_leq(depth(p), 51, "depth %d", depth(p));
    cr_assert_geq(depth(p), 50, "depth %d", depth(p));
    cr_assert_eq(count_kind(p, "truncated"), 1);
    json_decref(t);
    /* a short chain is proved down to its facts */
    t = why(".why ?reach(1, 5)", NULL);
    cr_assert_eq(count_kind(proof(t, 0), "truncated"), 0);
    cr_assert_eq(depth(proof(t, 0)), 5);
    json_decref(t);
}

Test(why, count_bound_and_full) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "+e[");
    for (int i = 0; i < 8; i++)
        il_buf_printf(&b, "%s(1, %d), (%d, 99)", i ? ", " : "", 10 + i, 10 + i);
    il_buf_puts(&b, "]");
    ok(il_buf_str(&b));
    il_buf_free(&b);
    ok("+two(X, Z) <- e(X, Y), e(Y, Z)");
    json_t *t = why(".why ?two(1, 99)", NULL);
    const json_t *p = proof(t, 0);
    cr_assert_eq(json_array_size(json_object_get(p, "derivations")), 5);
    cr_assert(json_is_true(json_object_get(p, "more")));
    json_decref(t);
    t = why(".why full ?two(1, 99)", NULL);
    p = proof(t, 0);
    cr_assert_eq(json_array_size(json_object_get(p, "derivations")), 8);
    cr_assert(json_is_false(json_object_get(p, "more")));
    json_decref(t);
}

Test(why, session_data_invisible) {
    ok("+e[(1, 2)]");
    ok("+r(X, Y) <- e(X, Y)");
    ok("e(1, 3)");            /* a session fact of a stored relation */
    ok("r(X, Y) <- e(Y, X)"); /* a session clause of a persistent rule */
    ok("s(X) <- e(X, _)");    /* a session-only rule */
    size_t rows;
    json_t *t = why(".why ?r(X, Y)", &rows);
    cr_assert_eq(rows, 1);
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "atom"), "r(1, 2)");
    cr_assert_eq(json_array_size(json_object_get(p, "derivations")), 1);
    json_decref(t);
    il_result *r = il_execute(unit_session, ".why ?s(X)", 10);
    cr_assert_eq(il_result_nrows(r), 0);
    cr_assert_null(il_result_proof_trees(r));
    il_result_free(r);
}

Test(why, query_with_literals_and_plain_table) {
    ok("+e[(1, 2), (2, 3), (1, 5)]");
    ok("+reach(X, Y) <- e(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), e(Y, Z)");
    il_result *r = il_execute(unit_session, ".why ?reach(1, Y), Y < 4", 24);
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE);
    cr_assert_str_eq(il_result_col(r, 0), "_c0");
    cr_assert_str_eq(il_result_col(r, 1), "Y");
    cr_assert_eq(il_result_nrows(r), 2);
    json_error_t err;
    json_t *t = json_loads(il_result_proof_trees(r), 0, &err);
    cr_assert(t);
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "kind"), "query");
    const json_t *ch = json_object_get(p, "children");
    cr_assert_str_eq(str(json_array_get(ch, 0), "atom"), "reach(1, 2)");
    const json_t *last = json_array_get(ch, json_array_size(ch) - 1);
    cr_assert_str_eq(str(last, "literal"), "Y < 4");
    json_decref(t);
    il_result_free(r);
    /* a plain query carries no proof trees */
    r = il_execute(unit_session, "?reach(1, Y)", 12);
    cr_assert_null(il_result_proof_trees(r));
    il_result_free(r);
}

Test(why, base_fact_row) {
    ok("+e[(1, 2)]");
    json_t *t = why(".why ?e(1, Y)", NULL);
    cr_assert_str_eq(str(proof(t, 0), "kind"), "fact");
    cr_assert_str_eq(str(proof(t, 0), "atom"), "e(1, 2)");
    json_decref(t);
}

Test(why, runs_are_independent) {
    ok("+e[(1, 2), (2, 3)]");
    ok("+reach(X, Y) <- e(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), e(Y, Z)");
    json_t *a = why(".why ?reach(1, Y)", NULL);
    ok("+e[(3, 4)]");
    ok("-e(1, 2)");
    ok("+e[(1, 3)]");
    size_t rows;
    json_t *b = why(".why ?reach(1, Y)", &rows);
    cr_assert_eq(rows, 2);
    cr_assert_str_eq(str(proof(b, 0), "atom"), "reach(1, 3)");
    const json_t *d = json_array_get(json_object_get(proof(b, 0), "derivations"), 0);
    cr_assert_str_eq(str(json_array_get(json_object_get(d, "children"), 0), "atom"), "e(1, 3)");
    cr_assert_eq(json_array_size(json_object_get(proof(b, 0), "derivations")), 1);
    json_decref(a);
    json_decref(b);
}

Test(why, shared_conclusions_written_once) {
    ok("+e[(1, 2), (2, 3), (3, 4)]");
    ok("+reach(X, Y) <- e(X, Y)");
    ok("+reach(X, Z) <- reach(X, Y), e(Y, Z)");
    json_t *t = why(".why ?reach(1, Y)", NULL);
    /* reach(1, 2) is written out under the first row, and referred to below reach(1, 3) */
    cr_assert_str_eq(str(proof(t, 0), "kind"), "derived");
    json_int_t id = json_integer_value(json_object_get(proof(t, 0), "id"));
    const json_t *d = json_array_get(json_object_get(proof(t, 1), "derivations"), 0);
    const json_t *ch = json_array_get(json_object_get(d, "children"), 0);
    cr_assert_str_eq(str(ch, "kind"), "ref");
    cr_assert_eq(json_integer_value(json_object_get(ch, "id")), id);
    cr_assert_str_eq(str(ch, "atom"), "reach(1, 2)");
    json_decref(t);
}

/* The trees travel in one frame: past WHY_MAX_JSON_BYTES of JSON, conclusions not yet
   written out are truncated leaves, and every row still has its tree. */
Test(why, proof_trees_bounded_in_bytes) {
    il_buf prog;
    il_buf_init(&prog);
    il_buf_puts(&prog, "+edge[");
    enum { N = 45 };
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) il_buf_printf(&prog, "%s(%d, %d)", a + b ? ", " : "", a, b);
    il_buf_puts(&prog, "]");
    ok(il_buf_str(&prog));
    il_buf_free(&prog);
    ok("+reach(X, Y) <- edge(X, Y)");
    ok("+reach(X, Z) <- edge(X, Y), reach(Y, Z)");
    il_result *r = il_execute(unit_session, ".why full ?reach(X, Y)", 22);
    const char *text = il_result_proof_trees(r);
    cr_assert(text);
    size_t len = strlen(text);
    cr_assert(len <= WHY_MAX_JSON_BYTES + (1u << 20), "%zu bytes of proof trees", len);
    cr_assert(strstr(text, "\"kind\":\"truncated\""), "nothing truncated at %zu bytes", len);
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    cr_assert(j, "invalid JSON: %s", err.text);
    cr_assert_eq(json_array_size(j), WHY_MAX_ROWS);
    json_decref(j);
    il_result_free(r);
}
