/* The CLI's server mode: a blocking WebSocket client (wslay) on one TCP connection.
 * Each statement is one `execute` with an id; its reply (result, result_start/chunk/end
 * or error) becomes a cli_reply with cells formatted as the in-process path formats
 * them. Pushes (notifications, pongs) are skipped; a notice's code is kept so that a
 * refused connection can be told from a lost one.
 *
 * Refusals are retried, never dropped: a connection refused for load (HTTP 429 or 503
 * at /health or the upgrade, `rate_limited` or `overloaded` while authenticating, or a
 * close after an `overloaded` notice) is opened again with backoff for up to
 * CONNECT_RETRY_SECS; a statement answered `rate_limited` or `overloaded` was not run,
 * so it is sent again with backoff for up to STATEMENT_RETRY_SECS.
 *
 * For the REPL: an interrupt flag (Ctrl-C) sends a `cancel` for the statement awaited;
 * the connection can be polled between statements without blocking (subscription
 * deltas are gathered as text then, and a lost connection is noticed before a statement
 * is sent), and opened again with the same credentials. */
#include "client/remote.h"

#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <wslay/wslay.h>

#include "base/buf.h"
#include "value/print.h"
#include "value/value.h"

enum {
    REPLY_TIMEOUT_SECS = 120,
    CONNECT_RETRY_SECS = 60,
    STATEMENT_RETRY_SECS = 120,
    BACKOFF_FIRST_MS = 25,
    BACKOFF_MAX_MS = 1000,
};

struct cli_remote {
    int fd;
    wslay_event_context_ptr ws;
    il_buf pre; /* bytes read with the handshake response that belong to frames */
    size_t pre_pos;
    unsigned next_id;
    char want_id[16];
    cli_reply *reply; /* being assembled */
    bool done, failed;
    char err[256];
    bool auth_ok; /* the answer to the authentication frame */
    char auth_msg[256];
    char code[32];   /* `code` of the last error or auth_error answering want_id */
    char notice[32]; /* `code` of the last notice (sent before the server closes) */
    /* What the connection was opened with, to open it again (cli_remote_reopen). */
    char *url, *api_key, *user, *password;
    const volatile int *interrupt; /* non-zero: cancel the statement awaited */
    bool cancel_due, cancel_sent;
    bool polling;  /* cli_remote_poll: reads do not block */
    il_buf pushes; /* subscription deltas as printable lines, not yet taken */
};

static double now_secs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps for the current backoff (with jitter, so that clients refused together do not
 * come back together) and doubles it. */
