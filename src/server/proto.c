/* The WebSocket protocol (protocol v5 subset): authentication, execute with ids and
 * in-order replies, results (streamed when large), ping, cancel, and invalid_request
 * errors for malformed frames. Requests run to completion on the loop thread in arrival
 * order, so replies are in request order by construction. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iql/script.h"
#include "server/server.h"

/* ---- replies ---- */

typedef struct reply {
    const il_result *table; /* a TABLE result, or NULL for message lines */
    const char **lines;
    size_t nlines;
    il_buf errors; /* StatementError objects, comma-separated */
    il_buf ext;    /* extra fields, each starting with ',' */
    uint64_t ms;
} reply;

static void reply_init(reply *r) {
    memset(r, 0, sizeof *r);
    il_buf_init(&r->errors);
    il_buf_init(&r->ext);
}

static void reply_free(reply *r) {
    il_buf_free(&r->errors);
    il_buf_free(&r->ext);
}

static size_t reply_ncols(const reply *r) {
    if (!r->table) return 1;
    return il_result_nrows(r->table) ? il_result_ncols(r->table) : 0;
}

static size_t reply_nrows(const reply *r) {
    return r->table ? il_result_nrows(r->table) : r->nlines;
}

static void write_columns(il_buf *b, const reply *r) {
    il_buf_puts(b, ",\"columns\":[");
    for (size_t i = 0; i < reply_ncols(r); i++) {
        if (i) il_buf_putc(b, ',');
        const char *name = r->table ? il_result_col(r->table, i) : "message";
        srv_json_str(b, name, strlen(name));
    }
    il_buf_putc(b, ']');
}

static void write_row(il_buf *b, const reply *r, size_t i) {
    il_buf_putc(b, '[');
    if (r->table) {
        size_t width;
        const il_value *row = il_result_row(r->table, i, &width);
        size_t n = width < reply_ncols(r) ? width : reply_ncols(r);
        for (size_t k = 0; k < n; k++) {
            if (k) il_buf_putc(b, ',');
            srv_json_value(b, row[k]);
        }
    } else {
        srv_json_str(b, r->lines[i], strlen(r->lines[i]));
    }
    il_buf_putc(b, ']');
}

static void write_provenance(il_buf *b, size_t n) {
    if (n == 0) return;
    il_buf_puts(b, ",\"row_provenance\":[");
    for (size_t i = 0; i < n; i++) il_buf_puts(b, i ? ",\"unknown\"" : "\"unknown\"");
    il_buf_putc(b, ']');
}

static void send_buf(srv_conn *c, il_buf *b) {
    srv_ws_send(c, b->data, b->len);
    il_buf_clear(b);
}

/* Sends a result as one frame, or as result_start/chunk/end when over 1 MiB. */
static void send_reply(srv_conn *c, const char *id, reply *r) {
    size_t nrows = reply_nrows(r);
    il_buf rows;
    il_buf_init(&rows);
    size_t *off = malloc((nrows + 1) * sizeof *off);
    for (size_t i = 0; i < nrows; i++) {
        off[i] = rows.len;
        if (i) il_buf_putc(&rows, ',');
        write_row(&rows, r, i);
        if (rows.len - off[i] > SRV_MAX_MESSAGE - 4096) {
            char msg[128];
            snprintf(msg, sizeof msg, "Result too large (%zu bytes, max %u)", rows.len - off[i],
                     SRV_MAX_MESSAGE);
            srv_send_error(c, id, "internal", msg);
            free(off);
            il_buf_free(&rows);
            return;
        }
    }
    off[nrows] = rows.len;
    il_buf b;
    il_buf_init(&b);
    if (rows.len + nrows * 12 + 4096 <= SRV_STREAM_THRESHOLD) {
        srv_json_open(&b, "result", id);
        write_columns(&b, r);
        il_buf_puts(&b, ",\"rows\":[");
        il_buf_put(&b, rows.data, rows.len);
        il_buf_printf(&b,
                      "],\"row_count\":%zu,\"total_count\":%zu,\"truncated\":false,"
                      "\"execution_time_ms\":%llu,\"errors\":[",
                      nrows, nrows, (unsigned long long)r->ms);
        il_buf_put(&b, r->errors.data, r->errors.len);
        il_buf_putc(&b, ']');
        write_provenance(&b, nrows);
        il_buf_put(&b, r->ext.data, r->ext.len);
        il_buf_putc(&b, '}');
        send_buf(c, &b);
    } else {
        srv_json_open(&b, "result_start", id);
        write_columns(&b, r);
        il_buf_printf(&b,
                      ",\"total_count\":%zu,\"truncated\":false,\"execution_time_ms\":%llu,"
                      "\"errors\":[",
                      nrows, (unsigned long long)r->ms);
        il_buf_put(&b, r->errors.data, r->errors.len);
        il_buf_putc(&b, ']');
        il_buf_put(&b, r->ext.data, r->ext.len);
        il_buf_putc(&b, '}');
        send_buf(c, &b);
        size_t chunk = 0, i = 0;
        while (i < nrows) {
            /* At most 500 rows and about 1 MiB per chunk; a bigger row goes alone. */
            size_t j = i + 1;
            while (j < nrows && j - i < SRV_CHUNK_ROWS &&
                   off[j + 1] - off[i] < SRV_STREAM_THRESHOLD)
                j++;
            srv_json_open(&b, "result_chunk", id);
            il_buf_puts(&b, ",\"rows\":[");
            size_t from = off[i] + (i ? 1 : 0); /* skip the separating comma */
            il_buf_put(&b, rows.data + from, off[j] - from);
            il_buf_printf(&b, "],\"chunk_index\":%zu", chunk++);
            write_provenance(&b, j - i);
            il_buf_putc(&b, '}');
            send_buf(c, &b);
            i = j;
        }
        srv_json_open(&b, "result_end", id);
        il_buf_printf(&b, ",\"row_count\":%zu,\"chunk_count\":%zu}", nrows, chunk);
        send_buf(c, &b);
    }
    il_buf_free(&b);
    il_buf_free(&rows);
    free(off);
}

