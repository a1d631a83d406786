/* A connection's request pipeline (protocol-later.md 1.6-1.7): every request takes a
 * ticket in arrival order; at most ws_max_in_flight_requests are unreleased, and at that
 * bound the connection stops reading. The head of the queue starts when the start rule
 * allows (a shared read beside other reads, an exclusive request alone); replies are
 * released strictly in ticket order. Deadlines cover the wait in the pipeline and the
 * pool; cancel stops a request wherever it is; a disconnect stops what has not begun
 * committing and lets a started commit finish. Cheap reads run inline on the loop thread when the
 * engine is free, within a small budget; one that overruns it goes to the pool, and its
 * program is remembered so that it goes there directly next time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "base/strcopy.h"
#include "base/phase.h"
#include "server/server.h"
#include "server/srv_exec.h"
#include "server/srv_memory.h"
#include "server/srv_deliver.h"
#include "server/srv_notify.h"
#include "server/srv_pipeline.h"

/* A read that has not finished within this on the loop thread moves to the pool. */
#define INLINE_BUDGET_NS 1000000u
/* An inline write whose work took longer than this (its views' upkeep is not bounded by
 * the budget) sends its connection's writes to the pool for the pause. Its work is the loop
 * thread's CPU time: measured by the clock, a write the thread was preempted in (which, on a
 * busy machine, is common) looked slow and moved its connection's next second of writes to
 * the pool, two thread hand-offs each. */
#define INLINE_WRITE_SLOW_NS  2000000u
#define INLINE_WRITE_PAUSE_NS 1000000000u
/* A connection that has been the only one to write for this long syncs its commits on the
 * I/O thread (lone_writer). */
#define LONE_WRITER_NS 5000000u
/* With busy polling: a connection whose write comes within QUICK_WRITE_NS of its last
 * write's reply, or sooner than a sync takes, writes in a closed loop, and the commits of
 * those seen so within QUICK_WRITER_NS (or two syncs) are gathered into one sync
 * (quick_writers). */
#define QUICK_WRITE_NS  500000u
#define QUICK_WRITER_NS 2000000u
#define SWEEP_MS        5
/* Reads from several connections at once: one that cost at least SHARE_READ_MIN_NS when
 * its connection last ran it goes to the pool (share_read). Below it, two thread hand-offs would
 * cost more than the core gives. Another connection's read started within SHARE_READ_RECENT_NS
 * means several are reading. */
#define SHARE_READ_MIN_NS    100000u
#define SHARE_READ_RECENT_NS 2000000u

_Thread_local srv_capture *srv_tl_capture;

uint64_t srv_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t srv_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t test_ns_from_env(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    unsigned long long ns = strtoull(v, NULL, 10);
    return ns > 1000000000ull ? 1000000000ull : (uint64_t)ns;
}

uint64_t srv_test_reply_delay_ns(void) {
    return test_ns_from_env("INPUTLAYER_TEST_REPLY_DELAY_NS");
}

uint64_t srv_test_inline_stall_ns(void) {
    return test_ns_from_env("INPUTLAYER_TEST_INLINE_WRITE_STALL_NS");
}

uint64_t srv_test_release_delay_ns(void) {
    return test_ns_from_env("INPUTLAYER_TEST_RELEASE_DELAY_NS");
}

