/* The unit tests' shared fixture (unit_fixture.h). */
#include "unit_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/value.h"

il_engine *unit_engine_open(il_session **session) {
    char *err = NULL;
    il_engine *e = il_engine_open(NULL, &err);
    cr_assert_not_null(e, "il_engine_open: %s", err ? err : "?");
    cr_assert_null(err);
    *session = il_session_open(e);
    cr_assert_not_null(*session);
    return e;
}

void unit_engine_close(il_engine *e) {
    il_engine_close(e); /* closes the sessions still open */
    val_shutdown();
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

void unit_answer(il_session *s, const char *q, il_buf *out) {
    il_result *r = il_execute(s, q, strlen(q));
    il_buf_printf(out, "%s ->", q);
    for (size_t i = 0; i < il_result_nlines(r); i++)
        il_buf_printf(out, " %s", il_result_line(r, i));
    for (size_t i = 0; i < il_result_nrows(r); i++) {
        size_t w;
        const il_value *row = il_result_row(r, i, &w);
        il_buf_puts(out, " (");
        for (size_t j = 0; j < w; j++) {
            char cell[256];
            il_value_format(row[j], cell, sizeof cell);
            il_buf_printf(out, "%s%s", j ? ", " : "", cell);
        }
        il_buf_puts(out, ")");
    }
    il_buf_putc(out, '\n');
    il_result_free(r);
}
