/* Tests of the IQL parser (iql/parser.h): the statement classifier, every term kind,
 * arithmetic, aggregates, queries, facts, schemas, meta commands, every parse error
 * text, deep copies, and robustness against arbitrary bytes. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "iql/parser.h"

static il_arena A;

static void setup(void) {
    il_arena_init(&A);
}
static void teardown(void) {
    il_arena_destroy(&A);
}

TestSuite(parser, .init = setup, .fini = teardown);

static iql_stmt ok(const char *text) {
    iql_stmt st;
    const char *err = NULL;
    bool r = iql_parse(&A, text, strlen(text), &st, &err);
    cr_assert(r, "parse of `%s` failed: %s", text, err);
    return st;
}

static const char *perr(const char *text) {
    iql_stmt st;
    const char *err = NULL;
    bool r = iql_parse(&A, text, strlen(text), &st, &err);
    cr_assert(!r, "`%s` parsed (kind %d)", text, r ? (int)st.kind : -1);
    cr_assert(err != NULL);
    return err;
}

#define ERR(text, msg) cr_expect_str_eq(perr(text), msg, "for `%s`", text)

/* A test-local S-expression form of terms, independent of print.c:
 * X, _, i:5, f:2.5, s:"a", b:true, v:[1,2], len(S), (+ X 1), count<X>,
 * top_k<3|A|B:desc>@1:desc. */
static void sx_term(const iql_term *t, il_buf *b) {
    switch (t->kind) {
    case IQL_T_VAR:
        il_buf_puts(b, t->u.var);
        break;
    case IQL_T_PLACEHOLDER:
        il_buf_puts(b, "_");
        break;
    case IQL_T_INT:
        il_buf_printf(b, "i:%" PRId64, t->u.ival);
        break;
    case IQL_T_FLOAT:
        il_buf_printf(b, "f:%.17g", t->u.fval);
        break;
    case IQL_T_STRING:
        il_buf_puts(b, "s:\"");
        il_buf_put(b, t->u.str.ptr, t->u.str.len);
        il_buf_puts(b, "\"");
        break;
    case IQL_T_BOOL:
        il_buf_puts(b, t->u.bval ? "b:true" : "b:false");
        break;
    case IQL_T_VECTOR:
        il_buf_puts(b, "v:[");
        for (uint32_t i = 0; i < t->u.vec.n; i++)
            il_buf_printf(b, "%s%.17g", i ? "," : "", t->u.vec.elems[i]);
        il_buf_puts(b, "]");
        break;
    case IQL_T_CALL:
        il_buf_printf(b, "%s(", t->u.call.name);
        for (uint32_t i = 0; i < t->u.call.nargs; i++) {
            if (i) il_buf_puts(b, " ");
            sx_term(t->u.call.args[i], b);
        }
        il_buf_puts(b, ")");
        break;
    case IQL_T_ARITH:
        il_buf_printf(b, "(%c ", t->u.arith.op);
        sx_term(t->u.arith.lhs, b);
        il_buf_puts(b, " ");
        sx_term(t->u.arith.rhs, b);
        il_buf_puts(b, ")");
        break;
    case IQL_T_AGG: {
        static const char *const names[] = {
            "count", "count_distinct",  "sum",          "min", "max", "avg",
            "top_k", "top_k_threshold", "within_radius"};
        static const char *const dirs[] = {"", ":asc", ":desc"};
        il_buf_printf(b, "%s<", names[t->u.agg.kind]);
        if (t->u.agg.nspecs == 0) {
            il_buf_printf(b, "%s>", t->u.agg.var);
            break;
        }
        il_buf_printf(b, "%" PRIu64 "|%g", t->u.agg.k, t->u.agg.param);
        for (uint32_t i = 0; i < t->u.agg.nspecs; i++)
            il_buf_printf(b, "|%s%s", t->u.agg.specs[i].var, dirs[t->u.agg.specs[i].dir]);
        il_buf_printf(b, ">@%u%s", t->u.agg.order_spec, dirs[t->u.agg.order]);
        break;
    }
    }
}

static const char *sx(const iql_term *t) {
    il_buf b;
    il_buf_init(&b);
    sx_term(t, &b);
    char *r = il_arena_strdup(&A, il_buf_str(&b));
    il_buf_free(&b);
    return r;
}

/* The term written as the single argument of a session fact. */
static const char *term(const char *text) {
    char buf[512];
    snprintf(buf, sizeof buf, "t(%s)", text);
    iql_stmt st = ok(buf);
    cr_assert_eq(st.kind, IQL_STMT_SESSION_FACT);
    cr_assert_eq(st.u.facts.tuples[0].n, 1, "`%s` is not one term", text);
    return sx(st.u.facts.tuples[0].terms[0]);
}

static const char *term_err(const char *text) {
    char buf[512];
    snprintf(buf, sizeof buf, "t(%s)", text);
    return perr(buf);
}

#define TERM(text, expect)  cr_expect_str_eq(term(text), expect, "for `%s`", text)
#define TERM_ERR(text, msg) cr_expect_str_eq(term_err(text), msg, "for `%s`", text)

/* The right side of `X = <expr>` in a rule body. */
static const char *expr(const char *text) {
    char buf[512];
    snprintf(buf, sizeof buf, "r(X) <- s(X), Y = %s", text);
    iql_stmt st = ok(buf);
    cr_assert_eq(st.u.rule.nbody, 2);
    return sx(st.u.rule.body[1].rhs);
}

#define EXPR(text, expect) cr_expect_str_eq(expr(text), expect, "for `%s`", text)

/* ---- classifier ---------------------------------------------------------------------- */