/* ---- execution ---- */

static const char *class_name(il_stmt_class k) {
    switch (k) {
    case IL_STMT_QUERY:
        return "query";
    case IL_STMT_SESSION_RULE:
        return "session_rule";
    case IL_STMT_SESSION_FACT:
        return "session_fact";
    case IL_STMT_KG_SWITCH:
        return "kg_switch";
    case IL_STMT_SESSION_CLEAR:
        return "session_clear";
    case IL_STMT_REL_SHOW:
        return "rel_show";
    case IL_STMT_CLIENT_ONLY:
        return "client_only";
    case IL_STMT_OTHER:
        break;
    }
    return NULL;
}

/* The error code of a failed statement, from its message. */
static const char *error_code(const char *msg) {
    if (strncmp(msg, "Access denied", 13) == 0 || strncmp(msg, "Permission denied", 17) == 0)
        return "access_denied";
    if (strstr(msg, "not found") || strstr(msg, "does not exist")) return "not_found";
    if (strstr(msg, "already exists")) return "conflict";
    return "validation";
}

static char *joined_lines(const il_result *r) {
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < il_result_nlines(r); i++) {
        if (i) il_buf_putc(&b, '\n');
        il_buf_puts(&b, il_result_line(r, i));
    }
    if (!b.data) il_buf_puts(&b, "");
    return il_buf_take(&b);
}

static il_result *run(srv_conn *c, const char *stmt, size_t len) {
    il_result *r = il_execute(c->session, stmt, len);
    c->srv->query_count++;
    il_stmt_class k = il_result_stmt_class(r);
    bool was = c->dirty;
    if ((k == IL_STMT_SESSION_RULE || k == IL_STMT_SESSION_FACT) &&
        il_result_kind_of(r) == IL_RESULT_MESSAGE)
        c->dirty = true;
    else if (k == IL_STMT_SESSION_CLEAR || k == IL_STMT_KG_SWITCH)
        c->dirty = false;
    if (was != c->dirty) c->srv->ndirty += c->dirty ? 1u : (unsigned)-1;
    return r;
}

static void send_parse_error(srv_conn *c, const char *id, const char *text, const char *cls) {
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "error", id);
    il_buf_puts(&b, ",\"message\":\"Program has 1 parse error(s)\",\"code\":\"validation\","
                    "\"validation_errors\":[{\"line\":1,\"statement_index\":0,\"error\":");
    srv_json_str(&b, text, strlen(text));
    il_buf_puts(&b, "}]");
    if (cls) il_buf_printf(&b, ",\"statement_class\":\"%s\"", cls);
    il_buf_putc(&b, '}');
    send_buf(c, &b);
    il_buf_free(&b);
}

