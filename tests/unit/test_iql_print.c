/* Tests of syntax-tree Display (iql/print.h): the rule text of `.rule def`, `.session`
 * and messages, checked against the reference's listings. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "iql/parser.h"
#include "iql/print.h"

static il_arena A;
static il_buf B;

static void setup(void) {
    il_arena_init(&A);
    il_buf_init(&B);
}
static void teardown(void) {
    il_buf_free(&B);
    il_arena_destroy(&A);
}

TestSuite(print, .init = setup, .fini = teardown);

static iql_stmt parse(const char *text) {
    iql_stmt st;
    const char *err = NULL;
    cr_assert(iql_parse(&A, text, strlen(text), &st, &err), "`%s`: %s", text, err);
    return st;
}

/* The Display of the rule in `text`. */
static const char *rule(const char *text) {
    iql_stmt st = parse(text);
    il_buf_clear(&B);
    iql_fmt_rule(&st.u.rule, &B);
    return il_buf_str(&B);
}

/* The Display of the single term of the session fact `t(<text>)`. */
static const char *term(const char *text) {
    char buf[256];
    snprintf(buf, sizeof buf, "t(%s)", text);
    iql_stmt st = parse(buf);
    il_buf_clear(&B);
    iql_fmt_term(st.u.facts.tuples[0].terms[0], &B);
    return il_buf_str(&B);
}

#define RULE(text, expect) cr_expect_str_eq(rule(text), expect, "for `%s`", text)
#define TERM(text, expect) cr_expect_str_eq(term(text), expect, "for `%s`", text)

Test(print, rules_as_listed_by_the_reference) {
    RULE("connected(X, Z) <- edge(X, Y), edge(Y, Z)", "connected(X, Z) <- edge(X, Y), edge(Y, Z)");
    RULE("doubled(X, Y) <- base(X), Y = X * 2, X < 2", "doubled(X, Y) <- base(X), Y = X*2, X < 2");
    RULE("doubled(X, Y) <- base(X), Y = X * 2, X >= 2",
         "doubled(X, Y) <- base(X), Y = X*2, X >= 2");
    RULE("output(X, 10) <- nums(X), X = 1", "output(X, 10) <- nums(X), X = 1");
    RULE("rule_a(X, Y) <- base(X), Y = X + 1", "rule_a(X, Y) <- base(X), Y = X+1");
    RULE("+safe(X) <- node(X), !danger(X)", "safe(X) <- node(X), !danger(X)");
    RULE("multi(X, \"small\") <- n(X), X != 3", "multi(X, \"small\") <- n(X), X != 3");
    RULE("r(X) <- s(X), X <= 1, X > 0", "r(X) <- s(X), X <= 1, X > 0");
}

Test(print, rule_without_body_is_its_head) {
    RULE("foo(1) <-", "foo(1)");
    RULE("+nothing() <- ", "nothing()");
}

Test(print, arithmetic_uses_minimal_parentheses) {
    RULE("r(Y) <- s(X), Y = (X + 5) * 2", "r(Y) <- s(X), Y = (X+5)*2");
    RULE("r(Y) <- s(A, B, C), Y = A / (B * C)", "r(Y) <- s(A, B, C), Y = A/(B*C)");
    RULE("r(Y) <- s(T), Y = Total + Total / 10", "r(Y) <- s(T), Y = Total+Total/10");
    RULE("r(Y) <- s(X), Y = ((X + 1) * 2 + 3) * 4", "r(Y) <- s(X), Y = ((X+1)*2+3)*4");
    RULE("r(Y) <- s(A, B, C), Y = A - (B - C)", "r(Y) <- s(A, B, C), Y = A-(B-C)");
    RULE("r(Y) <- s(A, B, C), Y = (A - B) - C", "r(Y) <- s(A, B, C), Y = A-B-C");
    RULE("r(Y) <- s(A, B, C), Y = A * (B % C)", "r(Y) <- s(A, B, C), Y = A*(B%C)");
    RULE("r(Y) <- s(A, B, C), Y = A + (B * C)", "r(Y) <- s(A, B, C), Y = A+B*C");
    RULE("r(Y) <- s(X), Y = X * -1", "r(Y) <- s(X), Y = X*-1");
    RULE("half(Id, Amount / 2) <- total(Id, Amount)", "half(Id, Amount/2) <- total(Id, Amount)");
}

Test(print, constants) {
    TERM("42", "42");
    TERM("-9223372036854775808", "-9223372036854775808");
    TERM("2.0", "2");
    TERM("0.5", "0.5");
    TERM("-1.25", "-1.25");
    TERM("1e20", "100000000000000000000");
    TERM("true", "true");
    TERM("false", "false");
    TERM("_", "_");
    TERM("Var_1", "Var_1");
    TERM("[1, 2.5, -3]", "[1, 2.5, -3]");
    TERM("[]", "[]");
}

Test(print, strings_are_quoted_and_re_escaped) {
    TERM("\"plain\"", "\"plain\"");
    TERM("\"a\\nb\"", "\"a\\nb\"");
    TERM("\"t\\tr\\r\"", "\"t\\tr\\r\"");
    TERM("\"say \\\"hi\\\"\"", "\"say \\\"hi\\\"\"");
    TERM("\"back\\\\slash\"", "\"back\\\\slash\"");
    TERM("\"\\u{e9}\"", "\"\xc3\xa9\"");
    TERM("\"\"", "\"\"");
}

