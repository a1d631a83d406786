/* The WebSocket protocol (protocol v5 subset): authentication (passwords with login
 * backoff, API keys), execute with ids and in-order replies, every statement authorized
 * before any runs, the identity commands answered here, results (streamed when large),
 * ping, cancel, the message rate limit, and invalid_request errors for malformed frames.
 * Requests run to completion on the loop thread in arrival order, so replies are in
 * request order by construction. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iql/script.h"
#include "server/server.h"
#include "server/srv_admin.h"
#include "server/srv_authz.h"
#include "server/srv_subs.h"

/* ---- replies ---- */

typedef struct reply {
    const il_result *table; /* a TABLE result, or NULL for message lines */
    const char **lines;
    size_t nlines;
    /* A table built by the server (.user list ...): column names and JSON rows. */
    const char *const *cols;
    size_t ncols;
    char *const *rows;
    size_t nrows;
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
    if (r->cols) return r->ncols;
    if (!r->table) return 1;
    return il_result_nrows(r->table) ? il_result_ncols(r->table) : 0;
}

/* Rows the result has (a table may be cut to max_result_rows when sent). */
static size_t reply_nrows(const reply *r) {
    return r->cols ? r->nrows : r->table ? il_result_nrows(r->table) : r->nlines;
}

static void write_columns(il_buf *b, const reply *r) {
    il_buf_puts(b, ",\"columns\":[");
    for (size_t i = 0; i < reply_ncols(r); i++) {
        if (i) il_buf_putc(b, ',');
        const char *name = r->cols ? r->cols[i] : r->table ? il_result_col(r->table, i) : "message";
        srv_json_str(b, name, strlen(name));
    }
    il_buf_putc(b, ']');
}

static void write_row(il_buf *b, const reply *r, size_t i) {
    if (r->cols) {
        il_buf_puts(b, r->rows[i]);
        return;
    }
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

/* Sends a result as one frame, or as result_start/chunk/end when over 1 MiB. A query
 * table over max_result_rows is cut there and flagged truncated, with total_count the
 * rows it had (the original cut silently, with truncated:false: BUG). */
static void send_reply(srv_conn *c, const char *id, reply *r) {
    size_t total = reply_nrows(r), nrows = total;
    int64_t cap = c->srv->cfg->max_result_rows;
    if (r->table && cap > 0 && nrows > (uint64_t)cap) nrows = (size_t)cap;
    const char *truncated = nrows < total ? "true" : "false";
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
                      "],\"row_count\":%zu,\"total_count\":%zu,\"truncated\":%s,"
                      "\"execution_time_ms\":%llu,\"errors\":[",
                      nrows, total, truncated, (unsigned long long)r->ms);
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
                      ",\"total_count\":%zu,\"truncated\":%s,\"execution_time_ms\":%llu,"
                      "\"errors\":[",
                      total, truncated, (unsigned long long)r->ms);
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

static void save_identities(srv_server *s) {
    char err[512];
    if (!srv_users_save(&s->users, err, sizeof err)) fprintf(stderr, "ERROR: %s\n", err);
}

/* What a successful statement did to the server's view of sessions and ACLs: the
 * session's knowledge graph after .kg use / .kg create (whose non-admin creator becomes
 * its owner), and after .kg drop the sessions the engine moved to `default` and the
 * dropped graph's ACL entries. */
