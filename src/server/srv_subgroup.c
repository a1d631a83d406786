/* Subscription groups (srv_subgroup.h): the `subscribe` frame's checks, its members
 * joining their families, the group snapshot (one `snapshot` frame, or
 * snapshot_start/_chunk/_end over 1 MiB) and the group deltas of each publish (likewise
 * streamed over 1 MiB). A member whose view failed holds the whole group back: one
 * subscription_error, and every member's changes are kept, netted, until all views work
 * again, so each member keeps its last result and the next delta is relative to it
 * (protocol-later.md 1.11). */
#include "base/strcopy.h"
#include "server/srv_subgroup.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_authz.h"
#include "server/srv_deliver.h"
#include "server/srv_revision.h"
#include "server/srv_rows.h"
#include "server/srv_subs.h"

/* ---- the frame ---- */

typedef struct named_query {
    const char *name, *query; /* in the spec's block, NUL-terminated */
    size_t name_len, query_len;
} named_query;

struct srv_group_spec {
    const char *subscription;
    size_t subscription_len;
    uint32_t n;
    named_query *q;
};

static const char *string_field(json_t *o, const char *key, size_t *len) {
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) return NULL;
    *len = json_string_length(v);
    return json_string_value(v);
}

static char *copy(char *at, const char *s, size_t n) {
    memcpy(at, s, n);
    at[n] = 0;
    return at;
}

srv_group_spec *srv_group_parse(json_t *root, char *why, size_t len) {
    size_t slen;
    const char *sub = string_field(root, "subscription", &slen);
    json_t *qs = json_object_get(root, "queries");
    if (!sub) {
        snprintf(why, len, "Invalid message format: subscribe needs a string `subscription`");
        return NULL;
    }
    if (!json_is_array(qs)) {
        snprintf(why, len, "Invalid message format: subscribe needs an array `queries`");
        return NULL;
    }
    size_t n = json_array_size(qs);
    size_t bytes = sizeof(srv_group_spec) + n * sizeof(named_query) + slen + 1;
    for (size_t i = 0; i < n; i++) {
        json_t *item = json_array_get(qs, i);
        size_t nl, ql;
        if (!json_is_object(item) || !string_field(item, "name", &nl) ||
            !string_field(item, "query", &ql)) {
            snprintf(why, len,
                     "Invalid message format: each of `queries` needs a string `name` and a "
                     "string `query`");
            return NULL;
        }
        bytes += nl + ql + 2;
    }
    /* One block: the struct, the array, then the strings. */
    srv_group_spec *g = malloc(bytes);
    g->n = (uint32_t)n;
    g->q = (named_query *)(g + 1);
    char *at = (char *)(g->q + n);
    g->subscription = copy(at, sub, slen);
    g->subscription_len = slen;
    at += slen + 1;
    for (size_t i = 0; i < n; i++) {
        json_t *item = json_array_get(qs, i);
        named_query *q = &g->q[i];
        const char *s = string_field(item, "name", &q->name_len);
        q->name = copy(at, s, q->name_len);
        at += q->name_len + 1;
        s = string_field(item, "query", &q->query_len);
        q->query = copy(at, s, q->query_len);
        at += q->query_len + 1;
    }
    return g;
}

/* ---- groups ---- */

typedef struct gmember {
    il_sub *member; /* the engine's subscription */
    char *name;
    size_t name_len;
    uint32_t ncols;
} gmember;

typedef struct srv_group {
    srv_sub_owner owner; /* SRV_SUB_GROUP: what il_sub_ctx of its members points to */
    struct srv_group *next;
    srv_conn *conn;
    struct srv_group *touched_next; /* in the server's groups_touched */
    bool touched;
    char name[129];
    char kg[SRV_KG_NAME_MAX + 1];
    uint64_t generation, seq;
    bool errored; /* the failure was reported; nothing is sent until the views work */
    uint32_t n;
    gmember m[];
} srv_group;

static void group_free(srv_group *g) {
    for (uint32_t i = 0; i < g->n; i++) {
        gmember *gm = &g->m[i];
        il_sub_close(gm->member);
        free(gm->name);
    }
    free(g);
}

static bool same_name(const srv_group *g, const char *name, size_t len) {
    return strlen(g->name) == len && memcmp(g->name, name, len) == 0;
}

