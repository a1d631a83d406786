/* ws_echo_server: the transport floor of the server benchmark (bench/run-server.sh). A
 * WebSocket server built the way inputlayer-server is (one libuv loop thread,
 * http-parser for the upgrade, wslay for the frames, TCP_NODELAY, each write a copy
 * handed to libuv) with no protocol behind it: it upgrades any path and sends every text
 * message back unchanged. Its round trip is what the server's would be if answering cost
 * nothing.
 *
 * A connection whose first message is `watch` is a watcher: it is answered `watching` and
 * never echoed to. While watchers are connected, every message echoed is also sent to one
 * of them, each in turn, before its echo: the floor of a write whose commit pushes a
 * subscription delta to another connection (delta_keyed: the writer's ack and one agent's
 * delta), as inputlayer-load echo --watchers measures it (bench/run-pacing.sh).
 *
 *   ws_echo_server [--host ADDR] [--port PORT]     (defaults 127.0.0.1 and 0)
 *
 * With port 0 the system chooses; the line `Echo server listening on: http://ADDR:PORT`
 * (the shape of the server's own line) says which. Runs until SIGINT or SIGTERM. */
#include <errno.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>
#include <wslay/wslay.h>

static const char WS_GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

enum { READ_CHUNK = 65536, MAX_HEADER_BYTES = 8192 };

typedef struct bytes {
    char *p;
    size_t len, cap;
} bytes;

static void bytes_put(bytes *b, const void *data, size_t n) {
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) abort(); /* a benchmark tool: no recovery from running out of memory */
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
}

typedef struct echo_server echo_server;

typedef struct echo_conn {
    uv_tcp_t tcp;
    echo_server *srv;
    struct echo_conn *prev, *next; /* the server's open connections */
    http_parser parser;
    bytes header_name, header_value; /* the header being read */
    bool in_value;                   /* header_name is complete, header_value growing */
    bytes ws_key;                    /* Sec-WebSocket-Key */
    bool wants_websocket;            /* Upgrade: websocket */
    bool upgraded;
    wslay_event_context_ptr ws;
    const char *feed; /* received bytes wslay has not read yet */
    size_t feed_len;
    bytes out; /* frames wslay produced, written after each read */
    int pending_writes;
    bool finishing; /* close once the pending writes are out */
    bool closing;   /* uv_close called */
    bool spoke;     /* a message was received: `watch` is only taken as the first */
    bool watcher;   /* receives the pushes, is never echoed to */
} echo_conn;

struct echo_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_signal_t sigint, sigterm;
    echo_conn *conns;
    echo_conn *pushed; /* the watcher that had the last push, or NULL */
};

typedef struct write_req {
    uv_write_t req;
    echo_conn *conn;
    char *data;
} write_req;

static void on_closed(uv_handle_t *h) {
    echo_conn *c = h->data;
    if (c->ws) wslay_event_context_free(c->ws);
    free(c->header_name.p);
    free(c->header_value.p);
    free(c->ws_key.p);
    free(c->out.p);
    free(c);
}

static void conn_close(echo_conn *c) {
    if (c->closing) return;
    c->closing = true;
    if (c->srv->pushed == c) c->srv->pushed = NULL;
    if (c->prev)
        c->prev->next = c->next;
    else
        c->srv->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

/* Closes once everything written so far has gone out (a close frame, a 400). */
static void conn_finish(echo_conn *c) {
    c->finishing = true;
    if (c->pending_writes == 0) conn_close(c);
}

static void on_write(uv_write_t *req, int status) {
    write_req *w = (write_req *)req;
    echo_conn *c = w->conn;
    free(w->data);
    free(w);
    c->pending_writes--;
    if (status < 0 || (c->finishing && c->pending_writes == 0)) conn_close(c);
}

/* Writes a copy of the bytes, as the server does (its buffers are reused at once). */
static void conn_write(echo_conn *c, const char *data, size_t len) {
    if (len == 0 || c->closing) return;
    write_req *w = malloc(sizeof *w);
    char *copy = malloc(len);
    if (!w || !copy) abort();
    memcpy(copy, data, len);
    w->conn = c;
    w->data = copy;
    uv_buf_t b = uv_buf_init(copy, (unsigned)len);
    c->pending_writes++;
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_write) != 0) {
        free(copy);
        free(w);
        c->pending_writes--;
        conn_close(c);
    }
}

