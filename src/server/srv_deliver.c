/* Delivering the notification log (srv_notify.h) to connections. Every connection with an
 * open session has a cursor into the log (notify_through, engine lock); a delivery reads
 * the log after it, keeps what the connection may see (its current graph, its user's
 * role and ACLs, asked at that moment) and moves it on. A session that opens with a
 * cursor (?last_seq=&epoch=) reads its replay in the job that registers it, so that
 * nothing is missed or sent twice.
 *
 * A request's own connection reads its notifications in the request's job, before and
 * after the program, so that they follow its reply (and a graph switch cuts them at the
 * right place). Everyone else is served in rounds: a job walks the sessions and reads
 * each cursor forward, and the loop writes each connection's batch in one write. Rounds
 * are paced: one starts at once when none ran for the pacing window, otherwise when the
 * window ends. Sending every commit's notification to every watching connection costs a
 * write(2) and a reader's wake-up each, about 18 µs per connection on loopback (6 ms per
 * commit with 300 connections, measured with the delta_keyed fixture), far more than the
 * commit itself; a round costs that once per window whatever the number of commits. The
 * window grows with the number of sessions (DELIVER_NS_PER_SESSION each) up to
 * http.rate_limit.notification_coalesce_ms, so that a few connections are hardly delayed
 * and many cost a bounded share of a CPU. A connection that does not read (over
 * SRV_OUTBOUND_LIMIT unwritten) loses its batch, counted as missed, as does one whose
 * cursor fell out of the ring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "server/srv_authz.h"
#include "server/srv_deliver.h"
#include "server/srv_pipeline.h"
#include "server/srv_revision.h"
#include "server/srv_revision.h"

#define DELIVER_NS_PER_SESSION 3000000u

typedef struct viewer {
    srv_server *srv;
    const char *graph;
    bool is_admin, may_read, valid;
} viewer;

/* With the engine lock held (the session's graph). users_lock is taken here and released
 * before the log's lock is: replay filters take them in the other order. */
static viewer viewer_of(srv_conn *c) {
    srv_server *s = c->srv;
    viewer v = {s, il_session_graph(c->session), false, false, false};
    pthread_mutex_lock(&s->users_lock);
    const srv_user *u = srv_users_find(&s->users, c->user);
    if (u) {
        v.valid = true;
        v.is_admin = u->role == SRV_ROLE_ADMIN;
        v.may_read = v.is_admin || srv_authz_session(&s->users, u, v.graph);
    }
    pthread_mutex_unlock(&s->users_lock);
    return v;
}

static bool never(void *ctx, const char *graph) {
    (void)ctx;
    (void)graph;
    return false;
}

static bool viewer_sees(void *ctx, const srv_notification *n) {
    const viewer *v = ctx;
    return v->valid &&
           srv_notify_visible(n, v->graph, v->is_admin, v->may_read ? NULL : never, NULL);
}

static void emit(void *ctx, const srv_notification *n) {
    il_buf *frames = ctx;
    size_t len = n->len;
    il_buf_put(frames, (const char *)&len, sizeof len);
    il_buf_put(frames, n->json, len);
}

/* Reads c's notifications after its cursor; NULL when there is nothing for it. */
static srv_note_batch *read_for(srv_conn *c, uint64_t last) {
    if (c->notify_through >= last) return NULL;
    viewer v = viewer_of(c);
    srv_note_batch *b = calloc(1, sizeof *b);
    b->to = c;
    il_buf_init(&b->frames);
    c->notify_through = srv_notify_read_after(c->srv->notify, c->notify_through, viewer_sees, &v,
                                              emit, &b->frames, &b->evicted);
    if (b->frames.len == 0 && b->evicted == 0) {
        srv_deliver_batch_free(b);
        return NULL;
    }
    return b;
}

static bool registered(const srv_conn *c) {
    return c->prev_session || c->srv->sessions == c;
}

