/* A login whose user name is in backoff waits before its password is checked (srv_limits.c
 * gives the delay) instead of being refused, so that guesses at a user's password cannot
 * lock the user out. The login's message and whatever the client sends after it are held,
 * in order, and handed back to proto.c when the delay ends. The connection's timer, which
 * otherwise holds the authentication deadline, times the delay; the deadline starts again
 * after it. */
#include <string.h>

#include "server/server.h"

/* Held messages beyond this close the connection: a client waiting for its login's reply
 * has no reason to send much. */
enum { HELD_MAX = 64 * 1024 };

static bool hold(srv_conn *c, const char *msg, size_t len) {
    if (c->held.len + sizeof len + len > HELD_MAX) {
        srv_ws_close(c, 1008);
        srv_conn_close(c);
        return false;
    }
    il_buf_put(&c->held, (const char *)&len, sizeof len);
    il_buf_put(&c->held, msg, len);
    return true;
}

bool srv_login_held(srv_conn *c, const char *msg, size_t len) {
    if (!c->login_waiting) return false;
    hold(c, msg, len);
    return true;
}

void srv_login_defer(srv_conn *c, const char *msg, size_t len, uint64_t ms) {
    if (!hold(c, msg, len)) return;
    c->login_waiting = true;
    srv_timer_start(c, ms);
}

bool srv_login_resume(srv_conn *c) {
    if (!c->login_waiting) return false;
    c->login_waiting = false;
    il_buf held = c->held;
    il_buf_init(&c->held);
    srv_timer_start(c, (uint64_t)c->srv->cfg->ws_auth_timeout_ms);
    bool first = true;
    for (size_t at = 0; at < held.len;) {
        size_t len;
        memcpy(&len, held.data + at, sizeof len);
        at += sizeof len;
        if (c->login_waiting) {
            /* A later login waits in its turn: what follows it stays behind it. */
            if (!hold(c, held.data + at, len)) break;
        } else if (c->state == SRV_WS) {
            /* Only the login that waited skips its delay. */
            c->login_delay_served = first;
            srv_proto_message(c, held.data + at, len);
            c->login_delay_served = false;
        }
        first = false;
        at += len;
    }
    il_buf_free(&held);
    if (c->state == SRV_WS) srv_ws_flush(c);
    return true;
}
