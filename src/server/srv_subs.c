/* Standing queries: `.subscribe` subscribes the connection to its query (il_subscribe,
 * whose family shares one maintained view) and answers with the snapshot and
 * `subscribed{subscription, generation, revision}`; after each request every subscription whose
 * rows changed gets one `subscription_delta` (docs/server.md, "Standing queries"), carrying the
 * graph's revision (srv_revision.h). */
#include "base/strcopy.h"
#include "server/srv_subs.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_authz.h"
#include "server/srv_deliver.h"
#include "server/srv_notify.h"
#include "server/srv_pipeline.h"
#include "server/srv_revision.h"
#include "server/srv_rows.h"
#include "server/srv_subgroup.h"

#define NAME_MAX_LEN 128

typedef struct srv_sub {
    srv_sub_owner owner; /* SRV_SUB_SINGLE: what il_sub_ctx of `member` points to */
    struct srv_sub *next;
    srv_conn *conn;
    il_sub *member; /* the engine's subscription */
    char name[NAME_MAX_LEN + 1];
    char kg[SRV_KG_NAME_MAX + 1];
    uint64_t generation, seq;
    bool errored; /* the view's error was reported */
    bool denied;  /* its user may not read its graph (the error was sent) */
} srv_sub;

static void sub_free(srv_sub *sb) {
    il_sub_close(sb->member);
    free(sb);
}

/* The connections with subscriptions, which publish visits. */
static void set_subscriber(srv_conn *c, bool on) {
    srv_server *s = c->srv;
    bool is = c->prev_subscriber || s->subscribers == c;
    if (on == is) return;
    if (on) {
        c->next_subscriber = s->subscribers;
        c->prev_subscriber = NULL;
        if (s->subscribers) s->subscribers->prev_subscriber = c;
        s->subscribers = c;
        return;
    }
    if (c->prev_subscriber)
        c->prev_subscriber->next_subscriber = c->next_subscriber;
    else
        s->subscribers = c->next_subscriber;
    if (c->next_subscriber) c->next_subscriber->prev_subscriber = c->prev_subscriber;
    c->next_subscriber = c->prev_subscriber = NULL;
}

void srv_subs_drop_all(srv_conn *c) {
    srv_groups_drop_all(c);
    while (c->subs) {
        srv_sub *sb = c->subs;
        c->subs = sb->next;
        sub_free(sb);
    }
    c->nsubs = 0;
    set_subscriber(c, false);
}

/* ---- parsing ---- */

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && isspace((unsigned char)*p)) p++;
    return p;
}

/* Matches the command word at p: returns the text after it, or NULL. */
static const char *word(const char *p, const char *end, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(end - p) < n || memcmp(p, w, n) != 0) return NULL;
    p += n;
    return p == end || isspace((unsigned char)*p) ? p : NULL;
}

bool srv_subs_is_command(const char *text, size_t len) {
    const char *end = text + len, *p = skip_ws(text, end);
    return word(p, end, ".subscribe") || word(p, end, ".unsubscribe");
}

bool srv_subs_name_ok(const char *p, size_t n) {
    if (n == 0 || n > NAME_MAX_LEN) return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)p[i]) && !strchr("_.:-", p[i])) return false;
    return true;
}

/* ---- frames ---- */

/* Rows of `arity` values back to back, for srv_rows_encode. */
typedef struct val_rows {
    const val_t *rows;
    uint32_t arity;
} val_rows;

static void val_row(il_buf *b, const void *src, size_t i) {
    const val_rows *v = src;
    srv_rows_put_row(b, v->rows + i * v->arity, v->arity);
}

void srv_subs_put_columns(il_buf *b, const il_sub *sub) {
    il_buf_putc(b, '[');
    for (uint32_t i = 0, n = il_sub_arity(sub); i < n; i++) {
        if (i) il_buf_putc(b, ',');
        const char *col = il_sub_column(sub, i);
        il_json_str(b, col, strlen(col));
    }
    il_buf_putc(b, ']');
}

static void put_columns(il_buf *b, const srv_sub *sb) {
    il_buf_puts(b, ",\"columns\":");
    srv_subs_put_columns(b, sb->member);
}