Test(parser, classifies_every_statement_kind) {
    struct {
        const char *text;
        iql_stmt_kind kind;
    } cases[] = {
        {".kg list", IQL_STMT_META},
        {"type Email: string", IQL_STMT_TYPE_DECL},
        {"-c(Id, Old), +c(Id, New) <- c(Id, Old), New = Old + 1", IQL_STMT_UPDATE},
        {"+path(X, Y) <- edge(X, Y)", IQL_STMT_PERSIST_RULE},
        {"+user(id: int, name: string)", IQL_STMT_SCHEMA},
        {"user(id: int, name: string)", IQL_STMT_SESSION_SCHEMA},
        {"+edge(1, 2)", IQL_STMT_INSERT},
        {"+edge[(1, 2), (2, 3)]", IQL_STMT_INSERT},
        {"-path", IQL_STMT_DROP_RULE},
        {"-edge(1, 2)", IQL_STMT_DELETE},
        {"-edge[(1, 2)]", IQL_STMT_DELETE},
        {"-edge(X, Y) <- source(X)", IQL_STMT_COND_DELETE},
        {"?edge(1, Y)", IQL_STMT_QUERY},
        {"path(X, Y) <- edge(X, Y)", IQL_STMT_SESSION_RULE},
        {"edge(1, 2)", IQL_STMT_SESSION_FACT},
        {"?- edge(X, Y)", IQL_STMT_SESSION_FACT},
        {"!vip(Id)", IQL_STMT_SESSION_FACT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        iql_stmt st = ok(cases[i].text);
        cr_expect_eq(st.kind, cases[i].kind, "`%s`: kind %d, expected %d", cases[i].text, st.kind,
                     cases[i].kind);
    }
}

Test(parser, classifier_errors) {
    ERR("", "Empty input");
    ERR("   \t ", "Empty input");
    ERR("// only a comment", "Empty input");
    ERR("X := 1", "Invalid syntax: ':=' is not a valid operator");
    ERR("+r(X) <- s(X), X := 1", "Invalid syntax: ':=' is not a valid operator");
    ERR("X > 1,", "Unrecognized statement: X > 1,");
    ERR("Salary >= MinSal,", "Unrecognized statement: Salary >= MinSal,");
    ERR("A > 0, B > 1, C > 10", "Unrecognized statement: A > 0, B > 1, C > 10");
    ERR("% a comment", "Unrecognized statement: % a comment");
    ERR("Status = \"active\",", "Unrecognized statement: Status = \"active\",");
    ERR("X = \"(\"", "Unrecognized statement: X = \"(\"");
}

Test(parser, operators_inside_strings_do_not_classify) {
    iql_stmt st = ok("+r(\"a := b\", \"c <- d\")");
    cr_assert_eq(st.kind, IQL_STMT_INSERT);
    cr_expect_str_eq(sx(st.u.facts.tuples[0].terms[0]), "s:\"a := b\"");
    cr_expect_str_eq(sx(st.u.facts.tuples[0].terms[1]), "s:\"c <- d\"");
}

Test(parser, input_is_bounded_by_its_length) {
    const char *text = "?edge(1, Y), garbage(";
    iql_stmt st;
    const char *err = NULL;
    cr_assert(iql_parse(&A, text, 11, &st, &err), "%s", err);
    cr_expect_eq(st.u.query.nextra, 0);
    cr_expect_str_eq(st.u.query.goal.rel, "edge");
}

Test(parser, typed_argument_detection_ignores_strings) {
    cr_expect_eq(ok("+r(\"a: Int\", 1)").kind, IQL_STMT_INSERT);
    cr_expect_eq(ok("r(\"x: int\")").kind, IQL_STMT_SESSION_FACT);
    cr_expect_eq(ok("r(x: Int)").kind, IQL_STMT_SESSION_SCHEMA);
    ERR("+r(1: int)", "Invalid term: '1: int'");
}

Test(parser, inline_comments_are_stripped_outside_strings) {
    iql_stmt st = ok("  +edge(1, 2)   // the first edge");
    cr_assert_eq(st.kind, IQL_STMT_INSERT);
    cr_expect_eq(st.u.facts.tuples[0].n, 2);
    st = ok("+url(\"http://example.com\") // a link");
    cr_expect_str_eq(sx(st.u.facts.tuples[0].terms[0]), "s:\"http://example.com\"");
}

/* ---- terms ------------------------------------------------------------------------------ */

Test(parser, variables_and_placeholders) {
    TERM("X", "X");
    TERM("Foo_bar1", "Foo_bar1");
    TERM("_Y", "_Y");
    TERM("_from", "_from");
    TERM("_", "_");
    iql_stmt st = ok("r(_, _, X)");
    cr_expect_eq(st.u.facts.tuples[0].terms[0]->kind, IQL_T_PLACEHOLDER);
    cr_expect_eq(st.u.facts.tuples[0].terms[1]->kind, IQL_T_PLACEHOLDER);
    cr_expect_neq(st.u.facts.tuples[0].terms[0], st.u.facts.tuples[0].terms[1]);
}

Test(parser, integers) {
    TERM("0", "i:0");
    TERM("42", "i:42");
    TERM("-17", "i:-17");
    TERM("+5", "i:5");
    TERM("9223372036854775807", "i:9223372036854775807");
    TERM("-9223372036854775808", "i:-9223372036854775808");
    TERM("- 5", "i:-5");
}

Test(parser, integers_that_overflow_become_floats) {
    TERM("99999999999999999999", "f:1e+20");
    TERM("9223372036854775808", "f:9.2233720368547758e+18");
}

Test(parser, floats_in_rust_syntax) {
    TERM("3.14", "f:3.1400000000000001");
    TERM("-0.5", "f:-0.5");
    TERM("1e10", "f:10000000000");
    TERM("1.0e-100", "f:1e-100");
    TERM(".5", "f:0.5");
    TERM("5.", "f:5");
    TERM("+1.5", "f:1.5");
    TERM("2E+3", "f:2000");
    TERM("- 2.5", "f:-2.5");
    /* An integral float constant stays a float in the tree. */
    iql_stmt st = ok("t(2.0)");
    cr_expect_eq(st.u.facts.tuples[0].terms[0]->kind, IQL_T_FLOAT);
    cr_expect_eq(st.u.facts.tuples[0].terms[0]->u.fval, 2.0);
}

Test(parser, non_finite_and_malformed_numbers_are_invalid) {
    TERM_ERR("1e400", "Invalid term: '1e400'");
    TERM_ERR("inf", "Unquoted atom 'inf' is not allowed. Use \"inf\" (quoted string) instead. "
                    "(line 1, column 3)");
    TERM_ERR("1abc", "Invalid term: '1abc'");
    TERM_ERR("1.2.3", "Invalid term: '1.2.3'");
}

Test(parser, strings_have_escapes_processed) {
    TERM("\"hello\"", "s:\"hello\"");
    TERM("\"\"", "s:\"\"");
    TERM("\"a\\nb\"", "s:\"a\nb\"");
    TERM("\"tab\\there\"", "s:\"tab\there\"");
    TERM("\"cr\\r\"", "s:\"cr\r\"");
    TERM("\"Say \\\"hi\\\"\"", "s:\"Say \"hi\"\"");
    TERM("\"back\\\\slash\"", "s:\"back\\slash\"");
    TERM("\"\\u{48}\\u{e9}\"", "s:\"H\xc3\xa9\"");
    TERM("\"\\u{1F600}\"", "s:\"\xf0\x9f\x98\x80\"");
    /* Unknown and malformed escapes keep their backslash. */
    TERM("\"a\\qb\"", "s:\"a\\qb\"");
    TERM("\"\\u{zz}\"", "s:\"\\u{zz}\"");
    TERM("\"\\u{D800}\"", "s:\"\\u{D800}\"");
    TERM("\"\\u{1234567}\"", "s:\"\\u{1234567}\"");
}

Test(parser, nul_escape_keeps_the_length) {
    iql_stmt st = ok("t(\"a\\0b\")");
    const iql_term *t = st.u.facts.tuples[0].terms[0];
    cr_assert_eq(t->kind, IQL_T_STRING);
    cr_expect_eq(t->u.str.len, 3);
    cr_expect_eq(memcmp(t->u.str.ptr, "a\0b", 3), 0);
}

Test(parser, commas_and_operators_inside_strings_are_text) {
    iql_stmt st = ok("t(\"a, b\", \"x<y\", \"(\")");
    cr_assert_eq(st.u.facts.tuples[0].n, 3);
    cr_expect_str_eq(sx(st.u.facts.tuples[0].terms[0]), "s:\"a, b\"");
    cr_expect_str_eq(sx(st.u.facts.tuples[0].terms[1]), "s:\"x<y\"");
    st = ok("r(N) <- s(N), N = \"x<y\"");
    cr_assert_eq(st.u.rule.body[1].kind, IQL_LIT_CMP);
    cr_expect_eq(st.u.rule.body[1].op, IQL_CMP_EQ);
    cr_expect_str_eq(sx(st.u.rule.body[1].rhs), "s:\"x<y\"");
    st = ok("r(N) <- s(N), N = \"a==b\"");
    cr_expect_str_eq(sx(st.u.rule.body[1].rhs), "s:\"a==b\"");
}

Test(parser, unterminated_strings_are_invalid_terms) {
    TERM_ERR("\"abc", "Invalid term: '\"abc'");
    ERR("t(\"abc\\\")", "Invalid term: '\"abc\\\"'");
}

Test(parser, booleans_and_unquoted_atoms) {
    TERM("true", "b:true");
    TERM("false", "b:false");
    ERR("+color(red)", "Unquoted atom 'red' is not allowed. Use \"red\" (quoted string) instead. "
                       "(line 1, column 8)");
    TERM_ERR("null", "Unquoted atom 'null' is not allowed. Use \"null\" (quoted string) instead. "
                     "(line 1, column 3)");
    TERM("True", "True"); /* an uppercase word is a variable */
}

Test(parser, vectors) {
    TERM("[1, 2.5, -3]", "v:[1,2.5,-3]");
    TERM("[]", "v:[]");
    TERM("[ ]", "v:[]");
    TERM("[1e2]", "v:[100]");
    TERM_ERR("[1, x, 3]", "Invalid vector element: 'x' (line 1, column 7)");
    TERM_ERR("[1, 2,]", "Invalid vector element: '' (line 1, column 9)");
    TERM_ERR("[\"a\"]", "Invalid vector element: '\"a\"' (line 1, column 4)");
    iql_stmt st = ok("+emb[(1, [1.0, 0.0]), (2, [0.0, 1.0])]");
    cr_assert_eq(st.u.facts.ntuples, 2);
    cr_expect_str_eq(sx(st.u.facts.tuples[1].terms[1]), "v:[0,1]");
}

Test(parser, builtin_calls) {
    TERM("euclidean(V1, V2)", "euclidean(V1 V2)");
    TERM("LEN(S)", "len(S)");
    TERM("Pow(B, E)", "pow(B E)");
    TERM("time_now()", "time_now()");
    TERM("euclidean(normalize(V1), V2)", "euclidean(normalize(V1) V2)");
    TERM("concat(\"a, b\", X, [1, 2])", "concat(s:\"a, b\" X v:[1,2])");
    TERM("abs(X - 1)", "abs((- X i:1))");
    /* The argument count is checked at execution, not here. */
    TERM("euclidean(V)", "euclidean(V)");
    cr_expect_eq(ok("t(abs(X))").u.facts.tuples[0].terms[0]->kind, IQL_T_CALL);
}

Test(parser, unknown_functions_are_invalid_terms) {
    ERR("?values(X, Y), Z = nonexistent_func(X, Y)", "Invalid term: 'nonexistent_func(X, Y)'");
    ERR("min_of_pair(A, B, M) <- pairs(A, B), M = MIN(A, B)", "Invalid term: 'MIN(A, B)'");
    ERR("clamped(X, Y) <- vals(X), Y = max_int64(0, min_int64(X, 10))",
        "Invalid term: 'max_int64(0, min_int64(X, 10))'");
    TERM_ERR("-Y", "Invalid term: '-Y'");
    TERM_ERR("a b", "Invalid term: 'a b'");
}

Test(parser, builtin_lookup_table) {
    const char *canon;
    uint32_t arity;
    cr_assert(iql_builtin_lookup("EUCLIDEAN", 9, &canon, &arity));
    cr_expect_str_eq(canon, "euclidean");
    cr_expect_eq(arity, 2);
    struct {
        const char *name;
        uint32_t arity;
    } spot[] = {{"time_now", 0},
                {"normalize", 1},
                {"lsh_multi_probe", 4},
                {"concat", 3},
                {"substr", 3},
                {"intervals_overlap", 4},
                {"time_decay_linear", 3},
                {"dequantize_scaled", 2},
                {"within_last", 3},
                {"abs", 1},
                {"max_val", 2}};
    for (size_t i = 0; i < sizeof spot / sizeof spot[0]; i++) {
        cr_assert(iql_builtin_lookup(spot[i].name, strlen(spot[i].name), &canon, &arity), "%s",
                  spot[i].name);
        cr_expect_eq(arity, spot[i].arity, "%s", spot[i].name);
    }
    const char *not_builtins[] = {"min",   "max",         "contains", "starts_with",
                                  "round", "min_int64",   "hamming",  "split",
                                  "",      "hnsw_nearest"};
    for (size_t i = 0; i < sizeof not_builtins / sizeof not_builtins[0]; i++)
        cr_expect(!iql_builtin_lookup(not_builtins[i], strlen(not_builtins[i]), NULL, NULL), "%s",
                  not_builtins[i]);
}

/* ---- arithmetic ------------------------------------------------------------------------- */

Test(parser, arithmetic_precedence_and_associativity) {
    EXPR("X * 2", "(* X i:2)");
    EXPR("X+1", "(+ X i:1)");
    EXPR("V + 2 * 3", "(+ V (* i:2 i:3))");
    EXPR("(V + 2) * 3", "(* (+ V i:2) i:3)");
    EXPR("X - 5 - 3", "(- (- X i:5) i:3)");
    EXPR("A / B / C", "(/ (/ A B) C)");
    EXPR("A / (B * C)", "(/ A (* B C))");
    EXPR("X + 10 - 5 + 2", "(+ (- (+ X i:10) i:5) i:2)");
    EXPR("(A + B) * C - A / C", "(- (* (+ A B) C) (/ A C))");
    EXPR("((X + 1) * 2 + 3) * 4", "(* (+ (* (+ X i:1) i:2) i:3) i:4)");
    EXPR("N % 7", "(% N i:7)");
    EXPR("A % B * C", "(* (% A B) C)");
}

Test(parser, arithmetic_signs_and_exponents) {
    EXPR("X * -1", "(* X i:-1)");
    EXPR("X - -5", "(- X i:-5)");
    EXPR("X * - 2.5", "(* X f:-2.5)");
    EXPR("1e-3 * X", "(* f:0.001 X)");
    EXPR("X + 2.5E+2", "(+ X f:250)");
    EXPR("-5 + X", "(+ i:-5 X)");
    EXPR("X * 1.0", "(* X f:1)");
    /* Identifiers in arithmetic are variables whatever their case, like the reference. */
    EXPR("x + 1", "(+ x i:1)");
}

Test(parser, arithmetic_errors_quote_the_operand) {
    ERR("r(X, Y) <- s(X), Y = X + abs(X)",
        "Invalid arithmetic expression: 'abs(X)' (line 1, column 26)");
    ERR("r(X, Y) <- s(X), Y = X + [1]", "Invalid arithmetic expression: '[1]' (line 1, column 26)");
    ERR("r(X, Y) <- s(X), Y = X + \"a\"",
        "Invalid arithmetic expression: '\"a\"' (line 1, column 26)");
    ERR("r(X, Y) <- s(X), Y = X +", "Invalid arithmetic expression: 'X +' (line 1, column 22)");
    ERR("r(X, Y) <- s(X), Y = A * B +", "Invalid arithmetic expression: 'B +' (line 1, column 26)");
    ERR("r(X, Y) <- s(X), Y = +X", "Invalid arithmetic expression: '+X' (line 1, column 22)");
    ERR("r(X, Y) <- s(X), Y = X + (Y", "Invalid arithmetic expression: '(Y' (line 1, column 26)");
    ERR("r(X, Y) <- s(X), Y = a b * 2", "Invalid arithmetic expression: 'a b' (line 1, column 22)");
    ERR("r(X, Y) <- s(X), Y = (X + y z)",
        "Invalid arithmetic expression: 'y z' (line 1, column 27)");
}

Test(parser, arithmetic_in_heads_and_comparisons) {
    iql_stmt st = ok("half(Id, Amount/2) <- total(Id, Amount)");
    cr_expect_str_eq(sx(st.u.rule.head.args[1]), "(/ Amount i:2)");
    st = ok("big(A, B) <- data(A, B), A * B > 20");
    cr_assert_eq(st.u.rule.body[1].kind, IQL_LIT_CMP);
    cr_expect_eq(st.u.rule.body[1].op, IQL_CMP_GT);
    cr_expect_str_eq(sx(st.u.rule.body[1].lhs), "(* A B)");
    st = ok("+dist(Y, D+1) <- dist(X, D), edge(X, Y)");
    cr_expect_str_eq(sx(st.u.rule.head.args[1]), "(+ D i:1)");
}

/* ---- aggregates ---------------------------------------------------------------------------- */

static const char *head_arg(const char *rule, uint32_t i) {
    iql_stmt st = ok(rule);
    cr_assert(i < st.u.rule.head.nargs);
    return sx(st.u.rule.head.args[i]);
}

Test(parser, simple_aggregates) {
    cr_expect_str_eq(head_arg("c(count<X>) <- s(X)", 0), "count<X>");
    cr_expect_str_eq(head_arg("c(Count<X>) <- s(X)", 0), "count<X>");
    cr_expect_str_eq(head_arg("c(G, SUM<V>) <- s(G, V)", 1), "sum<V>");
    cr_expect_str_eq(head_arg("c(min<V>) <- s(V)", 0), "min<V>");
    cr_expect_str_eq(head_arg("c(max< V >) <- s(V)", 0), "max<V>");
    cr_expect_str_eq(head_arg("c(avg<V>) <- s(V)", 0), "avg<V>");
    cr_expect_str_eq(head_arg("c(count_distinct<V>) <- s(V)", 0), "count_distinct<V>");
    cr_expect_str_eq(head_arg("c(countdistinct<V>) <- s(V)", 0), "count_distinct<V>");
    /* Kept verbatim: the planner reports the missing variable. */
    cr_expect_str_eq(head_arg("c(count<X, Y>) <- s(X, Y)", 0), "count<X, Y>");
}

Test(parser, ranking_aggregates) {
    cr_expect_str_eq(head_arg("t(top_k<3, Score>) <- s(Score)", 0), "top_k<3|0|Score>@0:desc");
    cr_expect_str_eq(head_arg("t(top_k<3, Player, Points:desc>) <- s(Player, Points)", 0),
                     "top_k<3|0|Player|Points:desc>@1:desc");
    cr_expect_str_eq(head_arg("t(G, top_k<2, Name:asc, Score>) <- s(G, Name, Score)", 1),
                     "top_k<2|0|Name:asc|Score>@0:asc");
    cr_expect_str_eq(
        head_arg("t(top_k_threshold<2, 100, Player, Points:desc>) <- s(Player, Points)", 0),
        "top_k_threshold<2|100|Player|Points:desc>@1:desc");
    cr_expect_str_eq(head_arg("t(top_k_threshold<5, 0.5, S>) <- s(S)", 0),
                     "top_k_threshold<5|0.5|S>@0:desc");
    cr_expect_str_eq(head_arg("t(within_radius<2.0, Id, V:asc>) <- s(Id, V)", 0),
                     "within_radius<0|2|Id|V:asc>@1:asc");
    /* within_radius always ranks ascending; the written direction is kept. */
    cr_expect_str_eq(head_arg("t(within_radius<0.5, Id, D:desc>) <- s(Id, D)", 0),
                     "within_radius<0|0.5|Id|D:desc>@1:asc");
    cr_expect_str_eq(head_arg("t(within_radius<1, D>) <- s(D)", 0), "within_radius<0|1|D>@0:asc");
}

Test(parser, aggregate_errors) {
    ERR("bad(X, <INVALID:Y>) <- data(Y)", "Unknown aggregate function: ");
    ERR("+d(Region, <COUNT_DISTINCT:Product>) <- sales(_, Region, Product)",
        "Unknown aggregate function: ");
    ERR("bad(median<V>) <- data(V)", "Unknown aggregate function: median");
    ERR("t(top_k<3, A:asc, B:desc>) <- s(A, B)", "Invalid top_k parameters: 3, A:asc, B:desc");
    ERR("t(top_k<3, A, B>) <- s(A, B)", "Invalid top_k parameters: 3, A, B");
    ERR("t(top_k<X, A>) <- s(A, X)", "Invalid top_k parameters: X, A");
    ERR("t(top_k< -1, A>) <- s(A)", "Invalid top_k parameters: -1, A");
    /* `<-` is the arrow wherever it appears, as in the reference. */
    ERR("t(top_k<-1, A>) <- s(A)", "Invalid rule: t(top_k<-1, A>) <- s(A) (line 1, column 1)");
    ERR("t(top_k<3>) <- s(A)", "Invalid top_k parameters: 3");
    ERR("t(top_k<3, a>) <- s(A)", "Invalid top_k parameters: 3, a");
    ERR("t(top_k_threshold<2, x, A>) <- s(A)", "Invalid top_k_threshold parameters: 2, x, A");
    ERR("t(top_k_threshold<2, A>) <- s(A)", "Invalid top_k_threshold parameters: 2, A");
    ERR("t(within_radius<far, A>) <- s(A)", "Invalid within_radius parameters: far, A");
    ERR("t(within_radius<1, A, B>) <- s(A, B)", "Invalid within_radius parameters: 1, A, B");
}

/* ---- rules and bodies ----------------------------------------------------------------------- */

Test(parser, rule_structure) {
    iql_stmt st = ok("+path(X, Z) <- path(X, Y), edge(Y, Z), !blocked(Z), X != Z");
    cr_assert_eq(st.kind, IQL_STMT_PERSIST_RULE);
    const iql_rule *r = &st.u.rule;
    cr_expect_str_eq(r->head.rel, "path");
    cr_expect_eq(r->head.nargs, 2);
    cr_assert_eq(r->nbody, 4);
    cr_expect_eq(r->body[0].kind, IQL_LIT_ATOM);
    cr_expect_str_eq(r->body[1].atom.rel, "edge");
    cr_expect_eq(r->body[2].kind, IQL_LIT_NEG);
    cr_expect_str_eq(r->body[2].atom.rel, "blocked");
    cr_expect_eq(r->body[3].kind, IQL_LIT_CMP);
    cr_expect_eq(r->body[3].op, IQL_CMP_NE);
}

Test(parser, comparison_operators) {
    struct {
        const char *lit;
        iql_cmp_op op;
        const char *lhs, *rhs;
    } cases[] = {
        {"X = 1", IQL_CMP_EQ, "X", "i:1"},
        {"X != 1", IQL_CMP_NE, "X", "i:1"},
        {"X < 1", IQL_CMP_LT, "X", "i:1"},
        {"X <= 1", IQL_CMP_LE, "X", "i:1"},
        {"X > 1", IQL_CMP_GT, "X", "i:1"},
        {"X >= 1", IQL_CMP_GE, "X", "i:1"},
        {"X<3", IQL_CMP_LT, "X", "i:3"},
        {"Y = X*2", IQL_CMP_EQ, "Y", "(* X i:2)"},
        {"1 < X", IQL_CMP_LT, "i:1", "X"},
        {"D = euclidean(A, B)", IQL_CMP_EQ, "D", "euclidean(A B)"},
        {"S = \"a=b\"", IQL_CMP_EQ, "S", "s:\"a=b\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "r(X) <- s(X), %s", cases[i].lit);
        iql_stmt st = ok(buf);
        const iql_literal *l = &st.u.rule.body[1];
        cr_assert_eq(l->kind, IQL_LIT_CMP, "%s", cases[i].lit);
        cr_expect_eq(l->op, cases[i].op, "%s", cases[i].lit);
        cr_expect_str_eq(sx(l->lhs), cases[i].lhs, "%s", cases[i].lit);
        cr_expect_str_eq(sx(l->rhs), cases[i].rhs, "%s", cases[i].lit);
    }
}

Test(parser, negation_strips_every_bang) {
    iql_stmt st = ok("r(X) <- s(X), !!t(X)");
    cr_expect_eq(st.u.rule.body[1].kind, IQL_LIT_NEG);
    cr_expect_str_eq(st.u.rule.body[1].atom.rel, "t");
}

Test(parser, body_splitting_respects_strings_vectors_and_calls) {
    iql_stmt st = ok("r(X) <- s(X, \"a, b\"), D = euclidean(X, [1, 2]), t(X)");
    cr_assert_eq(st.u.rule.nbody, 3);
    cr_expect_str_eq(sx(st.u.rule.body[1].rhs), "euclidean(X v:[1,2])");
    st = ok("r(X) <- s(X), t(\"x <- y\")");
    cr_expect_eq(st.u.rule.nbody, 2);
}

Test(parser, trailing_and_empty_body_pieces) {
    iql_stmt st = ok("computed(X) <- nums(X),");
    cr_expect_eq(st.u.rule.nbody, 1);
    st = ok("r(X) <- s(X),, t(X)");
    cr_expect_eq(st.u.rule.nbody, 2);
    st = ok("foo(1) <-");
    cr_expect_eq(st.kind, IQL_STMT_SESSION_RULE);
    cr_expect_eq(st.u.rule.nbody, 0);
}

Test(parser, rule_errors) {
    const char *empty = "Empty rule body with head variables is not allowed. Use "
                        "'foo(constant).' for facts, or add body predicates.";
    ERR("foo(X) <-", empty);
    ERR("+emp_grade(Name, Salary, Grade) <-", empty);
    ERR("+s(UserId, sum<Amount>) <-", empty);
    ERR("+p(X + 1) <-", empty);
    ERR("+path(X, Y) <- edge(X, Y).", "Invalid term: 'Y).'");
    ERR("+path(X, Z) <- path(X, Y), edge(Y, Z).", "Invalid term: 'Z).'");
    ERR("+foo(X) <- .", "Invalid atom: .");
    ERR("r(X) <- s", "Invalid atom: s");
    ERR("r <- s(X)", "Invalid atom: r");
    ERR("?nums(X, Y), Y == 1.5", "Use '=' for equality, not '=='");
    ERR("r(X) <- s(X), X == 1", "Use '=' for equality, not '=='");
    ERR("a(X) <- b(X) <- c(X)", "Invalid rule: a(X) <- b(X) <- c(X) (line 1, column 1)");
    ERR("r(X) <- s(X), X =", "Invalid term: ''");
}

Test(parser, rules_over_function_named_relations_and_function_literals) {
    ERR("r(Id) <- p(Id, T1, T2), time_before(T1, T2)",
        "Function call 'time_before' cannot be used as a body literal; compare its result, e.g. "
        "B = time_before(...), B = true");
    ERR("r(Id) <- p(Id, S), !CONTAINS_X(S), LEN(S)",
        "Function call 'len' cannot be used as a body literal; compare its result, e.g. B = "
        "len(...), B = true");
    ERR("r(Id) <- p(Id, S), !len(S)",
        "Function call 'len' cannot be used as a body literal; compare its result, e.g. B = "
        "len(...), B = true");
    ERR("?p(A, B), time_after(A, B)",
        "Function call 'time_after' cannot be used as a body literal; compare its result, e.g. B "
        "= time_after(...), B = true");
    /* Relations may be named like builtins: another arity, a head, or a query goal. */
    cr_expect_eq(ok("r(M) <- min_val(M)").u.rule.nbody, 1);
    cr_expect_str_eq(ok("?min_val(M)").u.query.goal.rel, "min_val");
    cr_expect_str_eq(ok("?time_diff(A, B, D)").u.query.goal.rel, "time_diff");
    cr_expect_str_eq(ok("?abs(X)").u.query.goal.rel, "abs");
    cr_expect_str_eq(ok("+min_val(min<X>) <- nums(X)").u.rule.head.rel, "min_val");
    /* Unknown names are atoms. */
    cr_expect_str_eq(ok("r(S) <- p(S), contains(S, \"x\")").u.rule.body[1].atom.rel, "contains");
}

/* ---- queries ------------------------------------------------------------------------------- */

Test(parser, simple_query) {
    iql_stmt st = ok("?edge(1, Y)");
    cr_assert_eq(st.kind, IQL_STMT_QUERY);
    const iql_query *q = &st.u.query;
    cr_expect_str_eq(q->goal.rel, "edge");
    cr_assert_eq(q->goal.nargs, 2);
    cr_expect_str_eq(sx(q->goal.args[0]), "i:1");
    cr_expect_str_eq(sx(q->goal.args[1]), "Y");
    cr_expect_eq(q->nextra, 0);
    cr_expect_eq(q->nsort, 0);
    cr_expect_eq(q->limit, -1);
    cr_expect_eq(q->offset, 0);
}

Test(parser, query_extra_literals_keep_everything_but_the_goal) {
    iql_stmt st = ok("?X = 1, foo(X), !bar(X), baz(X)");
    const iql_query *q = &st.u.query;
    cr_expect_str_eq(q->goal.rel, "foo");
    cr_assert_eq(q->nextra, 3);
    cr_expect_eq(q->extra[0].kind, IQL_LIT_CMP);
    cr_expect_eq(q->extra[1].kind, IQL_LIT_NEG);
    cr_expect_str_eq(q->extra[2].atom.rel, "baz");
}

Test(parser, query_sort_annotations) {
    iql_stmt st = ok("?students(Name, Grade:asc, Score:desc), Score > 80");
    const iql_query *q = &st.u.query;
    cr_assert_eq(q->nsort, 2);
    cr_expect_str_eq(q->sort[0].var, "Grade");
    cr_expect_eq(q->sort[0].dir, IQL_SORT_ASC);
    cr_expect_str_eq(q->sort[1].var, "Score");
    cr_expect_eq(q->sort[1].dir, IQL_SORT_DESC);
    cr_expect_str_eq(sx(q->goal.args[1]), "Grade");
    cr_expect_eq(q->nextra, 1);
    /* Only in the goal atom. */
    ERR("?s(X), t(X:desc)", "Invalid term: 'X:desc'");
    ERR("?s(X), X:desc > 1", "Invalid term: 'X:desc'");
    st = ok("?X > 0, s(X:desc)");
    cr_expect_eq(st.u.query.nsort, 1);
}

Test(parser, query_limit_and_offset) {
    iql_stmt st = ok("?data(X, Y:asc), limit(3, 2)");
    cr_expect_eq(st.u.query.limit, 3);
    cr_expect_eq(st.u.query.offset, 2);
    cr_expect_eq(st.u.query.nextra, 0);
    st = ok("?data(X, Y), X > 1, limit(10)");
    cr_expect_eq(st.u.query.limit, 10);
    cr_expect_eq(st.u.query.offset, 0);
    cr_expect_eq(st.u.query.nextra, 1);
    st = ok("?data(X, Y), limit(0)");
    cr_expect_eq(st.u.query.limit, 0);
    /* As the goal, `limit` is a relation. */
    st = ok("?limit(5)");
    cr_expect_str_eq(st.u.query.goal.rel, "limit");
    cr_expect_eq(st.u.query.limit, -1);
}

Test(parser, query_errors) {
    ERR("?x(A) <- y(A)", "Query cannot contain a rule definition (<-). Register the rule first "
                         "with + then query it with ?");
    ERR("?X = 1", "Query must have at least one positive goal");
    ERR("?X = 1, !foo(X)", "Query must have at least one positive goal");
    ERR("?foo", "Invalid atom: foo");
    ERR("?d(X), limit(-1)", "limit must be non-negative");
    ERR("?d(X), limit(1, -1)", "offset must be non-negative");
    ERR("?d(X), limit()", "limit() expects 1 or 2 integer arguments: limit(N) or limit(N, Offset)");
    ERR("?d(X), limit(X)",
        "limit() expects 1 or 2 integer arguments: limit(N) or limit(N, Offset)");
    ERR("?d(X), limit(1, 2, 3)",
        "limit() expects 1 or 2 integer arguments: limit(N) or limit(N, Offset)");
    ERR("?d(X), limit(1.5)",
        "limit() expects 1 or 2 integer arguments: limit(N) or limit(N, Offset)");
}

Test(parser, question_mark_without_letter_is_a_session_fact) {
    iql_stmt st = ok("?- edge(X, Y)");
    cr_assert_eq(st.kind, IQL_STMT_SESSION_FACT);
    cr_expect_str_eq(st.u.facts.rel, "?- edge");
    st = ok("?_x(1)");
    cr_expect_eq(st.kind, IQL_STMT_SESSION_FACT);
}

/* ---- facts -------------------------------------------------------------------------------- */

Test(parser, single_insert) {
    iql_stmt st = ok("+edge(1, \"two\", 3.5, true, [1, 2])");
    const iql_facts *f = &st.u.facts;
    cr_expect_str_eq(f->rel, "edge");
    cr_expect(!f->bulk);
    cr_assert_eq(f->ntuples, 1);
    cr_assert_eq(f->tuples[0].n, 5);
    cr_expect_str_eq(sx(f->tuples[0].terms[1]), "s:\"two\"");
    /* Variables are kept: the executor reports them. */
    st = ok("+edge(X, 1)");
    cr_expect_eq(st.u.facts.tuples[0].terms[0]->kind, IQL_T_VAR);
    /* No validation of insert relation names, like the reference. */
    cr_expect_str_eq(ok("+123invalid(1, 2)").u.facts.rel, "123invalid");
}

Test(parser, bulk_insert) {
    iql_stmt st = ok("+r[(1, \"a\"), (2, \"b\"), 3, \"c\\nd\"]");
    const iql_facts *f = &st.u.facts;
    cr_expect(f->bulk);
    cr_expect_str_eq(f->rel, "r");
    cr_assert_eq(f->ntuples, 4);
    cr_expect_eq(f->tuples[0].n, 2);
    cr_expect_eq(f->tuples[2].n, 1);
    cr_expect_str_eq(sx(f->tuples[2].terms[0]), "i:3");
    cr_expect_str_eq(sx(f->tuples[3].terms[0]), "s:\"c\nd\"");
    st = ok("+set_a[(1,), (2,), (3,)]");
    cr_assert_eq(st.u.facts.ntuples, 3);
    cr_expect_eq(st.u.facts.tuples[1].n, 1);
    st = ok("+r[(1), (2),]");
    cr_expect_eq(st.u.facts.ntuples, 2);
    st = ok("+empty[]");
    cr_expect(st.u.facts.bulk);
    cr_expect_eq(st.u.facts.ntuples, 0);
    st = ok("+r[(), (1)]");
    cr_expect_eq(st.u.facts.ntuples, 1);
    st = ok("+v[[1, 2], [3, 4]]");
    cr_assert_eq(st.u.facts.ntuples, 2);
    cr_expect_str_eq(sx(st.u.facts.tuples[1].terms[0]), "v:[3,4]");
}

Test(parser, facts_of_no_arguments) {
    iql_stmt st = ok("+flag()");
    cr_expect_eq(st.kind, IQL_STMT_INSERT);
    cr_expect_str_eq(st.u.facts.rel, "flag");
    cr_expect_eq(st.u.facts.ntuples, 1);
    cr_expect_eq(st.u.facts.tuples[0].n, 0);
    st = ok("-flag()");
    cr_expect_eq(st.kind, IQL_STMT_DELETE);
    cr_expect_eq(st.u.facts.tuples[0].n, 0);
    st = ok("open_now( )");
    cr_expect_eq(st.kind, IQL_STMT_SESSION_FACT);
    cr_expect_str_eq(st.u.facts.rel, "open_now");
    cr_expect_eq(st.u.facts.tuples[0].n, 0);
}

Test(parser, insert_errors) {
    ERR("+edge(1, 2).", "Expected parentheses: (1, 2).");
    ERR("+data(100, 200).", "Expected parentheses: (100, 200).");
    ERR("+r[(1,2)].", "Bulk insert must be in format: relation[(t1), (t2), ...]");
    ERR("+role_inherits[(1, 2), (2, 3), (3, 4)].",
        "Bulk insert must be in format: relation[(t1), (t2), ...]");
    /* a fact of no arguments names its relation outright */
    ERR("+R()", "Fact must have at least one argument");
    ERR("+r x()", "Fact must have at least one argument");
    ERR("+r(,)", "Invalid term: ''");
    ERR("+r[(1), , (2)]", "Invalid term: ''");
    ERR("+noparens", "Invalid insert syntax: +noparens (line 1, column 2)");
    ERR("+r(v: vector)", "Invalid term: 'v: vector'");
    ERR("+r(a: timestamp)", "Invalid term: 'a: timestamp'");
    ERR("+r[(1, x)]",
        "Unquoted atom 'x' is not allowed. Use \"x\" (quoted string) instead. (line 1, column 8)");
}

Test(parser, session_facts_and_their_errors) {
    iql_stmt st = ok("human(\"socrates\")");
    cr_expect_str_eq(st.u.facts.rel, "human");
    st = ok("D2 = dequantize_scaled(Q, 2.0)");
    cr_expect_str_eq(st.u.facts.rel, "D2 = dequantize_scaled");
    cr_expect_eq(st.u.facts.tuples[0].n, 2);
    st = ok("!vip(Id)");
    cr_expect_str_eq(st.u.facts.rel, "!vip");
    ERR("edge(Y, Z),", "Expected parentheses: (Y, Z),");
    ERR("Q = quantize_linear(V),", "Expected parentheses: (V),");
    ERR("vectors(Id1, V1), vectors(Id2, V2), Id1 < Id2,",
        "Expected parentheses: (Id1, V1), vectors(Id2, V2), Id1 < Id2,");
    ERR("chain(E, F), chain(F, G), chain(G, H)", "Invalid term: 'F)'");
    ERR("!p()", "Fact must have at least one argument");
    ERR("?!p()", "Fact must have at least one argument");
    ERR("a(X) :- b(X)", "Invalid term: 'X) :- b(X'");
}

Test(parser, deletes) {
    iql_stmt st = ok("-edge(1, 2)");
    cr_expect_eq(st.kind, IQL_STMT_DELETE);
    cr_expect_str_eq(st.u.facts.rel, "edge");
    cr_expect_eq(st.u.facts.tuples[0].n, 2);
    st = ok("-edge[(1, 2), (3, 4)]");
    cr_expect(st.u.facts.bulk);
    cr_expect_eq(st.u.facts.ntuples, 2);
    st = ok("-r()");
    cr_expect_eq(st.kind, IQL_STMT_DELETE);
    cr_expect_eq(st.u.facts.tuples[0].n, 0);
    st = ok("-edge(X, Y) <- source(X), Y > 2");
    cr_assert_eq(st.kind, IQL_STMT_COND_DELETE);
    cr_expect_str_eq(st.u.rule.head.rel, "edge");
    cr_expect_eq(st.u.rule.nbody, 2);
    ERR("-edge(1, 2).", "Expected parentheses: (1, 2).");
    ERR("-r[(1)].", "Bulk delete must be in format: relation[(t1), (t2), ...]");
}

Test(parser, drop_rule_and_relation_name_validation) {
    iql_stmt st = ok("-path");
    cr_expect_eq(st.kind, IQL_STMT_DROP_RULE);
    cr_expect_str_eq(st.u.drop_name, "path");
    cr_expect_str_eq(ok("- my_rule2 ").u.drop_name, "my_rule2");
    ERR("-", "Relation name cannot be empty");
    ERR("-Path", "Relation name 'Path' must start with lowercase letter.\n(Uppercase names are for "
                 "type declarations.)");
    ERR("-_x", "Relation name '_x' must start with lowercase letter.\n(Uppercase names are for "
               "type declarations.)");
    ERR("-foo bar", "Invalid relation name: 'foo bar' (line 1, column 2)");
    ERR("-r[1]", "Invalid relation name: 'r[1]' (line 1, column 2)");
}

Test(parser, atomic_update) {
    iql_stmt st = ok("-counter(Id, Old), +counter(Id, New) <- counter(Id, Old), New = Old + 1");
    cr_assert_eq(st.kind, IQL_STMT_UPDATE);
    const iql_update *u = &st.u.update;
    cr_assert_eq(u->ndels, 1);
    cr_assert_eq(u->nins, 1);
    cr_expect_str_eq(u->dels[0].rel, "counter");
    cr_expect_str_eq(sx(u->ins[0].args[1]), "New");
    cr_expect_eq(u->nbody, 2);
    st = ok("+log(X), -a(X), -b(X) <- a(X)");
    cr_expect_eq(st.kind, IQL_STMT_UPDATE);
    cr_expect_eq(st.u.update.ndels, 2);
    cr_expect_eq(st.u.update.nins, 1);
    /* Without one of each sign it is not an update. */
    cr_expect_eq(ok("+p(X) <- q(X)").kind, IQL_STMT_PERSIST_RULE);
    ERR("-a(X), +b(X) <- c(X) <- d(X)",
        "Invalid rule: -a(X), +b(X) <- c(X) <- d(X) (line 1, column 1)");
    ERR("-a(X), +b <- c(X)", "Invalid atom: b");
}

/* ---- schemas and types --------------------------------------------------------------------- */

Test(parser, schema_declarations) {
    iql_stmt st = ok("+typed_rel(id: int, name: string, score: float, ok: bool, e: vector)");
    cr_assert_eq(st.kind, IQL_STMT_SCHEMA);
    const iql_schema *s = &st.u.schema;
    cr_expect_str_eq(s->rel, "typed_rel");
    cr_assert_eq(s->ncols, 5);
    cr_expect_str_eq(s->cols[1].name, "name");
    cr_expect_eq(s->cols[0].type.kind, IQL_TY_INT);
    cr_expect_eq(s->cols[1].type.kind, IQL_TY_STRING);
    cr_expect_eq(s->cols[2].type.kind, IQL_TY_FLOAT);
    cr_expect_eq(s->cols[3].type.kind, IQL_TY_BOOL);
    cr_expect_eq(s->cols[4].type.kind, IQL_TY_VECTOR);
    cr_expect_eq(s->cols[4].type.dim, 0);
    st = ok("users(id: UserId, email: Email)");
    cr_assert_eq(st.kind, IQL_STMT_SESSION_SCHEMA);
    cr_expect_eq(st.u.schema.cols[0].type.kind, IQL_TY_NAMED);
    cr_expect_str_eq(st.u.schema.cols[0].type.name, "UserId");
}

Test(parser, schema_type_expressions) {
    iql_stmt st = ok("+t(a: INT, b: vector[128], c: vec(3), d: list[int], e: { x: int, y: "
                     "string }, f: int(range(1, 10)), g: Embedding, h: list[list[Email]])");
    const iql_column *c = st.u.schema.cols;
    cr_assert_eq(st.u.schema.ncols, 8);
    cr_expect_eq(c[0].type.kind, IQL_TY_INT);
    cr_expect_eq(c[1].type.kind, IQL_TY_VECTOR);
    cr_expect_eq(c[1].type.dim, 128);
    cr_expect_eq(c[2].type.dim, 3);
    cr_expect_eq(c[3].type.kind, IQL_TY_LIST);
    cr_expect_eq(c[4].type.kind, IQL_TY_RECORD);
    cr_expect_eq(c[5].type.kind, IQL_TY_INT);
    cr_expect_eq(c[6].type.kind, IQL_TY_VECTOR);
    cr_expect_eq(c[7].type.kind, IQL_TY_LIST);
    /* Column names may have aggregate or expression shapes. */
    cr_expect_str_eq(ok("+t(count<x>: int)").u.schema.cols[0].name, "count<x>");
}

Test(parser, schema_errors) {
    ERR("+r(a: integer)",
        "Unknown base type: 'integer'. Use int, string, bool, float, or a type name.");
    ERR("+r(a: int, b: timestamp)",
        "Unknown base type: 'timestamp'. Use int, string, bool, float, or a type name.");
    ERR("+r(a: int, b)", "Column definition 'b' must have type: 'name: type'");
    ERR("+r(a: int, : int)", "Column name cannot be empty");
    ERR("+r(a b: int)", "Invalid column name: 'a b'");
    ERR("+r(a: int) x", "Missing closing parenthesis in schema declaration");
    ERR("+R(a: int)",
        "Relation name 'R' must start with lowercase letter.\n(Uppercase names are for "
        "type declarations.)");
    ERR("+my-rel(a: int)", "Invalid relation name: 'my-rel' (line 1, column 2)");
    ERR("+(a: int)", "Relation name cannot be empty");
    ERR("r(a: int, b: list)", "Unknown base type: 'list'. Use int, string, bool, float, or a type "
                              "name.");
    cr_expect_eq(ok("+r(a: int, , )").u.schema.ncols, 1);
}

Test(parser, type_declarations) {
    iql_stmt st = ok("type Email: string");
    cr_assert_eq(st.kind, IQL_STMT_TYPE_DECL);
    cr_expect_str_eq(st.u.type_decl.name, "Email");
    cr_expect_eq(st.u.type_decl.type.kind, IQL_TY_STRING);
    st = ok("type Person: { id: int, name: string }");
    cr_expect_eq(st.u.type_decl.type.kind, IQL_TY_RECORD);
    st = ok("type type Score: int");
    cr_expect_str_eq(st.u.type_decl.name, "Score");
    ERR("type Person: { id: int, name: string, age: int }.",
        "Unknown base type: '{ id: int, name: string, age: int }.'. Use int, string, bool, float, "
        "or a type name.");
    ERR("type Email string", "Type declaration must contain ':' (e.g., 'type Email: string.')");
    ERR("type : int", "Type name cannot be empty");
    ERR("type email: string", "Type name 'email' must start with uppercase letter");
    ERR("type X: foo", "Unknown base type: 'foo'. Use int, string, bool, float, or a type name.");
}

/* ---- meta commands --------------------------------------------------------------------------- */

static iql_meta meta(const char *text) {
    iql_stmt st = ok(text);
    cr_assert_eq(st.kind, IQL_STMT_META, "`%s`", text);
    return st.u.meta;
}

#define META_KIND(text, k) cr_expect_eq(meta(text).kind, k, "for `%s`", text)

Test(parser, meta_kinds_and_aliases) {
    META_KIND(".kg", IQL_META_KG_SHOW);
    META_KIND(".kg list", IQL_META_KG_LIST);
    META_KIND(".KG LIST", IQL_META_KG_LIST);
    META_KIND("..kg list", IQL_META_KG_LIST);
    META_KIND(".kg acl list", IQL_META_KG_ACL_LIST);
    META_KIND(".rel", IQL_META_REL_LIST);
    META_KIND(".relation", IQL_META_REL_LIST);
    META_KIND(".rule", IQL_META_RULE_LIST);
    META_KIND(".rule list", IQL_META_RULE_LIST);
    META_KIND(".session", IQL_META_SESSION_LIST);
    META_KIND(".rules", IQL_META_SESSION_LIST);
    META_KIND(".session clear", IQL_META_SESSION_CLEAR);
    META_KIND(".compact", IQL_META_COMPACT);
    META_KIND(".status", IQL_META_STATUS);
    META_KIND(".index", IQL_META_INDEX_LIST);
    META_KIND(".idx list", IQL_META_INDEX_LIST);
    META_KIND(".help", IQL_META_HELP);
    META_KIND(".help kg", IQL_META_HELP);
    META_KIND(".?", IQL_META_HELP);
    META_KIND(".quit", IQL_META_QUIT);
    META_KIND(".exit", IQL_META_QUIT);
    META_KIND(".q", IQL_META_QUIT);
}

Test(parser, meta_arguments_keep_their_case) {
    iql_meta m = meta(".kg create MyGraph extra");
    cr_expect_eq(m.kind, IQL_META_KG_CREATE);
    cr_expect_str_eq(m.arg, "MyGraph");
    m = meta(".kg USE other");
    cr_expect_eq(m.kind, IQL_META_KG_USE);
    cr_expect_str_eq(m.arg, "other");
    m = meta(".kg drop g");
    cr_expect_eq(m.kind, IQL_META_KG_DROP);
    m = meta(".kg acl grant g alice reader");
    cr_expect_eq(m.kind, IQL_META_KG_ACL_GRANT);
    cr_expect_str_eq(m.arg, "g");
    cr_expect_str_eq(m.arg2, "alice");
    cr_expect_str_eq(m.arg3, "reader");
    m = meta(".kg acl revoke g alice");
    cr_expect_eq(m.kind, IQL_META_KG_ACL_REVOKE);
    cr_expect_str_eq(m.arg2, "alice");
    m = meta(".kg acl list g");
    cr_expect_str_eq(m.arg, "g");
    m = meta(".rel Users x");
    cr_expect_eq(m.kind, IQL_META_REL_SHOW);
    cr_expect_str_eq(m.arg, "Users");
    m = meta(".rel drop users");
    cr_expect_eq(m.kind, IQL_META_REL_DROP);
    cr_expect_str_eq(m.arg, "users");
}

Test(parser, meta_rule_commands) {
    iql_meta m = meta(".rule reach");
    cr_expect_eq(m.kind, IQL_META_RULE_SHOW);
    cr_expect_str_eq(m.arg, "reach");
    m = meta(".rule def reach");
    cr_expect_eq(m.kind, IQL_META_RULE_DEF);
    m = meta(".rule drop reach");
    cr_expect_eq(m.kind, IQL_META_RULE_DROP);
    m = meta(".rule drop prefix tmp_");
    cr_expect_eq(m.kind, IQL_META_RULE_DROP_PREFIX);
    cr_expect_str_eq(m.arg, "tmp_");
    m = meta(".rule remove reach 2");
    cr_expect_eq(m.kind, IQL_META_RULE_REMOVE);
    cr_expect_eq(m.index, 2);
    m = meta(".rule clear reach");
    cr_expect_eq(m.kind, IQL_META_RULE_CLEAR);
    m = meta(".rule edit reachable 2 +reachable(X, Z) <- edge(X, Y), reachable(Y, Z).");
    cr_expect_eq(m.kind, IQL_META_RULE_EDIT);
    cr_expect_str_eq(m.arg, "reachable");
    cr_expect_eq(m.index, 2);
    cr_expect_str_eq(m.text, "+reachable(X, Z) <- edge(X, Y), reachable(Y, Z).");
}

Test(parser, meta_session_clear_and_text_commands) {
    iql_meta m = meta(".session drop 3");
    cr_expect_eq(m.kind, IQL_META_SESSION_DROP_INDEX);
    cr_expect_eq(m.index, 3);
    m = meta(".session drop path");
    cr_expect_eq(m.kind, IQL_META_SESSION_DROP_NAME);
    cr_expect_str_eq(m.arg, "path");
    m = meta(".clear prefix test_");
    cr_expect_eq(m.kind, IQL_META_CLEAR_PREFIX);
    cr_expect_str_eq(m.arg, "test_");
    m = meta(".debug ?score(Id, S), S > 80");
    cr_expect_eq(m.kind, IQL_META_DEBUG);
    cr_expect_str_eq(m.text, "?score(Id, S), S > 80");
    m = meta(".why ?chain(1, 12)");
    cr_expect_eq(m.kind, IQL_META_WHY);
    cr_expect_str_eq(m.text, "?chain(1, 12)");
    m = meta(".why full ?chain(1, 12)");
    cr_expect_eq(m.kind, IQL_META_WHY_FULL);
    cr_expect_str_eq(m.text, "?chain(1, 12)");
    m = meta(".why_not path(1, 99)");
    cr_expect_eq(m.kind, IQL_META_WHY_NOT);
    cr_expect_str_eq(m.text, "path(1, 99)");
    m = meta(".user create bob secret");
    cr_expect_eq(m.kind, IQL_META_USER);
    cr_expect_str_eq(m.text, "create bob secret");
    m = meta(".apikey");
    cr_expect_eq(m.kind, IQL_META_APIKEY);
    cr_expect_str_eq(m.text, "");
    m = meta(".agent examples");
    cr_expect_eq(m.kind, IQL_META_AGENT);
    cr_expect_str_eq(m.text, "examples");
}

Test(parser, meta_index_and_load) {
    iql_meta m = meta(".index create emb_idx on embeddings(col2) type hnsw metric cosine m 16");
    cr_expect_eq(m.kind, IQL_META_INDEX_CREATE);
    cr_expect_str_eq(m.arg, "emb_idx");
    cr_expect_str_eq(m.arg2, "embeddings");
    cr_expect_str_eq(m.arg3, "col2");
    cr_expect_str_eq(m.text, "type hnsw metric cosine m 16");
    m = meta(".idx create i on r(v)");
    cr_expect_eq(m.text, NULL);
    m = meta(".index create i on r( v ) efc 200 efs 50 ef_construction 1 ef_search 2");
    cr_expect_str_eq(m.arg3, "v");
    META_KIND(".index drop i", IQL_META_INDEX_DROP);
    META_KIND(".index stats i", IQL_META_INDEX_STATS);
    META_KIND(".index rebuild i", IQL_META_INDEX_REBUILD);
    m = meta(".load examples/iql/x.iql");
    cr_expect_eq(m.kind, IQL_META_LOAD);
    cr_expect_str_eq(m.arg, "examples/iql/x.iql");
    cr_expect_eq(m.arg2, NULL);
    const char *modes[] = {"--replace", "-r", "replace", "--merge", "-m", "merge"};
    for (size_t i = 0; i < 6; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, ".load f.iql %s", modes[i]);
        cr_expect_str_eq(meta(buf).arg2, modes[i]);
    }
}

Test(parser, meta_backup) {
    iql_meta m = meta(".backup");
    cr_expect_eq(m.kind, IQL_META_BACKUP);
    cr_expect_eq(m.arg, NULL);
    m = meta(".backup Nightly-1.x");
    cr_expect_eq(m.kind, IQL_META_BACKUP);
    cr_expect_str_eq(m.arg, "Nightly-1.x");
    META_KIND(".backup status", IQL_META_BACKUP_STATUS);
    META_KIND(".BACKUP Status", IQL_META_BACKUP_STATUS);
    ERR(".backup a b", "Usage: .backup [name] | .backup status");
    ERR(".backup status now", "Usage: .backup [name] | .backup status");
}

Test(parser, meta_usage_errors) {
    ERR(".", "Unknown meta command: .");
    ERR(".frobnicate now", "Unknown meta command: .frobnicate");
    ERR(".Frob", "Unknown meta command: .Frob");
    ERR(".kg create", "Usage: .kg create <name>");
    ERR(".kg use", "Usage: .kg use <name>");
    ERR(".kg drop", "Usage: .kg drop <name>");
    ERR(".kg foo", "Unknown kg subcommand: foo");
    ERR(".kg acl", "Usage: .kg acl list [kg_name] | .kg acl grant <kg> <user> <role> | .kg acl "
                   "revoke <kg> <user>");
    ERR(".kg acl grant g alice", "Usage: .kg acl grant <kg_name> <username> <role>");
    ERR(".kg acl revoke g", "Usage: .kg acl revoke <kg_name> <username>");
    ERR(".kg acl foo", "Unknown acl subcommand: foo. Use: list, grant, revoke");
    ERR(".rel drop", "Usage: .rel drop <name>");
    ERR(".rule drop", "Usage: .rule drop <name> | .rule drop prefix <prefix>");
    ERR(".rule drop prefix", "Usage: .rule drop prefix <prefix>");
    ERR(".rule def", "Usage: .rule def <name>");
    ERR(".rule clear", "Usage: .rule clear <name>");
    ERR(".rule remove r", "Usage: .rule remove <name> <index>");
    ERR(".rule remove r x", "Invalid index 'x': must be a number (1-based)");
    ERR(".rule remove r -1", "Invalid index '-1': must be a number (1-based)");
    ERR(".rule remove r 0", "Index must be 1 or greater (1-based indexing)");
    ERR(".rule edit r", "Usage: .rule edit <name> <index> <rule>\nExample: .rule edit connected 2 "
                        "rule connected(x: int, z: int) <- edge(x, y), connected(y, z)");
    ERR(".rule edit r two x(1)", "Invalid index 'two': must be a number (1-based)");
    ERR(".rule edit r 0 x(1)", "Index must be 1 or greater (1-based indexing)");
    ERR(".rule edit r 1", "Missing rule definition");
    ERR(".session drop", "Usage: .session drop <n|name>");
    ERR(".session drop 0", "Index must be 1 or greater (1-based indexing)");
    ERR(".session foo", "Unknown session subcommand: foo. Use: clear, drop <n|name>");
    ERR(".clear", "Usage: .clear prefix <prefix>");
    ERR(".clear prefix", "Usage: .clear prefix <prefix>");
    ERR(".clear foo", "Unknown clear subcommand: 'foo'. Use: .clear prefix <prefix>");
    ERR(".debug", "Usage: .debug <query>");
    ERR(".why", "Usage: .why <query>");
    ERR(".why full", "Usage: .why full <query>");
    ERR(".why_not", "Usage: .why_not <relation>(<values>)");
    ERR(".index foo", "Unknown index subcommand: foo. Use: list, create, drop, stats, rebuild");
    ERR(".index drop", "Usage: .index drop <name>");
    ERR(".index stats", "Usage: .index stats <name>");
    ERR(".index rebuild", "Usage: .index rebuild <name>");
    ERR(".load", "Usage: .load <file> [--replace|--merge]");
    ERR(".load f.iql --append", "Unknown load mode: --append. Use --replace or --merge");
}

Test(parser, meta_index_create_errors) {
    ERR(".index create", "Usage: .index create <name> on <relation>(<column>) [type hnsw] [metric "
                         "cosine] [m 16]");
    ERR(".index create i", "Missing 'on' keyword. Usage: .index create <name> on "
                           "<relation>(<column>)");
    ERR(".index create i at r(v)", "Missing 'on' keyword. Usage: .index create <name> on "
                                   "<relation>(<column>)");
    ERR(".index create i on", "Missing relation specification after 'on'");
    ERR(".index create i on r", "Expected relation(column) format, got 'r'");
    ERR(".index create i on r(v", "Missing closing parenthesis in 'r(v'");
    ERR(".index create i on r()", "Empty column name in relation specification");
    ERR(".index create i on r(v) m", "Missing value for 'm'");
    ERR(".index create i on r(v) type", "Missing value for 'type'");
    ERR(".index create i on r(v) m big", "Invalid value for 'm': expected integer, got 'big'");
    ERR(".index create i on r(v) efc x",
        "Invalid value for 'ef_construction': expected integer, got 'x'");
    ERR(".index create i on r(v) ef_search -1",
        "Invalid value for 'ef_search': expected integer, got '-1'");
    ERR(".index create i on r(v) color red",
        "Unknown option: 'color'. Valid options: type, metric, m, ef_construction, ef_search");
}

/* ---- copies ------------------------------------------------------------------------------------
 */

Test(parser, rule_clone_is_deep) {
    iql_stmt st = ok("r(X, top_k<2, X, S:asc>) <- s(X, S, \"a\\0b\", [1, 2]), Y = abs(X - 1), "
                     "!t(X)");
    il_arena other;
    il_arena_init(&other);
    iql_rule copy;
    iql_rule_clone(&other, &copy, &st.u.rule);
    char *before[8];
    const iql_rule *r = &st.u.rule;
    before[0] = strdup(sx(r->head.args[1]));
    before[1] = strdup(sx(r->body[0].atom.args[2]));
    before[2] = strdup(sx(r->body[0].atom.args[3]));
    before[3] = strdup(sx(r->body[1].rhs));
    il_arena_destroy(&A); /* the original is gone; the copy must not point into it */
    il_arena_init(&A);
    cr_expect_str_eq(copy.head.rel, "r");
    cr_expect_str_eq(sx(copy.head.args[1]), before[0]);
    cr_expect_str_eq(sx(copy.body[0].atom.args[2]), before[1]);
    cr_expect_eq(copy.body[0].atom.args[2]->u.str.len, 3);
    cr_expect_str_eq(sx(copy.body[0].atom.args[3]), before[2]);
    cr_expect_str_eq(sx(copy.body[1].rhs), before[3]);
    cr_expect_eq(copy.body[2].kind, IQL_LIT_NEG);
    cr_expect_str_eq(copy.body[2].atom.rel, "t");
    for (int i = 0; i < 4; i++) free(before[i]);
    il_arena_destroy(&other);
}

Test(parser, term_and_atom_clone) {
    iql_stmt st = ok("?edge(1, Y)");
    il_arena other;
    il_arena_init(&other);
    iql_atom copy;
    iql_atom_clone(&other, &copy, &st.u.query.goal);
    cr_expect_neq(copy.rel, st.u.query.goal.rel);
    cr_expect_str_eq(copy.rel, "edge");
    cr_expect_str_eq(sx(copy.args[1]), "Y");
    cr_expect_eq(iql_term_clone(&other, NULL), NULL);
    il_arena_destroy(&other);
}

/* ---- robustness
 * ---------------------------------------------------------------------------------- */

static void parse_any(const char *text, size_t len) {
    iql_stmt st;
    const char *err = NULL;
    if (!iql_parse(&A, text, len, &st, &err)) cr_assert(err != NULL && err[0] != 0);
}

Test(parser, deep_nesting_is_an_error_not_a_crash) {
    size_t n = 100000;
    char *buf = malloc(2 * n + 16);
    strcpy(buf, "t(");
    for (size_t i = 0; i < n; i++) buf[2 + i] = '(';
    buf[2 + n] = 'X';
    for (size_t i = 0; i < n; i++) buf[3 + n + i] = ')';
    strcpy(buf + 3 + 2 * n, ")");
    parse_any(buf, strlen(buf));
    /* Nested calls and parenthesised arithmetic. */
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "r(X) <- s(X), Y = ");
    for (int i = 0; i < 5000; i++) il_buf_puts(&b, "abs(");
    il_buf_puts(&b, "X");
    for (int i = 0; i < 5000; i++) il_buf_puts(&b, ")");
    cr_expect_str_eq(perr(il_buf_str(&b)), "Expression nested too deeply");
    il_buf_clear(&b);
    il_buf_puts(&b, "r(X) <- s(X), Y = 1");
    for (int i = 0; i < 5000; i++) il_buf_puts(&b, "+(1");
    for (int i = 0; i < 5000; i++) il_buf_puts(&b, ")");
    cr_expect_str_eq(perr(il_buf_str(&b)), "Expression nested too deeply");
    il_buf_free(&b);
    free(buf);
}