Test(print, function_calls_print_lowercase) {
    TERM("EUCLIDEAN(V1, V2)", "euclidean(V1, V2)");
    TERM("time_now()", "time_now()");
    TERM("concat(A, \"-\", len(S))", "concat(A, \"-\", len(S))");
    RULE("r(D) <- s(A, B), D = Cosine(A, [1, 0])", "r(D) <- s(A, B), D = cosine(A, [1, 0])");
}

Test(print, aggregates) {
    RULE("c(count<X>) <- s(X)", "c(count<X>) <- s(X)");
    RULE("c(G, SUM<V>) <- s(G, V)", "c(G, sum<V>) <- s(G, V)");
    RULE("c(countdistinct<V>) <- s(V)", "c(count_distinct<V>) <- s(V)");
    RULE("t(top_k<3, Player, Points:desc>) <- s(Player, Points)",
         "t(top_k<3, Player, Points:desc>) <- s(Player, Points)");
    RULE("t(S, top_k<2, Name, Score:asc>) <- s(S, Name, Score)",
         "t(S, top_k<2, Name, Score:asc>) <- s(S, Name, Score)");
    RULE("t(top_k<3, Score>) <- s(Score)", "t(top_k<3, Score>) <- s(Score)");
    RULE("t(top_k<3, Score:desc>) <- s(Score)", "t(top_k<3, Score>) <- s(Score)");
    RULE("t(top_k<3, Score:asc>) <- s(Score)", "t(top_k<3, Score:asc>) <- s(Score)");
    RULE("t(top_k_threshold<2, 100, Player, Points:desc>) <- s(Player, Points)",
         "t(top_k_threshold<2, 100, Player, Points:desc>) <- s(Player, Points)");
    RULE("t(within_radius<2.0, Id, V:asc>) <- s(Id, V)",
         "t(within_radius<2, Id, V:asc>) <- s(Id, V)");
    RULE("t(within_radius<0.5, D>) <- s(D)", "t(within_radius<0.5, D>) <- s(D)");
}

static const char *agg_name(const char *rule_text) {
    iql_stmt st = parse(rule_text);
    const iql_atom *h = &st.u.rule.head;
    il_buf_clear(&B);
    iql_fmt_agg_name(h->args[h->nargs - 1], &B);
    return il_buf_str(&B);
}

Test(print, aggregate_names_for_conflict_messages) {
    cr_expect_str_eq(agg_name("r(sum<V>) <- d(_, V)"), "sum");
    cr_expect_str_eq(agg_name("r(G, count<V>) <- d(G, V)"), "count");
    cr_expect_str_eq(agg_name("r(count_distinct<V>) <- d(V)"), "count_distinct");
    cr_expect_str_eq(agg_name("r(top_k<2, Id, V:desc>) <- d(Id, V)"), "top_k<2, Id, V:desc>");
    cr_expect_str_eq(agg_name("top2(top_k<2, X, Y:asc>) <- score(X, Y)"), "top_k<2, X, Y:asc>");
    cr_expect_str_eq(
        agg_name("r(top_k_threshold<2, 100, Player, Points:desc>) <- s(Player, Points)"),
        "top_k_threshold<2, 100, Player, Points:desc>");
    cr_expect_str_eq(agg_name("r(within_radius<2.0, Id, V:asc>) <- d(Id, V)"),
                     "within_radius<2, Id, V:asc>");
}

Test(print, atoms_and_literals) {
    iql_stmt st = parse("?edge(1, Y), !blocked(Y), Y >= 2");
    il_buf_clear(&B);
    iql_fmt_atom(&st.u.query.goal, &B);
    cr_expect_str_eq(il_buf_str(&B), "edge(1, Y)");
    il_buf_clear(&B);
    iql_fmt_literal(&st.u.query.extra[0], &B);
    cr_expect_str_eq(il_buf_str(&B), "!blocked(Y)");
    il_buf_clear(&B);
    iql_fmt_literal(&st.u.query.extra[1], &B);
    cr_expect_str_eq(il_buf_str(&B), "Y >= 2");
}

Test(print, hand_built_trees) {
    iql_term x = {.kind = IQL_T_VAR, .u.var = "X"};
    iql_term two = {.kind = IQL_T_FLOAT, .u.fval = 2.0};
    iql_term sum = {.kind = IQL_T_ARITH, .u.arith = {'+', &x, &two}};
    iql_term prod = {.kind = IQL_T_ARITH, .u.arith = {'*', &sum, &sum}};
    il_buf_clear(&B);
    iql_fmt_term(&prod, &B);
    cr_expect_str_eq(il_buf_str(&B), "(X+2)*(X+2)");
    iql_term *args[] = {&x, &prod};
    iql_atom head = {.rel = "h", .args = args, .nargs = 2};
    iql_rule r = {.head = head, .body = NULL, .nbody = 0};
    il_buf_clear(&B);
    iql_fmt_rule(&r, &B);
    cr_expect_str_eq(il_buf_str(&B), "h(X, (X+2)*(X+2))");
}