static void send_message(srv_conn *c, const char *id, const char *line) {
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "result", id);
    il_buf_puts(&b, ",\"columns\":[\"message\"],\"rows\":[[");
    il_json_str(&b, line, strlen(line));
    il_buf_puts(&b, "]],\"row_count\":1,\"total_count\":1,\"truncated\":false,"
                    "\"execution_time_ms\":0,\"errors\":[],\"result_kind\":\"message\"}");
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}

static void subscribe(srv_conn *c, const char *id, const char *name, size_t nlen, const char *q,
                      const char *end, uint64_t t0) {
    char msg[512];
    if (!srv_subs_name_ok(name, nlen)) {
        srv_send_error(c, id, "validation",
                       "Invalid subscription name: use 1 to 128 of A-Z a-z 0-9 _ . : -");
        return;
    }
    if (srv_subs_name_taken(c, name, nlen)) {
        snprintf(msg, sizeof msg, "Subscription '%.*s' already exists", (int)nlen, name);
        srv_send_error(c, id, "conflict", msg);
        return;
    }
    if (!srv_subs_room(c, 1, msg, sizeof msg)) {
        srv_send_error(c, id, "validation", msg);
        return;
    }
    if (q == end || *q != '?') {
        srv_send_error(c, id, "validation", "Usage: .subscribe <name> ?<query>");
        return;
    }
    char *err = NULL;
    srv_sub *sb = calloc(1, sizeof *sb);
    sb->owner = SRV_SUB_SINGLE;
    sb->conn = c;
    /* A new family's view is computed on a pin of the graph, the engine lock let go
       meanwhile: a first subscription of a costly query holds up no other connection. */
    il_serializer ser;
    bool beside = srv_pool_serializer(&c->srv->pool, &ser);
    sb->member =
        il_subscribe_beside(c->session, q, (size_t)(end - q), sb, beside ? &ser : NULL, &err);
    if (!sb->member) {
        snprintf(msg, sizeof msg, "Cannot subscribe to this query: %s",
                 err ? err : "unsupported query");
        srv_send_error(c, id, "validation", msg);
        free(err);
        free(sb);
        return;
    }
    memcpy(sb->name, name, nlen);
    il_str_copy(sb->kg, sizeof sb->kg, il_session_graph(c->session));
    uint32_t arity = il_sub_arity(sb->member);
    il_value *rows = NULL;
    size_t n = il_sub_rows(sb->member, &rows);
    int64_t cap = c->srv->cfg->max_result_rows;
    if (cap > 0 && n > (uint64_t)cap) {
        snprintf(msg, sizeof msg, "Subscription result has %zu rows, over max_result_rows (%lld)",
                 n, (long long)cap);
        srv_send_error(c, id, "validation", msg);
        free(rows);
        sub_free(sb);
        return;
    }
    /* Over 1 MiB the snapshot is streamed (result_start with `subscribed`, chunks,
     * result_end); a row over the message limit refuses the subscription. */
    srv_rows enc;
    val_rows src = {rows, arity};
    if (!srv_rows_encode(&enc, val_row, &src, n, msg, sizeof msg)) {
        free(rows);
        srv_send_error(c, id, "internal", msg);
        sub_free(sb);
        return;
    }
    free(rows);
    sb->generation = ++c->sub_generation;
    bool streamed = enc.json.len + n * 12 + 4096 > SRV_STREAM_THRESHOLD;
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, streamed ? "result_start" : "result", id);
    put_columns(&b, sb);
    if (!streamed) {
        il_buf_puts(&b, ",\"rows\":");
        srv_rows_put(&b, &enc, 0, n);
        il_buf_printf(&b, ",\"row_count\":%zu", n);
    }
    il_buf_printf(&b,
                  ",\"total_count\":%zu,\"truncated\":false,"
                  "\"execution_time_ms\":%llu,\"errors\":[],\"result_kind\":\"table\","
                  "\"statement_class\":\"query\",\"subscribed\":{\"subscription\":",
                  n, (unsigned long long)(srv_now_ms() - t0));
    il_json_str(&b, sb->name, strlen(sb->name));
    il_buf_printf(&b, ",\"generation\":%llu,\"revision\":%llu}}",
                  (unsigned long long)sb->generation,
                  (unsigned long long)srv_revision(c->srv, sb->kg));
    srv_ws_send(c, b.data, b.len);
    if (streamed) {
        size_t chunk = 0;
        for (size_t i = 0, j; i < n; i = j) {
            j = srv_rows_chunk_end(&enc, i);
            il_buf_clear(&b);
            srv_json_open(&b, "result_chunk", id);
            il_buf_puts(&b, ",\"rows\":");
            srv_rows_put(&b, &enc, i, j);
            il_buf_printf(&b, ",\"chunk_index\":%zu}", chunk++);
            srv_ws_send(c, b.data, b.len);
        }
        il_buf_clear(&b);
        srv_json_open(&b, "result_end", id);
        il_buf_printf(&b, ",\"row_count\":%zu,\"chunk_count\":%zu}", n, chunk);
        srv_ws_send(c, b.data, b.len);
    }
    il_buf_free(&b);
    srv_rows_free(&enc);
    sb->next = c->subs;
    c->subs = sb;
    c->nsubs++;
    set_subscriber(c, true);
}