static void execute_one(srv_conn *c, const char *id, const iql_script_item *it, uint64_t t0) {
    if (it->unterminated) {
        send_parse_error(c, id, "unterminated statement (unbalanced delimiters)", NULL);
        return;
    }
    il_result *r = run(c, it->text, it->len);
    il_stmt_class k = il_result_stmt_class(r);
    const char *cls = class_name(k);
    il_result_kind kind = il_result_kind_of(r);
    if (kind == IL_RESULT_PARSE_ERROR || kind == IL_RESULT_ERROR) {
        char *msg = joined_lines(r);
        if (kind == IL_RESULT_PARSE_ERROR) {
            send_parse_error(c, id, msg, cls);
        } else {
            il_buf b;
            il_buf_init(&b);
            srv_json_open(&b, "error", id);
            il_buf_puts(&b, ",\"message\":");
            srv_json_str(&b, msg, strlen(msg));
            il_buf_printf(&b, ",\"code\":\"%s\"", error_code(msg));
            if (cls) il_buf_printf(&b, ",\"statement_class\":\"%s\"", cls);
            il_buf_putc(&b, '}');
            send_buf(c, &b);
            il_buf_free(&b);
        }
        free(msg);
        il_result_free(r);
        return;
    }
    reply rp;
    reply_init(&rp);
    const char **lines = NULL;
    if (kind == IL_RESULT_TABLE) {
        rp.table = r;
    } else {
        rp.nlines = il_result_nlines(r);
        lines = malloc((rp.nlines + 1) * sizeof *lines);
        for (size_t i = 0; i < rp.nlines; i++) lines[i] = il_result_line(r, i);
        rp.lines = lines;
    }
    /* Which kind of reply this is: a table whose one column is named `message` is not
     * a message. */
    il_buf_printf(&rp.ext, ",\"result_kind\":\"%s\"", rp.table ? "table" : "message");
    if (cls) il_buf_printf(&rp.ext, ",\"statement_class\":\"%s\"", cls);
    if (k == IL_STMT_SESSION_RULE && kind == IL_RESULT_MESSAGE) {
        uint32_t arity = 0;
        const char *head = il_result_rule_head(r, &arity);
        il_buf_puts(&rp.ext, ",\"rule_head\":");
        srv_json_str(&rp.ext, head, strlen(head));
        il_buf_printf(&rp.ext, ",\"rule_arity\":%u", arity);
    }
    if (k == IL_STMT_REL_SHOW && il_result_title(r)) {
        il_buf_puts(&rp.ext, ",\"title\":");
        srv_json_str(&rp.ext, il_result_title(r), strlen(il_result_title(r)));
    }
    rp.ms = srv_now_ms() - t0;
    send_reply(c, id, &rp);
    reply_free(&rp);
    free(lines);
    il_result_free(r);
}

/* A program of several statements: each runs in order and failures do not stop it.
 * The last query's table is the reply, else every statement's message lines; failed
 * statements add an `Error: ...` line and an errors[] entry. */
static void execute_many(srv_conn *c, const char *id, iql_script *sc, uint64_t t0) {
    reply rp;
    reply_init(&rp);
    il_result *last_table = NULL;
    il_result **keep = NULL; /* results whose lines are referenced */
    size_t nkeep = 0;
    char **owned = NULL;
    size_t nowned = 0;
    const char **lines = NULL;
    size_t nlines = 0;
    iql_script_item it;
    for (size_t index = 0; iql_script_next(sc, &it); index++) {
        il_result *r = NULL;
        char *failure = NULL;
        const char *code = "validation";
        if (it.unterminated) {
            failure = strdup("unterminated statement (unbalanced delimiters)");
        } else {
            r = run(c, it.text, it.len);
            il_result_kind kind = il_result_kind_of(r);
            if (kind == IL_RESULT_ERROR || kind == IL_RESULT_PARSE_ERROR) {
                failure = joined_lines(r);
                if (kind == IL_RESULT_ERROR) code = error_code(failure);
            }
        }
        if (failure) {
            if (rp.errors.len) il_buf_putc(&rp.errors, ',');
            il_buf_printf(&rp.errors, "{\"index\":%zu,\"code\":\"%s\",\"message\":", index, code);
            srv_json_str(&rp.errors, failure, strlen(failure));
            il_buf_putc(&rp.errors, '}');
            il_buf line;
            il_buf_init(&line);
            il_buf_printf(&line, "Error: %s", failure);
            owned = realloc(owned, (nowned + 1) * sizeof *owned);
            owned[nowned++] = il_buf_take(&line);
            lines = realloc(lines, (nlines + 1) * sizeof *lines);
            lines[nlines++] = owned[nowned - 1];
            free(failure);
            if (r) il_result_free(r);
        } else if (il_result_kind_of(r) == IL_RESULT_TABLE) {
            if (last_table) il_result_free(last_table);
            last_table = r;
        } else {
            size_t n = il_result_nlines(r);
            lines = realloc(lines, (nlines + n + 1) * sizeof *lines);
            for (size_t i = 0; i < n; i++) lines[nlines++] = il_result_line(r, i);
            keep = realloc(keep, (nkeep + 1) * sizeof *keep);
            keep[nkeep++] = r;
        }
    }
    rp.table = last_table;
    rp.lines = lines;
    rp.nlines = nlines;
    rp.ms = srv_now_ms() - t0;
    send_reply(c, id, &rp);
    reply_free(&rp);
    if (last_table) il_result_free(last_table);
    for (size_t i = 0; i < nkeep; i++) il_result_free(keep[i]);
    for (size_t i = 0; i < nowned; i++) free(owned[i]);
    free(keep);
    free(owned);
    free(lines);
}