bool srv_group_exists(const srv_conn *c, const char *name, size_t len) {
    for (const srv_group *g = c->groups; g; g = g->next)
        if (same_name(g, name, len)) return true;
    return false;
}

/* Unlinks *pp and frees it. */
static void remove_at(srv_conn *c, srv_group **pp) {
    srv_group *g = *pp;
    *pp = g->next;
    c->nsubs -= g->n;
    group_free(g);
}

bool srv_group_unsubscribe(srv_conn *c, const char *name, size_t len) {
    for (srv_group **pp = &c->groups; *pp; pp = &(*pp)->next)
        if (same_name(*pp, name, len)) {
            remove_at(c, pp);
            return true;
        }
    return false;
}

void srv_groups_leave_graph(srv_conn *c, const char *kg) {
    for (srv_group **pp = &c->groups; *pp;) {
        if (strcmp((*pp)->kg, kg) == 0)
            pp = &(*pp)->next;
        else
            remove_at(c, pp);
    }
}

void srv_groups_drop_all(srv_conn *c) {
    while (c->groups) remove_at(c, &c->groups);
}

/* ---- rows as JSON, for one frame or chunks ---- */

typedef struct rowtext {
    il_buf text; /* the rows' JSON arrays, back to back */
    size_t *end; /* end[i]: where row i ends; it starts where row i-1 ends */
    size_t n, cap;
    size_t largest; /* the largest row's bytes */
} rowtext;

static void rowtext_add(rowtext *t, const val_t *rows, size_t n, uint32_t arity) {
    for (size_t i = 0; i < n; i++) {
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 64;
            t->end = realloc(t->end, t->cap * sizeof *t->end);
        }
        size_t from = t->text.len;
        srv_rows_put_row(&t->text, rows + i * arity, arity);
        if (t->text.len - from > t->largest) t->largest = t->text.len - from;
        t->end[t->n++] = t->text.len;
    }
}

static size_t row_start(const rowtext *t, size_t i) {
    return i ? t->end[i - 1] : 0;
}

/* Rows [from, to) as one JSON array. */
static void put_range(il_buf *b, const rowtext *t, size_t from, size_t to) {
    il_buf_putc(b, '[');
    for (size_t i = from; i < to; i++) {
        if (i > from) il_buf_putc(b, ',');
        il_buf_put(b, t->text.data + row_start(t, i), t->end[i] - row_start(t, i));
    }
    il_buf_putc(b, ']');
}

/* Where the chunk starting at row `from` ends: at most SRV_CHUNK_ROWS rows and about
 * SRV_STREAM_THRESHOLD bytes; a bigger row goes alone. */
static size_t chunk_end(const rowtext *t, size_t from, size_t to) {
    size_t j = from + 1;
    while (j < to && j - from < SRV_CHUNK_ROWS &&
           t->end[j] - row_start(t, from) < SRV_STREAM_THRESHOLD)
        j++;
    return j;
}

static void rowtext_free(rowtext *t) {
    il_buf_free(&t->text);
    free(t->end);
}

static void send_buf(srv_conn *c, il_buf *b) {
    srv_ws_send(c, b->data, b->len);
    il_buf_clear(b);
}

/* ---- subscribing ---- */

/* What the checks found wrong: the error's code and text. */
typedef struct refusal {
    const char *code;
    char msg[512];
} refusal;

static bool refuse(refusal *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool refuse(refusal *r, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->code = code;
    return false;
}

#define QNAME(q) (int)((q)->name_len > 128 ? 128 : (q)->name_len), (q)->name

/* What needs no query parsed: read access, the names, the sizes, the connection's room. */
static bool check_request(srv_conn *c, const srv_group_spec *g, refusal *r) {
    srv_server *s = c->srv;
    pthread_mutex_lock(&s->users_lock);
    const srv_user *me = srv_users_find(&s->users, c->user);
    bool allowed = me && srv_authz_session(&s->users, me, il_session_graph(c->session));
    pthread_mutex_unlock(&s->users_lock);
    if (!allowed) return refuse(r, "access_denied", "Access denied");
    if (!srv_subs_name_ok(g->subscription, g->subscription_len))
        return refuse(r, "validation",
                      "Invalid subscription name: use 1 to 128 of A-Z a-z 0-9 _ . : -");
    if (g->n == 0) return refuse(r, "validation", "A subscription group needs at least one query");
    size_t bytes = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        const named_query *q = &g->q[i];
        bytes += q->query_len;
        if (q->name_len == 0)
            return refuse(r, "validation", "Query %u of the group has an empty name", i + 1);
        for (uint32_t k = 0; k < i; k++)
            if (g->q[k].name_len == q->name_len && memcmp(g->q[k].name, q->name, q->name_len) == 0)
                return refuse(r, "validation", "The request names two queries '%.*s'", QNAME(q));
    }
    int64_t max = s->cfg->max_query_size_bytes;
    if (max > 0 && bytes > (uint64_t)max)
        return refuse(r, "validation", "Queries too large: %zu bytes (max %lld)", bytes,
                      (long long)max);
    if (srv_subs_name_taken(c, g->subscription, g->subscription_len))
        return refuse(r, "conflict", "Subscription '%s' already exists", g->subscription);
    if (!srv_subs_room(c, g->n, r->msg, sizeof r->msg)) {
        r->code = "validation";
        return false;
    }
    return true;
}