static void backoff(unsigned *ms) {
    unsigned char rnd = 0;
    RAND_bytes(&rnd, 1);
    unsigned wait = *ms / 2 + (unsigned)((unsigned long)*ms * rnd / 512);
    struct timespec ts = {.tv_sec = wait / 1000, .tv_nsec = (long)(wait % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    *ms = *ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : *ms * 2;
}

static bool refused_code(const char *code) {
    return strcmp(code, "rate_limited") == 0 || strcmp(code, "overloaded") == 0;
}

static int dial(const char *host, const char *port, char *err, size_t errlen) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "cannot connect to %s:%s: %s", host, port, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {.tv_sec = REPLY_TIMEOUT_SECS};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static bool send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Reads an HTTP response head; the bytes after it are left in *rest. */
static bool read_head(int fd, il_buf *head, il_buf *rest) {
    char buf[4096];
    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        il_buf_put(head, buf, (size_t)k);
        char *end = strstr(head->data, "\r\n\r\n");
        if (end) {
            size_t hl = (size_t)(end + 4 - head->data);
            if (rest) il_buf_put(rest, head->data + hl, head->len - hl);
            head->len = hl;
            head->data[hl] = 0;
            return true;
        }
        if (head->len > 65536) return false;
    }
}

static int status_of(const il_buf *head) {
    int st = 0;
    if (!head->data || sscanf(head->data, "HTTP/1.%*d %d", &st) != 1) return 0;
    return st;
}

/* GET /health must answer 2xx before the WebSocket is opened, as in the original.
 * *status is the HTTP status (0 when there was no answer). */
static bool health(const char *host, const char *port, int *status, char *err, size_t errlen) {
    int fd = dial(host, port, err, errlen);
    if (fd < 0) return false;
    char req[512];
    snprintf(req, sizeof req, "GET /health HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n",
             host, port);
    il_buf head;
    il_buf_init(&head);
    bool ok = send_all(fd, req, strlen(req)) && read_head(fd, &head, NULL);
    int st = ok ? status_of(&head) : 0;
    *status = st;
    il_buf_free(&head);
    close(fd);
    if (!ok) {
        snprintf(err, errlen, "no answer from %s:%s/health", host, port);
        return false;
    }
    if (st < 200 || st > 299) {
        snprintf(err, errlen, "Server returned error: %d", st);
        return false;
    }
    return true;
}

static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                       void *user) {
    (void)flags;
    cli_remote *r = user;
    /* Stop reading once the awaited reply is complete: the socket blocks. */
    if (r->done) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (r->pre_pos < r->pre.len) {
        size_t n = r->pre.len - r->pre_pos;
        if (n > len) n = len;
        memcpy(buf, r->pre.data + r->pre_pos, n);
        r->pre_pos += n;
        return (ssize_t)n;
    }
    ssize_t k;
    for (;;) {
        k = recv(r->fd, buf, len, r->polling ? MSG_DONTWAIT : 0);
        if (k >= 0 || errno != EINTR) break;
        /* Ctrl-C while a statement runs: round_trip sends the cancel, then reads on. */
        if (r->interrupt && *r->interrupt && !r->cancel_sent && r->want_id[0]) {
            r->cancel_due = true;
            wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
            return -1;
        }
    }
    if (k < 0 && r->polling && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (k <= 0) {
        snprintf(r->err, sizeof r->err, "%s",
                 k == 0            ? "connection closed by the server"
                 : errno == EAGAIN ? "timed out waiting for the server"
                                   : strerror(errno));
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    return k;
}

static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *user) {
    (void)flags;
    cli_remote *r = user;
    ssize_t k;
    do k = send(r->fd, data, len, MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    if (k < 0) {
        snprintf(r->err, sizeof r->err, "%s", strerror(errno));
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    return k;
}

static int genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *user) {
    (void)ctx;
    (void)user;
    return RAND_bytes(buf, (int)len) == 1 ? 0 : -1;
}

/* ---- reply assembly ---- */

/* The table cell text of a JSON value, as il_value_format writes the value the server
 * had: strings quoted with escapes, floats in shortest form, vectors as lists. */
static char *cell_text(json_t *v, bool *numeric) {
    il_buf b;
    il_buf_init(&b);
    *numeric = json_is_number(v);
    if (json_is_string(v)) {
        val_fmt_cell(val_str(json_string_value(v), json_string_length(v)), &b);
    } else if (json_is_integer(v)) {
        il_buf_printf(&b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        fmt_f64_shortest(json_real_value(v), &b);
    } else if (json_is_true(v) || json_is_false(v)) {
        il_buf_puts(&b, json_is_true(v) ? "true" : "false");
    } else if (json_is_array(v)) {
        /* i8 vectors are integers only; f32 vectors are written with a fraction, each
         * element as the shortest text of its value widened to f64 (as cells print it). */
        bool ints = true;
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) if (!json_is_integer(e)) ints = false;
        il_buf_putc(&b, '[');
        json_array_foreach(v, i, e) {
            if (i) il_buf_puts(&b, ", ");
            if (ints)
                il_buf_printf(&b, "%lld", (long long)json_integer_value(e));
            else
                fmt_f64_shortest(json_number_value(e), &b);
        }
        il_buf_putc(&b, ']');
    } else {
        il_buf_puts(&b, "null");
    }
    return il_buf_take(&b);
}

static void add_split_lines(cli_reply *p, const char *text) {
    for (const char *s = text;;) {
        const char *nl = strchr(s, '\n');
        cli_reply_add_line(p, s, nl ? (size_t)(nl - s) : strlen(s));
        if (!nl) break;
        s = nl + 1;
    }
}

static il_stmt_class class_of(json_t *o) {
    static const struct {
        const char *name;
        il_stmt_class cls;
    } names[] = {{"query", IL_STMT_QUERY},
                 {"session_rule", IL_STMT_SESSION_RULE},
                 {"session_fact", IL_STMT_SESSION_FACT},
                 {"kg_switch", IL_STMT_KG_SWITCH},
                 {"session_clear", IL_STMT_SESSION_CLEAR},
                 {"rel_show", IL_STMT_REL_SHOW},
                 {"client_only", IL_STMT_CLIENT_ONLY}};
    const char *s = json_string_value(json_object_get(o, "statement_class"));
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return names[i].cls;
    return IL_STMT_OTHER;
}

static void add_rows(cli_reply *p, json_t *rows) {
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        if (p->kind == IL_RESULT_MESSAGE) {
            json_t *v = json_array_get(row, 0);
            cli_reply_add_line(p, json_is_string(v) ? json_string_value(v) : "",
                               json_is_string(v) ? json_string_length(v) : 0);
            continue;
        }
        size_t n = p->nrows++;
        p->cells = realloc(p->cells, (p->nrows * p->ncols + 1) * sizeof *p->cells);
        p->numeric = realloc(p->numeric, (p->nrows * p->ncols + 1) * sizeof *p->numeric);
        p->json = realloc(p->json, (p->nrows * p->ncols + 1) * sizeof *p->json);
        for (size_t c = 0; c < p->ncols; c++) {
            json_t *v = json_array_get(row, c);
            bool num = false;
            p->cells[n * p->ncols + c] = v ? cell_text(v, &num) : NULL;
            p->numeric[n * p->ncols + c] = num;
            p->json[n * p->ncols + c] = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        }
    }
}

/* result or result_start: the reply's kind, class and columns. */
static cli_reply *start_reply(json_t *o) {
    json_t *cols = json_object_get(o, "columns");
    const char *rk = json_string_value(json_object_get(o, "result_kind"));
    bool message;
    if (rk)
        message = strcmp(rk, "message") == 0;
    else
        message = json_array_size(cols) == 1 &&
                  strcmp(json_string_value(json_array_get(cols, 0)) ?: "", "message") == 0;
    cli_reply *p = cli_reply_new(message ? IL_RESULT_MESSAGE : IL_RESULT_TABLE, class_of(o));
    if (!message) {
        p->ncols = json_array_size(cols);
        p->cols = calloc(p->ncols + 1, sizeof *p->cols);
        for (size_t c = 0; c < p->ncols; c++) {
            const char *name = json_string_value(json_array_get(cols, c));
            p->cols[c] = strdup(name ? name : "");
        }
    }
    const char *head = json_string_value(json_object_get(o, "rule_head"));
    if (head) {
        p->rule_head = strdup(head);
        p->arity = (uint32_t)json_integer_value(json_object_get(o, "rule_arity"));
    }
    const char *title = json_string_value(json_object_get(o, "title"));
    if (title) p->title = strdup(title);
    p->nerrors = json_array_size(json_object_get(o, "errors"));
    json_t *counts = json_object_get(o, "statements"), *sc;
    size_t k;
    p->counted = json_is_array(counts);
    json_array_foreach(counts, k, sc) {
        json_int_t ins = json_integer_value(json_object_get(sc, "inserted"));
        json_int_t del = json_integer_value(json_object_get(sc, "deleted"));
        p->written +=
            (unsigned long long)(ins > 0 ? ins : 0) + (unsigned long long)(del > 0 ? del : 0);
    }
    json_t *meta = json_object_get(o, "metadata");
    if (json_is_object(meta)) {
        char *text = json_dumps(meta, JSON_COMPACT);
        cli_reply_set_warnings(p, text);
        free(text);
    }
    json_t *proofs = json_object_get(o, "proof_trees");
    if (json_is_array(proofs)) p->proof_trees = json_dumps(proofs, JSON_COMPACT);
    json_t *total = json_object_get(o, "total_count");
    if (json_is_true(json_object_get(o, "truncated")) && json_is_integer(total) &&
        json_integer_value(total) > 0)
        p->total_rows = (size_t)json_integer_value(total);
    return p;
}

/* `+ row` and `- row` lines of a delta's rows, cells as a table prints them. */
static void push_rows(cli_remote *r, json_t *rows, char sign) {
    size_t i, j;
    json_t *row, *v;
    json_array_foreach(rows, i, row) {
        il_buf_printf(&r->pushes, "%c ", sign);
        json_array_foreach(row, j, v) {
            bool num;
            char *cell = cell_text(v, &num);
            il_buf_printf(&r->pushes, "%s%s", j ? ", " : "", cell);
            free(cell);
        }
        il_buf_putc(&r->pushes, '\n');
    }
}

/* A subscription push as lines: a header naming the subscription and the revision, then
 * the rows it retracted and inserted. */
static void on_push(cli_remote *r, const char *type, json_t *o) {
    const char *name = json_string_value(json_object_get(o, "subscription"));
    if (!name) name = "?";
    if (strcmp(type, "subscription_delta") == 0 || strcmp(type, "subscription_delta_start") == 0 ||
        strcmp(type, "subscription_group_delta") == 0 ||
        strcmp(type, "subscription_group_delta_start") == 0) {
        json_t *rev = json_object_get(o, "revision");
        il_buf_printf(&r->pushes, "[%s] revision %lld:\n", name,
                      json_is_integer(rev) ? (long long)json_integer_value(rev) : -1LL);
    }
    if (strncmp(type, "subscription_delta", 18) == 0 ||
        strncmp(type, "subscription_group_delta", 24) == 0) {
        push_rows(r, json_object_get(o, "retracted"), '-');
        push_rows(r, json_object_get(o, "inserted"), '+');
    } else if (strcmp(type, "subscription_error") == 0 || strcmp(type, "subscription_reset") == 0) {
        const char *msg = json_string_value(json_object_get(o, "message"));
        il_buf_printf(&r->pushes, "[%s] %s: %s\n", name, type[13] == 'e' ? "error" : "reset",
                      msg ? msg : "");
    }
}

static void on_frame(cli_remote *r, json_t *o) {
    const char *type = json_string_value(json_object_get(o, "type"));
    const char *id = json_string_value(json_object_get(o, "id"));
    const char *code = json_string_value(json_object_get(o, "code"));
    if (type && strcmp(type, "notice") == 0)
        snprintf(r->notice, sizeof r->notice, "%s", code ? code : "");
    if (type && !id && strncmp(type, "subscription_", 13) == 0) on_push(r, type, o);
    if (!type || !id || strcmp(id, r->want_id) != 0) return; /* pushes and stale replies */
    if (strcmp(type, "error") == 0 || strcmp(type, "auth_error") == 0)
        snprintf(r->code, sizeof r->code, "%s", code ? code : "");
    if (strcmp(type, "authenticated") == 0 || strcmp(type, "auth_error") == 0) {
        r->auth_ok = strcmp(type, "authenticated") == 0;
        snprintf(r->auth_msg, sizeof r->auth_msg, "%s",
                 json_string_value(json_object_get(o, "message")) ?: "");
        r->done = true;
    } else if (strcmp(type, "result") == 0) {
        r->reply = start_reply(o);
        add_rows(r->reply, json_object_get(o, "rows"));
        r->done = true;
    } else if (strcmp(type, "result_start") == 0) {
        r->reply = start_reply(o);
    } else if (strcmp(type, "result_chunk") == 0 && r->reply) {
        add_rows(r->reply, json_object_get(o, "rows"));
    } else if (strcmp(type, "result_end") == 0 && r->reply) {
        r->done = true;
    } else if (strcmp(type, "error") == 0) {
        /* An error after result_start aborts the stream. */
        cli_reply_free(r->reply);
        json_t *ve = json_object_get(o, "validation_errors");
        const char *msg;
        if (json_array_size(ve) > 0) {
            r->reply = cli_reply_new(IL_RESULT_PARSE_ERROR, class_of(o));
            msg = json_string_value(json_object_get(json_array_get(ve, 0), "error"));
        } else {
            r->reply = cli_reply_new(IL_RESULT_ERROR, class_of(o));
            msg = json_string_value(json_object_get(o, "message"));
        }
        add_split_lines(r->reply, msg ? msg : "");
        snprintf(r->auth_msg, sizeof r->auth_msg, "%s", msg ? msg : "");
        r->done = true;
    }
}

static void msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                   void *user) {
    (void)ctx;
    cli_remote *r = user;
    if (arg->opcode != WSLAY_TEXT_FRAME) return;
    json_t *o = json_loadb((const char *)arg->msg, arg->msg_length, JSON_ALLOW_NUL, NULL);
    if (o) on_frame(r, o);
    json_decref(o);
}

