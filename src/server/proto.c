/* The WebSocket protocol's frames (protocol v5 subset): authentication (passwords with
 * login backoff, API keys), then every frame becomes a request of the connection's
 * pipeline: execute (with id, timeout_ms), read (snapshot reads), subscribe (groups,
 * srv_subgroup.h), ping, cancel (acted on when read, answered in order), the message rate
 * limit, and invalid_request errors for malformed frames and duplicate ids. Programs run
 * in srv_exec.c, reads in srv_read.c. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strcopy.h"
#include "base/phase.h"
#include "server/server.h"
#include "server/srv_authz.h"
#include "server/srv_exec.h"
#include "server/srv_frame.h"
#include "server/srv_notify.h"
#include "server/srv_pipeline.h"
#include "server/srv_read.h"
#include "server/srv_subgroup.h"
#include "server/srv_subs.h"

/* ---- frames ---- */

static void send_auth_error(srv_conn *c, const char *id, const char *code, const char *msg) {
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "auth_error", id);
    il_buf_puts(&b, ",\"message\":");
    il_json_str(&b, msg, strlen(msg));
    il_buf_printf(&b, ",\"code\":\"%s\"}", code);
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}

/* The credential is good: `authenticated` goes out now (the graph is checked against the
 * list the engine last reported). Called with users_lock held; false when the graph
 * refuses the session (the connection is closing). Then open_session. */
static bool authenticated(srv_conn *c, const char *id, const srv_user *u) {
    char err[400] = "";
    if (!srv_authz_session(&c->srv->users, u, c->kg))
        snprintf(err, sizeof err, "Access denied");
    else if (strcmp(c->kg, "_internal") == 0)
        snprintf(err, sizeof err, "Access denied: '_internal' is a system knowledge graph");
    else if (c->kg_too_long)
        snprintf(err, sizeof err,
                 "Knowledge graph '%s...' not found: Knowledge graph not found: %s...", c->kg,
                 c->kg);
    else if (!srv_graph_known(c->srv, c->kg))
        snprintf(err, sizeof err, "Knowledge graph '%s' not found: Knowledge graph not found: %s",
                 c->kg, c->kg);
    if (err[0]) {
        srv_send_error(c, id, strncmp(err, "Access", 6) == 0 ? "access_denied" : "not_found", err);
        srv_ws_close(c, 1008);
        srv_conn_close(c);
        return false;
    }
    srv_preauth_release(c);
    c->authed = true;
    srv_new_session_id(c);
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "authenticated", id);
    il_buf_printf(&b, ",\"session_id\":\"%s\",\"knowledge_graph\":", c->session_id);
    il_json_str(&b, c->kg, strlen(c->kg));
    il_buf_printf(&b,
                  ",\"version\":\"" SRV_VERSION "\",\"role\":\"%s\",\"protocol_version\":%d,"
                  "\"stream_epoch\":\"%s\"}",
                  srv_role_name(u->role), SRV_PROTOCOL_VERSION, c->srv->epoch);
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
    srv_timer_start(c, (uint64_t)c->srv->cfg->ws_idle_timeout_ms);
    return true;
}

/* After `authenticated`, users_lock released (the notification log's lock is never taken
 * under it): the session opens in a job that is the first request of the pipeline, so
 * that authentication never waits for the engine. The job may run after commits made
 * once the client could have read `authenticated` (its frame is written when this message
 * is done), so the session's notifications start from the last seq published now, not
 * from where the log is when the job runs. */
static void open_session(srv_conn *c) {
    c->notify_from = srv_notify_last_seq(c->srv->notify);
    srv_session_open_async(c);
}

/* A failed attempt: three close the connection. */
static void auth_failed(srv_conn *c, const char *id, const char *code, const char *msg) {
    send_auth_error(c, id, code, msg);
    if (++c->auth_failures >= SRV_MAX_AUTH_FAILS) {
        srv_ws_close(c, 1008);
        srv_conn_close(c);
    }
}

