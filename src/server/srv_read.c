/* Snapshot reads (srv_read.h). The whole read runs in one job holding the engine lock, so
 * no statement commits between its queries: the graph's revision read there is the one
 * every result is exact at. Checks come first (the queries' shape, then read access), so
 * that a refused read evaluates nothing; results are encoded with the `result` reply's
 * row encoder (srv_rows.h) and capped by max_result_rows with `truncated` set. */
#include "server/srv_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_authz.h"
#include "server/srv_exec.h"
#include "server/srv_revision.h"
#include "server/srv_rows.h"

/* ---- the frame ---- */

bool srv_read_pack(json_t *queries, char **packed, size_t *len, char *err, size_t errlen) {
    *packed = NULL;
    *len = 0;
    if (!json_is_array(queries)) {
        snprintf(err, errlen, "Invalid message format: read needs an array `queries`");
        return false;
    }
    il_buf b;
    il_buf_init(&b);
    size_t i;
    json_t *q;
    json_array_foreach(queries, i, q) {
        json_t *name = json_object_get(q, "name"), *text = json_object_get(q, "query");
        if (!json_is_string(name) || !json_is_string(text)) {
            snprintf(err, errlen,
                     "Invalid message format: read query %zu needs a string `name` and a "
                     "string `query`",
                     i);
            il_buf_free(&b);
            return false;
        }
        /* The packing separates by NUL; neither a name nor a query has a use for one. */
        size_t nlen = json_string_length(name), qlen = json_string_length(text);
        if (memchr(json_string_value(name), 0, nlen) || memchr(json_string_value(text), 0, qlen)) {
            snprintf(err, errlen, "Invalid message format: read query %zu contains a NUL character",
                     i);
            il_buf_free(&b);
            return false;
        }
        il_buf_put(&b, json_string_value(name), nlen + 1);
        il_buf_put(&b, json_string_value(text), qlen + 1);
    }
    *len = b.len;
    *packed = il_buf_take(&b); /* never NULL, even for no query */
    return true;
}

/* ---- checks ---- */

typedef struct read_query {
    const char *name;  /* in the request's program */
    const char *given; /* the query as sent, in the request's program */
    il_prepared *prep; /* the query prepared (the request's): its statements, one if valid */
    const char *text;  /* its first statement's text (prep's) */
    size_t len;
    il_result *result;
    srv_rows rows; /* the result's rows as JSON, once encoded */
    bool encoded;
    il_buf head; /* `{"name":...,"columns":[...]` */
} read_query;

typedef struct read_ctx {
    srv_req *rq;
    const char *id;
    read_query *qs;
    size_t n;
} read_ctx;

static void refuse(read_ctx *x, const char *code, il_buf *msg) {
    srv_send_error(x->rq->conn, x->id, code, il_buf_str(msg));
    il_buf_free(msg);
}

static int by_name(const void *a, const void *b) {
    const read_query *const *p = a, *const *q = b;
    int c = strcmp((*p)->name, (*q)->name);
    return c ? c : (*p > *q) - (*p < *q);
}

/* The first query (in request order) whose name an earlier one has, or n. Sorted rather
 * than compared pairwise: a frame may hold a great many queries. */
static size_t first_duplicate(read_ctx *x) {
    read_query **sorted = malloc((x->n + 1) * sizeof *sorted);
    for (size_t i = 0; i < x->n; i++) sorted[i] = &x->qs[i];
    qsort(sorted, x->n, sizeof *sorted, by_name);
    size_t first = x->n;
    for (size_t i = 1; i < x->n; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0 &&
            (size_t)(sorted[i] - x->qs) < first)
            first = (size_t)(sorted[i] - x->qs);
    free(sorted);
    return first;
}

/* How many queries the packed read holds: a name and a text each. */
static size_t packed_count(const srv_req *rq) {
    const char *p = rq->program, *end = p + rq->len;
    size_t n = 0;
    for (const char *q = p; q < end; q += strlen(q) + 1) n++;
    return n / 2;
}

/* Query i (of n) of the read, text `given`, prepared once per request: a run after a
 * spill, or after the pin's check (srv_read_pinnable), finds it prepared. */
static il_prepared *prepared(srv_req *rq, size_t n, size_t i, const char *given) {
    if (!rq->reads) {
        rq->reads = calloc(n ? n : 1, sizeof *rq->reads);
        rq->nreads = n;
    }
    if (!rq->reads[i]) rq->reads[i] = il_prepare(given, strlen(given));
    return rq->reads[i];
}

