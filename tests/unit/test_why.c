/* Unit tests of `.why` proof trees (src/kg/why.c, why_json.c, docs/engine.md "Proof
 * trees"), read through il_result_proof_trees in the original's DAG shape: a conclusion
 * with two derivations holds both (the second an alternative), a cyclic recursion
 * terminates with acyclic proofs, negations, comparisons and aggregates give their nodes
 * and bindings, a shared conclusion is one node, the depth and count bounds hold (and `.why full`
 * raises the count), session rules and facts are invisible, the table stays the plain sorted one,
 * and nothing is left over between runs. */
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

/* The DAG of a row. */
static const json_t *tree(const json_t *trees, size_t row) {
    const json_t *t = json_array_get(trees, row);
    cr_assert(t, "no tree for row %zu", row);
    cr_assert_eq(json_integer_value(json_object_get(t, "version")), 1);
    cr_assert(json_is_string(json_object_get(t, "query")));
    cr_assert(json_is_object(json_object_get(t, "nodes")));
    return t;
}

static const json_t *node(const json_t *t, const char *id) {
    const json_t *n = json_object_get(json_object_get(t, "nodes"), id);
    cr_assert(n, "no node %s", id);
    return n;
}

/* The row's root node. */
static const json_t *proof(const json_t *trees, size_t row) {
    const json_t *t = tree(trees, row);
    return node(t, json_string_value(json_array_get(json_object_get(t, "roots"), 0)));
}

/* The node's i-th child (or alternative). */
static const json_t *child(const json_t *t, const json_t *n, size_t i) {
    const char *id = json_string_value(json_array_get(json_object_get(n, "children"), i));
    cr_assert(id, "no child %zu", i);
    return node(t, id);
}

static const json_t *alt(const json_t *t, const json_t *n, size_t i) {
    const char *id = json_string_value(json_array_get(json_object_get(n, "alternatives"), i));
    cr_assert(id, "no alternative %zu", i);
    return node(t, id);
}

static size_t nchildren(const json_t *n) {
    return json_array_size(json_object_get(n, "children"));
}

/* Derivations of a conclusion: its own and its alternatives. */
static size_t nderivs(const json_t *n) {
    return 1 + json_array_size(json_object_get(n, "alternatives"));
}

static json_int_t arg(const json_t *n, size_t i) {
    return json_integer_value(
        json_array_get(json_object_get(json_object_get(n, "conclusion"), "args"), i));
}

static const char *pred(const json_t *n) {
    return json_string_value(json_object_get(json_object_get(n, "conclusion"), "pred"));
}

static json_int_t binding(const json_t *n, const char *var) {
    const json_t *v = json_object_get(json_object_get(n, "bindings"), var);
    cr_assert(v, "no binding %s", var);
    return json_integer_value(v);
}

/* Conclusions along the first children from n, n counted. */
static int depth(const json_t *t, const json_t *n) {
    int best = 0;
    for (size_t i = 0; i < nchildren(n); i++) {
        int d = depth(t, child(t, n, i));
        if (d > best) best = d;
    }
    return best + 1;
}

static int count_kind(const json_t *t, const char *kind) {
    int k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(t, "nodes"), key, v) {
        k += strcmp(json_string_value(json_object_get(v, "kind")), kind) == 0;
    }
    return k;
}

/* No path over children and alternatives comes back to a node on it (1: on the path). */
static bool acyclic(const json_t *t, const char *id, json_t *state) {
    json_int_t s = json_integer_value(json_object_get(state, id));
    if (s == 1) return false;
    if (s == 2) return true;
    json_object_set_new(state, id, json_integer(1));
    const json_t *n = node(t, id);
    const char *lists[] = {"children", "alternatives"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(n, lists[l]), i, c) {
            if (!acyclic(t, json_string_value(c), state)) return false;
        }
    }
    json_object_set_new(state, id, json_integer(2));
    return true;
}