/* `msg` is the login's message, held whole when the login is delayed. */
static void login(srv_conn *c, const char *id, const char *name, const char *pw, const char *msg,
                  size_t len) {
    srv_server *s = c->srv;
    uint64_t wait = srv_login_wait(s, c->ip);
    if (wait) {
        /* Refused without verifying: a guess made during the backoff tells nothing. */
        s->counters.rejections[SRV_REJ_LOGIN_BACKOFF]++;
        char text[128];
        snprintf(text, sizeof text, "Too many failed login attempts; try again in %llu s",
                 (unsigned long long)((wait + 999) / 1000));
        auth_failed(c, id, "rate_limited", text);
        return;
    }
    uint64_t delay = srv_login_delay(s, name);
    if (delay && !c->login_delay_served) {
        srv_login_defer(c, msg, len, delay);
        return;
    }
    pthread_mutex_lock(&s->users_lock);
    srv_user *u = srv_users_check_password(&s->users, name, pw);
    if (!u) {
        pthread_mutex_unlock(&s->users_lock);
        srv_login_failed(s, c->ip, name);
        srv_count(s->counters.auth_failures[SRV_AUTH_PASSWORD]);
        auth_failed(c, id, "access_denied", "Invalid credentials");
        return;
    }
    srv_login_ok(s, name);
    il_str_copy(c->user, sizeof c->user, u->name);
    c->via = SRV_VIA_PASSWORD;
    bool ok = authenticated(c, id, u);
    pthread_mutex_unlock(&s->users_lock);
    if (ok) open_session(c);
}

/* API keys skip the login backoff: they are 256-bit secrets, not guessable words. */
static void authenticate(srv_conn *c, const char *id, const char *secret, size_t len) {
    srv_server *s = c->srv;
    pthread_mutex_lock(&s->users_lock);
    srv_key *k = srv_users_key_by_secret(&s->users, secret, len);
    srv_user *owner = k ? srv_users_find(&s->users, k->owner) : NULL;
    int64_t now = srv_wall_ms();
    const char *failure = !k                        ? "Invalid API key"
                          : srv_key_expired(k, now) ? "API key expired"
                          : !owner                  ? "API key owner not found"
                                                    : NULL;
    if (failure) {
        pthread_mutex_unlock(&s->users_lock);
        srv_count(s->counters.auth_failures[SRV_AUTH_API_KEY]);
        auth_failed(c, id, "access_denied", failure);
        return;
    }
    k->last_used_ms = now;
    il_str_copy(c->user, sizeof c->user, owner->name);
    c->via = SRV_VIA_KEY;
    c->key_id = k->id;
    bool ok = authenticated(c, id, owner);
    pthread_mutex_unlock(&s->users_lock);
    if (ok) open_session(c);
}

/* bad: why the frame is malformed (NULL when it is not); told as it is when it is a NUL,
 * which a client may not notice it sent. */
static void auth_phase(srv_conn *c, const char *id, const char *type, const srv_frame *f,
                       const char *bad, bool nul, const char *msg, size_t len) {
    static const char INVALID[] = "Invalid message format. Send login or authenticate.";
    if (bad) {
        send_auth_error(c, id, "invalid_request", nul ? bad : INVALID);
    } else if (strcmp(type, "login") == 0) {
        const char *user = srv_frame_str(f, "username", NULL),
                   *pw = srv_frame_str(f, "password", NULL);
        if (!user || !pw)
            send_auth_error(c, id, "invalid_request", INVALID);
        else
            login(c, id, user, pw, msg, len);
    } else if (strcmp(type, "authenticate") == 0) {
        size_t klen;
        const char *key = srv_frame_str(f, "api_key", &klen);
        if (!key)
            send_auth_error(c, id, "invalid_request", INVALID);
        else
            authenticate(c, id, key, klen);
    } else {
        send_auth_error(c, id, "invalid_request",
                        "Authentication required. Send login or authenticate first.");
    }
}

/* One deadline per execute or read, from when the frame was read; timeout_ms can only
 * shorten it. */