/* The member's query as one statement (the script reader's text, as `.subscribe` sees
 * it), malloc'ed: a single `?` query without limit/offset or sort annotations. */
static char *check_query(const named_query *q, refusal *r) {
    char *why = NULL;
    char *text = il_standing_query(q->query, q->query_len, &why);
    if (!text) refuse(r, "validation", "Query '%.*s' %s", QNAME(q), why);
    free(why);
    return text;
}

/* Joins every member to its family; NULL (nothing joined) when a query is refused. Every
 * query is checked before any view opens. */
static srv_group *join_all(srv_conn *c, const srv_group_spec *g, refusal *r) {
    char **texts = calloc(g->n, sizeof *texts);
    bool ok = true;
    for (uint32_t i = 0; i < g->n && ok; i++) ok = (texts[i] = check_query(&g->q[i], r)) != NULL;
    srv_group *grp = calloc(1, sizeof *grp + g->n * sizeof(gmember));
    grp->owner = SRV_SUB_GROUP;
    grp->n = g->n;
    il_str_copy(grp->name, sizeof grp->name, g->subscription);
    il_str_copy(grp->kg, sizeof grp->kg, il_session_graph(c->session));
    grp->conn = c;
    /* The new families' views are computed on one pin of the graph with the engine lock
       let go; every member then joins at one revision (srv_subs.c). */
    il_sub **subs = calloc(g->n, sizeof *subs);
    size_t *lens = calloc(g->n, sizeof *lens);
    for (uint32_t i = 0; i < g->n && ok; i++) lens[i] = strlen(texts[i]);
    il_serializer ser;
    bool beside = srv_pool_serializer(&c->srv->pool, &ser);
    size_t failed = 0;
    char *err = NULL;
    if (ok && !il_subscribe_all(c->session, g->n, (const char *const *)texts, lens, grp,
                                beside ? &ser : NULL, subs, &failed, &err)) {
        ok = false;
        refuse(r, "validation", "Query '%.*s': Cannot subscribe to this query: %s",
               QNAME(&g->q[failed]), err ? err : "unsupported query");
    }
    free(err);
    free(lens);
    for (uint32_t i = 0; i < g->n && ok; i++) {
        const named_query *q = &g->q[i];
        gmember *gm = &grp->m[i];
        gm->member = subs[i];
        gm->name = malloc(q->name_len + 1);
        copy(gm->name, q->name, q->name_len);
        gm->name_len = q->name_len;
        gm->ncols = il_sub_arity(gm->member);
    }
    free(subs);
    for (uint32_t i = 0; i < g->n; i++) free(texts[i]);
    free(texts);
    if (!ok) {
        group_free(grp);
        return NULL;
    }
    return grp;
}

/* Every member's current rows, rendered; first[i] is member i's first row (first[n] the
 * end). False when a member is over max_result_rows or has a row no frame can carry. */
static bool snapshot_rows(srv_conn *c, const srv_group *grp, rowtext *t, size_t *first,
                          refusal *r) {
    int64_t cap = c->srv->cfg->max_result_rows;
    for (uint32_t i = 0; i < grp->n; i++) {
        const gmember *gm = &grp->m[i];
        il_value *rows = NULL;
        size_t n = il_sub_rows(gm->member, &rows);
        first[i] = t->n;
        if (cap > 0 && n > (uint64_t)cap) {
            free(rows);
            /* A group snapshot is never truncated: every member is whole or none is sent. */
            return refuse(r, "validation",
                          "Query '%s' has %zu rows, over max_result_rows (%lld); a "
                          "subscription is never truncated",
                          gm->name, n, (long long)cap);
        }
        rowtext_add(t, rows, n, gm->ncols);
        free(rows);
        if (t->largest > SRV_MAX_MESSAGE - 4096)
            return refuse(r, "internal", "Result too large (%zu bytes, max %u)", t->largest,
                          SRV_MAX_MESSAGE);
    }
    first[grp->n] = t->n;
    return true;
}