static const struct wslay_event_callbacks CALLBACKS = {
    .recv_callback = recv_cb,
    .send_callback = send_cb,
    .genmask_callback = genmask_cb,
    .on_msg_recv_callback = msg_cb,
};

/* Sends one frame and waits for the reply with the frame's id. */
static bool round_trip(cli_remote *r, const char *json, size_t len) {
    r->done = false;
    r->err[0] = 0;
    r->code[0] = 0;
    r->cancel_due = r->cancel_sent = false;
    struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)json, len};
    if (wslay_event_queue_msg(r->ws, &m) != 0 || wslay_event_send(r->ws) != 0) goto fail;
    while (!r->done) {
        if (wslay_event_recv(r->ws) != 0) goto fail;
        if (r->cancel_due && !r->cancel_sent) {
            /* The reply still comes: `cancelled`, or the result when it was too late. */
            r->cancel_sent = true;
            json_t *c =
                json_pack("{s:s,s:s,s:s}", "type", "cancel", "id", "cancel", "target", r->want_id);
            char *text = json_dumps(c, JSON_COMPACT);
            json_decref(c);
            struct wslay_event_msg cm = {WSLAY_TEXT_FRAME, (const uint8_t *)text, strlen(text)};
            int rc = wslay_event_queue_msg(r->ws, &cm);
            free(text);
            if (rc != 0) goto fail;
        }
        if (wslay_event_want_write(r->ws) && wslay_event_send(r->ws) != 0) goto fail;
        if (!r->done && !wslay_event_want_read(r->ws)) {
            if (!r->err[0]) snprintf(r->err, sizeof r->err, "connection closed by the server");
            goto fail;
        }
    }
    return true;
