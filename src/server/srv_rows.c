/* Rows of result tables as JSON (srv_rows.h). A row's JSON is written once, with the
 * offsets of the row starts, so that deciding to stream and cutting chunks copy bytes
 * instead of formatting values again. */
#include "server/srv_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/print.h"

/* Starts r for n rows: false (r holding nothing) when out of memory. */
static bool rows_start(srv_rows *r, size_t n, size_t bytes_guess, char *err, size_t errlen) {
    il_buf_init(&r->json);
    if (n) il_buf_reserve(&r->json, bytes_guess);
    r->off = n + 1 <= sizeof r->off_small / sizeof r->off_small[0]
                 ? r->off_small
                 : malloc((n + 1) * sizeof *r->off);
    r->n = n;
    if (r->off) return true;
    snprintf(err, errlen, "Out of memory encoding %zu rows", n);
    srv_rows_free(r);
    return false;
}

/* Room for the frame around it: a row must fit in one message on its own. False (r freed,
 * err set) when row i does not. */
static bool row_fits(srv_rows *r, size_t i, char *err, size_t errlen) {
    size_t bytes = r->json.len - r->off[i];
    if (bytes <= SRV_MAX_MESSAGE - 4096) return true;
    snprintf(err, errlen, "Result too large (%zu bytes, max %u)", bytes, SRV_MAX_MESSAGE);
    srv_rows_free(r);
    return false;
}

bool srv_rows_encode(srv_rows *r, srv_row_fn row, const void *src, size_t n, char *err,
                     size_t errlen) {
    /* two small numbers a row: no regrowth */
    if (!rows_start(r, n, n * 16, err, errlen)) return false;
    for (size_t i = 0; i < n; i++) {
        r->off[i] = r->json.len;
        if (i) il_buf_putc(&r->json, ',');
        row(&r->json, src, i);
        if (!row_fits(r, i, err, errlen)) return false;
    }
    r->off[n] = r->json.len;
    return true;
}

void srv_rows_free(srv_rows *r) {
    il_buf_free(&r->json);
    if (r->off != r->off_small) free(r->off);
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
 * the cost of encoding a table of integers: a third of a 1,582-row read's CPU), two
 * digits per division, without a copy of its digits; returns the end. At most 16 bytes. */
static char *put_small_int(char *p, int64_t v) {
    static const uint64_t POW10[15] = {
        10u,           100u,           1000u,           10000u,           100000u,
        1000000u,      10000000u,      100000000u,      1000000000u,      10000000000u,
        100000000000u, 1000000000000u, 10000000000000u, 100000000000000u, 1000000000000000u};
    static const char PAIRS[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    uint64_t u = v < 0 ? (uint64_t)-v : (uint64_t)v;
    if (v < 0) *p++ = '-';
    if (u < 10) {
        *p = (char)('0' + u);
        return p + 1;
    }
    if (u < 100) {
        memcpy(p, &PAIRS[u * 2], 2);
        return p + 2;
    }
    if (u < 10000) { /* the usual ids and counts: no loop */
        uint64_t hi = u / 100, lo = u % 100;
        if (hi < 10)
            *p++ = (char)('0' + hi);
        else
            memcpy(p, &PAIRS[hi * 2], 2), p += 2;
        memcpy(p, &PAIRS[lo * 2], 2);
        return p + 2;
    }
    size_t n = 2;
    while (n < 16 && u >= POW10[n - 1]) n++;
    char *end = p + n, *d = end;
    while (u >= 100) {
        const char *pair = &PAIRS[(u % 100) * 2];
        u /= 100;
        *--d = pair[1];
        *--d = pair[0];
    }
    if (u >= 10) {
        *--d = PAIRS[u * 2 + 1];
        *--d = PAIRS[u * 2];
    } else {
        *--d = (char)('0' + u);
    }
    return end;
}

/* Writes row (n values) as a JSON array at p when every value is an integer held in the
 * value itself (room for 2 + 17 n bytes needed); returns the end, or NULL for any other
 * row (what it wrote past p is then to be written over). */
static char *put_int_row(char *p, const il_value *row, size_t n) {
    *p++ = '[';
    for (size_t k = 0; k < n; k++) {
        if (!val_is_int_inline(row[k])) return NULL;
        if (k) *p++ = ',';
        p = put_small_int(p, val_get_int_inline(row[k]));
    }
    *p++ = ']';
    return p;
}

/* Writes row (n values of any type) as a JSON array. */
static void put_any_row(il_buf *b, const il_value *row, size_t n) {
    il_buf_putc(b, '[');
    for (size_t k = 0; k < n; k++) {
        if (k) il_buf_putc(b, ',');
        val_fmt_json(row[k], b);
    }
    il_buf_putc(b, ']');
}

bool srv_rows_encode_table(srv_rows *r, const il_result *table, size_t n, char *err,
                           size_t errlen) {
    size_t ncols = srv_rows_table_ncols(table);
    if (!rows_start(r, n, n * (2 + ncols * 7), err, errlen)) return false;
    for (size_t i = 0; i < n; i++) {
        size_t width;
        const il_value *row = il_result_row(table, i, &width);
        size_t k = width < ncols ? width : ncols;
        r->off[i] = r->json.len;
        /* room for the longest row of integers (the call only when it may grow) */
        if (r->json.len + 4 + k * 17 > r->json.cap) il_buf_reserve(&r->json, 3 + k * 17);
        char *p = r->json.data + r->json.len;
        if (i) *p++ = ',';
        char *end = put_int_row(p, row, k);
        if (end) {
            *end = 0;
            r->json.len = (size_t)(end - r->json.data);
        } else {
            r->json.len = (size_t)(p - r->json.data);
            put_any_row(&r->json, row, k);
            if (!row_fits(r, i, err, errlen)) return false;
        }
    }
    r->off[n] = r->json.len;
    return true;
}

void srv_rows_put_row(il_buf *b, const il_value *row, size_t n) {
    il_buf_reserve(b, 2 + n * 17);
    char *end = put_int_row(b->data + b->len, row, n);
    if (end) {
        *end = 0;
        b->len = (size_t)(end - b->data);
        return;
    }
    put_any_row(b, row, n);
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