/* The snapshot frame, or with `streamed` the snapshot_start frame (row counts instead of
 * rows). */
static void put_snapshot(il_buf *b, const char *id, const srv_group *grp, const rowtext *t,
                         const size_t *first, uint64_t revision, uint64_t ms, bool streamed) {
    srv_json_open(b, streamed ? "snapshot_start" : "snapshot", id);
    il_buf_puts(b, ",\"knowledge_graph\":");
    il_json_str(b, grp->kg, strlen(grp->kg));
    il_buf_printf(b, ",\"revision\":%llu,\"results\":[", (unsigned long long)revision);
    for (uint32_t i = 0; i < grp->n; i++) {
        const gmember *gm = &grp->m[i];
        size_t n = first[i + 1] - first[i];
        il_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        il_json_str(b, gm->name, gm->name_len);
        il_buf_puts(b, ",\"columns\":");
        srv_subs_put_columns(b, gm->member);
        if (streamed) {
            il_buf_printf(b, ",\"row_count\":%zu", n);
        } else {
            il_buf_puts(b, ",\"rows\":");
            put_range(b, t, first[i], first[i + 1]);
        }
        il_buf_printf(b, ",\"total_count\":%zu,\"truncated\":false}", n);
    }
    il_buf_printf(b, "],\"execution_time_ms\":%llu", (unsigned long long)ms);
    il_buf_puts(b, ",\"subscribed\":{\"subscription\":");
    il_json_str(b, grp->name, strlen(grp->name));
    il_buf_printf(b, ",\"generation\":%llu,\"revision\":%llu}}",
                  (unsigned long long)grp->generation, (unsigned long long)revision);
}

/* The snapshot reply: one frame, or snapshot_start, chunks and snapshot_end over 1 MiB. */
static void send_snapshot(srv_conn *c, const char *id, const srv_group *grp, const rowtext *t,
                          const size_t *first, uint64_t revision, uint64_t ms) {
    il_buf b;
    il_buf_init(&b);
    put_snapshot(&b, id, grp, t, first, revision, ms, false);
    if (b.len <= SRV_STREAM_THRESHOLD) {
        send_buf(c, &b);
        il_buf_free(&b);
        return;
    }
    il_buf_clear(&b);
    put_snapshot(&b, id, grp, t, first, revision, ms, true);
    send_buf(c, &b);
    size_t chunk = 0;
    for (uint32_t i = 0; i < grp->n; i++)
        for (size_t at = first[i], to; at < first[i + 1]; at = to) {
            to = chunk_end(t, at, first[i + 1]);
            srv_json_open(&b, "snapshot_chunk", id);
            il_buf_printf(&b, ",\"result\":%u,\"chunk_index\":%zu,\"rows\":", i, chunk++);
            put_range(&b, t, at, to);
            il_buf_putc(&b, '}');
            send_buf(c, &b);
        }
    srv_json_open(&b, "snapshot_end", id);
    il_buf_printf(&b, ",\"chunk_count\":%zu}", chunk);
    send_buf(c, &b);
    il_buf_free(&b);
}