static void unsubscribe(srv_conn *c, const char *id, const char *name, size_t nlen) {
    char msg[256];
    for (srv_sub **pp = &c->subs; *pp; pp = &(*pp)->next) {
        srv_sub *sb = *pp;
        if (strlen(sb->name) != nlen || memcmp(sb->name, name, nlen) != 0) continue;
        *pp = sb->next;
        c->nsubs--;
        if (!c->nsubs) set_subscriber(c, false);
        snprintf(msg, sizeof msg, "Unsubscribed '%s'.", sb->name);
        sub_free(sb);
        send_message(c, id, msg);
        return;
    }
    if (srv_group_unsubscribe(c, name, nlen)) {
        snprintf(msg, sizeof msg, "Unsubscribed '%.*s'.", (int)nlen, name);
        send_message(c, id, msg);
        return;
    }
    snprintf(msg, sizeof msg, "Subscription '%.*s' not found", (int)(nlen > 128 ? 128 : nlen),
             name);
    srv_send_error(c, id, "not_found", msg);
}

void srv_subs_command(srv_conn *c, const char *id, const char *text, size_t len) {
    uint64_t t0 = srv_now_ms();
    const char *end = text + len, *p = skip_ws(text, end), *rest;
    bool sub = (rest = word(p, end, ".subscribe")) != NULL;
    if (!sub) rest = word(p, end, ".unsubscribe");
    while (end > rest && isspace((unsigned char)end[-1])) end--;
    const char *name = skip_ws(rest, end), *ne = name;
    while (ne < end && !isspace((unsigned char)*ne)) ne++;
    const char *q = skip_ws(ne, end);
    if (sub) {
        subscribe(c, id, name, (size_t)(ne - name), q, end, t0);
    } else if (q != end || ne == name) {
        srv_send_error(c, id, "validation", "Usage: .unsubscribe <name>");
    } else {
        unsubscribe(c, id, name, (size_t)(ne - name));
    }
}

/* ---- publishing ---- */

static void send_reset(srv_conn *c, srv_sub *sb, const char *message) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "{\"type\":\"subscription_reset\",\"subscription\":");
    il_json_str(&b, sb->name, strlen(sb->name));
    il_buf_printf(&b, ",\"generation\":%llu,\"message\":", (unsigned long long)sb->generation);
    il_json_str(&b, message, strlen(message));
    il_buf_putc(&b, '}');
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}

/* Ends a subscription with subscription_reset: nothing more comes for its generation,
 * and its name is free again. */
static void reset(srv_conn *c, srv_sub *sb, const char *message) {
    send_reset(c, sb, message);
    for (srv_sub **pp = &c->subs; *pp; pp = &(*pp)->next)
        if (*pp == sb) {
            *pp = sb->next;
            break;
        }
    c->nsubs--;
    sub_free(sb);
    if (!c->nsubs) set_subscriber(c, false);
}

/* Written with puts, not printf: a delta is sent on every write that changes a
 * subscription, and formatting its three numbers with vsnprintf cost more instructions
 * than the rest of its envelope. */
static void delta_head(il_buf *b, const char *type, const srv_sub *sb) {
    il_buf_puts(b, "{\"type\":\"");
    il_buf_puts(b, type);
    il_buf_puts(b, "\",\"subscription\":");
    il_json_str(b, sb->name, strlen(sb->name));
    il_buf_puts(b, ",\"generation\":");
    il_buf_put_u64(b, sb->generation);
}