void srv_deliver_own(srv_capture *cap) {
    srv_conn *c = cap->conn;
    if (!c || !c->session || !registered(c)) return;
    srv_note_batch *b = read_for(c, srv_notify_last_seq(c->srv->notify));
    if (!b) return;
    if (!cap->notes) {
        cap->notes = b;
        return;
    }
    cap->notes->evicted += b->evicted;
    il_buf_put(&cap->notes->frames, b->frames.data, b->frames.len);
    srv_deliver_batch_free(b);
}

void srv_deliver_batch_free(srv_note_batch *b) {
    while (b) {
        srv_note_batch *next = b->next;
        il_buf_free(&b->frames);
        free(b);
        b = next;
    }
}

/* Notifications c could not have: counted, and past notification_buffer_size in all the
 * connection is closed (`slow_consumer`). False when it was. */
static bool missed(srv_conn *c, uint64_t n) {
    if (n == 0) return true;
    size_t capacity = srv_notify_ring_capacity(c->srv->notify);
    /* Counted one by one, it is closed at the first past the bound. */
    if (c->missed_total + n > capacity) n = capacity + 1 - c->missed_total;
    c->missed_total += n;
    c->missed += n;
    if (c->missed_total <= capacity) return true;
    char msg[128];
    snprintf(msg, sizeof msg, "Disconnected: missed %llu total notification(s)",
             (unsigned long long)c->missed_total);
    srv_notice_close(c, SRV_N_SLOW_CONSUMER, msg, 1008);
    return false;
}

static size_t frame_count(const il_buf *frames) {
    size_t n = 0;
    for (size_t at = 0; at + sizeof(size_t) <= frames->len; n++) {
        size_t len;
        memcpy(&len, frames->data + at, sizeof len);
        at += sizeof len + len;
    }
    return n;
}

void srv_deliver_batches(srv_note_batch *b) {
    for (srv_note_batch *next; b; b = next) {
        next = b->next;
        srv_conn *c = b->to;
        bool open = c && c->state == SRV_WS && !c->closed;
        if (open && missed(c, b->evicted)) {
            if (srv_outbound(c) > SRV_OUTBOUND_LIMIT) {
                missed(c, frame_count(&b->frames));
            } else {
                if (c->missed) {
                    char msg[96];
                    snprintf(msg, sizeof msg, "Missed %llu notification(s) due to backpressure",
                             (unsigned long long)c->missed);
                    c->missed = 0;
                    srv_send_notice(c, SRV_N_NOTIFICATIONS_MISSED, msg);
                }
                srv_ws_send_many(c, b->frames.data, b->frames.len);
                __atomic_fetch_add(&c->srv->counters.notifications_delivered,
                                   frame_count(&b->frames), __ATOMIC_RELAXED);
            }
        }
        b->next = NULL;
        srv_deliver_batch_free(b);
    }
}

/* ---- rounds ---- */

typedef struct round_job {
    srv_job job;
    srv_server *srv;
    uint64_t through;
    srv_note_batch *batches, **tail;
} round_job;

static void round_run(srv_job *j) {
    round_job *r = (round_job *)j;
    srv_server *s = r->srv;
    r->through = srv_notify_last_seq(s->notify);
    for (srv_conn *c = s->sessions; c; c = c->next_session) {
        srv_note_batch *b = read_for(c, r->through);
        if (!b) continue;
        *r->tail = b;
        r->tail = &b->next;
    }
}

static void round_done(srv_job *j) {
    round_job *r = (round_job *)j;
    srv_server *s = r->srv;
    /* Skipped at shutdown: nothing was read, nothing is sent. */
    srv_deliver_batches(r->batches);
    if (r->through > s->deliver_covered) s->deliver_covered = r->through;
    free(r);
    s->deliver_running = false;
    if (s->deliver_again) {
        s->deliver_again = false;
        srv_deliver_kick(s);
    }
}

static void start_round(srv_server *s) {
    round_job *r = calloc(1, sizeof *r);
    r->job.run = round_run;
    r->job.done = round_done;
    r->srv = s;
    r->tail = &r->batches;
    s->deliver_running = true;
    s->deliver_last_ns = srv_mono_ns();
    srv_count(s->counters.delivery_rounds);
    srv_pool_submit(&s->pool, &r->job, true);
}