/* Sleeps, unlike test_reply_delay: the thread is away, not working, as when preempted. */
void srv_test_sleep(uint64_t ns) {
    if (!ns) return;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Spins rather than sleeps: a slower build costs CPU as well as time, as real extra work
 * would, and a sleep's wake-up would add the scheduler's latency on top. */
static void test_reply_delay(const srv_server *s) {
    if (!s->test_reply_delay_ns) return;
    uint64_t until = srv_mono_ns() + s->test_reply_delay_ns;
    while (srv_mono_ns() < until) {
    }
}

/* ---- captured frames ---- */

void srv_capture_init(srv_capture *cap, srv_conn *c) {
    cap->conn = c;
    cap->req = NULL;
    il_buf_init(&cap->frames);
    cap->notes = NULL;
    cap->push_notes = NULL;
    cap->pushes = NULL;
    cap->pushes_tail = &cap->pushes;
}

static void drop_list(srv_push **head, srv_push ***tail) {
    for (srv_push *p = *head, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    *head = NULL;
    *tail = head;
}

void srv_capture_free(srv_capture *cap) {
    il_buf_free(&cap->frames);
    srv_deliver_batch_free(cap->notes);
    cap->notes = NULL;
    srv_deliver_batch_free(cap->push_notes);
    cap->push_notes = NULL;
    drop_list(&cap->pushes, &cap->pushes_tail);
}

static void append(srv_push ***tail, srv_conn *to, const char *json, size_t len) {
    srv_push *p = malloc(sizeof *p + len);
    p->next = NULL;
    p->to = to;
    p->len = len;
    memcpy(p->data, json, len);
    **tail = p;
    *tail = &p->next;
}

void srv_capture_frame(srv_capture *cap, srv_conn *to, const char *json, size_t len) {
    if (to == cap->conn) {
        il_buf_put(&cap->frames, (const char *)&len, sizeof len);
        il_buf_put(&cap->frames, json, len);
        return;
    }
    append(&cap->pushes_tail, to, json, len);
}

static bool open_ws(const srv_conn *c) {
    return c && c->state == SRV_WS && !c->closed;
}

/* Subscription pushes, and the notifications read for their connections: one write per
 * connection. A connection that stopped reading gets none past the one round that was
 * made before its job saw it (its subscriptions hold their changes instead: srv_subs.c),
 * so they are always sent. */
static void send_pushes(srv_capture *cap) {
    for (srv_push *p = cap->pushes; p; p = p->next)
        if (open_ws(p->to)) srv_conn_cork(p->to);
    for (srv_push *p = cap->pushes; p; p = p->next) {
        if (!open_ws(p->to)) continue;
        srv_ws_send(p->to, p->data, p->len);
        srv_ws_flush(p->to);
    }
    srv_deliver_batches(cap->push_notes); /* each to a connection pushed to above */
    cap->push_notes = NULL;
    for (srv_push *p = cap->pushes; p; p = p->next) srv_conn_uncork(p->to);
    drop_list(&cap->pushes, &cap->pushes_tail);
}

void srv_capture_flush(srv_capture *cap) {
    srv_conn *c = cap->conn;
    srv_conn_cork(c); /* the reply and the notifications it carries: one write */
    for (size_t at = 0; at + sizeof(size_t) <= cap->frames.len;) {
        size_t len;
        memcpy(&len, cap->frames.data + at, sizeof len);
        at += sizeof len;
        if (open_ws(c)) srv_ws_send(c, cap->frames.data + at, len);
        at += len;
    }
    il_buf_clear(&cap->frames);
    if (open_ws(c)) srv_ws_flush(c);
    srv_deliver_batches(cap->notes);
    cap->notes = NULL;
    srv_conn_uncork(c);
    send_pushes(cap);
}

/* ---- tickets ---- */

static void pause_or_resume(srv_conn *c) {
    int64_t bound = c->srv->cfg->ws_max_in_flight_requests;
    if (bound < 1) bound = 1;
    bool full = c->nreqs >= (uint64_t)bound || srv_outbound(c) > SRV_OUTBOUND_LIMIT;
    if (full && !c->reading_paused && c->state == SRV_WS) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading_paused = true;
    } else if (!full && c->reading_paused) {
        c->reading_paused = false;
        if (c->state == SRV_WS && !c->closed) srv_conn_resume_reading(c);
    }
}

/* The sweep visits only connections with requests, so that its cost follows the requests
 * waiting, not the connections open. */
static void set_busy(srv_conn *c, bool on) {
    srv_server *s = c->srv;
    bool is = c->busy_prev || s->busy == c;
    if (on == is) return;
    if (on) {
        c->busy_prev = NULL;
        c->busy_next = s->busy;
        if (s->busy) s->busy->busy_prev = c;
        s->busy = c;
        return;
    }
    if (c->busy_prev)
        c->busy_prev->busy_next = c->busy_next;
    else
        s->busy = c->busy_next;
    if (c->busy_next) c->busy_next->busy_prev = c->busy_prev;
    c->busy_next = c->busy_prev = NULL;
}

void srv_pipe_forget(srv_conn *c) {
    set_busy(c, false);
}

srv_req *srv_pipe_new(srv_conn *c, enum srv_req_kind kind, const char *id) {
    srv_req *r = calloc(1, sizeof *r);
    r->conn = c;
    r->kind = kind;
    r->access = SRV_EXCLUSIVE;
    r->phase = kind == SRV_RK_REPLY ? SRV_REQ_FINISHED : SRV_REQ_QUEUED;
    if (id) {
        r->has_id = true;
        il_str_copy(r->id, sizeof r->id, id);
    }
    r->received_ns = srv_mono_ns();
    r->job.run = srv_exec_job;
    r->job.done = srv_pipe_job_done;
    srv_capture_init(&r->out, c);
    r->out.req = r;
    if (c->reqs_tail)
        c->reqs_tail->next = r;
    else
        c->reqs = r;
    c->reqs_tail = r;
    set_busy(c, true);
    c->nreqs++;
    pause_or_resume(c);
    return r;
}

bool srv_pipe_id_in_use(const srv_conn *c, const char *id) {
    for (const srv_req *r = c->reqs; r; r = r->next)
        if (r->has_id && strcmp(r->id, id) == 0) return true;
    return false;
}

srv_req *srv_pipe_reply_begin(srv_conn *c, const char *id) {
    srv_req *r = srv_pipe_new(c, SRV_RK_REPLY, id);
    srv_tl_capture = &r->out;
    return r;
}

void srv_pipe_reply_end(srv_req *r) {
    srv_tl_capture = NULL;
    srv_pipe_pump(r->conn);
}

static void req_free(srv_req *r) {
    srv_capture_free(&r->out);
    for (srv_fence_fx *f = r->fences, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    free(r->program);
    srv_exec_free_stmts(r->stmts, r->nstmts);
    for (size_t i = 0; i < r->nreads; i++) il_prepared_free(r->reads[i]);
    free(r->reads);
    for (size_t i = 0; i < r->nexpect_rels; i++) free(r->expect_rels[i]);
    free(r->expect_rels);
    free(r->group);
    free(r);
}

static void unlink_req(srv_conn *c, srv_req *r) {
    srv_req **p = &c->reqs, *prev = NULL;
    while (*p && *p != r) {
        prev = *p;
        p = &(*p)->next;
    }
    if (!*p) return;
    *p = r->next;
    if (c->reqs_tail == r) c->reqs_tail = prev;
    c->nreqs--;
    if (!c->reqs) set_busy(c, false);
}

/* Replaces whatever the request produced by one error frame. */
static void fail(srv_req *r, const char *code, const char *msg) {
    il_buf_clear(&r->out.frames);
    srv_capture *was = srv_tl_capture;
    srv_tl_capture = &r->out;
    srv_send_error(r->conn, r->has_id ? r->id : NULL, code, msg);
    srv_tl_capture = was;
    r->phase = SRV_REQ_FINISHED;
}

static const char SYNC_FAILED_MSG[] = "Storage error: syncing the write-ahead log failed; the "
                                      "program's effects may not survive a restart";

static const char OVERLOADED_WAIT_MSG[] =
    "Server overloaded: no worker was free within admission.max_wait_ms; retry later";

/* Effects that take place when the work is done, before any later job's frames go out:
 * ended credentials close their connections at once. */
static void apply_done_effects(srv_req *r) {
    srv_server *s = r->conn->srv;
    for (srv_fence_fx *f = r->fences; f; f = f->next) {
        if (f->key_id)
            srv_fence_key(s, f->key_id, f->why);
        else
            srv_fence_user(s, f->user, f->passwords_only);
    }
    if (r->fence_schedule) srv_fence_schedule(s);
    if (r->peak_bytes > SRV_RELEASE_AFTER_PEAK || r->out.frames.len > SRV_RELEASE_AFTER_REPLY)
        srv_release_memory_later(s);
}

static void release(srv_conn *c, srv_req *r) {
    unlink_req(c, r);
    if (r->close_credential) {
        srv_notice_close(c, r->close_why,
                         r->close_why == SRV_N_CREDENTIAL_EXPIRED
                             ? "Credential expired; reconnect with valid credentials"
                             : "Credential revoked; reconnect with valid credentials",
                         1008);
    } else {
        test_reply_delay(c->srv);
        srv_capture_flush(&r->out);
        if (r->access == SRV_EXCLUSIVE && c->srv->pool.loop_polls)
            c->write_replied_ns = srv_mono_ns();
    }
    req_free(r);
    /* A connection with requests in progress is not idle. */
    if (c->authed && c->state == SRV_WS && !c->reqs)
        srv_timer_start(c, (uint64_t)c->srv->cfg->ws_idle_timeout_ms);
}

/* The start rule, and the bound: at most ws_max_in_flight_requests admitted (started or
 * finished, unreleased) at once, however many frames one read brought in. A `read` also
 * waits for the connection's earlier reads to finish: evaluations take the engine lock in
 * no set order, and a later read evaluated first could report an older revision than the
 * read answered before it (they could not evaluate at the same time anyway). */
static bool can_start(const srv_conn *c, const srv_req *r) {
    int64_t bound = c->srv->cfg->ws_max_in_flight_requests;
    int64_t admitted = 0;
    for (const srv_req *q = c->reqs; q != r; q = q->next) {
        if (r->access == SRV_EXCLUSIVE || q->access == SRV_EXCLUSIVE) return false;
        if (r->kind == SRV_RK_READ && q->kind == SRV_RK_READ && q->phase == SRV_REQ_STARTED)
            return false;
        /* A read may run on its pinned session without the engine lock: nothing else may
           use the session meanwhile. */
        if (q->phase == SRV_REQ_STARTED && (srv_exec_pinnable(q) || srv_exec_pinnable(r)))
            return false;
        admitted++;
    }
    return admitted < (bound < 1 ? 1 : bound);
}

static uint32_t program_hash(const srv_req *r) {
    return (uint32_t)XXH3_64bits(r->program, r->len) | 1u;
}

static bool known_slow(const srv_conn *c, uint32_t h) {
    for (size_t i = 0; i < sizeof c->slow / sizeof c->slow[0]; i++)
        if (c->slow[i] == h) return true;
    return false;
}

/* Forgets that the program with hash h spilled (it may run inline again). */
static void forget_slow(srv_conn *c, uint32_t h) {
    for (size_t i = 0; i < sizeof c->slow / sizeof c->slow[0]; i++)
        if (c->slow[i] == h) c->slow[i] = 0;
}

static void submit(srv_req *r) {
    srv_conn *c = r->conn;
    srv_server *s = c->srv;
    if (r->access == SRV_EXCLUSIVE)
        srv_count(s->counters.writes_pooled);
    else if (r->kind == SRV_RK_EXECUTE || r->kind == SRV_RK_READ)
        srv_count(s->counters.reads_pooled);
    /* Programs that may commit wait in the write lane, everything else of a client's in
       the interactive one (srv_lanes.h). */
    r->job.node.lane = r->access == SRV_EXCLUSIVE ? SRV_LANE_WRITE : SRV_LANE_INTERACTIVE;
    if (srv_exec_pinnable(r)) {
        r->job.pin = srv_exec_pin;
        r->job.pin_published = srv_exec_pin_published;
        r->job.unpin = srv_exec_unpin;
    }
    if (!srv_pool_submit(&s->pool, &r->job, false)) {
        srv_count(s->counters.overloaded);
        fail(r, "overloaded", "Server overloaded: the compute queue is full; retry later");
        return;
    }
    r->in_pool = true;
    r->pooled_ns = srv_mono_ns();
    c->refs++;
    srv_sweep_arm(s);
}

/* Whether the loop thread may run a request itself, sparing it two thread hand-offs:
 * reads, and writes of given facts (whose cost is their facts and their views' upkeep),
 * unless this connection's last inline write took too long (INLINE_WRITE_SLOW_NS); then
 * its writes go to the pool for INLINE_WRITE_PAUSE_NS. Only when no job is queued (none is
 * overtaken) and the engine lock is free (never waited for). */
static bool may_run_inline(srv_conn *c, const srv_req *r, size_t queued) {
    if (r->kind == SRV_RK_REPLY || queued) return false;
    if (r->access == SRV_EXCLUSIVE && (!r->fact_writes || srv_mono_ns() < c->inline_writes_after))
        return false;
    return !known_slow(c, program_hash(r)) && srv_pool_try_engine(&c->srv->pool);
}

/* Whether c has been the only connection to write for LONE_WRITER_NS. Its commits are then
 * synced on the I/O thread itself: with no other writer, no other commit could share the
 * sync, and the hand-off to the syncer thread and back costs two wake-ups (measured: a
 * single durable fact acknowledged 6-25 % sooner, with 15-30 % less CPU, BENCHMARKS.md). While
 * several connections write, the I/O thread must not block in a sync: it reads their
 * requests meanwhile, and the syncer's one sync covers them all (group commit). */
static bool lone_writer(srv_server *s, const srv_conn *c, uint64_t now) {
    if (s->last_writer != c) {
        s->last_writer = c;
        s->last_writer_since_ns = now;
        return false;
    }
    return now - s->last_writer_since_ns >= LONE_WRITER_NS;
}

/* How many connections write in a closed loop now, c included when it does: the loop
 * then gathers that many commits for one sync (srv_pool_gather_for). A connection is
 * counted when its last write came quickly after the reply to the one before
 * (QUICK_WRITE_NS, or a sync's time: it is back before another sync could end), no longer
 * than QUICK_WRITER_NS (or two syncs) ago; at most as many as the table holds. */
static unsigned quick_writers(srv_server *s, const srv_conn *c, uint64_t now) {
    uint64_t sync_ns = __atomic_load_n(&s->pool.last_sync_ns, __ATOMIC_RELAXED);
    uint64_t quick = QUICK_WRITE_NS > sync_ns ? QUICK_WRITE_NS : sync_ns;
    uint64_t recent = QUICK_WRITER_NS > 2 * sync_ns ? QUICK_WRITER_NS : 2 * sync_ns;
    struct srv_quick_writer *w = s->quick_writers;
    enum { N = sizeof s->quick_writers / sizeof s->quick_writers[0] };
    if (c->write_replied_ns && now - c->write_replied_ns < quick) {
        unsigned slot = 0;
        for (unsigned i = 0; i < N; i++) {
            if (w[i].conn == c) {
                slot = i;
                break;
            }
            if (w[i].at_ns < w[slot].at_ns) slot = i;
        }
        w[slot] = (struct srv_quick_writer){c, now};
    }
    unsigned n = 0;
    for (unsigned i = 0; i < N; i++) n += w[i].at_ns && now - w[i].at_ns < recent;
    return n;
}

/* Whether a read goes to the pool rather than inline, so that while several connections
 * read, the workers evaluate side by side: a read that pins its session holds the engine
 * lock only to pin and unpin (srv_exec_pin), where an inline read holds it throughout and
 * would keep every other read waiting. Only a read its connection's last run of showed
 * dear (SHARE_READ_MIN_NS) and only while another connection read recently: a lone
 * client's reads stay inline, with no thread hand-off. Never on a single CPU (the process's
 * affinity), where the workers would only take turns with the loop thread: measured with the
 * server on one CPU, 8 clients' bound_query rate went down 5 % and its p50 up 12 %. */
static bool share_read(srv_server *s, srv_conn *c, const srv_req *r, uint64_t now) {
    if (r->access == SRV_EXCLUSIVE || r->kind != SRV_RK_EXECUTE || s->cpus < 2) return false;
    bool others =
        s->last_reader && s->last_reader != c && now - s->last_read_ns < SHARE_READ_RECENT_NS;
    s->last_reader = c;
    s->last_read_ns = now;
    return others && srv_exec_pinnable(r) && c->read_hash == program_hash(r) &&
           c->read_cost_ns >= SHARE_READ_MIN_NS;
}

static void start(srv_req *r) {
    srv_conn *c = r->conn;
    srv_server *s = c->srv;
    r->phase = SRV_REQ_STARTED;
    if (r->deadline_ns && srv_mono_ns() >= r->deadline_ns) {
        srv_count(s->counters.deadline_exceeded);
        fail(r, "deadline_exceeded", il_stop_message(IL_STOP_DEADLINE));
        return;
    }
    if (r->identity) {
        srv_exec_run(r);
        r->phase = SRV_REQ_FINISHED;
        apply_done_effects(r);
        return;
    }
    bool lone = false;
    if (r->access == SRV_EXCLUSIVE) {
        uint64_t now = srv_mono_ns();
        lone = lone_writer(s, c, now);
        if (s->pool.loop_polls) srv_pool_gather_for(&s->pool, quick_writers(s, c, now));
    }
    if (share_read(s, c, r, srv_mono_ns())) {
        srv_count(s->counters.reads_shared);
        submit(r);
        return;
    }
    size_t queued;
    unsigned running;
    srv_pool_stats(&s->pool, &queued, &running);
    if (may_run_inline(c, r, queued)) {
        /* The thread's CPU clock is a system call (about 1.5 us here), the monotonic one is
           not: CPU time never exceeds the time passed, so the second CPU reading is only
           needed when more than INLINE_WRITE_SLOW_NS passed, and reads need none. */
        uint64_t began = srv_mono_ns();
        uint64_t began_cpu = r->access == SRV_EXCLUSIVE ? srv_thread_cpu_ns() : 0;
        r->inline_budget_ns = began + INLINE_BUDGET_NS;
        srv_exec_run(r);
        if (r->access == SRV_EXCLUSIVE) srv_test_sleep(s->test_inline_stall_ns);
        /* Under the engine lock: it may have to wait for the log like a pool job. */
        bool synced = !r->inline_spilled && lone && srv_pool_sync_alone(&s->pool, &r->job);
        if (synced) il_phase_mark(IL_PHASE_LOG_SYNC);
        bool waits = !r->inline_spilled && !synced && srv_pool_ran_inline(&s->pool, &r->job);
        srv_pool_leave_engine(&s->pool);
        if (r->inline_spilled && r->access != SRV_EXCLUSIVE)
            srv_count(s->counters.reads_spilled);
        else if (!r->inline_spilled && r->access == SRV_EXCLUSIVE)
            srv_count(s->counters.writes_inline);
        else if (!r->inline_spilled)
            srv_count(s->counters.reads_inline);
        if (r->access != SRV_EXCLUSIVE && !r->inline_spilled) {
            c->read_hash = program_hash(r);
            c->read_cost_ns = srv_mono_ns() - began;
        }
        r->inline_budget_ns = 0;
        uint64_t ended = srv_mono_ns();
        if (r->access == SRV_EXCLUSIVE && ended - began > INLINE_WRITE_SLOW_NS &&
            srv_thread_cpu_ns() - began_cpu > INLINE_WRITE_SLOW_NS)
            c->inline_writes_after = ended + INLINE_WRITE_PAUSE_NS;
        if (waits) {
            /* The pool finishes it (srv_pipe_job_done) once the log is synced. */
            r->in_pool = true;
            c->refs++;
            return;
        }
        if (!r->inline_spilled) {
            if (r->job.sync_failed && r->access == SRV_EXCLUSIVE)
                fail(r, "internal", SYNC_FAILED_MSG);
            r->phase = SRV_REQ_FINISHED;
            apply_done_effects(r);
            if (r->access == SRV_EXCLUSIVE) {
                send_pushes(&r->out);
                srv_pool_drained_now(&s->pool); /* notifications, the batched sync */
            }
            return;
        }
        c->slow[c->slow_next++ % (sizeof c->slow / sizeof c->slow[0])] = program_hash(r);
        il_buf_clear(&r->out.frames);
        r->inline_spilled = r->stopped = false; /* it runs again, from the start */
    }
    submit(r);
}

void srv_pipe_pump(srv_conn *c) {
    for (;;) {
        bool progress = false;
        if (srv_outbound(c) > SRV_OUTBOUND_LIMIT) break; /* the client is not reading */
        while (c->reqs && c->reqs->phase == SRV_REQ_FINISHED && !c->closed &&
               srv_outbound(c) <= SRV_OUTBOUND_LIMIT && !c->release_pending) {
            release(c, c->reqs);
            progress = true;
        }
        /* Nothing runs before the session is open; pings and errors are answered. */
        if (c->closed || c->state != SRV_WS || !c->session_ready) break;
        srv_req *r = c->reqs;
        while (r && r->phase != SRV_REQ_QUEUED) r = r->next;
        if (r && can_start(c, r)) {
            start(r);
            progress = true;
        }
        if (!progress) break;
    }
    /* A request left waiting has a deadline (and a longest wait) to watch. */
    for (srv_req *r = c->reqs; r; r = r->next)
        if (r->phase == SRV_REQ_QUEUED) {
            srv_sweep_arm(c->srv);
            break;
        }
    pause_or_resume(c);
}

/* The pool finished (or skipped) a request. */
void srv_pipe_job_done(srv_job *j) {
    srv_req *r = (srv_req *)j;
    srv_conn *c = r->conn;
    r->in_pool = false;
    c->refs--;
    if (j->skipped) {
        /* Taken out of the queue by a cancel, a deadline or a disconnect: never ran. */
        if (r->commit == SRV_COMMIT_CANCELLED)
            fail(r, "cancelled", il_stop_message(IL_STOP_CANCELLED));
        else if (r->overloaded)
            fail(r, "overloaded", OVERLOADED_WAIT_MSG);
        else
            fail(r, "deadline_exceeded", il_stop_message(IL_STOP_DEADLINE));
    } else if (j->sync_failed && r->access == SRV_EXCLUSIVE) {
        /* Its writes are in memory but perhaps not on disk: no success may be claimed. */
        fail(r, "internal", SYNC_FAILED_MSG);
    } else if (r->pool_run_ns && r->pool_run_ns < INLINE_BUDGET_NS * 3 / 4 &&
               known_slow(c, program_hash(r))) {
        /* It spilled once (cold caches, a preemption, data since deleted) but its run
           here took well within the budget of CPU time: inline again, or a cheap read
           would pay two thread hand-offs for the rest of the connection's life. (At half
           the budget, a 450 us read on a busy machine stayed on the pool: 1,104 of 2,101
           reads.) A run over the rows bound is not cheap, however quick. */
        if (!r->many_rows) forget_slow(c, program_hash(r));
    }
    if (!j->skipped && r->access != SRV_EXCLUSIVE && r->kind == SRV_RK_EXECUTE) {
        c->read_hash = program_hash(r);
        c->read_cost_ns = r->pool_run_ns;
    }
    r->phase = SRV_REQ_FINISHED;
    apply_done_effects(r);
    /* Pushes to other connections go now; this connection's frames wait for release. */
    send_pushes(&r->out);
    if (c->closed) {
        unlink_req(c, r);
        req_free(r);
        srv_conn_maybe_free(c);
        return;
    }
    srv_pipe_pump(c);
}

/* ---- cancel, deadlines, disconnect ---- */

const char *srv_pipe_cancel(srv_conn *c, const char *target) {
    srv_req *r = c->reqs;
    while (r && !(r->has_id && r->kind != SRV_RK_REPLY && strcmp(r->id, target) == 0)) r = r->next;
    if (!r) return "not_found";
    srv_server *s = c->srv;
    if (r->phase == SRV_REQ_FINISHED) return "too_late";
    if (r->phase == SRV_REQ_QUEUED) {
        srv_count(s->counters.cancelled);
        r->commit = SRV_COMMIT_CANCELLED;
        fail(r, "cancelled", il_stop_message(IL_STOP_CANCELLED));
        return "cancelled";
    }
    int expected = SRV_COMMIT_NOT_YET;
    if (!__atomic_compare_exchange_n(&r->commit, &expected, SRV_COMMIT_CANCELLED, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return "too_late";
    srv_count(s->counters.cancelled);
    __atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
    srv_pool_unqueue(&s->pool, &r->job, false);
    return "cancelled";
}

static void sweep_conn(srv_conn *c, uint64_t now, bool *waiting) {
    int64_t max_wait = c->srv->cfg->max_wait_ms;
    for (srv_req *r = c->reqs; r; r = r->next) {
        bool pooled = r->in_pool && srv_pool_is_queued(&c->srv->pool, &r->job);
        if (r->phase != SRV_REQ_QUEUED && !pooled) continue;
        bool expired = r->deadline_ns && now >= r->deadline_ns;
        /* Waiting for a worker: in the pool's queue, or behind the session's opening job. */
        uint64_t since = pooled ? r->pooled_ns : !c->session_ready ? r->received_ns : 0;
        if (!expired && since && max_wait > 0 && now - since >= (uint64_t)max_wait * 1000000u) {
            /* Waited its longest for a worker: refused, its deadline not yet passed. */
            srv_count(c->srv->counters.overloaded);
            if (pooled) {
                r->overloaded = true;
                srv_pool_unqueue(&c->srv->pool, &r->job, true);
            } else {
                fail(r, "overloaded", OVERLOADED_WAIT_MSG);
            }
            continue;
        }
        if (!expired) {
            *waiting = true;
            continue;
        }
        srv_count(c->srv->counters.deadline_exceeded);
        if (r->phase == SRV_REQ_QUEUED)
            fail(r, "deadline_exceeded", il_stop_message(IL_STOP_DEADLINE));
        else
            srv_pool_unqueue(&c->srv->pool, &r->job, true);
    }
}

static void on_sweep(uv_timer_t *t) {
    srv_server *s = t->data;
    uint64_t now = srv_mono_ns();
    bool waiting = false;
    for (srv_conn *c = s->busy, *next; c; c = next) {
        next = c->busy_next;
        bool had = false;
        sweep_conn(c, now, &had);
        waiting |= had;
        if (c->reqs && c->reqs->phase == SRV_REQ_FINISHED) srv_pipe_pump(c);
    }
    if (!waiting) uv_timer_stop(t);
}

void srv_sweep_arm(srv_server *s) {
    if (!uv_is_active((uv_handle_t *)&s->sweep) && !uv_is_closing((uv_handle_t *)&s->sweep))
        uv_timer_start(&s->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
}

void srv_pipe_disconnect(srv_conn *c) {
    c->closed = true;
    for (srv_req *r = c->reqs, *next; r; r = next) {
        next = r->next;
        if (r->in_pool) {
            /* A request that has not begun committing stops (reads, session work); one
             * that has finishes, so that a commit is never cut in half. Either way the
             * request is freed when the pool is done. */
            int expected = SRV_COMMIT_NOT_YET;
            if (!srv_pool_unqueue(&c->srv->pool, &r->job, false) &&
                __atomic_compare_exchange_n(&r->commit, &expected, SRV_COMMIT_CANCELLED, false,
                                            __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
                __atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
            continue;
        }
        unlink_req(c, r);
        req_free(r);
    }
}

/* ---- returning memory ---- */

static void on_release(uv_timer_t *t) {
    srv_server *s = t->data;
    s->release_first_ms = 0;
    srv_memory_release();
}

void srv_release_memory_later(srv_server *s) {
    /* After a quiet second, at most 5 s after the first large peak or reply: never per
       query. */
    uint64_t now = srv_now_ms();
    if (!s->release_first_ms) s->release_first_ms = now;
    uint64_t latest = s->release_first_ms + 5000;
    uint64_t at = now + 1000 < latest ? now + 1000 : latest;
    if (!uv_is_closing((uv_handle_t *)&s->release))
        uv_timer_start(&s->release, on_release, at > now ? at - now : 0, 0);
}