Test(why, diamond_holds_both_derivations) {
    ok("+e[(1, 2), (1, 3), (2, 4), (3, 4)]");
    ok("+two(X, Z) <- e(X, Y), e(Y, Z)");
    size_t rows;
    json_t *t = why(".why ?two(1, 4)", &rows);
    cr_assert_eq(rows, 1);
    const json_t *tr = tree(t, 0);
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "kind"), "rule");
    cr_assert_str_eq(pred(p), "two");
    cr_assert_eq(arg(p, 0), 1);
    cr_assert_eq(arg(p, 1), 4);
    cr_assert_eq(nderivs(p), 2);
    json_int_t mids[2];
    for (size_t i = 0; i < 2; i++) {
        const json_t *d = i ? alt(tr, p, 0) : p;
        cr_assert_str_eq(str(d, "kind"), "rule");
        cr_assert_str_eq(str(d, "rule_id"), "two(X, Z) <- e(X, Y), e(Y, Z)");
        mids[i] = binding(d, "Y");
        cr_assert_eq(nchildren(d), 2);
        cr_assert_str_eq(str(child(tr, d, 0), "kind"), "fact");
        cr_assert_str_eq(str(child(tr, d, 1), "kind"), "fact");
    }
    cr_assert((mids[0] == 2 && mids[1] == 3) || (mids[0] == 3 && mids[1] == 2));
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
        const json_t *tr = tree(t, r);
        const json_t *p = proof(t, r);
        cr_assert_str_eq(str(p, "kind"), "rule");
        json_t *state = json_object();
        cr_assert(
            acyclic(tr, json_string_value(json_array_get(json_object_get(tr, "roots"), 0)), state),
            "row %zu has a cyclic proof", r);
        json_decref(state);
    }
    /* reach(1, 1) = reach(1, 2), e(2, 1) or reach(1, 3), e(3, 1): both kept, neither
       leads back to reach(1, 1) */
    const json_t *p = proof(t, 0);
    cr_assert_eq(arg(p, 1), 1);
    cr_assert_eq(nderivs(p), 2);
    json_decref(t);
}

Test(why, negation_and_comparison_nodes) {
    ok("+n[(1), (2), (3), (4)]");
    ok("+bad[(2)]");
    ok("+good(X) <- n(X), !bad(X), X > 1");
    size_t rows;
    json_t *t = why(".why ?good(X)", &rows);
    cr_assert_eq(rows, 2);
    const json_t *tr = tree(t, 0);
    const json_t *p = proof(t, 0);
    cr_assert_eq(arg(p, 0), 3);
    /* the atoms and the negation are children; the comparison held, X is bound */
    cr_assert_eq(nchildren(p), 2);
    cr_assert_str_eq(pred(child(tr, p, 0)), "n");
    const json_t *neg = child(tr, p, 1);
    cr_assert_str_eq(str(neg, "kind"), "negation");
    cr_assert_str_eq(pred(neg), "bad");
    cr_assert_eq(arg(neg, 0), 3);
    cr_assert_str_eq(str(json_object_get(neg, "negation"), "pattern"), "bad(3)");
    cr_assert_eq(binding(p, "X"), 3);
    json_decref(t);
}