static void execute(srv_conn *c, const char *id, const char *prog, size_t len) {
    uint64_t t0 = srv_now_ms();
    if (len > SRV_MAX_PROGRAM) {
        char msg[128];
        snprintf(msg, sizeof msg, "Program too large: %zu bytes (max %u)", len, SRV_MAX_PROGRAM);
        srv_send_error(c, id, "validation", msg);
        return;
    }
    /* Count the statements first: one statement replies with its own result or error. */
    iql_script sc;
    iql_script_init(&sc, prog, len);
    iql_script_item it;
    size_t n = 0;
    while (n < 2 && iql_script_next(&sc, &it)) n++;
    iql_script_free(&sc);
    iql_script_init(&sc, prog, len);
    if (n == 1) {
        iql_script_next(&sc, &it);
        execute_one(c, id, &it, t0);
    } else {
        execute_many(c, id, &sc, t0);
    }
    iql_script_free(&sc);
}

/* ---- frames ---- */

static void send_auth_error(srv_conn *c, const char *id, const char *code, const char *msg) {
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "auth_error", id);
    il_buf_puts(&b, ",\"message\":");
    srv_json_str(&b, msg, strlen(msg));
    il_buf_printf(&b, ",\"code\":\"%s\"}", code);
    send_buf(c, &b);
    il_buf_free(&b);
}

static void authenticated(srv_conn *c, const char *id) {
    char err[256];
    if (!srv_session_open(c, c->kg, err, sizeof err)) {
        srv_send_error(c, id, strncmp(err, "Access", 6) == 0 ? "access_denied" : "not_found", err);
        srv_ws_close(c, 1008);
        srv_conn_close(c);
        return;
    }
    c->authed = true;
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "authenticated", id);
    il_buf_printf(&b, ",\"session_id\":\"%s\",\"knowledge_graph\":", c->session_id);
    srv_json_str(&b, c->kg, strlen(c->kg));
    il_buf_printf(&b,
                  ",\"version\":\"" SRV_VERSION "\",\"role\":\"admin\",\"protocol_version\":%d,"
                  "\"stream_epoch\":\"%s\"}",
                  SRV_PROTOCOL_VERSION, c->srv->epoch);
    send_buf(c, &b);
    il_buf_free(&b);
    srv_timer_start(c, SRV_IDLE_TIMEOUT_MS);
}

static const char *str_field(json_t *o, const char *key, size_t *len) {
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) return NULL;
    if (len) *len = json_string_length(v);
    return json_string_value(v);
}

static void auth_phase(srv_conn *c, const char *id, const char *type, json_t *root,
                       const char *bad) {
    if (bad) {
        send_auth_error(c, id, "invalid_request",
                        "Invalid message format. Send login or authenticate.");
        return;
    }
    bool ok;
    if (strcmp(type, "login") == 0) {
        const char *user = str_field(root, "username", NULL),
                   *pw = str_field(root, "password", NULL);
        if (!user || !pw) {
            send_auth_error(c, id, "invalid_request",
                            "Invalid message format. Send login or authenticate.");
            return;
        }
        ok = srv_auth_password(&c->srv->auth, user, pw);
        if (ok) {
            authenticated(c, id);
            return;
        }
        send_auth_error(c, id, "access_denied", "Invalid credentials");
    } else if (strcmp(type, "authenticate") == 0) {
        size_t klen;
        const char *key = str_field(root, "api_key", &klen);
        if (!key) {
            send_auth_error(c, id, "invalid_request",
                            "Invalid message format. Send login or authenticate.");
            return;
        }
        ok = srv_auth_key(&c->srv->auth, key, klen);
        if (ok) {
            authenticated(c, id);
            return;
        }
        send_auth_error(c, id, "access_denied", "Invalid API key");
    } else {
        send_auth_error(c, id, "invalid_request",
                        "Authentication required. Send login or authenticate first.");
        return;
    }
    if (++c->auth_failures >= SRV_MAX_AUTH_FAILS) {
        srv_ws_close(c, 1008);
        srv_conn_close(c);
    }
}