static bool unpack(read_ctx *x) {
    const char *p = x->rq->program;
    x->n = packed_count(x->rq);
    x->qs = calloc(x->n + 1, sizeof *x->qs);
    for (size_t i = 0; i < x->n; i++) {
        x->qs[i].name = p;
        p += strlen(p) + 1;
        x->qs[i].given = p;
        p += strlen(p) + 1;
        il_buf_init(&x->qs[i].head);
    }
    il_buf msg;
    il_buf_init(&msg);
    if (x->n == 0) {
        il_buf_puts(&msg, "A read needs at least one query");
        refuse(x, "validation", &msg);
        return false;
    }
    int64_t max = x->rq->conn->srv->cfg->max_query_size_bytes;
    if (max > 0 && x->rq->len > (uint64_t)max) {
        il_buf_printf(&msg, "Read too large: %zu bytes of query names and texts (max %lld)",
                      x->rq->len, (long long)max);
        refuse(x, "validation", &msg);
        return false;
    }
    for (size_t i = 0; i < x->n; i++)
        if (!x->qs[i].name[0]) {
            il_buf_printf(&msg, "Query %zu of the read has an empty name", i);
            refuse(x, "validation", &msg);
            return false;
        }
    size_t dup = first_duplicate(x);
    if (dup < x->n) {
        il_buf_printf(&msg, "The read names two queries '%s'", x->qs[dup].name);
        refuse(x, "validation", &msg);
        return false;
    }
    il_buf_free(&msg);
    return true;
}

/* The graph is read at the request's moment: an ACL revoked since the session opened
 * refuses the read. */
static bool may_read(read_ctx *x) {
    srv_conn *c = x->rq->conn;
    srv_server *s = c->srv;
    pthread_mutex_lock(&s->users_lock);
    const srv_user *me = srv_users_find(&s->users, c->user);
    bool ok = me && srv_authz_session(&s->users, me, il_session_graph(c->session));
    pthread_mutex_unlock(&s->users_lock);
    if (!ok) srv_send_error(c, x->id, "access_denied", "Access denied");
    return ok;
}

/* One query, exactly: a `?` statement that parses. Comments and line breaks are the
 * script reader's business, as in an execute program. The query is prepared once per
 * request: a run after a spill finds it prepared. */
static bool check_query(read_ctx *x, size_t i) {
    read_query *q = &x->qs[i];
    q->prep = prepared(x->rq, x->n, i, q->given);
    il_buf msg;
    il_buf_init(&msg);
    size_t count = il_prepared_count(q->prep);
    if (count) q->text = il_prepared_text(q->prep, 0, &q->len);
    il_statement_kind kind = count ? il_prepared_kind(q->prep, 0) : IL_STATEMENT_INVALID;
    if (!q->text || q->text[0] != '?') {
        il_buf_printf(&msg, "Query '%s' must start with '?'", q->name);
    } else if (count > 1) {
        il_buf_printf(&msg, "Query '%s' must be a single query, not %zu statements", q->name,
                      count);
    } else if (kind == IL_STATEMENT_UNTERMINATED) {
        il_buf_printf(&msg,
                      "Query '%s' does not parse: unterminated statement (unbalanced delimiters)",
                      q->name);
    } else if (kind == IL_STATEMENT_INVALID) {
        const char *perr = il_prepared_error(q->prep, 0);
        il_buf_printf(&msg, "Query '%s' does not parse: %s", q->name, perr ? perr : "?");
    } else if (kind != IL_STATEMENT_QUERY) {
        il_buf_printf(&msg, "Query '%s' must start with '?'", q->name);
    }
    if (!msg.len) {
        il_buf_free(&msg);
        return true;
    }
    refuse(x, "validation", &msg);
    return false;
}

bool srv_read_pinnable(srv_req *rq) {
    const char *p = rq->program;
    size_t n = packed_count(rq);
    for (size_t i = 0; i < n; i++) {
        p += strlen(p) + 1; /* the name */
        il_prepared *q = prepared(rq, n, i, p);
        p += strlen(p) + 1;
        if (il_prepared_count(q) == 1 && !il_prepared_pinnable(q, 0)) return false;
    }
    return true;
}

/* ---- evaluation ---- */

/* Runs every query under the request's guards; the first failure fails the read. False
 * when the read stopped (or must move to the pool), its reply already chosen. */
static bool evaluate(read_ctx *x) {
    for (size_t i = 0; i < x->n; i++) {
        read_query *q = &x->qs[i];
        q->result = srv_exec_guarded(x->rq, q->prep, 0, true);
        if (!q->result) return false;
        if (il_result_kind_of(q->result) == IL_RESULT_TABLE) continue;
        il_buf text, msg;
        il_buf_init(&text);
        il_buf_init(&msg);
        for (size_t k = 0; k < il_result_nlines(q->result); k++)
            il_buf_printf(&text, "%s%s", k ? "\n" : "", il_result_line(q->result, k));
        il_buf_printf(&msg, "Query '%s': %s", q->name, il_buf_str(&text));
        const char *code = il_result_kind_of(q->result) == IL_RESULT_PARSE_ERROR
                               ? "validation"
                               : srv_exec_error_code(il_buf_str(&text));
        il_buf_free(&text);
        refuse(x, code, &msg);
        return false;
    }
    return true;
}