static void after_stmt(srv_conn *c, const srv_stmt *st, const il_result *r) {
    il_result_kind kind = il_result_kind_of(r);
    if (st->effect == SRV_FX_NONE || (kind != IL_RESULT_MESSAGE && kind != IL_RESULT_TABLE)) return;
    srv_server *s = c->srv;
    if (st->effect == SRV_FX_DROP) {
        for (srv_conn *o = s->conns; o; o = o->next)
            if (o->session && strcmp(o->kg, st->effect_kg) == 0)
                snprintf(o->kg, sizeof o->kg, "default");
        size_t before = s->users.nacls;
        srv_users_drop_kg(&s->users, st->effect_kg);
        if (s->users.nacls != before) save_identities(s);
        return;
    }
    if (il_result_stmt_class(r) != IL_STMT_KG_SWITCH) return;
    snprintf(c->kg, sizeof c->kg, "%s", st->effect_kg);
    srv_user *u = srv_users_find(&s->users, c->user);
    /* A name the store could not read back (control characters) gets no entry. */
    if (st->effect == SRV_FX_CREATE && u && u->role != SRV_ROLE_ADMIN &&
        srv_name_ok(st->effect_kg, SRV_KG_NAME_MAX)) {
        srv_users_grant(&s->users, st->effect_kg, u->name, SRV_KG_OWNER);
        save_identities(s);
    }
}

static void send_parse_error(srv_conn *c, const char *id, const char *text, const char *cls) {
    il_buf f;
    il_buf_init(&f);
    il_buf_puts(&f, ",\"validation_errors\":[{\"line\":1,\"statement_index\":0,\"error\":");
    srv_json_str(&f, text, strlen(text));
    il_buf_puts(&f, "}]");
    if (cls) il_buf_printf(&f, ",\"statement_class\":\"%s\"", cls);
    srv_send_error_fields(c, id, "validation", "Program has 1 parse error(s)", f.data);
    il_buf_free(&f);
}