Test(parser, long_flat_expressions_are_bounded) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "r(X, Y) <- s(X), Y = X");
    for (int i = 0; i < 100; i++) il_buf_puts(&b, " + 1 * 2");
    iql_stmt st = ok(il_buf_str(&b));
    cr_expect_eq(st.u.rule.body[1].rhs->kind, IQL_T_ARITH);
    /* Such a chain is a tree as deep as it is long, which every later pass walks. */
    for (int i = 0; i < 20000; i++) il_buf_puts(&b, " + 1");
    cr_expect_str_eq(perr(il_buf_str(&b)), "Expression nested too deeply");
    il_buf_free(&b);
}

Test(parser, random_bytes_never_crash) {
    static const char alphabet[] = "+-?.!_()[]<>{},:;=*/%\"\\ \t\nabXY019e#";
    srand(12345);
    char buf[96];
    for (int iter = 0; iter < 30000; iter++) {
        size_t n = (size_t)(rand() % (int)sizeof buf);
        for (size_t i = 0; i < n; i++)
            buf[i] =
                iter % 3 ? alphabet[rand() % (int)(sizeof alphabet - 1)] : (char)(rand() & 0xFF);
        parse_any(buf, n);
        if (iter % 1000 == 0) il_arena_reset(&A);
    }
}