/* Encodes every result's rows and its name and columns; false (the reply an error) when a
 * row is too large for a message. */
static bool encode(read_ctx *x) {
    char err[128];
    for (size_t i = 0; i < x->n; i++) {
        read_query *q = &x->qs[i];
        if (!srv_rows_encode_table(&q->rows, q->result, il_result_nrows(q->result), err,
                                   sizeof err)) {
            srv_send_error(x->rq->conn, x->id, "internal", err);
            return false;
        }
        q->encoded = true;
        il_buf_puts(&q->head, "{\"name\":");
        il_json_str(&q->head, q->name, strlen(q->name));
        srv_rows_table_columns(&q->head, q->result);
    }
    return true;
}

/* ---- the reply ---- */

static void put_counts(il_buf *b, const read_query *q, bool with_row_count) {
    size_t nrows = il_result_nrows(q->result), total = il_result_total_rows(q->result);
    if (with_row_count) il_buf_printf(b, ",\"row_count\":%zu", nrows);
    il_buf_printf(b, ",\"total_count\":%zu,\"truncated\":%s}", total,
                  nrows < total ? "true" : "false");
}

static void open_snapshot(il_buf *b, read_ctx *x, const char *type, uint64_t revision) {
    const char *kg = il_session_graph(x->rq->conn->session);
    srv_json_open(b, type, x->id);
    il_buf_puts(b, ",\"knowledge_graph\":");
    il_json_str(b, kg, strlen(kg));
    il_buf_printf(b, ",\"revision\":%llu,\"results\":[", (unsigned long long)revision);
}

static void send_buf(srv_conn *c, il_buf *b) {
    srv_ws_send(c, b->data, b->len);
    il_buf_clear(b);
}

/* One `snapshot` frame; over 1 MiB, `snapshot_start` with every result's name, columns
 * and counts, then each result's rows in chunks numbered across results, then
 * `snapshot_end`. */
static void reply(read_ctx *x, uint64_t revision, uint64_t ms) {
    srv_conn *c = x->rq->conn;
    size_t bytes = 4096;
    for (size_t i = 0; i < x->n; i++) bytes += x->qs[i].head.len + x->qs[i].rows.json.len + 96;
    bool streamed = bytes > SRV_STREAM_THRESHOLD;
    il_buf b;
    il_buf_init(&b);
    open_snapshot(&b, x, streamed ? "snapshot_start" : "snapshot", revision);
    for (size_t i = 0; i < x->n; i++) {
        read_query *q = &x->qs[i];
        if (i) il_buf_putc(&b, ',');
        il_buf_put(&b, q->head.data, q->head.len);
        if (!streamed) {
            il_buf_puts(&b, ",\"rows\":");
            srv_rows_put(&b, &q->rows, 0, q->rows.n);
        }
        put_counts(&b, q, streamed);
    }
    il_buf_printf(&b, "],\"execution_time_ms\":%llu}", (unsigned long long)ms);
    send_buf(c, &b);
    if (streamed) {
        size_t chunk = 0;
        for (size_t i = 0; i < x->n; i++) {
            const srv_rows *rows = &x->qs[i].rows;
            for (size_t from = 0, to; from < rows->n; from = to) {
                to = srv_rows_chunk_end(rows, from);
                srv_json_open(&b, "snapshot_chunk", x->id);
                il_buf_printf(&b, ",\"result\":%zu,\"chunk_index\":%zu,\"rows\":", i, chunk++);
                srv_rows_put(&b, rows, from, to);
                il_buf_putc(&b, '}');
                send_buf(c, &b);
            }
        }
        srv_json_open(&b, "snapshot_end", x->id);
        il_buf_printf(&b, ",\"chunk_count\":%zu}", chunk);
        send_buf(c, &b);
    }
    il_buf_free(&b);
}

void srv_read_run(srv_req *rq) {
    uint64_t t0 = srv_now_ms();
    read_ctx x = {.rq = rq, .id = rq->has_id ? rq->id : NULL};
    if (!srv_exec_credential_ok(rq)) return;
    bool ok = unpack(&x) && may_read(&x);
    for (size_t i = 0; ok && i < x.n; i++) ok = check_query(&x, i);
    /* Read under the same hold of the engine lock as the evaluation (no commit between),
       or when the session was pinned. */
    uint64_t revision = rq->job.pinned
                            ? rq->pinned_revision
                            : srv_revision(rq->conn->srv, il_session_graph(rq->conn->session));
    if (ok && evaluate(&x) && encode(&x)) reply(&x, revision, srv_now_ms() - t0);
    for (size_t i = 0; i < x.n; i++) {
        read_query *q = &x.qs[i];
        if (q->result) il_result_free(q->result);
        if (q->encoded) srv_rows_free(&q->rows);
        il_buf_free(&q->head);
    }
    free(x.qs);
}
