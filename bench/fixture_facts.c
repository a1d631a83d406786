/* The writes of the durable-write fixtures; see fixture_facts.h. */
#include "fixture_facts.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest text of one fact, "(i, i), " with i of 20 characters, and the frame around
 * the program. */
enum { FACT_TEXT_MAX = 48, FRAME_OVERHEAD = 128 };

int fx_writer_open(fx_fact_writer *w, const fx_target *t, const char *name, long batch) {
    *w = (fx_fact_writer){.batch = batch, .status = FX_OK};
    snprintf(w->name, sizeof w->name, "%s", name);
    w->frame_cap = (size_t)batch * FACT_TEXT_MAX + FRAME_OVERHEAD;
    w->frame = malloc(w->frame_cap);
    if (!w->frame) {
        snprintf(w->why, sizeof w->why, "out of memory");
        return w->status = FX_FAILED;
    }
    w->ws = fx_open(t, "perf", w->why, sizeof w->why);
    return w->status = w->ws ? FX_OK : FX_FAILED;
}

/* The execute frame of facts first.. in w->frame; returns its length. The program holds
 * only digits, signs, brackets, commas and spaces: nothing JSON must escape. */
static size_t format_frame(fx_fact_writer *w, int64_t first) {
    char *p = w->frame, *end = w->frame + w->frame_cap;
    p += snprintf(p, (size_t)(end - p), "{\"type\":\"execute\",\"id\":\"%s.%ld\",\"program\":\"",
                  w->name, w->requests);
    if (w->batch == 1)
        p += snprintf(p, (size_t)(end - p), "+event(%" PRId64 ", %" PRId64 ")", first, first);
    else {
        p += snprintf(p, (size_t)(end - p), "+event[");
        for (long k = 0; k < w->batch; k++)
            p += snprintf(p, (size_t)(end - p), "%s(%" PRId64 ", %" PRId64 ")", k ? ", " : "",
                          first + k, first + k);
        p += snprintf(p, (size_t)(end - p), "]");
    }
    p += snprintf(p, (size_t)(end - p), "\"}");
    return (size_t)(p - w->frame);
}

__attribute__((format(printf, 3, 4))) static int writer_fail(fx_fact_writer *w, int status,
                                                             const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
    return w->status = status;
}

/* The revision r of write id's reply: later than any this connection saw, and kept. */
static int note_revision(fx_fact_writer *w, const char *id, int64_t r) {
    if (r <= w->last_revision)
        return writer_fail(w, FX_INVALID,
                           "write %s: revision %" PRId64 " after %" PRId64 " on this connection",
                           id, r, w->last_revision);
    w->last_revision = r;
    if (w->nrevisions == w->revisions_cap) {
        size_t cap = w->revisions_cap ? 2 * w->revisions_cap : 1024;
        int64_t *grown = realloc(w->revisions, cap * sizeof *grown);
        if (!grown) return writer_fail(w, FX_FAILED, "out of memory");
        w->revisions = grown;
        w->revisions_cap = cap;
    }
    w->revisions[w->nrevisions++] = r;
    return FX_OK;
}

/* The reply of a write must say it inserted every fact sent (none was there before) and
 * carry the revision of its commit, later than any this connection saw. */
static int check_reply(fx_fact_writer *w, const char *id, const json_t *res) {
    char expected[96];
    snprintf(expected, sizeof expected, "Inserted %ld fact(s) into 'event'.", w->batch);
    const json_t *rows = json_object_get(res, "rows");
    const char *message = json_string_value(json_array_get(json_array_get(rows, 0), 0));
    if (json_array_size(rows) != 1 || json_array_size(json_array_get(rows, 0)) != 1 || !message ||
        strcmp(message, expected) != 0) {
        char *text = json_dumps(rows, JSON_COMPACT);
        writer_fail(w, FX_INVALID, "write %s: rows %.300s, expected [[\"%s\"]]", id,
                    text ? text : "?", expected);
        free(text);
        return w->status;
    }
    const json_t *revision = json_object_get(res, "revision");
    if (!json_is_integer(revision))
        return writer_fail(w, FX_INVALID, "write %s: no revision on its result", id);
    return note_revision(w, id, (int64_t)json_integer_value(revision));
}

/* Reads 1 to 18 digits at *p (before end) into *v. */
static bool read_digits(const char **p, const char *end, int64_t *v) {
    const char *q = *p;
    int64_t n = 0;
    while (q < end && q - *p < 18 && *q >= '0' && *q <= '9') n = n * 10 + (*q++ - '0');
    if (q == *p || (q < end && *q >= '0' && *q <= '9')) return false;
    *p = q;
    *v = n;
    return true;
}

/* A write's reply checked from its text, without building its JSON: true only when it is,
 * byte for byte, the result check_reply accepts as the server writes it (members in its
 * order, no errors, not truncated, the one message row), with any execution time and the
 * revision in *revision. Anything else, however valid, is left to check_reply: the
 * client's CPU per reply is part of what the four-writer phase measures on a machine
 * shared with the server (BENCHMARKS.md, "Both targets with busy polling"), and
 * building a JSON tree for every reply was a fifth of it. */