static void set_deadline(srv_req *r, int64_t timeout) {
    int64_t ms = r->conn->srv->cfg->query_timeout_ms;
    if (timeout > 0 && (ms <= 0 || timeout < ms)) ms = timeout;
    if (ms > 0) r->deadline_ns = r->received_ns + (uint64_t)ms * 1000000u;
}

/* `sts`: the program already split (and prepared), else NULL. */
static void execute(srv_conn *c, const char *id, const char *prog, size_t len, int64_t timeout,
                    srv_stmt *sts, size_t nstmts) {
    srv_req *r = srv_pipe_new(c, SRV_RK_EXECUTE, id);
    r->program = malloc(len + 1);
    memcpy(r->program, prog, len);
    r->program[len] = 0;
    r->len = len;
    bool read_only;
    int64_t max = c->srv->cfg->max_query_size_bytes;
    if (sts || max <= 0 || len <= (uint64_t)max) {
        r->stmts = sts ? sts : srv_exec_split(prog, len, &nstmts);
        r->nstmts = nstmts;
    } /* else refused when it runs, unprepared (srv_exec.c) */
    srv_exec_classify(r->stmts, r->nstmts, &read_only, &r->identity, &r->fact_writes);
    r->access = read_only ? SRV_SHARED : SRV_EXCLUSIVE;
    set_deadline(r, timeout);
}

static void reply_error(srv_conn *c, const char *id, const char *code, const char *msg) {
    srv_req *r = srv_pipe_reply_begin(c, id);
    srv_send_error(c, id, code, msg);
    srv_pipe_reply_end(r);
}

/* Whether a program only queries or (un)subscribes, so that a revision precondition on it
 * means nothing. The program is split (and prepared) here for such a precondition, once:
 * *sts and *nstmts receive it for execute(). */
static bool writes_nothing(const char *prog, size_t len, srv_stmt **sts, size_t *nstmts) {
    bool read_only, identity;
    *sts = srv_exec_split(prog, len, nstmts);
    srv_exec_classify(*sts, *nstmts, &read_only, &identity, NULL);
    return read_only || srv_subs_is_command(prog, len);
}

/* An execute with its optional revision precondition (protocol-later.md 1.3): an integer
 * expect_revision >= 0, and expect_epoch (a string) and expect_relations (a non-empty array
 * of names) that need it. Programs of queries, explanations and listings only, and
 * .subscribe / .unsubscribe, write nothing and may not carry one. */
static void expect_check(srv_conn *c, const char *id, const char *prog, size_t len, srv_frame *f,
                         int64_t timeout) {
    bool any = srv_frame_has(f, "expect_revision") || srv_frame_has(f, "expect_epoch") ||
               srv_frame_has(f, "expect_relations");
    json_t *root = any ? srv_frame_json(f) : NULL;
    if (any && !root) { /* out of memory: a precondition is never skipped */
        reply_error(c, id, "internal", "Out of memory reading the request");
        return;
    }
    json_t *rev = json_object_get(root, "expect_revision");
    json_t *epoch = json_object_get(root, "expect_epoch");
    json_t *rels = json_object_get(root, "expect_relations");
    if ((rev && (!json_is_integer(rev) || json_integer_value(rev) < 0)) ||
        (epoch && !json_is_string(epoch))) {
        reply_error(c, id, "invalid_request",
                    "Invalid message format: expect_revision must be an integer >= 0 and "
                    "expect_epoch a string");
        return;
    }
    bool rels_ok = !rels || (json_is_array(rels) && json_array_size(rels) > 0);
    for (size_t i = 0; rels_ok && i < json_array_size(rels); i++) {
        json_t *name = json_array_get(rels, i);
        rels_ok = json_is_string(name) && json_string_length(name) > 0;
    }
    if (!rels_ok) {
        reply_error(c, id, "invalid_request",
                    "Invalid message format: expect_relations must be a non-empty array of "
                    "relation names");
        return;
    }
    if ((epoch || rels) && !rev) {
        reply_error(c, id, "invalid_request",
                    epoch ? "Invalid message format: expect_epoch needs expect_revision"
                          : "Invalid message format: expect_relations needs expect_revision");
        return;
    }
    srv_stmt *sts = NULL;
    size_t nstmts = 0;
    if (rev && writes_nothing(prog, len, &sts, &nstmts)) {
        srv_exec_free_stmts(sts, nstmts);
        reply_error(c, id, "invalid_request",
                    "Invalid message format: expect_revision on a program that writes nothing");
        return;
    }
    execute(c, id, prog, len, timeout, sts, nstmts);
    if (rev) {
        srv_req *r = c->reqs_tail;
        r->has_expect = true;
        r->expect_revision = (uint64_t)json_integer_value(rev);
        r->expect_epoch_ok = !epoch || strcmp(json_string_value(epoch), c->srv->epoch) == 0;
        r->nexpect_rels = json_array_size(rels);
        r->expect_rels = r->nexpect_rels ? calloc(r->nexpect_rels, sizeof *r->expect_rels) : NULL;
        for (size_t i = 0; i < r->nexpect_rels; i++)
            r->expect_rels[i] = strdup(json_string_value(json_array_get(rels, i)));
    }
    srv_pipe_pump(c);
}