Test(parser, mutated_statements_never_crash) {
    static const char *const seeds[] = {
        "+path(X, Z) <- path(X, Y), edge(Y, Z), !b(Z), Z != \"x\", W = abs(X - 1) * 2",
        "?students(Name, Grade:asc, Score:desc), Score > 80, limit(3, 1)",
        "+r[(1, \"a\\n\"), (2, [1.5, 2]), 3]",
        "t(top_k_threshold<2, 100, Player, Points:desc>, count<X>) <- s(Player, Points)",
        "+user(id: int, name: { a: list[int] }, v: vector[3])",
        ".index create i on r(v) type hnsw m 16",
        "-c(Id, Old), +c(Id, New) <- c(Id, Old), New = Old + 1",
        "type P: { id: int, name: string }",
    };
    static const char inserts[] = "()[]<>\",:!=+-*/%_ .\\{}";
    srand(777);
    char buf[256];
    for (int iter = 0; iter < 40000; iter++) {
        const char *seed = seeds[iter % (sizeof seeds / sizeof seeds[0])];
        size_t n = strlen(seed);
        memcpy(buf, seed, n);
        int edits = 1 + rand() % 4;
        for (int e = 0; e < edits && n > 0; e++) {
            size_t at = (size_t)rand() % n;
            switch (rand() % 3) {
            case 0:
                buf[at] = inserts[rand() % (int)(sizeof inserts - 1)];
                break;
            case 1:
                memmove(buf + at, buf + at + 1, n - at - 1);
                n--;
                break;
            default:
                if (n + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = inserts[rand() % (int)(sizeof inserts - 1)];
                    n++;
                }
            }
        }
        parse_any(buf, n);
        if (iter % 1000 == 0) il_arena_reset(&A);
    }
}

