/* The unit tests' shared fixture (unit_fixture.h). */
#include "unit_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/builtin.h"
#include "exec/tuplesort.h"
#include "value/value.h"

il_engine *unit_engine_open_dir(const char *dir, il_session **session) {
    char *err = NULL;
    il_engine *e = il_engine_open(dir, &err);
    cr_assert_not_null(e, "il_engine_open: %s", err ? err : "?");
    cr_assert_null(err);
    *session = il_session_open(e);
    cr_assert_not_null(*session);
    return e;
}

il_engine *unit_engine_open(il_session **session) {
    return unit_engine_open_dir(NULL, session);
}

void unit_engine_close(il_engine *e) {
    il_engine_close(e); /* closes the sessions still open */
    val_shutdown();
}

il_engine *unit_engine;
il_session *unit_session;

void unit_suite_open(void) {
    unit_engine = unit_engine_open(&unit_session);
}

void unit_suite_close(void) {
    unit_engine_close(unit_engine);
    unit_engine = NULL;
    unit_session = NULL;
}

void unit_run(il_session *s, const char *stmt) {
    il_result *r = il_execute(s, stmt, strlen(stmt));
    il_result_kind k = il_result_kind_of(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR)
        cr_assert_fail("%s: %s", stmt, il_result_nlines(r) ? il_result_line(r, 0) : "?");
    il_result_free(r);
}

val_t unit_call(const char *name, uint32_t nargs, const val_t *args) {
    const exec_builtin *b = exec_builtin_find(name);
    cr_assert_not_null(b, "builtin %s missing", name);
    cr_assert_eq(b->arity, nargs, "arity of %s", name);
    return b->fn(args);
}

void unit_mkdtemp(char *dir, size_t cap, const char *tag) {
    snprintf(dir, cap, "/tmp/il_%s_XXXXXX", tag);
    cr_assert_not_null(mkdtemp(dir));
}

void unit_rm_tree(const char *dir) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

double unit_random(uint64_t *state) {
    *state += 0x9E3779B97F4A7C15ull;
    uint64_t z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)z / 18446744073709551616.0 * 2.0 - 1.0;
}

char *unit_answer_str(il_session *s, const char *q) {
    il_buf b;
    il_buf_init(&b);
    unit_answer(s, q, &b);
    return il_buf_take(&b);
}

void unit_row_text(il_result *r, size_t i, il_buf *out) {
    size_t w;
    const il_value *row = il_result_row(r, i, &w);
    il_buf_puts(out, "(");
    for (size_t j = 0; j < w; j++) {
        char cell[256];
        il_value_format(row[j], cell, sizeof cell);
        il_buf_printf(out, "%s%s", j ? ", " : "", cell);
    }
    il_buf_puts(out, ")");
}

void unit_answer(il_session *s, const char *q, il_buf *out) {
    il_result *r = il_execute(s, q, strlen(q));
    il_buf_printf(out, "%s ->", q);
    for (size_t i = 0; i < il_result_nlines(r); i++)
        il_buf_printf(out, " %s", il_result_line(r, i));
    for (size_t i = 0; i < il_result_nrows(r); i++) {
        il_buf_putc(out, ' ');
        unit_row_text(r, i, out);
    }
    il_buf_putc(out, '\n');
    il_result_free(r);
}

unit_rows unit_rows_fresh(il_session *s, const char *query) {
    il_result_free(il_execute(s, "evaluate_only_marker(0)", 23));
    return unit_rows_of(s, query);
}

unit_rows unit_rows_of(il_session *s, const char *query) {
    il_result *r = il_execute(s, query, strlen(query));
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE, "%s: %s", query,
                 il_result_nlines(r) ? il_result_line(r, 0) : "?");
    unit_rows out = {.n = il_result_nrows(r), .w = (uint32_t)il_result_ncols(r)};
    out.v = malloc((out.n * out.w + 1) * sizeof *out.v);
    for (size_t i = 0; i < out.n; i++) {
        size_t width;
        const il_value *row = il_result_row(r, i, &width);
        memcpy(&out.v[i * out.w], row, out.w * sizeof *row);
    }
    il_result_free(r);
    if (out.n && out.w) tuple_sort(out.v, out.n, out.w);
    return out;
}

unit_rows unit_rows_of_view(view_t *v) {
    unit_rows out = {.w = view_arity(v)};
    out.n = view_rows(v, &out.v);
    if (out.n && out.w) tuple_sort(out.v, out.n, out.w);
    return out;
}

bool unit_rows_has(const unit_rows *r, const val_t *t) {
    for (size_t i = 0; i < r->n; i++)
        if (memcmp(&r->v[i * r->w], t, r->w * sizeof *t) == 0) return true;
    return false;
}

bool unit_rows_same(const unit_rows *a, const unit_rows *b) {
    return a->n == b->n && (!a->n || memcmp(a->v, b->v, a->n * a->w * sizeof *a->v) == 0);
}
