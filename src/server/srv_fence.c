/* The credential fence: when a password, an API key or a user ends (revoked, expired,
 * dropped), every connection that authenticated with it gets a final notice and is
 * closed. A command that ends a credential runs in a job; the fence is recorded there and
 * applied on the loop thread when that job is done, before the frames of any job that
 * ran after it are sent (the pool hands jobs back in the order they ran), so marking the
 * connection fenced then keeps every later data frame, including the reply to the request
 * that ended the credential, off the socket. Frames sent before the end still go first. */
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

/* In a job: remember the fence for the loop thread. */
static srv_req *in_job(void) {
    return srv_tl_capture ? srv_tl_capture->req : NULL;
}

void srv_fence_user(srv_server *s, const char *user, bool passwords_only) {
    srv_req *r = in_job();
    if (r) {
        size_t n = strlen(user) + 1;
        srv_fence_fx *f = calloc(1, sizeof *f + n);
        memcpy(f->user, user, n);
        f->passwords_only = passwords_only;
        f->next = r->fences;
        r->fences = f;
        return;
    }
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (strcmp(c->user, user) == 0 && (!passwords_only || c->via == SRV_VIA_PASSWORD))
            end(c, SRV_N_CREDENTIAL_REVOKED);
    }
}

void srv_fence_key(srv_server *s, uint64_t key_id, enum srv_notice why) {
    srv_req *r = in_job();
    if (r) {
        srv_fence_fx *f = calloc(1, sizeof *f + 1);
        f->key_id = key_id;
        f->why = why;
        f->next = r->fences;
        r->fences = f;
        return;
    }
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->via == SRV_VIA_KEY && c->key_id == key_id) end(c, why);
    }
}

static void on_expiry(uv_timer_t *t) {
    srv_server *s = t->data;
    int64_t now = srv_wall_ms();
    pthread_mutex_lock(&s->users_lock);
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->via != SRV_VIA_KEY) continue;
        srv_key *k = srv_users_key_by_id(&s->users, c->key_id);
        if (!k)
            end(c, SRV_N_CREDENTIAL_REVOKED);
        else if (srv_key_expired(k, now))
            end(c, SRV_N_CREDENTIAL_EXPIRED);
    }
    pthread_mutex_unlock(&s->users_lock);
    srv_fence_schedule(s);
}

void srv_fence_schedule(srv_server *s) {
    srv_req *r = in_job();
    if (r) {
        r->fence_schedule = true;
        return;
    }
    if (uv_is_closing((uv_handle_t *)&s->expiry)) return;
    int64_t now = srv_wall_ms(), next = -1;
    pthread_mutex_lock(&s->users_lock);
    for (size_t i = 0; i < s->users.nkeys; i++) {
        int64_t e = s->users.keys[i].expires_ms;
        if (e > now && (next < 0 || e < next)) next = e;
    }
    pthread_mutex_unlock(&s->users_lock);
    if (next < 0)
        uv_timer_stop(&s->expiry);
    else
        uv_timer_start(&s->expiry, on_expiry, (uint64_t)(next - now), 0);
}
