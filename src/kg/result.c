/* Results of statements, and the public accessors of include/inputlayer.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kg/kg.h"
#include "value/print.h"

il_result *res_new(il_result_kind kind) {
    il_result *r = calloc(1, sizeof *r);
    r->kind = kind;
    return r;
}

void res_add_line(il_result *r, const char *line) {
    il_vec_push(r->lines, strdup(line));
}

void res_add_lines(il_result *r, const char *text) {
    const char *p = text;
    for (;;) {
        const char *nl = strchr(p, '\n');
        if (!nl) {
            res_add_line(r, p);
            return;
        }
        char *line = strndup(p, (size_t)(nl - p));
        il_vec_push(r->lines, line);
        p = nl + 1;
    }
}

void res_add_col(il_result *r, const char *name) {
    il_vec_push(r->cols, strdup(name));
}

static il_result *res_vfmt(il_result_kind kind, const char *fmt, va_list ap) {
    il_result *r = res_new(kind);
    il_buf b;
    il_buf_init(&b);
    il_buf_vprintf(&b, fmt, ap);
    res_add_lines(r, il_buf_str(&b));
    il_buf_free(&b);
    return r;
}

il_result *res_message(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    il_result *r = res_vfmt(IL_RESULT_MESSAGE, fmt, ap);
    va_end(ap);
    return r;
}

il_result *res_count_message(const char *before, unsigned n, const char *middle, const char *name,
                             const char *after) {
    if (strchr(name, '\n'))
        return res_message("%s%u%s%s%s", before, n, middle, name, after); /* two lines */
    char digits[10];
    size_t nd = 0;
    do digits[sizeof digits - ++nd] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    size_t lb = strlen(before), lm = strlen(middle), ln = strlen(name), la = strlen(after);
    char *line = malloc(lb + nd + lm + ln + la + 1), *at = line;
    memcpy(at, before, lb);
    at += lb;
    memcpy(at, digits + sizeof digits - nd, nd);
    at += nd;
    memcpy(at, middle, lm);
    at += lm;
    memcpy(at, name, ln);
    at += ln;
    memcpy(at, after, la + 1);
    il_result *r = res_new(IL_RESULT_MESSAGE);
    il_vec_push(r->lines, line);
    return r;
}

il_result *res_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    il_result *r = res_vfmt(IL_RESULT_ERROR, fmt, ap);
    va_end(ap);
    return r;
}

il_result *res_parse_error(const char *msg) {
    il_result *r = res_new(IL_RESULT_PARSE_ERROR);
    res_add_lines(r, msg);
    return r;
}

void il_result_free(il_result *r) {
    if (!r) return;
    for (uint32_t i = 0; i < r->lines.n; i++) free(r->lines.v[i]);
    il_vec_free(r->lines);
    for (uint32_t i = 0; i < r->cols.n; i++) free(r->cols.v[i]);
    il_vec_free(r->cols);
    il_vec_free(r->cells);
    free(r->rule_head);
    free(r->title);
    free(r->proof_json);
    free(r->provenance);
    free(r->metadata_json);
    il_intern_scope_free(r->strings);
    free(r);
}

il_result_kind il_result_kind_of(const il_result *r) {
    return r->kind;
}
il_stmt_class il_result_stmt_class(const il_result *r) {
    return r->cls;
}
size_t il_result_nlines(const il_result *r) {
    return r->lines.n;
}
const char *il_result_line(const il_result *r, size_t i) {
    return r->lines.v[i];
}
size_t il_result_ncols(const il_result *r) {
    return r->cols.n;
}
const char *il_result_col(const il_result *r, size_t i) {
    return r->cols.v[i];
}
size_t il_result_nrows(const il_result *r) {
    return r->nrows;
}
size_t il_result_total_rows(const il_result *r) {
    return r->total_rows > r->nrows ? r->total_rows : r->nrows;
}

const il_value *il_result_row(const il_result *r, size_t i, size_t *width) {
    if (width) *width = r->width;
    /* zero-column rows have no cells (and no cell array) */
    return r->width ? &r->cells.v[i * r->width] : NULL;
}

const char *il_result_rule_head(const il_result *r, uint32_t *arity) {
    if (arity) *arity = r->rule_arity;
    return r->rule_head;
}

const char *il_result_title(const il_result *r) {
    return r->title;
}

il_stop il_result_stop(const il_result *r) {
    return r->stop;
}

uint64_t il_result_peak_bytes(const il_result *r) {
    return r->peak_bytes;
}

unsigned il_result_threads(const il_result *r) {
    return r->threads_used ? r->threads_used : 1;
}

size_t il_value_format(il_value v, char *buf, size_t cap) {
    il_buf b;
    il_buf_init(&b);
    val_fmt_cell(v, &b);
    size_t n = b.len;
    if (cap) {
        size_t c = n < cap - 1 ? n : cap - 1;
        memcpy(buf, il_buf_str(&b), c);
        buf[c] = 0;
    }
    il_buf_free(&b);
    return n;
}

bool il_value_is_number(il_value v) {
    return val_cell_is_number(v);
}

const char *il_result_proof_trees(const il_result *r) {
    return r->proof_json;
}

const char *il_result_row_provenance(const il_result *r, size_t i) {
    if (!r->provenance || i >= r->nrows) return "unknown";
    switch (r->provenance[i]) {
    case IL_PROV_PERSISTENT:
        return "persistent";
    case IL_PROV_EPHEMERAL:
        return "ephemeral";
    }
    return "unknown";
}

const char *il_result_metadata(const il_result *r) {
    return r->metadata_json;
}

il_timing il_result_timing(const il_result *r) {
    return r->timing;
}