/* ---- WebSocket (wslay), after the upgrade ---- */

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                       void *user) {
    (void)flags;
    echo_conn *c = user;
    if (c->feed_len == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (len > c->feed_len) len = c->feed_len;
    memcpy(buf, c->feed, len);
    c->feed += len;
    c->feed_len -= len;
    return (ssize_t)len;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *user) {
    (void)ctx;
    (void)flags;
    bytes_put(&((echo_conn *)user)->out, data, len);
    return (ssize_t)len;
}

/* The watcher after the last one pushed to, in the server's list, wrapping; NULL when none is
 * connected. */
static echo_conn *next_watcher(echo_server *s) {
    echo_conn *start = s->pushed ? s->pushed->next : NULL;
    for (echo_conn *c = start; c; c = c->next)
        if (c->watcher) return c;
    for (echo_conn *c = s->conns; c && c != start; c = c->next)
        if (c->watcher) return c;
    return NULL;
}

/* Writes the frames wslay produced for c. */
static void write_out(echo_conn *c) {
    conn_write(c, c->out.p, c->out.len);
    c->out.len = 0;
}

/* Sends a text message to watcher w at once, in its own write. */
static void push(echo_conn *w, const uint8_t *msg, size_t len) {
    struct wslay_event_msg m = {WSLAY_TEXT_FRAME, msg, len};
    if (wslay_event_queue_msg(w->ws, &m) == 0) wslay_event_send(w->ws);
    write_out(w);
}

static void ws_message(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                       void *user) {
    echo_conn *c = user;
    if (arg->opcode != WSLAY_TEXT_FRAME) return; /* pings are answered by wslay itself */
    bool first = !c->spoke;
    c->spoke = true;
    if (first && arg->msg_length == 5 && memcmp(arg->msg, "watch", 5) == 0) {
        c->watcher = true;
        struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)"watching", 8};
        wslay_event_queue_msg(ctx, &m);
        return;
    }
    if (c->watcher) return;
    echo_conn *w = next_watcher(c->srv);
    if (w) {
        c->srv->pushed = w;
        push(w, arg->msg, arg->msg_length);
    }
    struct wslay_event_msg m = {WSLAY_TEXT_FRAME, arg->msg, arg->msg_length};
    wslay_event_queue_msg(ctx, &m); /* wslay copies the bytes */
}

static const struct wslay_event_callbacks WS_CALLBACKS = {
    .recv_callback = ws_recv,
    .send_callback = ws_send,
    .on_msg_recv_callback = ws_message,
};

static void ws_feed(echo_conn *c, const char *data, size_t len) {
    c->feed = data;
    c->feed_len = len;
    int rc = wslay_event_recv(c->ws);
    c->feed = NULL;
    c->feed_len = 0;
    if (rc == 0) wslay_event_send(c->ws);
    write_out(c);
    if (rc != 0 || (!wslay_event_want_read(c->ws) && !wslay_event_want_write(c->ws)))
        conn_finish(c);
}

/* ---- HTTP (http-parser), until the upgrade ---- */

static void refuse(echo_conn *c, const char *status_line) {
    char resp[256];
    int n = snprintf(resp, sizeof resp,
                     "HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status_line);
    conn_write(c, resp, (size_t)n);
    conn_finish(c);
}

static void upgrade(echo_conn *c) {
    bytes src = {0};
    bytes_put(&src, c->ws_key.p, c->ws_key.len);
    bytes_put(&src, WS_GUID, strlen(WS_GUID));
    unsigned char sha[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)src.p, src.len, sha);
    free(src.p);
    char accept[64];
    EVP_EncodeBlock((unsigned char *)accept, sha, SHA_DIGEST_LENGTH);
    char resp[256];
    int n = snprintf(resp, sizeof resp,
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                     accept);
    conn_write(c, resp, (size_t)n);
    if (wslay_event_context_server_init(&c->ws, &WS_CALLBACKS, c) != 0) {
        conn_finish(c);
        return;
    }
    c->upgraded = true;
}

static void header_done(echo_conn *c) {
    if (!c->in_value) return;
    const char *name = c->header_name.p, *value = c->header_value.p ? c->header_value.p : "";
    if (strcasecmp(name, "Sec-WebSocket-Key") == 0) {
        c->ws_key.len = 0;
        bytes_put(&c->ws_key, value, strlen(value));
    } else if (strcasecmp(name, "Upgrade") == 0 && strcasecmp(value, "websocket") == 0) {
        c->wants_websocket = true;
    }
    c->header_name.len = c->header_value.len = 0;
    if (c->header_value.p) c->header_value.p[0] = 0;
    c->in_value = false;
}

