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
 * write(2) and a reader's wake-up each, about 20 µs per connection on loopback (6 ms per
 * commit with 300 connections, measured with the delta_keyed fixture), far more than the
 * commit itself; a round costs that once per window whatever the number of commits. The
 * window grows with the number of sessions (http.rate_limit.notification_ms_per_session
 * each) up to http.rate_limit.notification_coalesce_ms, so that a few connections are
 * hardly delayed and many cost a bounded share of a CPU: at 3 ms a session, under 1 % of
 * one however many watch (a paced batch, measured later at 10-17 µs whatever its length,
 * costs less than that first unpaced figure: BENCHMARKS.md, "Notification rounds"). A
 * connection that does not read (over SRV_OUTBOUND_LIMIT unwritten) loses its batch,
 * counted as missed, as does one whose cursor fell out of the ring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "server/srv_authz.h"
#include "server/srv_deliver.h"
#include "server/srv_pipeline.h"
#include "server/srv_revision.h"

/* A connection pushed a subscription delta gets its notifications with it when it is at
 * most this many behind (srv_deliver_with_push). */
#define WITH_PUSH_BEHIND_MAX 2u
/* Rounds over at most this many sessions run on the loop thread when they can. */
#define ROUND_INLINE_SESSIONS 64u

typedef struct viewer {
    const char *graph;
    bool is_admin, may_read, valid;
} viewer;

/* With the engine lock held (the session's graph). users_lock is released before the
 * log's lock is taken: the two are never held together. */
static viewer viewer_of(srv_conn *c) {
    srv_server *s = c->srv;
    viewer v = {il_session_graph(c->session), false, false, false};
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
    srv_note_frames *f = ctx;
    srv_ws_frame_text(&f->wire, n->json, n->len);
    f->count++;
}

/* The frames after cursor `after` that viewer v sees; NULL when there are none. */
static srv_note_frames *read_frames(srv_server *s, uint64_t after, viewer *v, uint64_t *through) {
    srv_note_frames *f = calloc(1, sizeof *f);
    il_buf_init(&f->wire);
    *through = srv_notify_read_after(s->notify, after, viewer_sees, v, emit, f, &f->evicted);
    if (f->count || f->evicted) return f;
    il_buf_free(&f->wire);
    free(f);
    return NULL;
}

static srv_note_batch *batch_of(srv_conn *c, srv_note_frames *f) {
    srv_note_batch *b = calloc(1, sizeof *b);
    b->to = c;
    b->frames = f;
    f->refs++;
    return b;
}

static bool registered(const srv_conn *c) {
    return c->prev_session || c->srv->sessions == c;
}

/* Appends c's notifications published so far to *list (engine lock held). */
static void read_into(srv_conn *c, srv_note_batch **list) {
    if (!c->session || !registered(c)) return;
    if (c->notify_through >= srv_notify_last_seq(c->srv->notify)) return;
    viewer v = viewer_of(c);
    srv_note_frames *f = read_frames(c->srv, c->notify_through, &v, &c->notify_through);
    if (!f) return;
    while (*list) list = &(*list)->next;
    *list = batch_of(c, f);
}

void srv_deliver_own(srv_capture *cap) {
    if (cap->conn) read_into(cap->conn, &cap->notes);
}

void srv_deliver_with_push(srv_capture *cap, srv_conn *c) {
    if (!cap || c == cap->conn) return;
    /* Only a connection that has read all but the last few: one further behind is
       waiting for a round already, where it shares one read of the log with every
       connection at the same cursor (300 agents watching a graph: a read each, and a
       cursor each for the rounds after, cost more than the round they would save). */
    uint64_t last = srv_notify_last_seq(c->srv->notify);
    if (last - c->notify_through <= WITH_PUSH_BEHIND_MAX) read_into(c, &cap->push_notes);
}

static void frames_release(void *ctx) {
    srv_note_frames *f = ctx;
    if (--f->refs) return;
    il_buf_free(&f->wire);
    free(f);
}

void srv_deliver_batch_free(srv_note_batch *b) {
    while (b) {
        srv_note_batch *next = b->next;
        frames_release(b->frames);
        free(b);
        b = next;
    }
}

/* Notifications c could not have: counted, and, when c is not reading (slow), past
 * notification_buffer_size in all the connection is closed (`slow_consumer`). False when
 * it was. A connection that reads but whose notifications left the ring before a delivery
 * reached it (one transaction of more than the ring holds, say) is told how many it
 * missed and stays: that is the server's doing, and closing it would lose the reply of
 * the very program that caused it. */