static void execute_one(srv_conn *c, const char *id, const srv_stmt *st, uint64_t t0) {
    if (st->unterminated) {
        send_parse_error(c, id, "unterminated statement (unbalanced delimiters)", NULL);
        return;
    }
    il_result *r = run(c, st->text, st->len);
    after_stmt(c, st, r);
    il_stmt_class k = il_result_stmt_class(r);
    const char *cls = class_name(k);
    il_result_kind kind = il_result_kind_of(r);
    if (kind == IL_RESULT_PARSE_ERROR || kind == IL_RESULT_ERROR) {
        char *msg = joined_lines(r);
        if (kind == IL_RESULT_PARSE_ERROR) {
            send_parse_error(c, id, msg, cls);
        } else {
            char fields[64] = "";
            if (cls) snprintf(fields, sizeof fields, ",\"statement_class\":\"%s\"", cls);
            srv_send_error_fields(c, id, error_code(msg), msg, fields);
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

/* Checks a statement again against the session's actual knowledge graph when an earlier
 * `.kg use` of the program failed and the graph is not the one the first check assumed. */
static const char *recheck(srv_conn *c, const srv_user *me, srv_stmt *st) {
    if (me->role == SRV_ROLE_ADMIN || strcmp(st->checked_kg, c->kg) == 0) return NULL;
    srv_authz_state as;
    memset(&as, 0, sizeof as);
    snprintf(as.kg, sizeof as.kg, "%s", c->kg);
    srv_authz_stmt(&c->srv->users, me, &as, st);
    return st->denied[0] ? st->denied : NULL;
}

/* A program of several statements: each runs in order and failures do not stop it.
 * The last query's table is the reply, else every statement's message lines; failed
 * statements add an `Error: ...` line and an errors[] entry. */
static void execute_many(srv_conn *c, const char *id, srv_stmt *sts, size_t n, const srv_user *me,
                         uint64_t t0) {
    reply rp;
    reply_init(&rp);
    il_result *last_table = NULL;
    il_result **keep = NULL; /* results whose lines are referenced */
    size_t nkeep = 0;
    char **owned = NULL;
    size_t nowned = 0;
    const char **lines = NULL;
    size_t nlines = 0;
    for (size_t index = 0; index < n; index++) {
        srv_stmt *st = &sts[index];
        il_result *r = NULL;
        char *failure = NULL;
        const char *code = "validation";
        const char *denied = st->unterminated ? NULL : recheck(c, me, st);
        if (st->unterminated) {
            failure = strdup("unterminated statement (unbalanced delimiters)");
        } else if (denied) {
            failure = strdup(denied);
            code = "access_denied";
        } else {
            r = run(c, st->text, st->len);
            after_stmt(c, st, r);
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
            size_t k = il_result_nlines(r);
            lines = realloc(lines, (nlines + k + 1) * sizeof *lines);
            for (size_t i = 0; i < k; i++) lines[nlines++] = il_result_line(r, i);
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

/* .user / .apikey / .kg acl, answered by the server (execution_time_ms 0, as in the
 * original). A command that ended this connection's own credential gets no reply: the
 * fence withholds it and the connection closes with the notice. */
static void execute_admin(srv_conn *c, const char *id, const srv_stmt *st) {
    srv_admin_reply ar;
    srv_admin_run(c, st, &ar);
    if (ar.error_code) {
        srv_send_error(c, id, ar.error_code, ar.message);
    } else {
        reply rp;
        reply_init(&rp);
        if (ar.ncols) {
            rp.cols = ar.cols;
            rp.ncols = ar.ncols;
            rp.rows = ar.rows;
            rp.nrows = ar.nrows;
            il_buf_puts(&rp.ext, ",\"result_kind\":\"table\"");
        } else {
            rp.lines = (const char **)ar.lines;
            rp.nlines = ar.nlines;
            il_buf_puts(&rp.ext, ",\"result_kind\":\"message\"");
        }
        send_reply(c, id, &rp);
        reply_free(&rp);
    }
    srv_admin_reply_free(&ar);
}

static void free_stmts(srv_stmt *sts, size_t n) {
    for (size_t i = 0; i < n; i++) free(sts[i].text);
    free(sts);
}

static void execute(srv_conn *c, const char *id, const char *prog, size_t len) {
    uint64_t t0 = srv_now_ms();
    int64_t max = c->srv->cfg->max_query_size_bytes;
    if (max > 0 && len > (uint64_t)max) {
        char msg[128];
        snprintf(msg, sizeof msg, "Program too large: %zu bytes (max %lld)", len, (long long)max);
        srv_send_error(c, id, "validation", msg);
        return;
    }
    /* The role is read per statement, so a role change applies at once; a credential that
     * ended closes the connection here. */
    srv_user *me = srv_auth_current(c);
    if (!me) return;
    srv_stmt *sts = NULL;
    size_t n = 0;
    iql_script sc;
    iql_script_init(&sc, prog, len);
    iql_script_item it;
    while (iql_script_next(&sc, &it)) {
        sts = realloc(sts, (n + 1) * sizeof *sts);
        memset(&sts[n], 0, sizeof sts[n]);
        sts[n].text = strndup(it.text, it.len);
        sts[n].len = it.len;
        sts[n].unterminated = it.unterminated;
        n++;
    }
    iql_script_free(&sc);
    /* Every statement is authorized before any runs, so a refused statement leaves the
     * whole program unapplied (the original checked single-statement programs only: a
     * viewer could write through a two-line program, BUG). */
    srv_authz_state as;
    memset(&as, 0, sizeof as);
    snprintf(as.kg, sizeof as.kg, "%s", c->kg);
    for (size_t i = 0; i < n; i++) {
        srv_authz_stmt(&c->srv->users, me, &as, &sts[i]);
        if (!sts[i].denied[0]) continue;
        il_buf f;
        il_buf_init(&f);
        if (n > 1) {
            il_buf_printf(&f,
                          ",\"errors\":[{\"index\":%zu,\"code\":\"access_denied\",\"message\":", i);
            srv_json_str(&f, sts[i].denied, strlen(sts[i].denied));
            il_buf_puts(&f, "}]");
        }
        srv_send_error_fields(c, id, "access_denied", sts[i].denied, f.data);
        il_buf_free(&f);
        free_stmts(sts, n);
        return;
    }
    for (size_t i = 0; n > 1 && i < n; i++) {
        if (sts[i].handler == SRV_H_ENGINE) continue;
        srv_send_error(c, id, "unsupported",
                       sts[i].handler == SRV_H_ACL
                           ? "KG ACL commands require a WebSocket connection with admin or "
                             "owner privileges."
                           : "User/API key commands require a WebSocket connection with admin "
                             "privileges.");
        free_stmts(sts, n);
        return;
    }
    for (size_t i = 0; n > 1 && i < n; i++) {
        if (!srv_subs_is_command(sts[i].text, sts[i].len)) continue;
        srv_send_error(c, id, "validation",
                       ".subscribe and .unsubscribe must be the only statement of a program");
        free_stmts(sts, n);
        return;
    }
    if (n == 1 && !sts[0].unterminated && srv_subs_is_command(sts[0].text, sts[0].len))
        srv_subs_command(c, id, sts[0].text, sts[0].len);
    else if (n == 1 && sts[0].handler != SRV_H_ENGINE)
        execute_admin(c, id, &sts[0]);
    else if (n == 1)
        execute_one(c, id, &sts[0], t0);
    else
        execute_many(c, id, sts, n, me, t0);
    free_stmts(sts, n);
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

static void authenticated(srv_conn *c, const char *id, const srv_user *u) {
    char err[256];
    if (!srv_authz_session(&c->srv->users, u, c->kg)) {
        srv_send_error(c, id, "access_denied", "Access denied");
        srv_ws_close(c, 1008);
        srv_conn_close(c);
        return;
    }
    if (!srv_session_open(c, c->kg, err, sizeof err)) {
        srv_send_error(c, id, strncmp(err, "Access", 6) == 0 ? "access_denied" : "not_found", err);
        srv_ws_close(c, 1008);
        srv_conn_close(c);
        return;
    }
    srv_preauth_release(c);
    c->authed = true;
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "authenticated", id);
    il_buf_printf(&b, ",\"session_id\":\"%s\",\"knowledge_graph\":", c->session_id);
    srv_json_str(&b, c->kg, strlen(c->kg));
    il_buf_printf(&b,
                  ",\"version\":\"" SRV_VERSION "\",\"role\":\"%s\",\"protocol_version\":%d,"
                  "\"stream_epoch\":\"%s\"}",
                  srv_role_name(u->role), SRV_PROTOCOL_VERSION, c->srv->epoch);
    send_buf(c, &b);
    il_buf_free(&b);
    srv_timer_start(c, (uint64_t)c->srv->cfg->ws_idle_timeout_ms);
}

static const char *str_field(json_t *o, const char *key, size_t *len) {
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) return NULL;
    if (len) *len = json_string_length(v);
    return json_string_value(v);
}

/* A failed attempt: three close the connection. */
static void auth_failed(srv_conn *c, const char *id, const char *code, const char *msg) {
    send_auth_error(c, id, code, msg);
    if (++c->auth_failures >= SRV_MAX_AUTH_FAILS) {
        srv_ws_close(c, 1008);
        srv_conn_close(c);
    }
}

static void login(srv_conn *c, const char *id, const char *name, const char *pw) {
    srv_server *s = c->srv;
    uint64_t wait = srv_login_wait(s, c->ip, name);
    if (wait) {
        /* Refused without verifying: a guess made during the backoff tells nothing. */
        s->counters.rejections[SRV_REJ_LOGIN_BACKOFF]++;
        char msg[128];
        snprintf(msg, sizeof msg, "Too many failed login attempts; try again in %llu s",
                 (unsigned long long)((wait + 999) / 1000));
        auth_failed(c, id, "rate_limited", msg);
        return;
    }
    srv_user *u = srv_users_check_password(&s->users, name, pw);
    if (!u) {
        srv_login_failed(s, c->ip, name);
        s->counters.auth_failures[SRV_AUTH_PASSWORD]++;
        auth_failed(c, id, "access_denied", "Invalid credentials");
        return;
    }
    srv_login_ok(s, c->ip, name);
    snprintf(c->user, sizeof c->user, "%s", u->name);
    c->via = SRV_VIA_PASSWORD;
    authenticated(c, id, u);
}

/* API keys skip the login backoff: they are 256-bit secrets, not guessable words. */
static void authenticate(srv_conn *c, const char *id, const char *secret, size_t len) {
    srv_server *s = c->srv;
    srv_key *k = srv_users_key_by_secret(&s->users, secret, len);
    srv_user *owner = k ? srv_users_find(&s->users, k->owner) : NULL;
    int64_t now = srv_wall_ms();
    const char *failure = !k                        ? "Invalid API key"
                          : srv_key_expired(k, now) ? "API key expired"
                          : !owner                  ? "API key owner not found"
                                                    : NULL;
    if (failure) {
        s->counters.auth_failures[SRV_AUTH_API_KEY]++;
        auth_failed(c, id, "access_denied", failure);
        return;
    }
    k->last_used_ms = now;
    snprintf(c->user, sizeof c->user, "%s", owner->name);
    c->via = SRV_VIA_KEY;
    c->key_id = k->id;
    authenticated(c, id, owner);
}

static void auth_phase(srv_conn *c, const char *id, const char *type, json_t *root,
                       const char *bad) {
    static const char INVALID[] = "Invalid message format. Send login or authenticate.";
    if (bad) {
        send_auth_error(c, id, "invalid_request", INVALID);
    } else if (strcmp(type, "login") == 0) {
        const char *user = str_field(root, "username", NULL),
                   *pw = str_field(root, "password", NULL);
        if (!user || !pw)
            send_auth_error(c, id, "invalid_request", INVALID);
        else
            login(c, id, user, pw);
    } else if (strcmp(type, "authenticate") == 0) {
        size_t klen;
        const char *key = str_field(root, "api_key", &klen);
        if (!key)
            send_auth_error(c, id, "invalid_request", INVALID);
        else
            authenticate(c, id, key, klen);
    } else {
        send_auth_error(c, id, "invalid_request",
                        "Authentication required. Send login or authenticate first.");
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
            /* Subscription deltas go out after the reply to the request that caused them. */
            srv_subs_publish(c->srv);
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
    if (c->authed) srv_timer_start(c, (uint64_t)c->srv->cfg->ws_idle_timeout_ms);
    if (!srv_rate_ws(c)) {
        /* Over the rate the message is not processed. Before authentication the
         * connection is closed as well, so that auth attempts cannot be sprayed. */
        c->srv->counters.rejections[SRV_REJ_WS_RATE]++;
        char text[96];
        snprintf(text, sizeof text, "Rate limit exceeded (%lld msgs/sec)",
                 (long long)c->srv->cfg->ws_max_messages_per_sec);
        if (c->authed) {
            srv_send_error(c, id, "rate_limited", text);
        } else {
            send_auth_error(c, id, "rate_limited", text);
            srv_ws_close(c, 1008);
            srv_conn_close(c);
        }
    } else if (!c->authed) {
        auth_phase(c, id, type, root, bad[0] ? bad : NULL);
    } else if (bad[0]) {
        srv_send_error(c, id, "invalid_request", bad);
    } else {
        ready_phase(c, id, type, root);
    }
    json_decref(root);
}

void srv_proto_timeout(srv_conn *c) {
    /* An HTTP connection that stayed without a complete request. */
    if (c->state == SRV_HTTP) {
        srv_conn_close(c);
        return;
    }
    if (c->state != SRV_WS) return;
    if (c->authed) {
        srv_notice_close(c, SRV_N_IDLE_TIMEOUT, "Idle timeout", 1000);
    } else {
        char msg[96];
        snprintf(msg, sizeof msg, "Authentication timeout (%gs)",
                 (double)c->srv->cfg->ws_auth_timeout_ms / 1000.0);
        srv_notice_close(c, SRV_N_AUTH_TIMEOUT, msg, 1008);
    }
}