Test(why, builtin_and_computed_values) {
    ok("+n[(3), (4)]");
    ok("+sq(X, Y) <- n(X), Y = X * X");
    ok("+a(X, D) <- n(X), D = abs(0 - X)");
    json_t *t = why(".why ?sq(3, Y)", NULL);
    cr_assert_eq(binding(proof(t, 0), "Y"), 9);
    cr_assert_eq(binding(proof(t, 0), "X"), 3);
    json_decref(t);
    t = why(".why ?a(4, D)", NULL);
    cr_assert_eq(binding(proof(t, 0), "D"), 4);
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
    const json_t *tr = tree(t, 0);
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "kind"), "aggregate");
    cr_assert_eq(arg(p, 1), 15);
    const json_t *ag = json_object_get(p, "aggregate");
    cr_assert_str_eq(str(ag, "fn"), "count");
    cr_assert_str_eq(str(ag, "value_var"), "Y");
    cr_assert_eq(json_integer_value(json_object_get(ag, "result")), 15);
    cr_assert_eq(binding(p, "X"), 1);
    cr_assert_eq(json_integer_value(json_object_get(ag, "contributing_count")), 15);
    cr_assert_eq(json_array_size(json_object_get(ag, "sample_inputs")), 10);
    cr_assert_eq(nchildren(p), 10);
    cr_assert_str_eq(pred(child(tr, p, 0)), "e");
    json_decref(t);
    t = why(".why full ?deg(1, C)", NULL);
    ag = json_object_get(proof(t, 0), "aggregate");
    cr_assert_eq(json_array_size(json_object_get(ag, "sample_inputs")), 15);
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
    const json_t *tr = tree(t, 0);
    const json_t *p = proof(t, 0);
    /* 50 conclusions deep at most, then a truncated leaf */
    cr_assert_leq(depth(tr, p), 51, "depth %d", depth(tr, p));
    cr_assert_geq(depth(tr, p), 50, "depth %d", depth(tr, p));
    cr_assert_eq(count_kind(tr, "truncated"), 1);
    json_decref(t);
    /* a short chain is proved down to its facts */
    t = why(".why ?reach(1, 5)", NULL);
    cr_assert_eq(count_kind(tree(t, 0), "truncated"), 0);
    cr_assert_eq(depth(tree(t, 0), proof(t, 0)), 5);
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
    cr_assert_eq(nderivs(proof(t, 0)), 5);
    json_decref(t);
    t = why(".why full ?two(1, 99)", NULL);
    cr_assert_eq(nderivs(proof(t, 0)), 8);
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
    cr_assert_eq(arg(p, 0), 1);
    cr_assert_eq(arg(p, 1), 2);
    cr_assert_eq(nderivs(p), 1);
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
    const json_t *tr = tree(t, 0);
    cr_assert_str_eq(str(tr, "query"), "?reach(1, Y), Y < 4");
    const json_t *p = proof(t, 0);
    cr_assert_str_eq(str(p, "kind"), "rule");
    cr_assert_eq(nchildren(p), 1);
    const json_t *c = child(tr, p, 0);
    cr_assert_str_eq(pred(c), "reach");
    cr_assert_eq(arg(c, 1), 2);
    cr_assert_eq(binding(p, "Y"), 2);
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
    cr_assert_str_eq(str(proof(t, 0), "source"), "edb");
    cr_assert_eq(arg(proof(t, 0), 1), 2);
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
    const json_t *p = proof(b, 0);
    cr_assert_eq(arg(p, 1), 3);
    const json_t *c = child(tree(b, 0), p, 0);
    cr_assert_str_eq(pred(c), "e");
    cr_assert_eq(arg(c, 1), 3);
    cr_assert_eq(nderivs(p), 1);
    json_decref(a);
    json_decref(b);
}

Test(why, shared_conclusions_written_once) {
    ok("+e[(1, 2), (2, 3), (3, 4)]");
    ok("+m(X) <- e(X, _)");
    ok("+a(X) <- m(X)");
    ok("+b(X) <- m(X)");
    ok("+s(X) <- a(X), b(X)");
    json_t *t = why(".why ?s(1)", NULL);
    const json_t *tr = tree(t, 0);
    /* m(1) is one node that a(1) and b(1) both point at */
    const json_t *p = proof(t, 0);
    const char *ma =
        json_string_value(json_array_get(json_object_get(child(tr, p, 0), "children"), 0));
    const char *mb =
        json_string_value(json_array_get(json_object_get(child(tr, p, 1), "children"), 0));
    cr_assert_str_eq(ma, mb);
    cr_assert_str_eq(pred(node(tr, ma)), "m");
    cr_assert_eq(json_object_size(json_object_get(tr, "nodes")), 5);
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