/* A subscription group: exclusive, like `.subscribe`, with the server's query deadline
 * for its wait in the pipeline. */
static void subscribe(srv_conn *c, const char *id, srv_frame *f) {
    char why[160];
    json_t *root = srv_frame_json(f);
    if (!root) {
        reply_error(c, id, "internal", "Out of memory reading the request");
        return;
    }
    srv_group_spec *g = srv_group_parse(root, why, sizeof why);
    if (!g) {
        reply_error(c, id, "invalid_request", why);
        return;
    }
    srv_req *r = srv_pipe_new(c, SRV_RK_SUBSCRIBE, id);
    r->group = g;
    int64_t ms = c->srv->cfg->query_timeout_ms;
    if (ms > 0) r->deadline_ns = r->received_ns + (uint64_t)ms * 1000000u;
    srv_pipe_pump(c);
}

/* A read is shared: it runs beside the connection's other reads. */
static void read_frame(srv_conn *c, const char *id, srv_frame *f) {
    int64_t timeout;
    char err[160];
    char *packed;
    size_t len;
    if (!srv_frame_timeout(f, &timeout)) {
        reply_error(c, id, "invalid_request",
                    "Invalid message format: timeout_ms must be an integer >= 0");
    } else if (!srv_read_pack(json_object_get(srv_frame_json(f), "queries"), &packed, &len, err,
                              sizeof err)) {
        reply_error(c, id, "invalid_request", err);
    } else {
        srv_req *r = srv_pipe_new(c, SRV_RK_READ, id);
        r->program = packed;
        r->len = len;
        r->access = SRV_SHARED;
        set_deadline(r, timeout);
        srv_pipe_pump(c);
    }
}