fail:
    if (!r->err[0]) snprintf(r->err, sizeof r->err, "WebSocket error");
    r->failed = true;
    return false;
}

static bool load_status(int st) {
    return st == 429 || st == 503;
}

/* One attempt at /health, the upgrade and authentication. *retry is set when the server
 * refused for load (the attempt may be made again). */
static cli_remote *open_once(const char *url, const char *host, const char *port,
                             const char *api_key, const char *user, const char *password,
                             bool *retry, char *err, size_t errlen) {
    int st = 0;
    if (!health(host, port, &st, err, errlen)) {
        *retry = load_status(st);
        return NULL;
    }
    int fd = dial(host, port, err, errlen);
    if (fd < 0) return NULL;
    unsigned char nonce[16];
    RAND_bytes(nonce, sizeof nonce);
    char key[32];
    EVP_EncodeBlock((unsigned char *)key, nonce, sizeof nonce);
    char req[1024];
    snprintf(req, sizeof req,
             "GET /ws HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
             host, port, key);
    cli_remote *r = calloc(1, sizeof *r);
    r->fd = fd;
    il_buf head;
    il_buf_init(&head);
    bool sent = send_all(fd, req, strlen(req)) && read_head(fd, &head, &r->pre);
    st = sent ? status_of(&head) : 0;
    il_buf_free(&head);
    if (st != 101) {
        if (st)
            snprintf(err, errlen, "WebSocket upgrade of %s/ws failed (HTTP %d)", url, st);
        else
            snprintf(err, errlen, "WebSocket upgrade of %s/ws failed", url);
        *retry = load_status(st);
        cli_remote_close(r);
        return NULL;
    }
    wslay_event_context_client_init(&r->ws, &CALLBACKS, r);
    json_t *o = api_key ? json_pack("{s:s,s:s,s:s}", "type", "authenticate", "id", "auth",
                                    "api_key", api_key)
                        : json_pack("{s:s,s:s,s:s,s:s}", "type", "login", "id", "auth", "username",
                                    user, "password", password ? password : "");
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    snprintf(r->want_id, sizeof r->want_id, "auth");
    bool ok = round_trip(r, text, strlen(text));
    free(text);
    if (!ok || !r->auth_ok) {
        snprintf(err, errlen, "Authentication failed: %s", ok ? r->auth_msg : r->err);
        *retry = refused_code(r->code) || (!ok && refused_code(r->notice));
        cli_remote_close(r);
        return NULL;
    }
    r->failed = false;
    return r;
}

