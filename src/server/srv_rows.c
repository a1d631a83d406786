/* Rows of result tables as JSON (srv_rows.h). A row's JSON is written once, with the
 * offsets of the row starts, so that deciding to stream and cutting chunks copy bytes
 * instead of formatting values again. */
#include "server/srv_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/print.h"

bool srv_rows_encode(srv_rows *r, srv_row_fn row, const void *src, size_t n, char *err,
                     size_t errlen) {
    il_buf_init(&r->json);
    if (n) il_buf_reserve(&r->json, n * 16); /* two small numbers a row: no regrowth */
    r->off = malloc((n + 1) * sizeof *r->off);
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        r->off[i] = r->json.len;
        if (i) il_buf_putc(&r->json, ',');
        row(&r->json, src, i);
        /* Room for the frame around it: a row must fit in one message on its own. */
        size_t bytes = r->json.len - r->off[i];
        if (bytes > SRV_MAX_MESSAGE - 4096) {
            snprintf(err, errlen, "Result too large (%zu bytes, max %u)", bytes, SRV_MAX_MESSAGE);
            srv_rows_free(r);
            return false;
        }
    }
    r->off[n] = r->json.len;
    return true;
}

void srv_rows_free(srv_rows *r) {
    il_buf_free(&r->json);
    free(r->off);
    r->off = NULL;
    r->n = 0;
}

size_t srv_rows_chunk_end(const srv_rows *r, size_t i) {
    size_t j = i + 1;
    while (j < r->n && j - i < SRV_CHUNK_ROWS && r->off[j + 1] - r->off[i] < SRV_STREAM_THRESHOLD)
        j++;
    return j;
}

void srv_rows_put(il_buf *b, const srv_rows *r, size_t i, size_t j) {
    il_buf_putc(b, '[');
    if (i < j) {
        size_t from = r->off[i] + (i ? 1 : 0); /* without the separating comma */
        il_buf_put(b, r->json.data + from, r->off[j] - from);
    }
    il_buf_putc(b, ']');
}

size_t srv_rows_table_ncols(const il_result *table) {
    return il_result_nrows(table) ? il_result_ncols(table) : 0;
}

/* Writes an integer held in the value itself (48 bits, so negating it cannot overflow)
 * at p, as val_fmt_json would, without printf (whose parsing of the format was most of
 * the cost of encoding a table of integers: a third of a 1,582-row read's CPU); returns
 * the end. At most 16 bytes. */
static char *put_small_int(char *p, int64_t v) {
    char digits[20], *d = digits + sizeof digits;
    uint64_t u = v < 0 ? (uint64_t)-v : (uint64_t)v;
    do *--d = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *p++ = '-';
    size_t n = (size_t)(digits + sizeof digits - d);
    memcpy(p, d, n);
    return p + n;
}

void srv_rows_table_row(il_buf *b, const void *table, size_t i) {
    size_t width, ncols = srv_rows_table_ncols(table);
    const il_value *row = il_result_row(table, i, &width);
    /* A row may be wider than the columns shown (the engine's extra values). */
    size_t n = width < ncols ? width : ncols;
    /* A row of small integers (the common case) is written straight into the buffer. */
    size_t k = 0;
    while (k < n && val_is_int_inline(row[k])) k++;
    if (k == n) {
        il_buf_reserve(b, 2 + n * 17);
        char *p = b->data + b->len;
        *p++ = '[';
        for (k = 0; k < n; k++) {
            if (k) *p++ = ',';
            p = put_small_int(p, val_get_int(row[k]));
        }
        *p++ = ']';
        *p = 0;
        b->len = (size_t)(p - b->data);
        return;
    }
    il_buf_putc(b, '[');
    for (k = 0; k < n; k++) {
        if (k) il_buf_putc(b, ',');
        val_fmt_json(row[k], b);
    }
    il_buf_putc(b, ']');
}

void srv_rows_table_columns(il_buf *b, const il_result *table) {
    il_buf_puts(b, ",\"columns\":[");
    for (size_t i = 0; i < srv_rows_table_ncols(table); i++) {
        const char *name = il_result_col(table, i);
        if (i) il_buf_putc(b, ',');
        il_json_str(b, name, strlen(name));
    }
    il_buf_putc(b, ']');
}