static void ready_phase(srv_conn *c, const char *id, const char *type, srv_frame *f) {
    if (id && srv_pipe_id_in_use(c, id)) {
        /* The error must not carry the id: it would be taken for the other's reply. */
        reply_error(c, NULL, "invalid_request",
                    "Invalid message format: id is already used by a request in progress");
        return;
    }
    if (strcmp(type, "execute") == 0) {
        size_t len;
        const char *prog = srv_frame_str(f, "program", &len);
        int64_t timeout;
        if (!prog) {
            reply_error(c, id, "invalid_request",
                        "Invalid message format: execute needs a string `program`");
        } else if (!srv_frame_timeout(f, &timeout)) {
            reply_error(c, id, "invalid_request",
                        "Invalid message format: timeout_ms must be an integer >= 0");
        } else if (srv_frame_has(f, "params")) {
            reply_error(c, id, "unsupported", "params are not supported by this server yet");
        } else {
            expect_check(c, id, prog, len, f, timeout);
        }
    } else if (strcmp(type, "ping") == 0) {
        srv_req *r = srv_pipe_reply_begin(c, id);
        il_buf b;
        il_buf_init(&b);
        srv_json_open(&b, "pong", id);
        il_buf_putc(&b, '}');
        srv_ws_send(c, b.data, b.len);
        il_buf_free(&b);
        srv_pipe_reply_end(r);
    } else if (strcmp(type, "cancel") == 0) {
        size_t tlen;
        const char *target = srv_frame_str(f, "target", &tlen);
        if (!target || tlen == 0 || tlen > 64) {
            reply_error(c, id, "invalid_request",
                        "Invalid message format: cancel needs a string `target` id");
            return;
        }
        /* Acted on now, wherever the target is; the ack follows the target's reply. */
        const char *outcome = srv_pipe_cancel(c, target);
        srv_req *r = srv_pipe_reply_begin(c, id);
        il_buf b;
        il_buf_init(&b);
        srv_json_open(&b, "cancel_ack", id);
        il_buf_puts(&b, ",\"target\":");
        il_json_str(&b, target, tlen);
        il_buf_printf(&b, ",\"outcome\":\"%s\"}", outcome);
        srv_ws_send(c, b.data, b.len);
        il_buf_free(&b);
        srv_pipe_reply_end(r);
    } else if (strcmp(type, "login") == 0 || strcmp(type, "authenticate") == 0) {
        reply_error(c, id, "invalid_request", "Already authenticated");
    } else if (strcmp(type, "subscribe") == 0) {
        subscribe(c, id, f);
    } else if (strcmp(type, "read") == 0) {
        read_frame(c, id, f);
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "Invalid message format: unknown type '%.64s'", type);
        reply_error(c, id, "invalid_request", msg);
    }
}

void srv_proto_message(srv_conn *c, const char *msg, size_t len) {
    il_phase_mark(IL_PHASE_FRAME);
    if (srv_login_held(c, msg, len)) return;
    srv_frame f;
    srv_frame_read(&f, msg, len);
    const char *id = f.id, *type = f.type, *bad = f.bad;
    if (c->authed) srv_timer_start(c, (uint64_t)c->srv->cfg->ws_idle_timeout_ms);
    if (!srv_rate_ws(c)) {
        /* Over the rate the message is not processed. Before authentication the
         * connection is closed as well, so that auth attempts cannot be sprayed. */
        srv_count(c->srv->counters.rejections[SRV_REJ_WS_RATE]);
        char text[96];
        snprintf(text, sizeof text, "Rate limit exceeded (%lld msgs/sec)",
                 (long long)c->srv->cfg->ws_max_messages_per_sec);
        if (c->authed) {
            reply_error(c, id, "rate_limited", text);
        } else {
            send_auth_error(c, id, "rate_limited", text);
            srv_ws_close(c, 1008);
            srv_conn_close(c);
        }
    } else if (!c->authed) {
        auth_phase(c, id, type, &f, bad[0] ? bad : NULL, f.refused_nul, msg, len);
    } else if (bad[0]) {
        reply_error(c, id, "invalid_request", bad);
    } else {
        il_phase_mark(IL_PHASE_DECODE);
        ready_phase(c, id, type, &f);
    }
    srv_frame_free(&f);
    if (c->state == SRV_WS && c->authed) srv_pipe_pump(c);
}

void srv_proto_timeout(srv_conn *c) {
    /* An HTTP connection that stayed without a complete request. */
    if (c->state == SRV_HTTP) {
        srv_conn_close(c);
        return;
    }
    if (c->state != SRV_WS) return;
    if (srv_login_resume(c)) return;
    if (c->authed && c->reqs) {
        /* A connection with requests in progress is not idle: released replies re-arm. */
        return;
    }
    if (c->authed) {
        srv_notice_close(c, SRV_N_IDLE_TIMEOUT, "Idle timeout", 1000);
    } else {
        char msg[96];
        snprintf(msg, sizeof msg, "Authentication timeout (%gs)",
                 (double)c->srv->cfg->ws_auth_timeout_ms / 1000.0);
        srv_notice_close(c, SRV_N_AUTH_TIMEOUT, msg, 1008);
    }
}