static int on_header_field(http_parser *p, const char *at, size_t len) {
    echo_conn *c = p->data;
    header_done(c);
    if (c->header_name.len + len > MAX_HEADER_BYTES) return 1;
    bytes_put(&c->header_name, at, len);
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len) {
    echo_conn *c = p->data;
    if (c->header_value.len + len > MAX_HEADER_BYTES) return 1;
    c->in_value = true;
    bytes_put(&c->header_value, at, len);
    return 0;
}

static int on_headers_complete(http_parser *p) {
    header_done(p->data);
    return 0;
}

static int on_message_complete(http_parser *p) {
    echo_conn *c = p->data;
    /* With p->upgrade set, http-parser stops right after this request's head: what
     * follows are frames. */
    if (p->method == HTTP_GET && p->upgrade && c->wants_websocket && c->ws_key.len > 0)
        upgrade(c);
    else
        refuse(c, "400 Bad Request");
    return 0;
}

static const http_parser_settings HTTP_SETTINGS = {
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_message_complete = on_message_complete,
};

static void http_feed(echo_conn *c, const char *data, size_t len) {
    size_t used = http_parser_execute(&c->parser, &HTTP_SETTINGS, data, len);
    if (c->upgraded) {
        if (used < len) ws_feed(c, data + used, len - used);
    } else if (!c->finishing && HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) {
        refuse(c, "400 Bad Request");
    }
}

/* ---- connections and the loop ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)h;
    (void)suggested;
    buf->base = malloc(READ_CHUNK);
    buf->len = buf->base ? READ_CHUNK : 0;
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
    echo_conn *c = stream->data;
    if (n < 0) {
        conn_close(c);
    } else if (n > 0 && !c->finishing) {
        if (c->upgraded)
            ws_feed(c, buf->base, (size_t)n);
        else
            http_feed(c, buf->base, (size_t)n);
    }
    free(buf->base);
}

static void on_connection(uv_stream_t *listener, int status) {
    echo_server *s = listener->data;
    if (status < 0) return;
    echo_conn *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->srv = s;
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    c->next = s->conns;
    if (s->conns) s->conns->prev = c;
    s->conns = c;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void on_signal(uv_signal_t *sig, int signum) {
    (void)signum;
    echo_server *s = sig->data;
    uv_close((uv_handle_t *)&s->listener, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    while (s->conns) conn_close(s->conns);
}

static void usage(FILE *f) {
    fputs("usage: ws_echo_server [--host ADDR] [--port PORT]   (127.0.0.1, 0 = any free port)\n",
          f);
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1";
    long port = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
            host = argv[++i];
        } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            errno = 0;
            port = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || port < 0 || port > 65535) {
                fprintf(stderr, "ws_echo_server: bad port '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    /* A client that goes away mid-write must not kill the process. */
    signal(SIGPIPE, SIG_IGN);
    echo_server s = {.loop = uv_default_loop()};
    struct sockaddr_in addr;
    if (uv_ip4_addr(host, (int)port, &addr) != 0) {
        fprintf(stderr, "ws_echo_server: invalid address %s\n", host);
        return 1;
    }
    uv_tcp_init(s.loop, &s.listener);
    s.listener.data = &s;
    int rc = uv_tcp_bind(&s.listener, (const struct sockaddr *)&addr, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&s.listener, 1024, on_connection);
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    if (rc == 0) rc = uv_tcp_getsockname(&s.listener, (struct sockaddr *)&bound, &blen);
    if (rc != 0) {
        fprintf(stderr, "ws_echo_server: cannot listen on %s:%ld: %s\n", host, port,
                uv_strerror(rc));
        uv_close((uv_handle_t *)&s.listener, NULL);
        uv_run(s.loop, UV_RUN_DEFAULT);
        uv_loop_close(s.loop);
        return 1;
    }
    uv_signal_init(s.loop, &s.sigint);
    uv_signal_init(s.loop, &s.sigterm);
    s.sigint.data = s.sigterm.data = &s;
    uv_signal_start(&s.sigint, on_signal, SIGINT);
    uv_signal_start(&s.sigterm, on_signal, SIGTERM);
    printf("Echo server listening on: http://%s:%d\n", host,
           ntohs(((struct sockaddr_in *)&bound)->sin_port));
    fflush(stdout);
    uv_run(s.loop, UV_RUN_DEFAULT);
    uv_loop_close(s.loop);
    return 0;
}