/* Messages that no reference transcript fixes end with the line and column (in
 * characters) of the offending text within the statement; fixed ones stay as they are. */
Test(parser, unfixed_errors_point_at_position) {
    ERR("r(X, Y) <- s(X),\n  Y = X + [1]",
        "Invalid arithmetic expression: '[1]' (line 2, column 11)");
    ERR("+v[(1, [1, \xc3\xa9, 3])]", "Invalid vector element: '\xc3\xa9' (line 1, column 12)");
    ERR("+r(1) <-\n\n   q(x)", "Unquoted atom 'x' is not allowed. Use \"x\" (quoted string) "
                               "instead. (line 3, column 6)");
    ERR("?edge(X Y)", "Invalid term: 'X Y'");
}

/* ---- ground facts ------------------------------------------------------------------------ */

/* The whole statement in the S-expression form: kind, relation, bulk, tuples. */
static const char *sx_facts(const iql_stmt *st) {
    il_buf b;
    il_buf_init(&b);
    il_buf_printf(&b, "%d %s%s", (int)st->kind, st->u.facts.rel, st->u.facts.bulk ? " bulk" : "");
    for (uint32_t i = 0; i < st->u.facts.ntuples; i++) {
        const iql_tuple *tu = &st->u.facts.tuples[i];
        il_buf_puts(&b, " (");
        for (uint32_t k = 0; k < tu->n; k++) {
            if (k) il_buf_puts(&b, " ");
            sx_term(tu->terms[k], &b);
            /* a string is NUL-terminated after its bytes, as the general path leaves it */
            if (tu->terms[k]->kind == IQL_T_STRING)
                cr_expect_eq(tu->terms[k]->u.str.ptr[tu->terms[k]->u.str.len], 0);
        }
        il_buf_puts(&b, ")");
    }
    char *r = il_arena_strdup(&A, il_buf_str(&b));
    il_buf_free(&b);
    return r;
}