/* The chunks of one side of a streamed delta (its other side empty in each). */
static void delta_chunks(srv_conn *c, const srv_sub *sb, const srv_rows *r, bool inserted,
                         size_t *chunk, il_buf *b) {
    for (size_t i = 0, j; i < r->n; i = j) {
        j = srv_rows_chunk_end(r, i);
        il_buf_clear(b);
        delta_head(b, "subscription_delta_chunk", sb);
        il_buf_printf(b, ",\"seq\":%llu,\"chunk_index\":%zu,\"inserted\":",
                      (unsigned long long)sb->seq, (*chunk)++);
        if (inserted) srv_rows_put(b, r, i, j);
        il_buf_puts(b, inserted ? ",\"retracted\":[]}" : "[],\"retracted\":");
        if (!inserted) {
            srv_rows_put(b, r, i, j);
            il_buf_putc(b, '}');
        }
        srv_ws_send(c, b->data, b->len);
    }
}

/* One subscription_delta, or over 1 MiB subscription_delta_start, chunks (inserted rows,
 * then retracted rows) and subscription_delta_end. False when a row is over the message
 * limit: the subscription was reset instead. */
static bool send_delta(srv_conn *c, srv_sub *sb, uint64_t revision, const val_t *add, size_t nadd,
                       const val_t *rem, size_t nrem) {
    uint32_t arity = il_sub_arity(sb->member);
    srv_rows ins, ret;
    val_rows a = {add, arity}, r = {rem, arity};
    char msg[256];
    bool ok = srv_rows_encode(&ins, val_row, &a, nadd, msg, sizeof msg);
    if (ok && !srv_rows_encode(&ret, val_row, &r, nrem, msg, sizeof msg)) {
        srv_rows_free(&ins);
        ok = false;
    }
    ++sb->seq;
    if (!ok) {
        size_t bytes = 0; /* srv_rows_encode's message: "Result too large (N bytes, ..." */
        sscanf(msg, "Result too large (%zu", &bytes);
        snprintf(msg, sizeof msg,
                 "Delta %llu has a row of %zu bytes, over the %u-byte message limit. The "
                 "subscription was removed; subscribe again.",
                 (unsigned long long)sb->seq, bytes, SRV_MAX_MESSAGE);
        reset(c, sb, msg);
        return false;
    }
    bool streamed = ins.json.len + ret.json.len + (nadd + nrem) * 12 + 4096 > SRV_STREAM_THRESHOLD;
    il_buf b;
    il_buf_init(&b);
    delta_head(&b, streamed ? "subscription_delta_start" : "subscription_delta", sb);
    il_buf_puts(&b, ",\"knowledge_graph\":");
    il_json_str(&b, sb->kg, strlen(sb->kg));
    il_buf_puts(&b, ",\"seq\":");
    il_buf_put_u64(&b, sb->seq);
    il_buf_puts(&b, ",\"revision\":");
    il_buf_put_u64(&b, revision);
    put_columns(&b, sb);
    if (!streamed) {
        il_buf_puts(&b, ",\"inserted\":");
        srv_rows_put(&b, &ins, 0, nadd);
        il_buf_puts(&b, ",\"retracted\":");
        srv_rows_put(&b, &ret, 0, nrem);
    }
    il_buf_putc(&b, '}');
    srv_ws_send(c, b.data, b.len);
    if (streamed) {
        size_t chunk = 0;
        delta_chunks(c, sb, &ins, true, &chunk, &b);
        delta_chunks(c, sb, &ret, false, &chunk, &b);
        il_buf_clear(&b);
        delta_head(&b, "subscription_delta_end", sb);
        il_buf_printf(&b,
                      ",\"seq\":%llu,\"chunk_count\":%zu,\"inserted_count\":%zu,"
                      "\"retracted_count\":%zu}",
                      (unsigned long long)sb->seq, chunk, nadd, nrem);
        srv_ws_send(c, b.data, b.len);
    }
    il_buf_free(&b);
    srv_rows_free(&ins);
    srv_rows_free(&ret);
    return true;
}