void srv_group_subscribe(srv_req *rq) {
    srv_conn *c = rq->conn;
    const char *id = rq->has_id ? rq->id : NULL;
    uint64_t t0 = srv_now_ms();
    /* From here the group registers or fails as a whole: a cancel is too late. A request
     * cancelled before is answered `cancelled` by srv_exec_run. */
    int expected = SRV_COMMIT_NOT_YET;
    if (!__atomic_compare_exchange_n(&rq->commit, &expected, SRV_COMMIT_BEGUN, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return;
    refusal r = {.code = "validation"};
    srv_group *grp = NULL;
    rowtext t;
    memset(&t, 0, sizeof t);
    size_t *first = NULL;
    if (check_request(c, rq->group, &r) && (grp = join_all(c, rq->group, &r))) {
        first = malloc((grp->n + 1) * sizeof *first);
        if (!snapshot_rows(c, grp, &t, first, &r)) {
            group_free(grp);
            grp = NULL;
        }
    }
    if (grp) {
        grp->generation = ++c->sub_generation;
        send_snapshot(c, id, grp, &t, first, srv_revision(c->srv, grp->kg), srv_now_ms() - t0);
        grp->next = c->groups;
        c->groups = grp;
        c->nsubs += grp->n;
        srv_subs_watch(c);
    } else {
        srv_send_error(c, id, r.code, r.msg);
    }
    rowtext_free(&t);
    free(first);
}

/* ---- publishing ---- */

static void put_head(il_buf *b, const char *type, const srv_group *grp) {
    il_buf_printf(b, "{\"type\":\"%s\",\"subscription\":", type);
    il_json_str(b, grp->name, strlen(grp->name));
    il_buf_printf(b, ",\"generation\":%llu", (unsigned long long)grp->generation);
}

/* The group delta frame, or with `streamed` the _start frame (row counts instead of
 * rows). first[2i] and first[2i+1] are member i's first inserted and retracted rows. */
static void put_delta(il_buf *b, const srv_group *grp, const rowtext *t, const size_t *first,
                      uint64_t revision, bool streamed) {
    put_head(b, streamed ? "subscription_group_delta_start" : "subscription_group_delta", grp);
    il_buf_puts(b, ",\"knowledge_graph\":");
    il_json_str(b, grp->kg, strlen(grp->kg));
    il_buf_printf(b, ",\"seq\":%llu,\"revision\":%llu,\"members\":[", (unsigned long long)grp->seq,
                  (unsigned long long)revision);
    for (uint32_t i = 0; i < grp->n; i++) {
        const gmember *gm = &grp->m[i];
        size_t a = first[2 * i], r = first[2 * i + 1], e = first[2 * i + 2];
        il_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        il_json_str(b, gm->name, gm->name_len);
        il_buf_printf(b, ",\"unchanged\":%s,\"columns\":", a == e ? "true" : "false");
        srv_subs_put_columns(b, gm->member);
        if (streamed) {
            il_buf_printf(b, ",\"inserted_count\":%zu,\"retracted_count\":%zu}", r - a, e - r);
        } else {
            il_buf_puts(b, ",\"inserted\":");
            put_range(b, t, a, r);
            il_buf_puts(b, ",\"retracted\":");
            put_range(b, t, r, e);
            il_buf_putc(b, '}');
        }
    }
    il_buf_puts(b, "]}");
}

/* One group delta listing every member in order (unchanged ones with empty arrays), or
 * its streamed form over 1 MiB. */
static void send_delta(srv_conn *c, srv_group *grp, uint64_t revision) {
    rowtext t;
    memset(&t, 0, sizeof t);
    size_t *first = malloc((2 * grp->n + 1) * sizeof *first);
    for (uint32_t i = 0; i < grp->n; i++) {
        il_sub_delta d = il_sub_changes(grp->m[i].member);
        first[2 * i] = t.n;
        rowtext_add(&t, d.added, d.nadded, grp->m[i].ncols);
        first[2 * i + 1] = t.n;
        rowtext_add(&t, d.removed, d.nremoved, grp->m[i].ncols);
    }
    first[2 * grp->n] = t.n;
    grp->seq++;
    il_buf b;
    il_buf_init(&b);
    put_delta(&b, grp, &t, first, revision, false);
    bool streamed = b.len > SRV_STREAM_THRESHOLD;
    if (streamed) {
        il_buf_clear(&b);
        put_delta(&b, grp, &t, first, revision, true);
    }
    send_buf(c, &b);
    /* A chunk carries rows of one member: its inserted rows, then its retracted ones. */
    size_t chunk = 0;
    for (uint32_t i = 0; streamed && i < 2 * grp->n; i++)
        for (size_t at = first[i], to; at < first[i + 1]; at = to) {
            to = chunk_end(&t, at, first[i + 1]);
            put_head(&b, "subscription_group_delta_chunk", grp);
            il_buf_printf(&b, ",\"seq\":%llu,\"chunk_index\":%zu,\"member\":%u,\"inserted\":",
                          (unsigned long long)grp->seq, chunk++, i / 2);
            if (i % 2 == 0) {
                put_range(&b, &t, at, to);
                il_buf_puts(&b, ",\"retracted\":[]}");
            } else {
                il_buf_puts(&b, "[],\"retracted\":");
                put_range(&b, &t, at, to);
                il_buf_putc(&b, '}');
            }
            send_buf(c, &b);
        }
    if (streamed) {
        put_head(&b, "subscription_group_delta_end", grp);
        il_buf_printf(&b, ",\"seq\":%llu,\"chunk_count\":%zu}", (unsigned long long)grp->seq,
                      chunk);
        send_buf(c, &b);
    }
    il_buf_free(&b);
    rowtext_free(&t);
    free(first);
    srv_deliver_with_push(srv_tl_capture, c);
}

static void send_failure(srv_conn *c, const srv_group *grp, const gmember *gm, const char *why) {
    il_buf b;
    il_buf_init(&b);
    put_head(&b, "subscription_error", grp);
    il_buf_puts(&b, ",\"message\":");
    char msg[1400];
    snprintf(msg, sizeof msg, "Query '%s': %s", gm->name, why);
    il_json_str(&b, msg, strlen(msg));
    il_buf_putc(&b, '}');
    send_buf(c, &b);
    il_buf_free(&b);
}

/* The group fell too far behind a connection that does not read: it ends with
 * subscription_reset, like a single subscription (srv_subs.c). */
static void reset_group(srv_conn *c, srv_group *grp, int64_t cap) {
    il_buf b;
    il_buf_init(&b);
    put_head(&b, "subscription_reset", grp);
    il_buf_puts(&b, ",\"message\":");
    char msg[300];
    snprintf(msg, sizeof msg,
             "Subscription '%s' fell more than %lld changed rows behind while its connection "
             "was not reading. The subscription was removed; subscribe again.",
             grp->name, (long long)cap);
    il_json_str(&b, msg, strlen(msg));
    il_buf_putc(&b, '}');
    send_buf(c, &b);
    il_buf_free(&b);
    for (srv_group **pp = &c->groups; *pp; pp = &(*pp)->next)
        if (*pp == grp) {
            remove_at(c, pp);
            return;
        }
}

static void publish(srv_conn *c, srv_group *grp) {
    const gmember *failed = NULL;
    for (uint32_t i = 0; i < grp->n && !failed; i++)
        if (il_sub_error(grp->m[i].member)) failed = &grp->m[i];
    if (failed) {
        for (uint32_t i = 0; i < grp->n; i++) il_sub_hold(grp->m[i].member);
        if (!grp->errored) send_failure(c, grp, failed, il_sub_error(failed->member));
        grp->errored = true;
        return;
    }
    grp->errored = false;
    if (srv_subs_must_hold(c)) {
        /* Not reading: held, netted, until srv_subs_release; reset past max_result_rows. */
        size_t held = 0;
        for (uint32_t i = 0; i < grp->n; i++) {
            il_sub_hold(grp->m[i].member);
            held += il_sub_held(grp->m[i].member);
        }
        int64_t cap = c->srv->cfg->max_result_rows;
        if (cap > 0 && held > (uint64_t)cap) reset_group(c, grp, cap);
        return;
    }
    bool changed = false;
    for (uint32_t i = 0; i < grp->n; i++) {
        gmember *gm = &grp->m[i];
        if (il_sub_held(gm->member)) il_sub_hold(gm->member);
        il_sub_delta d = il_sub_changes(gm->member);
        changed |= d.nadded || d.nremoved;
    }
    if (changed) send_delta(c, grp, srv_revision(c->srv, grp->kg));
    for (uint32_t i = 0; i < grp->n; i++) {
        il_sub_clear(grp->m[i].member);
    }
}

void srv_groups_publish(srv_conn *c) {
    for (srv_group *g = c->groups, *next; g; g = next) {
        next = g->next; /* publish may end the group */
        publish(c, g);
    }
}

void srv_group_touched(srv_server *s, void *group) {
    srv_group *g = group;
    if (g->touched) return;
    g->touched = true;
    g->touched_next = s->groups_touched;
    s->groups_touched = g;
}

void srv_groups_publish_touched(srv_server *s) {
    srv_group *g = s->groups_touched;
    s->groups_touched = NULL;
    for (srv_group *next; g; g = next) {
        next = g->touched_next;
        g->touched = false;
        g->touched_next = NULL;
        publish(g->conn, g);
    }
}