/* `text` is read as a ground fact when `direct`, and either way to the tree (or the error)
 * the general path makes of it: the same text with a comment after it goes that way. */
static void same_as_general(const char *text, bool direct) {
    char general[512];
    snprintf(general, sizeof general, "%s // through the general path", text);
    iql_stmt a, b;
    const char *ea = NULL, *eb = NULL;
    uint64_t before = iql_parse_fact_count();
    bool ra = iql_parse(&A, text, strlen(text), &a, &ea);
    cr_expect_eq(iql_parse_fact_count() - before, direct ? 1u : 0u, "read directly: `%s`", text);
    before = iql_parse_fact_count();
    bool rb = iql_parse(&A, general, strlen(general), &b, &eb);
    cr_assert_eq(iql_parse_fact_count(), before, "`%s` read directly", general);
    cr_assert_eq(ra, rb, "`%s`: %s against %s", text, ea ? ea : "ok", eb ? eb : "ok");
    if (!ra) {
        cr_expect_str_eq(ea, eb, "for `%s`", text);
        return;
    }
    cr_assert_eq(a.kind, b.kind, "for `%s`", text);
    if (a.kind == IQL_STMT_INSERT || a.kind == IQL_STMT_DELETE || a.kind == IQL_STMT_SESSION_FACT)
        cr_expect_str_eq(sx_facts(&a), sx_facts(&b), "for `%s`", text);
}

