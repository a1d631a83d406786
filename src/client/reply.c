/* Building replies (reply.h) from in-process results. */
#include "client/reply.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "value/print.h"

cli_reply *cli_reply_new(il_result_kind kind, il_stmt_class cls) {
    cli_reply *p = calloc(1, sizeof *p);
    p->kind = kind;
    p->cls = cls;
    return p;
}

void cli_reply_add_line(cli_reply *p, const char *line, size_t len) {
    p->lines = realloc(p->lines, (p->nlines + 1) * sizeof *p->lines);
    p->lines[p->nlines++] = strndup(line, len);
}

cli_reply *cli_reply_from_result(const il_result *r) {
    cli_reply *p = cli_reply_new(il_result_kind_of(r), il_result_stmt_class(r));
    for (size_t i = 0; i < il_result_nlines(r); i++) {
        const char *l = il_result_line(r, i);
        cli_reply_add_line(p, l, strlen(l));
    }
    if (il_result_proof_trees(r)) p->proof_trees = strdup(il_result_proof_trees(r));
    cli_reply_set_warnings(p, il_result_metadata(r));
    if (p->kind == IL_RESULT_TABLE) {
        p->ncols = il_result_ncols(r);
        p->nrows = il_result_nrows(r);
        p->total_rows = il_result_total_rows(r);
        p->cols = calloc(p->ncols + 1, sizeof *p->cols);
        for (size_t c = 0; c < p->ncols; c++) p->cols[c] = strdup(il_result_col(r, c));
        p->cells = calloc(p->nrows * p->ncols + 1, sizeof *p->cells);
        p->numeric = calloc(p->nrows * p->ncols + 1, sizeof *p->numeric);
        p->json = calloc(p->nrows * p->ncols + 1, sizeof *p->json);
        for (size_t i = 0; i < p->nrows; i++) {
            size_t width;
            const il_value *row = il_result_row(r, i, &width);
            for (size_t c = 0; c < p->ncols && c < width; c++) {
                size_t len = il_value_format(row[c], NULL, 0);
                char *text = malloc(len + 1);
                il_value_format(row[c], text, len + 1);
                p->cells[i * p->ncols + c] = text;
                p->numeric[i * p->ncols + c] = il_value_is_number(row[c]);
                il_buf j;
                il_buf_init(&j);
                val_fmt_json((val_t)row[c], &j);
                p->json[i * p->ncols + c] = il_buf_take(&j);
            }
        }
    }
    if (p->cls == IL_STMT_SESSION_RULE && p->kind == IL_RESULT_MESSAGE) {
        const char *h = il_result_rule_head(r, &p->arity);
        p->rule_head = strdup(h ? h : "");
    }
    if (p->cls == IL_STMT_REL_SHOW && il_result_title(r)) p->title = strdup(il_result_title(r));
    return p;
}

void cli_reply_set_warnings(cli_reply *p, const char *metadata_json) {
    json_t *m = metadata_json ? json_loads(metadata_json, 0, NULL) : NULL;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(m, "warnings"), i, w) {
        const char *t = json_string_value(w);
        if (!t || strncmp(t, "Results include session data", 28) == 0 ||
            strncmp(t, "Results use ", 12) == 0)
            continue;
        p->warnings = realloc(p->warnings, (p->nwarnings + 1) * sizeof *p->warnings);
        p->warnings[p->nwarnings++] = strdup(t);
    }
    json_decref(m);
}

void cli_reply_free(cli_reply *p) {
    if (!p) return;
    for (size_t i = 0; i < p->nlines; i++) free(p->lines[i]);
    for (size_t i = 0; i < p->ncols; i++) free(p->cols[i]);
    for (size_t i = 0; i < p->nrows * p->ncols; i++) {
        free(p->cells[i]);
        if (p->json) free(p->json[i]);
    }
    free(p->json);
    free(p->lines);
    free(p->proof_trees);
    for (size_t i = 0; i < p->nwarnings; i++) free(p->warnings[i]);
    free(p->warnings);
    free(p->cols);
    free(p->cells);
    free(p->numeric);
    free(p->rule_head);
    free(p->title);
    free(p);
}