static void send_sub_error_code(srv_conn *c, srv_sub *sb, const char *message, const char *code) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "{\"type\":\"subscription_error\",\"subscription\":");
    il_json_str(&b, sb->name, strlen(sb->name));
    il_buf_printf(&b, ",\"generation\":%llu,\"message\":", (unsigned long long)sb->generation);
    il_json_str(&b, message, strlen(message));
    if (code) il_buf_printf(&b, ",\"code\":\"%s\"", code);
    il_buf_putc(&b, '}');
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}

static void send_sub_error(srv_conn *c, srv_sub *sb, const char *message) {
    send_sub_error_code(c, sb, message, NULL);
}

bool srv_subs_must_hold(srv_conn *c) {
    /* holds_deltas is set before backpressured is read, and the loop clears backpressured
     * before it reads holds_deltas (both sequentially consistent): so either this sees
     * the connection reading again, or the loop sees holds_deltas and starts a release
     * after this job. A drain cannot fall between the two unseen. */
    __atomic_store_n(&c->holds_deltas, true, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&c->backpressured, __ATOMIC_SEQ_CST);
}

bool srv_subs_may_read(srv_conn *c, const char *kg) {
    srv_server *s = c->srv;
    pthread_mutex_lock(&s->users_lock);
    const srv_user *u = srv_users_find(&s->users, c->user);
    bool ok = u && (u->role == SRV_ROLE_ADMIN || srv_authz_session(&s->users, u, kg));
    pthread_mutex_unlock(&s->users_lock);
    return ok;
}

/* A connection over SRV_OUTBOUND_LIMIT unwritten is not reading: its subscriptions hold
 * their changes, netted, and get them as one delta once it reads again
 * (srv_subs_release); one whose held changes grow past max_result_rows rows is reset, so
 * that a connection that stops reading never costs unbounded memory. A delta sent is
 * stamped with the graph's revision now: it brings the subscription there, whether it
 * is this request's change or changes held since earlier ones (nothing changed the
 * subscription after them, and a release stamped with an older revision would go back
 * in the connection's revision order). */
static void deliver(srv_server *s, srv_sub *sb) {
    srv_conn *c = sb->conn;
    il_sub *m = sb->member;
    /* Read access is asked before every push: a revoked grant stops deltas at once. The
     * subscription keeps its last delivered result, and gets what changed meanwhile if
     * access comes back. */
    bool may_read = srv_subs_may_read(c, sb->kg);
    if (!may_read && !sb->denied) send_sub_error_code(c, sb, "Access denied", "access_denied");
    sb->denied = !may_read;
    bool backpressured = srv_subs_must_hold(c);
    if (backpressured || !may_read) {
        il_sub_hold(m);
        int64_t cap = s->cfg->max_result_rows;
        if (cap > 0 && il_sub_held(m) > (uint64_t)cap) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "Subscription '%s' fell more than %lld changed rows behind while its "
                     "connection was not %s. The subscription was removed; subscribe again.",
                     sb->name, (long long)cap, backpressured ? "reading" : "allowed to read");
            reset(c, sb, msg);
        }
        return;
    }
    if (il_sub_held(m)) il_sub_hold(m);
    il_sub_delta d = il_sub_changes(m);
    bool sent = d.nadded || d.nremoved ? send_delta(c, sb, srv_revision(s, sb->kg), d.added,
                                                    d.nadded, d.removed, d.nremoved)
                                       : true;
    if (!sent) return;
    il_sub_clear(m);
    if (d.nadded || d.nremoved) srv_deliver_with_push(srv_tl_capture, c);
}

typedef struct release_job {
    srv_job job;
    srv_conn *conn;
    srv_capture out;
} release_job;

static void release_run(srv_job *j) {
    release_job *r = (release_job *)j;
    srv_test_sleep(r->conn->srv->test_release_delay_ns);
    srv_tl_capture = &r->out;
    srv_subs_release(r->conn);
    srv_tl_capture = NULL;
}

static void release_done(srv_job *j) {
    release_job *r = (release_job *)j;
    srv_conn *c = r->conn;
    srv_capture_flush(&r->out);
    srv_capture_free(&r->out);
    free(r);
    c->release_pending = false;
    srv_pipe_pump(c); /* the replies that waited for the held deltas */
    c->refs--;
    srv_conn_maybe_free(c);
}