static bool missed(srv_conn *c, uint64_t n, bool slow) {
    if (n == 0) return true;
    if (!slow) {
        c->missed += n;
        return true;
    }
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

/* ---- the queue of a round's batches ---- */

/* A round's batches are written a slice per loop iteration, so that a round to hundreds
 * of connections does not hold the loop (and every reply) for the whole of it. */
#define DELIVER_SLICE 16

static void send_one(srv_note_batch *b);
/* Takes c's queued batches out of the queue and sends them, in order. */
static void send_queued_for(srv_conn *c) {
    srv_server *s = c->srv;
    srv_note_batch **pp = &s->deliver_queue;
    while (*pp && c->queued_batches) {
        srv_note_batch *b = *pp;
        if (b->to != c) {
            pp = &b->next;
            continue;
        }
        *pp = b->next;
        if (s->deliver_tail == &b->next) s->deliver_tail = pp;
        b->next = NULL;
        c->queued_batches--;
        send_one(b);
        c->refs--;
    }
}

static void on_idle(uv_idle_t *h) {
    srv_server *s = h->data;
    for (int i = 0; i < DELIVER_SLICE && s->deliver_queue; i++) {
        srv_note_batch *b = s->deliver_queue;
        s->deliver_queue = b->next;
        if (!s->deliver_queue) s->deliver_tail = &s->deliver_queue;
        b->next = NULL;
        srv_conn *c = b->to;
        c->queued_batches--;
        send_one(b);
        c->refs--;
        srv_conn_maybe_free(c);
    }
    if (!s->deliver_queue) uv_idle_stop(h);
}

static void enqueue(srv_server *s, srv_note_batch *list) {
    for (srv_note_batch *b = list, *next; b; b = next) {
        next = b->next;
        b->next = NULL;
        b->to->refs++;
        b->to->queued_batches++;
        *s->deliver_tail = b;
        s->deliver_tail = &b->next;
    }
    if (s->deliver_queue && !uv_is_closing((uv_handle_t *)&s->deliver_idle))
        uv_idle_start(&s->deliver_idle, on_idle);
}

void srv_deliver_drop_queue(srv_server *s) {
    uv_idle_stop(&s->deliver_idle);
    while (s->deliver_queue) {
        srv_note_batch *b = s->deliver_queue;
        s->deliver_queue = b->next;
        b->next = NULL;
        srv_conn *c = b->to;
        c->queued_batches--;
        srv_deliver_batch_free(b);
        c->refs--;
        srv_conn_maybe_free(c);
    }
    s->deliver_tail = &s->deliver_queue;
}

void srv_deliver_batches(srv_note_batch *b) {
    for (srv_note_batch *next; b; b = next) {
        next = b->next;
        b->next = NULL;
        if (b->to && b->to->queued_batches) send_queued_for(b->to);
        send_one(b);
    }
}

/* Sends one batch (b->next unused) and frees it. */
static void send_one(srv_note_batch *b) {
    srv_conn *c = b->to;
    srv_note_frames *f = b->frames;
    bool open = c && c->state == SRV_WS && !c->closed;
    bool slow = open && srv_outbound(c) > SRV_OUTBOUND_LIMIT;
    if (open && missed(c, f->evicted, slow)) {
        if (slow) {
            missed(c, f->count, true);
        } else if (f->count) {
            if (c->missed) {
                char msg[96];
                snprintf(msg, sizeof msg, "Missed %llu notification(s) due to backpressure",
                         (unsigned long long)c->missed);
                c->missed = 0;
                srv_send_notice(c, SRV_N_NOTIFICATIONS_MISSED, msg);
            }
            f->refs++;
            srv_ws_send_wire(c, f->wire.data, f->wire.len, frames_release, f);
            __atomic_fetch_add(&c->srv->counters.notifications_delivered, f->count,
                               __ATOMIC_RELAXED);
        }
    }
    srv_deliver_batch_free(b);
}

/* ---- rounds ---- */

typedef struct round_job {
    srv_job job;
    srv_server *srv;
    uint64_t through;
    srv_note_batch *batches, **tail;
} round_job;

/* Connections with the same cursor that see the same notifications (the same graph and
 * rights, as most watchers of a graph) share one read and one set of frames. */
typedef struct shared_read {
    uint64_t after, through;
    viewer v;
    srv_note_frames *frames; /* NULL: nothing for them */
} shared_read;

static bool same_view(const viewer *a, const viewer *b) {
    return a->valid == b->valid && a->is_admin == b->is_admin && a->may_read == b->may_read &&
           strcmp(a->graph, b->graph) == 0;
}

static void round_run(srv_job *j) {
    round_job *r = (round_job *)j;
    srv_server *s = r->srv;
    r->through = srv_notify_last_seq(s->notify);
    shared_read *reads = NULL;
    size_t nreads = 0, cap = 0;
    /* Connections of one user on one graph see the same: the rights are looked up once
     * for a run of them (the round holds the engine lock; every watcher waits for it). */
    const srv_conn *last = NULL;
    viewer v = {0};
    for (srv_conn *c = s->sessions; c; c = c->next_session) {
        if (c->notify_through >= r->through) continue;
        if (!last || strcmp(last->user, c->user) != 0 ||
            strcmp(v.graph, il_session_graph(c->session)) != 0)
            v = viewer_of(c);
        last = c;
        shared_read *sr = NULL;
        for (size_t i = 0; i < nreads && !sr; i++)
            if (reads[i].after == c->notify_through && same_view(&reads[i].v, &v)) sr = &reads[i];
        if (!sr) {
            if (nreads == cap) {
                cap = cap ? cap * 2 : 8;
                reads = realloc(reads, cap * sizeof *reads);
            }
            sr = &reads[nreads++];
            sr->after = c->notify_through;
            sr->v = v;
            sr->frames = read_frames(s, sr->after, &sr->v, &sr->through);
        }
        c->notify_through = sr->through;
        if (!sr->frames) continue;
        srv_note_batch *b = batch_of(c, sr->frames);
        *r->tail = b;
        r->tail = &b->next;
    }
    free(reads);
}

static void round_done(srv_job *j) {
    round_job *r = (round_job *)j;
    srv_server *s = r->srv;
    /* Skipped at shutdown: nothing was read, nothing is sent. */
    if (s->stopping)
        srv_deliver_batch_free(r->batches);
    else
        enqueue(s, r->batches);
    if (r->through > s->deliver_covered) s->deliver_covered = r->through;
    free(r);
    s->deliver_running = false;
    if (s->deliver_again) {
        s->deliver_again = false;
        srv_deliver_kick(s);
    }
}

/* Whether the loop thread may run a round itself: when the engine is free and no job is
 * outstanding (none of whose deltas the round's batches could overtake), for a round over
 * few sessions. Handed to a worker, a round costs two thread wake-ups (the worker's, then
 * the loop's to take the batches), each tens of microseconds of CPU on a virtual machine
 * whose CPUs sat idle: with one agent watching a graph written every 5 ms (delta_keyed),
 * a round follows nearly every write. Walking a few sessions, with one read of the log
 * shared by those with the same cursor and view, is a few microseconds; with many
 * sessions rounds are rare (the window grows with them), and they stay on the pool. */
static bool round_inline(srv_server *s) {
    return s->pool.outstanding == 0 &&
           __atomic_load_n(&s->nsessions, __ATOMIC_RELAXED) <= ROUND_INLINE_SESSIONS &&
           srv_pool_try_engine(&s->pool);
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
    if (round_inline(s)) {
        round_run(&r->job);
        srv_pool_leave_engine(&s->pool);
        round_done(&r->job); /* the batches go out on the loop's next turn, before it sleeps */
        return;
    }
    r->job.node.lane = SRV_LANE_BACKGROUND;
    r->job.park_if_busy = true; /* a long write holds the lock: no worker waits with it */
    srv_pool_submit(&s->pool, &r->job, true);
}

static uint64_t window_ns(const srv_server *s) {
    uint64_t cap = (uint64_t)s->cfg->notification_coalesce_ms * 1000000u;
    uint64_t sessions = __atomic_load_n(&s->nsessions, __ATOMIC_RELAXED);
    uint64_t grown = sessions * (uint64_t)s->cfg->notification_ms_per_session * 1000000u;
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

/* Whether every session has read through `last` already (a lone writer gets its own
 * notifications with its replies): then a round would wake a worker for nothing. The
 * cursors move under the engine lock (in jobs, and in writes run inline), so they are read
 * under it; when it is taken, the answer is "perhaps not" and the round runs. */
static bool all_caught_up(srv_server *s, uint64_t last) {
    if (!srv_pool_try_engine(&s->pool)) return false;
    bool caught_up = true;
    for (const srv_conn *c = s->sessions; c && caught_up; c = c->next_session)
        caught_up = c->notify_through >= last;
    srv_pool_leave_engine(&s->pool);
    return caught_up;
}

void srv_deliver_kick(srv_server *s) {
    if (s->stopping || !s->notify) return;
    uint64_t last = srv_notify_last_seq(s->notify);
    if (last <= s->deliver_covered) return;
    if (s->deliver_running) {
        s->deliver_again = true;
        return;
    }
    if (all_caught_up(s, last)) {
        s->deliver_covered = last;
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
    /* Without a cursor nothing is replayed, and the notifications published since
       `authenticated` went out are delivered as any others (a round reads them; those
       evicted meanwhile are counted as missed). */
    c->notify_through = replay->kind == SRV_REPLAY_NONE ? c->notify_from : replay->through_seq;
    c->next_session = s->sessions;
    c->prev_session = NULL;
    if (s->sessions) s->sessions->prev_session = c;
    s->sessions = c;
}

void srv_deliver_registered(srv_server *s, uint64_t through) {
    /* A round that found every session read through a seq did not count this one. */
    if (through < s->deliver_covered) s->deliver_covered = through;
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
