/* The rows of a result table as JSON, shared by the replies that carry tables (`result`,
 * `snapshot` and their streamed forms): every row is encoded once, then sent whole or cut
 * into chunks of at most SRV_CHUNK_ROWS rows and about 1 MiB. A row over the message
 * limit makes the reply an error before any part of it is sent. */
#ifndef IL_SERVER_SRV_ROWS_H
#define IL_SERVER_SRV_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "server/server.h"

typedef struct srv_rows {
    il_buf json; /* the rows, each a JSON array, separated by commas */
    size_t *off; /* off[i]: where row i starts in json, its separating comma included;
                    off[n] = json.len */
    size_t n;    /* rows encoded */
    /* off for a few rows (a reply to a write, a delta of one row) without an allocation;
       a srv_rows is not to be copied */
    size_t off_small[4];
} srv_rows;

/* Appends row i of src as a JSON array. */
typedef void (*srv_row_fn)(il_buf *b, const void *src, size_t i);

/* Encodes rows [0, n) of src. False when a row is over the message limit: err gets the
 * reply's message (`Result too large (N bytes, max M)`, code `internal`) and r holds
 * nothing to free. */
bool srv_rows_encode(srv_rows *r, srv_row_fn row, const void *src, size_t n, char *err,
                     size_t errlen);
/* srv_rows_encode of rows [0, n) of an engine table, with its shown columns: rows of
 * small integers written in one pass, without a call per row or per value. */
bool srv_rows_encode_table(srv_rows *r, const il_result *table, size_t n, char *err, size_t errlen);
void srv_rows_free(srv_rows *r);
/* The end of the chunk that starts at row i: at most SRV_CHUNK_ROWS rows and about
 * 1 MiB, a larger row alone. */
size_t srv_rows_chunk_end(const srv_rows *r, size_t i);
/* Appends rows [i, j) as a JSON array. */
void srv_rows_put(il_buf *b, const srv_rows *r, size_t i, size_t j);

/* Appends a row of n values as a JSON array (a row of small integers without a call per
 * value). */
void srv_rows_put_row(il_buf *b, const il_value *row, size_t n);
/* The number of columns a table is sent with: none when it has no rows (`columns:[]`, as
 * the original sends an empty result). */
size_t srv_rows_table_ncols(const il_result *table);
/* Appends `,"columns":[...]` of an engine table. */
void srv_rows_table_columns(il_buf *b, const il_result *table);

#endif
