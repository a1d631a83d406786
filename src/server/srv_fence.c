/* The credential fence: when a password, an API key or a user ends (revoked, expired,
 * dropped), every connection that authenticated with it gets a final notice and is
 * closed. Everything runs on the loop thread, so no other request is running when a
 * credential ends: marking the connection fenced before anything else is queued is
 * enough to keep every later data frame (including the reply to the request that ended
 * the credential) off the socket. Frames queued before the end still go out first. */
#include <string.h>

#include "server/server.h"

static void end(srv_conn *c, enum srv_notice why) {
    if (c->state != SRV_WS || !c->authed || c->fenced) return;
    srv_notice_close(c, why,
                     why == SRV_N_CREDENTIAL_EXPIRED
                         ? "Credential expired; reconnect with valid credentials"
                         : "Credential revoked; reconnect with valid credentials",
                     1008);
}

void srv_fence_user(srv_server *s, const char *user, bool passwords_only) {
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (strcmp(c->user, user) == 0 && (!passwords_only || c->via == SRV_VIA_PASSWORD))
            end(c, SRV_N_CREDENTIAL_REVOKED);
    }
}

void srv_fence_key(srv_server *s, uint64_t key_id, enum srv_notice why) {
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->via == SRV_VIA_KEY && c->key_id == key_id) end(c, why);
    }
}

static void on_expiry(uv_timer_t *t) {
    srv_server *s = t->data;
    int64_t now = srv_wall_ms();
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->via != SRV_VIA_KEY) continue;
        srv_key *k = srv_users_key_by_id(&s->users, c->key_id);
        if (!k)
            end(c, SRV_N_CREDENTIAL_REVOKED);
        else if (srv_key_expired(k, now))
            end(c, SRV_N_CREDENTIAL_EXPIRED);
    }
    srv_fence_schedule(s);
}

void srv_fence_schedule(srv_server *s) {
    if (uv_is_closing((uv_handle_t *)&s->expiry)) return;
    int64_t now = srv_wall_ms(), next = -1;
    for (size_t i = 0; i < s->users.nkeys; i++) {
        int64_t e = s->users.keys[i].expires_ms;
        if (e > now && (next < 0 || e < next)) next = e;
    }
    if (next < 0)
        uv_timer_stop(&s->expiry);
    else
        uv_timer_start(&s->expiry, on_expiry, (uint64_t)(next - now), 0);
}