Test(parser, ground_facts_read_directly_as_the_general_path_reads_them) {
    static const char *const direct[] = {
        "+edge(1, 2)",
        "-edge(1, 2)",
        "+edge(400,1234)",
        "  +edge( 1 ,  2 )  ",
        "+e(0)",
        "+e(-0)",
        "+e(-7, 999999999999999999, -999999999999999999)",
        "+label(400, \"hot\")",
        "+s(\"\")",
        "+s(\"a b-c.d_E9\")",
        "+r_2X(1, \"x\", 3)",
        "\t+edge(5, 6)\r\n",
    };
    for (size_t i = 0; i < sizeof direct / sizeof *direct; i++) same_as_general(direct[i], true);
    /* Anything else goes the general way, whatever it makes of it. */
    static const char *const general[] = {
        "+edge(1, 2).",
        "+edge (1, 2)",
        "+Edge(1, 2)",
        "+_e(1)",
        "+flag()",
        "+e(007)",
        "+e(- 5)",
        "+e(1.5)",
        "+e(1e3)",
        "+e(1234567890123456789)",
        "+e(9223372036854775807)",
        "+e(true)",
        "+e(X)",
        "+e(_)",
        "+e(\"a\\nb\")",
        "+e(\"a,b\")",
        "+e(\"a:int\")",
        "+e(\"<-\")",
        "+e(\"http://x\")",
        "+e(\"(\")",
        "+e(1,)",
        "+e(,1)",
        "+e(1 2)",
        "+e(1))",
        "+e((1))",
        "+e(1, 2",
        "+e[(1, 2)]",
        "+e(1), +f(2)",
        "+e(1)\n+f(2)",
        "+e(x: int)",
        "+e(X) <- f(X)",
        "-e(X) <- f(X)",
        "e(1, 2)",
        "+e(\t1)",
        "+e(\"é\")",
    };
    for (size_t i = 0; i < sizeof general / sizeof *general; i++)
        same_as_general(general[i], false);
}