cli_remote *cli_remote_connect(const char *url, const char *api_key, const char *user,
                               const char *password, char *err, size_t errlen) {
    const char *p = url;
    if (strncmp(p, "http://", 7) == 0)
        p += 7;
    else if (strncmp(p, "ws://", 5) == 0)
        p += 5;
    else if (strstr(p, "://")) {
        snprintf(err, errlen, "unsupported URL (use http://host:port): %s", url);
        return NULL;
    }
    char host[256], port[16] = "8080";
    size_t hl = strcspn(p, ":/");
    if (hl == 0 || hl >= sizeof host) {
        snprintf(err, errlen, "invalid server URL: %s", url);
        return NULL;
    }
    memcpy(host, p, hl);
    host[hl] = 0;
    if (p[hl] == ':') {
        size_t pl = strcspn(p + hl + 1, "/");
        if (pl == 0 || pl >= sizeof port) {
            snprintf(err, errlen, "invalid server URL: %s", url);
            return NULL;
        }
        memcpy(port, p + hl + 1, pl);
        port[pl] = 0;
    }
    unsigned wait = BACKOFF_FIRST_MS;
    double give_up = now_secs() + CONNECT_RETRY_SECS;
    for (;;) {
        bool retry = false;
        cli_remote *r = open_once(url, host, port, api_key, user, password, &retry, err, errlen);
        if (r) {
            r->url = strdup(url);
            r->api_key = api_key ? strdup(api_key) : NULL;
            r->user = user ? strdup(user) : NULL;
            r->password = password ? strdup(password) : NULL;
            return r;
        }
        if (!retry || now_secs() + wait / 1000.0 > give_up) return NULL;
        backoff(&wait);
    }
}