static void ready_phase(srv_conn *c, const char *id, const char *type, json_t *root) {
    if (strcmp(type, "execute") == 0) {
        size_t len;
        const char *prog = str_field(root, "program", &len);
        json_t *timeout = json_object_get(root, "timeout_ms");
        if (!prog) {
            srv_send_error(c, id, "invalid_request",
                           "Invalid message format: execute needs a string `program`");
        } else if (timeout && (!json_is_integer(timeout) || json_integer_value(timeout) < 0)) {
            srv_send_error(c, id, "invalid_request",
                           "Invalid message format: timeout_ms must be an integer >= 0");
        } else if (json_object_get(root, "params") || json_object_get(root, "expect_revision")) {
            srv_send_error(c, id, "unsupported",
                           "params and expect_revision are not supported by this server yet");
        } else {
            execute(c, id, prog, len);
        }
    } else if (strcmp(type, "ping") == 0) {
        il_buf b;
        il_buf_init(&b);
        srv_json_open(&b, "pong", id);
        il_buf_putc(&b, '}');
        send_buf(c, &b);
        il_buf_free(&b);
    } else if (strcmp(type, "cancel") == 0) {
        size_t tlen;
        const char *target = str_field(root, "target", &tlen);
        if (!target || tlen == 0 || tlen > 64) {
            srv_send_error(c, id, "invalid_request",
                           "Invalid message format: cancel needs a string `target` id");
            return;
        }
        /* Requests run to completion before the next frame is read, so no request of
         * this connection is ever unanswered when a cancel arrives. */
        il_buf b;
        il_buf_init(&b);
        srv_json_open(&b, "cancel_ack", id);
        il_buf_puts(&b, ",\"target\":");
        srv_json_str(&b, target, tlen);
        il_buf_puts(&b, ",\"outcome\":\"not_found\"}");
        send_buf(c, &b);
        il_buf_free(&b);
    } else if (strcmp(type, "login") == 0 || strcmp(type, "authenticate") == 0) {
        srv_send_error(c, id, "invalid_request", "Already authenticated");
    } else if (strcmp(type, "read") == 0 || strcmp(type, "subscribe") == 0) {
        srv_send_error(c, id, "unsupported",
                       "This request type is not supported by this server yet");
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "Invalid message format: unknown type '%.64s'", type);
        srv_send_error(c, id, "invalid_request", msg);
    }
}

void srv_proto_message(srv_conn *c, const char *msg, size_t len) {
    json_error_t je;
    json_t *root = json_loadb(msg, len, JSON_ALLOW_NUL, &je);
    char bad[256] = {0};
    const char *id = NULL, *type = NULL;
    if (!root) {
        snprintf(bad, sizeof bad, "Invalid message format: %s", je.text);
    } else if (!json_is_object(root)) {
        snprintf(bad, sizeof bad, "Invalid message format: not a JSON object");
    } else {
        json_t *jid = json_object_get(root, "id");
        if (jid) {
            size_t n = json_is_string(jid) ? json_string_length(jid) : 0;
            if (n >= 1 && n <= 64 && !memchr(json_string_value(jid), 0, n))
                id = json_string_value(jid);
            else
                snprintf(bad, sizeof bad,
                         "Invalid message format: id must be a string of 1 to 64 bytes");
        }
        type = str_field(root, "type", NULL);
        if (!bad[0] && !type) snprintf(bad, sizeof bad, "Invalid message format: missing type");
    }
    if (!c->authed) {
        auth_phase(c, id, type, root, bad[0] ? bad : NULL);
    } else {
        srv_timer_start(c, SRV_IDLE_TIMEOUT_MS);
        if (bad[0])
            srv_send_error(c, id, "invalid_request", bad);
        else
            ready_phase(c, id, type, root);
    }
    json_decref(root);
}

void srv_proto_timeout(srv_conn *c) {
    if (c->state != SRV_WS) return;
    if (c->authed)
        srv_send_notice(c, "idle_timeout", "Idle timeout");
    else
        srv_send_notice(c, "auth_timeout", "Authentication timeout (5s)");
    srv_ws_close(c, c->authed ? 1000 : 1008);
    srv_conn_close(c);
}