/* Facts of every shape the direct reading takes, against the general path. */
Test(parser, generated_ground_facts_match_the_general_path) {
    static const char *const strings[] = {"", "hot", "a b", "x-y.z", "_", "Z9", " lead", "trail "};
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (int n = 0; n < 2000; n++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        uint64_t r = seed >> 11;
        char text[256];
        size_t len = (size_t)snprintf(text, sizeof text, "%c%s(", r & 1 ? '+' : '-',
                                      (r >> 1) & 1 ? "edge" : "rel_9");
        unsigned args = 1 + (unsigned)((r >> 2) % 5);
        for (unsigned k = 0; k < args; k++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            uint64_t q = seed >> 11;
            const char *sep = k ? ((q & 3) == 0 ? " , " : ((q & 3) == 1 ? "," : ", ")) : "";
            if ((q >> 2) & 1)
                len += (size_t)snprintf(text + len, sizeof text - len, "%s\"%s\"", sep,
                                        strings[(q >> 3) % 8]);
            else
                len += (size_t)snprintf(text + len, sizeof text - len, "%s%" PRId64, sep,
                                        (int64_t)((q >> 3) % 2000000000000000000u) *
                                            ((q >> 62) & 1 ? -1 : 1));
        }
        snprintf(text + len, sizeof text - len, ")");
        same_as_general(text, true);
    }
}