cli_remote *cli_remote_reopen(cli_remote *old, char *err, size_t errlen) {
    cli_remote *r =
        cli_remote_connect(old->url, old->api_key, old->user, old->password, err, errlen);
    if (!r) return NULL;
    r->interrupt = old->interrupt;
    /* Deltas that arrived before the connection was lost are still shown. */
    il_buf_put(&r->pushes, old->pushes.data ? old->pushes.data : "", old->pushes.len);
    cli_remote_close(old);
    return r;
}

void cli_remote_set_interrupt(cli_remote *r, const volatile int *flag) {
    r->interrupt = flag;
}

int cli_remote_fd(const cli_remote *r) {
    return r->fd;
}

bool cli_remote_poll(cli_remote *r) {
    if (r->failed) return false;
    struct pollfd pf = {.fd = r->fd, .events = POLLIN};
    if (r->pre_pos >= r->pre.len && poll(&pf, 1, 0) <= 0) return true;
    r->polling = true;
    r->done = false;
    r->want_id[0] = 0; /* nothing awaited: every frame read is a push */
    r->err[0] = 0;
    int rc = wslay_event_recv(r->ws);
    if (rc == 0 && wslay_event_want_write(r->ws)) rc = wslay_event_send(r->ws);
    r->polling = false;
    if (rc != 0 || !wslay_event_want_read(r->ws)) {
        if (!r->err[0]) snprintf(r->err, sizeof r->err, "connection closed by the server");
        r->failed = true;
        return false;
    }
    return true;
}

const char *cli_remote_error(const cli_remote *r) {
    return r->err;
}

char *cli_remote_take_pushes(cli_remote *r) {
    if (!r->pushes.len) return NULL;
    return il_buf_take(&r->pushes);
}

cli_reply *cli_remote_execute(cli_remote *r, const char *stmt, char *err, size_t errlen) {
    if (r->failed) {
        snprintf(err, errlen, "%s", r->err);
        return NULL;
    }
    unsigned wait = BACKOFF_FIRST_MS;
    double give_up = now_secs() + STATEMENT_RETRY_SECS;
    json_t *o = json_pack("{s:s,s:s,s:s}", "type", "execute", "id", "", "program", stmt);
    if (!o) {
        /* A JSON string holds UTF-8 only: such a statement cannot be sent at all. */
        cli_reply *p = cli_reply_new(IL_RESULT_ERROR, IL_STMT_OTHER);
        const char *msg = "The statement is not valid UTF-8 and cannot be sent to the server";
        cli_reply_add_line(p, msg, strlen(msg));
        return p;
    }
    for (;;) {
        snprintf(r->want_id, sizeof r->want_id, "%u", ++r->next_id);
        json_object_set_new(o, "id", json_string(r->want_id));
        char *text = json_dumps(o, JSON_COMPACT);
        r->reply = NULL;
        bool ok = round_trip(r, text, strlen(text));
        free(text);
        if (!ok) {
            json_decref(o);
            cli_reply_free(r->reply);
            r->reply = NULL;
            snprintf(err, errlen, "%s", r->err);
            return NULL;
        }
        cli_reply *p = r->reply;
        r->reply = NULL;
        /* Refused for load: the statement did not run, so sending it again is safe. Past
         * the bound the refusal is the statement's error, printed like any other. */
        if (p && p->kind == IL_RESULT_ERROR && refused_code(r->code) &&
            now_secs() + wait / 1000.0 <= give_up) {
            cli_reply_free(p);
            backoff(&wait);
            continue;
        }
        json_decref(o);
        return p;
    }
}

void cli_remote_close(cli_remote *r) {
    if (!r) return;
    if (r->ws) wslay_event_context_free(r->ws);
    if (r->fd >= 0) close(r->fd);
    il_buf_free(&r->pre);
    il_buf_free(&r->pushes);
    cli_reply_free(r->reply);
    free(r->url);
    free(r->api_key);
    free(r->user);
    if (r->password) OPENSSL_cleanse(r->password, strlen(r->password));
    free(r->password);
    free(r);
}
