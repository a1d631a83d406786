/* Delivering the notification log (srv_notify.h) to connections. The engine reports a
 * statement's changes while it runs, in a job with the engine lock held; the log's sink
 * decides there, for every connection with an open session, whether it may see the
 * notification (its current graph, its user's role and ACLs), and adds the frame to the
 * job's capture: after the reply for the connection that made the change, as a push for
 * the others. The loop thread sends them when the job is done, in seq order. A session
 * that opens with a cursor (?last_seq=&epoch=) reads its replay in the same job that
 * registers it for live delivery, so that nothing is missed or sent twice. */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "server/srv_authz.h"
#include "server/srv_deliver.h"
#include "server/srv_pipeline.h"
#include "server/srv_revision.h"

typedef struct viewer_ctx {
    srv_server *srv;
    const srv_user *user;
} viewer_ctx;

/* Called with users_lock held: the rule that lets a user open a session on the graph. */
static bool readable(void *ctx, const char *graph) {
    viewer_ctx *v = ctx;
    return v->user && srv_authz_session(&v->srv->users, v->user, graph);
}

static bool sees(srv_conn *c, const srv_notification *n) {
    srv_server *s = c->srv;
    pthread_mutex_lock(&s->users_lock);
    viewer_ctx v = {s, srv_users_find(&s->users, c->user)};
    bool ok = v.user && srv_notify_visible(n, il_session_graph(c->session),
                                           v.user->role == SRV_ROLE_ADMIN, readable, &v);
    pthread_mutex_unlock(&s->users_lock);
    return ok;
}

static void sink(void *ctx, const srv_notification *n) {
    srv_server *s = ctx;
    srv_capture *cap = srv_tl_capture;
    if (!cap) return; /* not a request's work: only replay will have it */
    for (srv_conn *c = s->sessions; c; c = c->next_session) {
        if (!sees(c, n)) continue;
        if (c == cap->conn)
            srv_capture_note(cap, n->seq, n->json, n->len);
        else
            srv_capture_push(cap, c, n->seq, n->json, n->len);
    }
}

/* The engine's one change hook: the graphs' revisions move first, so that whatever the
 * notifications make a client do next (a read, a subscribe) sees the new revision. */
static void on_change(void *ctx, const il_change *changes, size_t n) {
    srv_server *s = ctx;
    srv_revision_note(s, changes, n);
    srv_notify_change_hook(s->notify, changes, n);
}

void srv_deliver_start(srv_server *s) {
    s->notify = srv_notify_new(s->epoch, s->cfg->notification_buffer_size, sink, s);
    il_engine_set_change_hook(s->engine, on_change, s);
}

void srv_deliver_stop(srv_server *s) {
    il_engine_set_change_hook(s->engine, NULL, NULL);
    srv_notify_free(s->notify);
    s->notify = NULL;
}

typedef struct replay_ctx {
    srv_conn *conn;
} replay_ctx;

static bool replay_filter(void *ctx, const srv_notification *n) {
    /* Under the log's lock: the same rule as live delivery. */
    return sees(((replay_ctx *)ctx)->conn, n);
}

void srv_deliver_register(srv_conn *c, srv_notify_replay *replay) {
    srv_server *s = c->srv;
    memset(replay, 0, sizeof *replay);
    srv_notify_cursor cur = {c->has_cursor, c->cursor_seq,
                             c->cursor_epoch[0] ? c->cursor_epoch : NULL};
    replay_ctx rc = {c};
    srv_notify_replay_read(s->notify, &cur, replay_filter, &rc, replay);
    c->next_session = s->sessions;
    c->prev_session = NULL;
    if (s->sessions) s->sessions->prev_session = c;
    s->sessions = c;
}

void srv_deliver_unregister(srv_conn *c) {
    srv_server *s = c->srv;
    if (!c->prev_session && s->sessions != c) return;
    if (c->prev_session)
        c->prev_session->next_session = c->next_session;
    else
        s->sessions = c->next_session;
    if (c->next_session) c->next_session->prev_session = c->prev_session;
    c->next_session = c->prev_session = NULL;
}

void srv_deliver_replay(srv_conn *c, srv_notify_replay *replay) {
    c->notify_through = replay->through_seq;
    if (replay->kind == SRV_REPLAY_GAP) {
        srv_send_notice(c, SRV_N_REPLAY_GAP, replay->gap_message);
    } else if (replay->kind == SRV_REPLAY_FRAMES) {
        for (size_t i = 0; i < replay->nframes; i++)
            srv_ws_send(c, replay->frames[i].json, replay->frames[i].len);
    }
    srv_ws_flush(c);
    srv_notify_replay_free(replay);
}