static uint64_t window_ns(const srv_server *s) {
    uint64_t cap = (uint64_t)s->cfg->notification_coalesce_ms * 1000000u;
    uint64_t sessions = __atomic_load_n(&s->nsessions, __ATOMIC_RELAXED);
    uint64_t grown = sessions * DELIVER_NS_PER_SESSION;
    return grown < cap ? grown : cap;
}

static void on_window(uv_timer_t *t);

static void kick_later(srv_server *s) {
    if (uv_is_active((uv_handle_t *)&s->deliver_timer) ||
        uv_is_closing((uv_handle_t *)&s->deliver_timer))
        return;
    uint64_t now = srv_mono_ns(), due = s->deliver_last_ns + window_ns(s);
    uint64_t ms = due > now ? (due - now + 999999u) / 1000000u : 0;
    uv_timer_start(&s->deliver_timer, on_window, ms, 0);
}

static void on_window(uv_timer_t *t) {
    srv_server *s = t->data;
    if (s->stopping || s->deliver_running) return;
    start_round(s);
}

void srv_deliver_kick(srv_server *s) {
    if (s->stopping || !s->notify || !s->sessions) return;
    if (srv_notify_last_seq(s->notify) <= s->deliver_covered) return;
    if (s->deliver_running) {
        s->deliver_again = true;
        return;
    }
    if (srv_mono_ns() - s->deliver_last_ns >= window_ns(s))
        start_round(s);
    else
        kick_later(s);
}

/* ---- the log, sessions and replay ---- */

/* The engine's one change hook: the graphs' revisions move first, so that whatever the
 * notifications make a client do next (a read, a subscribe) sees the new revision. */
static void on_change(void *ctx, const il_change *changes, size_t n) {
    srv_server *s = ctx;
    srv_revision_note(s, changes, n);
    srv_notify_change_hook(s->notify, changes, n);
}

void srv_deliver_start(srv_server *s) {
    s->notify = srv_notify_new(s->epoch, s->cfg->notification_buffer_size, NULL, NULL);
    il_engine_set_change_hook(s->engine, on_change, s);
}

void srv_deliver_stop(srv_server *s) {
    il_engine_set_change_hook(s->engine, NULL, NULL);
    srv_notify_free(s->notify);
    s->notify = NULL;
}

void srv_deliver_register(srv_conn *c, srv_notify_replay *replay) {
    srv_server *s = c->srv;
    memset(replay, 0, sizeof *replay);
    srv_notify_cursor cur = {c->has_cursor, c->cursor_seq,
                             c->cursor_epoch[0] ? c->cursor_epoch : NULL};
    viewer v = viewer_of(c);
    srv_notify_replay_read(s->notify, &cur, viewer_sees, &v, replay);
    c->notify_through = replay->through_seq;
    c->next_session = s->sessions;
    c->prev_session = NULL;
    if (s->sessions) s->sessions->prev_session = c;
    s->sessions = c;
}

void srv_deliver_unregister(srv_conn *c) {
    srv_server *s = c->srv;
    if (!registered(c)) return;
    if (c->prev_session)
        c->prev_session->next_session = c->next_session;
    else
        s->sessions = c->next_session;
    if (c->next_session) c->next_session->prev_session = c->prev_session;
    c->next_session = c->prev_session = NULL;
}

void srv_deliver_replay(srv_conn *c, srv_notify_replay *replay) {
    if (replay->kind == SRV_REPLAY_GAP) {
        srv_send_notice(c, SRV_N_REPLAY_GAP, replay->gap_message);
    } else if (replay->kind == SRV_REPLAY_FRAMES) {
        for (size_t i = 0; i < replay->nframes; i++)
            srv_ws_send(c, replay->frames[i].json, replay->frames[i].len);
    }
    srv_ws_flush(c);
    srv_notify_replay_free(replay);
}
