/* Tests of the script reader (iql/script.h): comments, trimming, grouping of lines
 * into statements, multi-line continuation and unterminated statements. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iql/script.h"

/* The statements of a script, one per line of the result; an unterminated one is
 * prefixed with `!`. */
static char *read_all(const char *text) {
    static char out[8192];
    size_t o = 0;
    iql_script s;
    iql_script_init(&s, text, strlen(text));
    iql_script_item it;
    while (iql_script_next(&s, &it)) {
        cr_assert_eq(strlen(it.text), it.len);
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%s\n", it.unterminated ? "!" : "",
                              it.text);
        cr_assert(o < sizeof out);
    }
    iql_script_free(&s);
    out[o] = 0;
    return out;
}

#define READS(text, expect) cr_expect_str_eq(read_all(text), expect)

Test(script, one_statement_per_line) {
    READS("+edge(1, 2)\n?edge(X, Y)\n.kg list\n", "+edge(1, 2)\n?edge(X, Y)\n.kg list\n");
    READS("", "");
    READS("\n\n   \n\t\n", "");
    READS("+a(1)", "+a(1)\n");
}

Test(script, lines_are_trimmed_and_crlf_is_whitespace) {
    READS("   +edge(1,  2)   \r\n\t?edge(X, Y)\r\n", "+edge(1,  2)\n?edge(X, Y)\n");
}

Test(script, line_comments) {
    READS("// heading\n+a(1) // trailing\n  // indented\n?a(X)//x\n", "+a(1)\n?a(X)\n");
    READS("+url(\"http://x.org\") // real comment\n", "+url(\"http://x.org\")\n");
    READS("+q(\"say \\\"//\\\" here\")\n", "+q(\"say \\\"//\\\" here\")\n");
}

Test(script, block_comments_nest_and_become_a_space) {
    READS("/* a */+a(1)\n", "+a(1)\n");
    READS("+a(1)/* x */+b(2)\n", "+a(1) +b(2)\n");
    READS("/* outer /* inner */ still outer */ ?a(X)\n", "?a(X)\n");
    READS("+a(1) /* spans\nlines\n*/ ?a(X)\n", "+a(1)   ?a(X)\n");
    READS("/* never closed\n+a(1)\n", "");
    READS("+s(\"/* not a comment */\")\n", "+s(\"/* not a comment */\")\n");
    /* A quote inside a line comment does not hide later comments. */
    READS("// it's \"quoted\n/* gone */ +a(1)\n", "+a(1)\n");
    /* A block comment marker inside a line comment is just text. */
    READS("// see /* here\n+a(1)\n", "+a(1)\n");
}

Test(script, multi_line_rules_are_one_statement) {
    READS("+emp_grade(Name, Salary, Grade) <-\n"
          "    employees(_, Name, Salary),\n"
          "    salary_grades(Grade, MinSal, MaxSal),\n"
          "    Salary >= MinSal,\n"
          "    Salary <= MaxSal\n"
          "?emp_grade(N, S, G)\n",
          "+emp_grade(Name, Salary, Grade) <- employees(_, Name, Salary), salary_grades(Grade, "
          "MinSal, MaxSal), Salary >= MinSal, Salary <= MaxSal\n"
          "?emp_grade(N, S, G)\n");
    READS("foo(X, Y) <-\n  bar(X, Z),\n  baz(Z, Y)\n", "foo(X, Y) <- bar(X, Z), baz(Z, Y)\n");
    READS("computed(X) <- nums(X),\n  X > 1\n", "computed(X) <- nums(X), X > 1\n");
}

Test(script, open_brackets_continue) {
    READS("+role_permission[(1, 1000),\n  (1, 1001),\n  (2, 1002)]\n",
          "+role_permission[(1, 1000), (1, 1001), (2, 1002)]\n");
    READS("+r[(1,2),\n(3,4)]\n", "+r[(1,2), (3,4)]\n");
    READS("?edge(X,\n Y)\n", "?edge(X, Y)\n");
    /* Closing more than was opened completes the line. */
    READS("x))\n+a(1)\n", "x))\n+a(1)\n");
    /* Brackets inside strings do not count. */
    READS("+s(\"(\")\n+t(\"[\")\n", "+s(\"(\")\n+t(\"[\")\n");
    READS("+r(\"a\\\")(\")\n?r(X)\n", "+r(\"a\\\")(\")\n?r(X)\n");
}

Test(script, meta_lines_are_complete_and_flush_pending_text) {
    READS(".rule edit r 1 p(X) <- q(X,\n?a(X)\n", ".rule edit r 1 p(X) <- q(X,\n?a(X)\n");
    READS("+broken[(1, 2\n.kg use default\n?a(X)\n", "!+broken[(1, 2\n.kg use default\n?a(X)\n");
    /* Pending text that is only waiting for a continuation is not unbalanced. */
    READS("foo(X) <-\n.kg list\n", "foo(X) <-\n.kg list\n");
}

Test(script, unterminated_at_end_of_text) {
    READS("+broken[(1, 2\n", "!+broken[(1, 2\n");
    READS("?a(X,\n  Y", "!?a(X, Y\n");
    READS("+p(X) <- q(X),\n", "+p(X) <- q(X),\n");
}