void srv_subs_release_later(srv_conn *c) {
    if (c->release_pending || !__atomic_load_n(&c->holds_deltas, __ATOMIC_SEQ_CST)) return;
    /* Until it ran, the connection's replies wait (srv_pipe_pump): the held deltas are of
       writes that finished before the requests answered after this point, and go first,
       as any write's deltas go before a later reply. */
    c->release_pending = true;
    release_job *r = calloc(1, sizeof *r);
    r->job.run = release_run;
    r->job.done = release_done;
    r->conn = c;
    srv_capture_init(&r->out, c);
    c->refs++;
    srv_pool_submit(&c->srv->pool, &r->job, true);
}

void srv_subs_release(srv_conn *c) {
    /* Still not reading: holds_deltas stays set, and the next drain tries again. */
    if (__atomic_load_n(&c->backpressured, __ATOMIC_SEQ_CST)) return;
    __atomic_store_n(&c->holds_deltas, false, __ATOMIC_SEQ_CST);
    for (srv_sub *sb = c->subs, *next; sb; sb = next) {
        next = sb->next;
        if (il_sub_held(sb->member)) deliver(c->srv, sb);
    }
    srv_groups_publish(c);
}

/* A connection that left the graph (its own .kg use, or a .kg drop that moved it to
 * default) loses its subscriptions and groups silently, before their rows are routed. */
static void leave_other_graphs(srv_conn *c) {
    const char *kg = il_session_graph(c->session);
    for (srv_sub **pp = &c->subs; *pp;) {
        srv_sub *sb = *pp;
        if (strcmp(sb->kg, kg) == 0) {
            pp = &sb->next;
            continue;
        }
        *pp = sb->next;
        c->nsubs--;
        sub_free(sb);
    }
    srv_groups_leave_graph(c, kg);
    if (!c->nsubs) set_subscriber(c, false);
}

void srv_subs_publish(srv_server *s, srv_conn *own) {
    /* Only the request's own connection can have switched graph, unless a graph was
     * created or dropped: then every subscriber is looked at. */
    uint64_t graph_changes = srv_notify_graph_changes(s->notify);
    if (graph_changes != s->sub_graph_changes) {
        s->sub_graph_changes = graph_changes;
        for (srv_conn *c = s->subscribers, *next; c; c = next) {
            next = c->next_subscriber;
            leave_other_graphs(c);
        }
    } else if (own && own->nsubs) {
        leave_other_graphs(own);
    }
    /* Only the members that got rows are visited (and the groups they belong to), so a
     * write costs what it changed, not the number of subscriptions. */
    bool error_changed = false;
    for (il_sub *m = il_subs_route(s->engine, &error_changed), *next; m; m = next) {
        next = il_sub_next_touched(m);
        srv_sub_owner *owner = il_sub_ctx(m);
        if (*owner == SRV_SUB_GROUP)
            srv_group_touched(s, owner);
        else
            deliver(s, (srv_sub *)owner);
    }
    srv_groups_publish_touched(s);
    if (!error_changed) return;
    /* A view failed or works again: every subscription is told, every group published. */
    for (srv_conn *c = s->subscribers; c; c = c->next_subscriber) {
        for (srv_sub *sb = c->subs; sb; sb = sb->next) {
            const char *e = il_sub_error(sb->member);
            if (e && !sb->errored) send_sub_error(c, sb, e);
            sb->errored = e != NULL;
        }
        srv_groups_publish(c);
    }
}

/* ---- shared with subscription groups (srv_subgroup.c) ---- */

bool srv_subs_name_taken(const srv_conn *c, const char *name, size_t len) {
    for (const srv_sub *o = c->subs; o; o = o->next)
        if (strlen(o->name) == len && memcmp(o->name, name, len) == 0) return true;
    return srv_group_exists(c, name, len);
}

bool srv_subs_room(const srv_conn *c, unsigned more, char *msg, size_t len) {
    int64_t max = c->srv->cfg->ws_max_subscriptions;
    if (max == 0 || (int64_t)c->nsubs + more <= max) return true;
    snprintf(msg, len, "Too many subscriptions on this connection (max %lld%s)", (long long)max,
             more > 1 ? "; a group counts once per query" : "");
    return false;
}

void srv_subs_watch(srv_conn *c) {
    set_subscriber(c, true);
}
