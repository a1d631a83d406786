/* Shared declarations of inputlayer-server: the server (one libuv loop, one engine), a
 * connection (HTTP until it upgrades to a WebSocket), and the functions each file
 * provides. Everything runs on the loop thread because the engine is not thread-safe. */
#ifndef IL_SERVER_SERVER_H
#define IL_SERVER_SERVER_H

#include <http_parser.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>
#include <wslay/wslay.h>

#include "base/buf.h"
#include "inputlayer.h"

#define SRV_VERSION          "0.1.0"
#define SRV_PROTOCOL_VERSION 5
/* Incoming WebSocket messages over this are refused (close 1009). */
#define SRV_MAX_MESSAGE (16u * 1024 * 1024)
/* A reply whose single frame would exceed this is streamed in chunks. */
#define SRV_STREAM_THRESHOLD (1024u * 1024)
#define SRV_CHUNK_ROWS       500
#define SRV_MAX_PROGRAM      (1024u * 1024)
#define SRV_AUTH_TIMEOUT_MS  5000
#define SRV_IDLE_TIMEOUT_MS  300000
#define SRV_MAX_AUTH_FAILS   3

/* Bootstrap credentials: the admin password (as an argon2id hash) and the bootstrap API
 * key (as its SHA-256). */
typedef struct srv_auth {
    char *admin_hash; /* argon2id PHC string */
    uint8_t key_sha[32];
} srv_auth;

typedef struct srv_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_signal_t sigint, sigterm;
    il_engine *engine;
    il_session *stats; /* a private session used for /metrics counts */
    srv_auth auth;
    uint64_t started_ms;
    uint64_t query_count;
    unsigned nconns, nsessions, ndirty;
    char epoch[17];
    struct srv_conn *conns; /* every open connection, for shutdown */
} srv_server;

enum srv_conn_state { SRV_HTTP, SRV_WS, SRV_CLOSING };

typedef struct srv_conn {
    uv_tcp_t tcp;
    uv_timer_t timer; /* auth deadline, then idle timeout, then the lingering close */
    uv_shutdown_t shutdown;
    srv_server *srv;
    struct srv_conn *next, *prev;
    enum srv_conn_state state;
    unsigned pending_writes;
    int handles_open; /* tcp and timer: freed when both are closed */
    bool lingering;   /* our side is shut down; reading and discarding until EOF */

    /* HTTP request being parsed. */
    http_parser parser;
    il_buf url, hname, hval, ws_key, auth_hdr;
    bool hval_started, upgrade_ok, keep_alive;

    /* WebSocket. */
    wslay_event_context_ptr ws;
    il_buf in; /* received bytes not yet consumed by wslay */
    size_t in_pos;
    il_buf out;       /* frames wslay produced, written after each batch */
    uint64_t msg_len; /* length of the message being received so far */
    bool too_big;     /* it went over SRV_MAX_MESSAGE */

    /* Session. */
    il_session *session;
    bool authed, dirty;
    int auth_failures;
    char kg[129];
    char session_id[37];
} srv_conn;

/* loop.c */
void srv_conn_write(srv_conn *c, const char *data, size_t len);
void srv_conn_close(srv_conn *c); /* after the pending writes */
uint64_t srv_now_ms(void);
void srv_timer_start(srv_conn *c, uint64_t ms);
int srv_loop_run(srv_server *s, const char *host, int port);

/* http.c: feeds bytes to the HTTP parser; returns bytes consumed, upgrading when asked. */
void srv_http_init(srv_conn *c);
void srv_http_feed(srv_conn *c, const char *data, size_t len);

/* ws.c */
bool srv_ws_start(srv_conn *c); /* after the 101 response */
void srv_ws_feed(srv_conn *c, const char *data, size_t len);
void srv_ws_send(srv_conn *c, const char *json, size_t len);
void srv_ws_close(srv_conn *c, uint16_t code); /* queues a close frame and flushes */
void srv_ws_flush(srv_conn *c);
void srv_ws_free(srv_conn *c);

/* json.c */
void srv_json_str(il_buf *b, const char *s, size_t len);
void srv_json_value(il_buf *b, il_value v);
/* Writes `{"type":"<type>"` plus `,"id":...` when id is non-NULL (no closing brace). */
void srv_json_open(il_buf *b, const char *type, const char *id);
void srv_send_error(srv_conn *c, const char *id, const char *code, const char *msg);
void srv_send_notice(srv_conn *c, const char *code, const char *msg);

/* session.c */
bool srv_session_open(srv_conn *c, const char *kg, char *err, size_t errlen);
void srv_session_close(srv_conn *c);

/* auth.c */
bool srv_auth_bootstrap(srv_auth *a, const char *data_dir);
bool srv_auth_password(const srv_auth *a, const char *user, const char *pw);
bool srv_auth_key(const srv_auth *a, const char *key, size_t len);
void srv_auth_free(srv_auth *a);
void srv_random_hex(char *out, size_t nbytes); /* writes 2*nbytes hex chars + NUL */

/* proto.c: one complete text message from the client. */
void srv_proto_message(srv_conn *c, const char *msg, size_t len);
void srv_proto_timeout(srv_conn *c);

#endif