static bool quick_reply(const fx_fact_writer *w, const char *id, const char *msg, size_t len,
                        int64_t *revision) {
    static const char MIDDLE[] = ",\"errors\":[],\"row_provenance\":[\"unknown\"],"
                                 "\"result_kind\":\"message\",\"revision\":";
    char head[256];
    int n = snprintf(head, sizeof head,
                     "{\"type\":\"result\",\"id\":\"%s\",\"columns\":[\"message\"],\"rows\":"
                     "[[\"Inserted %ld fact(s) into 'event'.\"]],\"row_count\":1,\"total_count\":1,"
                     "\"truncated\":false,\"execution_time_ms\":",
                     id, w->batch);
    const char *p = msg, *end = msg + len;
    int64_t ms;
    if (n <= 0 || (size_t)n >= sizeof head || len < (size_t)n || memcmp(p, head, (size_t)n) != 0)
        return false;
    p += n;
    if (!read_digits(&p, end, &ms) || (size_t)(end - p) < sizeof MIDDLE - 1 ||
        memcmp(p, MIDDLE, sizeof MIDDLE - 1) != 0)
        return false;
    p += sizeof MIDDLE - 1;
    return read_digits(&p, end, revision) && end - p == 1 && *p == '}';
}

int fx_writer_write(fx_fact_writer *w, int64_t first, uint64_t *sent_ns, uint64_t *acked_ns) {
    if (w->status != FX_OK) return w->status;
    w->requests++;
    char id[48];
    snprintf(id, sizeof id, "%s.%ld", w->name, w->requests);
    size_t len = format_frame(w, first);
    uint64_t t0 = fx_now_ns(), t1 = 0;
    if (wsc_send_text(w->ws, w->frame, len) != 0)
        return writer_fail(w, FX_FAILED, "sending write %s: %s", id, wsc_error(w->ws));
    const char *msg;
    size_t n;
    int64_t revision;
    w->status = fx_await_frame(w->ws, id, &msg, &n, &t1, w->why, sizeof w->why);
    if (w->status == FX_OK && quick_reply(w, id, msg, n, &revision)) {
        note_revision(w, id, revision);
    } else if (w->status == FX_OK) {
        json_t *res;
        w->status = fx_result_of_text(id, msg, n, &res, w->why, sizeof w->why);
        if (w->status == FX_OK) check_reply(w, id, res);
        json_decref(res);
    }
    if (sent_ns) *sent_ns = t0;
    if (acked_ns) *acked_ns = t1;
    return w->status;
}

bool fx_writer_take_revisions(fx_fact_writer *w, int64_t **all, size_t *n, size_t *cap) {
    if (*n + w->nrevisions > *cap) {
        size_t grown_cap = *cap ? *cap : 1024;
        while (grown_cap < *n + w->nrevisions) grown_cap *= 2;
        int64_t *grown = realloc(*all, grown_cap * sizeof *grown);
        if (!grown) return false;
        *all = grown;
        *cap = grown_cap;
    }
    memcpy(*all + *n, w->revisions, w->nrevisions * sizeof *w->revisions);
    *n += w->nrevisions;
    w->nrevisions = 0;
    return true;
}

void fx_writer_close(fx_fact_writer *w) {
    wsc_close(w->ws);
    free(w->frame);
    free(w->revisions);
    w->ws = NULL, w->frame = NULL, w->revisions = NULL;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int fx_check_distinct_revisions(int64_t *revisions, size_t n, char *why, size_t why_len) {
    qsort(revisions, n, sizeof *revisions, cmp_i64);
    for (size_t i = 1; i < n; i++)
        if (revisions[i] == revisions[i - 1]) {
            snprintf(why, why_len, "two writes were acknowledged with revision %" PRId64,
                     revisions[i]);
            return FX_INVALID;
        }
    return FX_OK;
}

int fx_check_fact_count(fx_fact_writer *w, int64_t expected) {
    if (w->status != FX_OK) return w->status;
    json_t *res;
    w->status =
        fx_execute(w->ws, "count", "durable_count(count<X>) <- event(X, X)\n?durable_count(N)",
                   &res, w->why, sizeof w->why);
    if (w->status != FX_OK) return w->status;
    const json_t *n = json_array_get(json_array_get(json_object_get(res, "rows"), 0), 0);
    bool ok = json_array_size(json_object_get(res, "rows")) == 1 && json_is_integer(n) &&
              (int64_t)json_integer_value(n) == expected;
    char *text = ok ? NULL : json_dumps(json_object_get(res, "rows"), JSON_COMPACT);
    if (!ok)
        writer_fail(w, FX_INVALID, "the graph holds %.100s facts event(X, X), not %" PRId64,
                    text ? text : "?", expected);
    free(text);
    json_decref(res);
    return w->status;
}