Test(script, item_text_is_valid_until_the_next_call) {
    const char *text = "+a(1)\n+bb(22)\n";
    iql_script s;
    iql_script_init(&s, text, strlen(text));
    iql_script_item it;
    cr_assert(iql_script_next(&s, &it));
    cr_expect_str_eq(it.text, "+a(1)");
    cr_expect(!it.unterminated);
    cr_assert(iql_script_next(&s, &it));
    cr_expect_str_eq(it.text, "+bb(22)");
    cr_expect(!iql_script_next(&s, &it));
    cr_expect(!iql_script_next(&s, &it));
    iql_script_free(&s);
}

Test(script, long_multi_line_statement) {
    size_t lines = 20000;
    char *text = malloc(lines * 16 + 16);
    size_t o = (size_t)sprintf(text, "+r[");
    for (size_t i = 0; i < lines; i++) o += (size_t)sprintf(text + o, "(%zu),\n", i);
    o += (size_t)sprintf(text + o, "(0)]\n");
    iql_script s;
    iql_script_init(&s, text, o);
    iql_script_item it;
    cr_assert(iql_script_next(&s, &it));
    cr_expect(!it.unterminated);
    cr_expect_eq(strncmp(it.text, "+r[(0), (1), (2),", 17), 0);
    cr_expect(!iql_script_next(&s, &it));
    iql_script_free(&s);
    free(text);
}

Test(script, random_bytes_never_crash) {
    static const char alphabet[] = "()[]\"\\/*\n .,<-+a";
    char buf[200];
    srand(99);
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = (size_t)(rand() % (int)sizeof buf);
        for (size_t i = 0; i < n; i++)
            buf[i] =
                iter % 2 ? alphabet[rand() % (int)(sizeof alphabet - 1)] : (char)(rand() & 0xFF);
        iql_script s;
        iql_script_init(&s, buf, n);
        iql_script_item it;
        while (iql_script_next(&s, &it)) {
            cr_assert(it.len == strlen(it.text) || memchr(it.text, 0, it.len));
            /* Every byte maps back to the same byte of the text (a space may stand for
             * a joined line break or a removed comment). */
            for (size_t k = 0; k < it.len; k++) {
                size_t at = iql_script_source(&s, k);
                cr_assert(at < n);
                cr_assert(it.text[k] == ' ' || buf[at] == it.text[k]);
            }
        }
        iql_script_free(&s);
    }
}

Test(script, an_open_statement_ends_where_the_next_one_starts) {
    /* a missing `)` costs its own statement only */
    READS("+a(1, 2\n+a(3, 4)\n?a(X, Y)\n", "!+a(1, 2\n+a(3, 4)\n?a(X, Y)\n");
    READS("-a(1\n-a(2)\n", "!-a(1\n-a(2)\n");
    /* a second rule starts a new statement; the first `<-` of one does not */
    READS("r(X) <- a(X\nq(X) <- a(X)\n", "!r(X) <- a(X\nq(X) <- a(X)\n");
    READS("+p(X,\n  Y) <- e(X, Y)\n", "+p(X, Y) <- e(X, Y)\n");
    /* a continuation line with a negative number is not a new statement */
    READS("+e[(1,\n -2)]\n", "+e[(1, -2)]\n");
}

Test(script, a_string_ends_at_the_end_of_its_line) {
    iql_script s;
    const char *text = "+n(\"bob, 1)\n+n(\"ann\")\n";
    iql_script_init(&s, text, strlen(text));
    iql_script_item it;
    cr_assert(iql_script_next(&s, &it));
    cr_expect_str_eq(it.text, "+n(\"bob, 1)");
    cr_expect(it.unterminated);
    cr_expect(it.open_string);
    cr_assert(iql_script_next(&s, &it));
    cr_expect_str_eq(it.text, "+n(\"ann\")");
    cr_expect(!it.unterminated && !it.open_string);
    iql_script_free(&s);
}

Test(script, statement_bytes_map_to_text_offsets) {
    /* comments removed before and inside a statement; lines joined by one space */
    const char *text = "/* two\nlines */\n// note\n  +e(1) // x\n?p(X) <-\n   e(X)\n";
    iql_script s;
    iql_script_init(&s, text, strlen(text));
    iql_script_item it;
    cr_assert(iql_script_next(&s, &it));
    cr_expect_str_eq(it.text, "+e(1)");
    cr_expect_eq(iql_script_source(&s, 0), (size_t)(strstr(text, "+e(1)") - text));
    cr_expect_eq(iql_script_source(&s, 3), (size_t)(strstr(text, "1) //") - text));
    cr_assert(iql_script_next(&s, &it));
    cr_expect_str_eq(it.text, "?p(X) <- e(X)");
    cr_expect_eq(iql_script_source(&s, 0), (size_t)(strstr(text, "?p") - text));
    /* "e(X)" starts at byte 9 of the statement, on the next line of the text */
    cr_expect_eq(iql_script_source(&s, 9), (size_t)(strstr(text, "   e(X)") - text) + 3);
    iql_script_free(&s);
}
