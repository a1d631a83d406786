/* The libuv side of the server: accepting connections (within max_connections), reading
 * into the HTTP parser or the WebSocket, writing, and closing a connection once its last
 * write has gone out; its session is closed by a last job on the pool, and the connection
 * is freed when no job refers to it any more. */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/phase.h"
#include "server/server.h"
#include "server/srv_deliver.h"
#include "server/srv_durability.h"
#include "server/srv_pipeline.h"
#include "server/srv_subs.h"

uint64_t srv_now_ms(void) {
    return uv_hrtime() / 1000000u;
}

typedef struct write_req {
    uv_write_t req;
    srv_conn *conn;
    char *data;
    size_t len;                 /* the part of data still to write, counted as pending */
    void (*release)(void *ctx); /* data is not ours: release(ctx) instead of free */
    void *ctx;
} write_req;

typedef struct close_job {
    srv_job job;
    srv_conn *conn;
} close_job;

static void close_run(srv_job *j) {
    srv_session_close(((close_job *)j)->conn);
}

static void close_done(srv_job *j) {
    srv_conn *c = ((close_job *)j)->conn;
    free(j);
    c->refs--;
    srv_conn_maybe_free(c);
}

void srv_conn_maybe_free(srv_conn *c) {
    if (c->handles_open > 0 || c->refs > 0) return;
    if (c->session || c->subs) {
        /* The session and its subscriptions belong to the engine: a job closes them. */
        close_job *j = calloc(1, sizeof *j);
        j->job.run = close_run;
        j->job.done = close_done;
        j->conn = c;
        c->refs++;
        srv_pool_submit(&c->srv->pool, &j->job, true);
        return;
    }
    srv_pipe_forget(c);
    srv_ws_free(c);
    il_buf_free(&c->url);
    il_buf_free(&c->hname);
    il_buf_free(&c->hval);
    il_buf_free(&c->ws_key);
    il_buf_free(&c->auth_hdr);
    il_buf_free(&c->forwarded_for);
    il_buf_free(&c->real_ip);
    il_buf_free(&c->origin);
    il_buf_free(&c->host);
    il_buf_free(&c->acr_method);
    il_buf_free(&c->acr_headers);
    il_buf_free(&c->if_none_match);
    il_buf_free(&c->if_modified_since);
    il_buf_free(&c->in);
    il_buf_free(&c->out);
    il_buf_free(&c->held);
    srv_server *s = c->srv;
    free(c);
    s->nalive--;
    srv_shutdown_check(s);
}

static void on_handle_closed(uv_handle_t *h) {
    srv_conn *c = h->data;
    c->handles_open--;
    srv_conn_maybe_free(c);
}

/* Closes the handles now (pending writes are cancelled by libuv). */
static void conn_close_now(srv_conn *c) {
    if (uv_is_closing((uv_handle_t *)&c->tcp)) return;
    srv_server *s = c->srv;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    s->nconns--;
    if (c->counted_http) s->nhttp--;
    if (c->counted_ws) s->nws--;
    c->counted_http = c->counted_ws = false;
    srv_peer_conn_release(c);
    srv_preauth_release(c);
    srv_pipe_disconnect(c);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
    uv_close((uv_handle_t *)&c->tick, on_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

enum { LINGER_MS = 2000 };

static void on_linger_timeout(uv_timer_t *t) {
    conn_close_now(t->data);
}

static void on_shutdown(uv_shutdown_t *req, int status) {
    if (status < 0 && status != UV_ECANCELED) conn_close_now(req->data);
}

/* Closing a socket that still has unread input makes the kernel send a reset, which can
 * destroy our last frames (a final notice, a close frame) before the peer reads them.
 * So: shut down our side, then read and discard until the peer closes, or a timeout. */
static void linger(srv_conn *c) {
    if (c->lingering || uv_is_closing((uv_handle_t *)&c->tcp)) return;
    c->lingering = true;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        conn_close_now(c);
        return;
    }
    c->timer_lazy = false;
    uv_timer_start(&c->timer, on_linger_timeout, LINGER_MS, 0);
}

/* With http.busy_poll_us, the loop keeps polling for that long after it last read (a
 * request) or wrote (a reply, a notification), instead of sleeping in epoll_wait. On a
 * virtual machine, waking a thread that sleeps, and the idle CPU it sleeps on, takes tens
 * of microseconds; a client that sends its next request within the window finds the loop
 * awake, and a write's sync finishes sooner on a CPU that did not halt meanwhile
 * (srv_pool_activity_now; measured: a durable single-fact write acknowledged 40-90 us
 * sooner, BENCHMARKS.md "Busy polling"). A window that no request comes in is CPU spent for
 * nothing, so after BUSY_POLL_MISSES reads in a row that came later than the window after
 * the loop's last write, the loop sleeps again until one comes within it (a client writing
 * every few milliseconds is not polled for). Off by default all the same. */
enum { BUSY_POLL_MISSES = 3 };

static void note_write(srv_server *s) {
    if (s->busy_poll_ns) s->busy_poll_last_ns = s->busy_poll_write_ns = srv_mono_ns();
}

static void note_read(srv_server *s) {
    if (!s->busy_poll_ns) return;
    uint64_t now = srv_mono_ns();
    if (now - s->busy_poll_write_ns <= s->busy_poll_ns)
        s->busy_poll_misses = 0;
    else if (s->busy_poll_misses < BUSY_POLL_MISSES)
        s->busy_poll_misses++;
    s->busy_poll_last_ns = now; /* the window covers the request's run and sync */
}

static void run_loop(srv_server *s) {
    s->busy_poll_ns = (uint64_t)s->cfg->busy_poll_us * 1000u;
    s->pool.loop_polls = s->busy_poll_ns != 0;
    if (!s->busy_poll_ns) {
        uv_run(s->loop, UV_RUN_DEFAULT);
        return;
    }
    uint64_t polling_since = 0;
    for (;;) {
        uint64_t now = srv_mono_ns();
        bool poll =
            s->busy_poll_misses < BUSY_POLL_MISSES && now - s->busy_poll_last_ns < s->busy_poll_ns;
        /* While it gathers commits for the syncer, polling reads the other writers' next
           requests without a wake-up (srv_pool_gather_for). */
        bool gathering_in_sync;
        bool gathering = srv_pool_loop_gathers(&s->pool, now, &gathering_in_sync);
        /* Not while the pool's threads may need this CPU (srv_pool_activity_now). */
        srv_pool_activity pool =
            poll && !gathering ? srv_pool_activity_now(&s->pool) : SRV_POOL_IDLE;
        if (pool == SRV_POOL_BUSY) poll = false;
        if (gathering) poll = true;
        /* The syncer, sharing this CPU, runs as soon as its sync ends. Between syncs it
           waits for the batch: a yield then is a system call per request for nothing. */
        if (pool == SRV_POOL_SYNCING || (gathering && gathering_in_sync)) sched_yield();
        if (poll && !polling_since) polling_since = now;
        if (!poll && polling_since) {
            s->busy_polled_ns += now - polling_since;
            polling_since = 0;
        }
        /* Both return 0 once no handle or request is left: the server has stopped. */
        if (uv_run(s->loop, poll ? UV_RUN_NOWAIT : UV_RUN_ONCE) == 0) break;
    }
}

static void write_done(char *data, void (*release)(void *), void *ctx) {
    if (release)
        release(ctx);
    else
        free(data);
}

static void on_write(uv_write_t *req, int status) {
    write_req *w = (write_req *)req;
    srv_conn *c = w->conn;
    /* Held back by its output (or reading paused): whatever took it over the limit may
       have gone out without a request of its own (uv_try_write), so the state is asked. */
    bool was_held = srv_outbound(c) > SRV_OUTBOUND_LIMIT || c->reading_paused ||
                    __atomic_load_n(&c->backpressured, __ATOMIC_SEQ_CST);
    c->pending_bytes -= w->len;
    write_done(w->data, w->release, w->ctx);
    free(w);
    c->pending_writes--;
    if (status >= 0 && was_held && srv_outbound(c) <= SRV_OUTBOUND_LIMIT && c->state == SRV_WS) {
        __atomic_store_n(&c->backpressured, false, __ATOMIC_SEQ_CST);
        srv_subs_release_later(c);
        srv_pipe_pump(c);
    }
    if (status < 0)
        conn_close_now(c);
    else if (c->state == SRV_CLOSING && c->pending_writes == 0)
        linger(c);
}

/* The socket writes that do not wait: the send phase of the I/O thread's (base/phase.h). */
static int try_write(srv_conn *c, const uv_buf_t *bufs, unsigned n) {
    il_phase_mark(IL_PHASE_SEND_PREP);
    int rc = uv_try_write((uv_stream_t *)&c->tcp, bufs, n);
    il_phase_mark(IL_PHASE_SEND);
    return rc;
}

/* Queues what uv_try_write did not take (data from done on), in order after what is queued. */
static void queue_write(srv_conn *c, char *data, size_t len, size_t done, void (*release)(void *),
                        void *ctx) {
    write_req *w = malloc(sizeof *w);
    w->conn = c;
    w->len = len - done;
    w->data = data;
    w->release = release;
    w->ctx = ctx;
    c->pending_bytes += w->len;
    if (srv_outbound(c) > SRV_OUTBOUND_LIMIT)
        __atomic_store_n(&c->backpressured, true, __ATOMIC_SEQ_CST);
    uv_buf_t b = uv_buf_init(data + done, (unsigned)w->len);
    c->pending_writes++;
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_write) != 0) {
        c->pending_bytes -= w->len;
        write_done(data, release, ctx);
        free(w);
        c->pending_writes--;
        conn_close_now(c);
    }
}

static void write_out(srv_conn *c, char *data, size_t len, void (*release)(void *), void *ctx) {
    note_write(c->srv);
    if (c->corked) {
        if (c->ncorked == sizeof c->cork / sizeof c->cork[0]) {
            srv_conn_uncork(c); /* full: these go, and gathering goes on */
            c->corked = true;
        }
        c->cork[c->ncorked++] = (struct srv_corked){data, len, release, ctx};
        c->pending_bytes += len;
        return;
    }
    /* Written at once when nothing is queued before it, as most writes are: no request, and
       no epoll_ctl, which libuv makes after every queued write when the queue drains. */
    size_t done = 0;
    if (c->pending_writes == 0) {
        uv_buf_t b = uv_buf_init(data, (unsigned)len);
        int n = try_write(c, &b, 1);
        if (n == (int)len) {
            write_done(data, release, ctx);
            return;
        }
        if (n > 0) done = (size_t)n; /* the rest is queued; an error shows in on_write */
    }
    queue_write(c, data, len, done, release, ctx);
}

void srv_conn_cork(srv_conn *c) {
    c->corked = true;
}

void srv_conn_uncork(srv_conn *c) {
    unsigned n = c->ncorked;
    c->corked = false;
    c->ncorked = 0;
    if (n == 0) return;
    struct srv_corked *k = c->cork;
    for (unsigned i = 0; i < n; i++) c->pending_bytes -= k[i].len;
    if (uv_is_closing((uv_handle_t *)&c->tcp)) {
        for (unsigned i = 0; i < n; i++) write_done(k[i].data, k[i].release, k[i].ctx);
        return;
    }
    size_t written = 0;
    if (c->pending_writes == 0) {
        uv_buf_t bufs[sizeof c->cork / sizeof c->cork[0]];
        for (unsigned i = 0; i < n; i++) bufs[i] = uv_buf_init(k[i].data, (unsigned)k[i].len);
        int rc = try_write(c, bufs, n);
        if (rc > 0) written = (size_t)rc;
    }
    for (unsigned i = 0; i < n; i++) {
        size_t done = written < k[i].len ? written : k[i].len;
        written -= done;
        if (done == k[i].len)
            write_done(k[i].data, k[i].release, k[i].ctx);
        else
            queue_write(c, k[i].data, k[i].len, done, k[i].release, k[i].ctx);
    }
}

void srv_conn_write(srv_conn *c, const char *data, size_t len) {
    if (len == 0 || uv_is_closing((uv_handle_t *)&c->tcp)) return;
    char *copy = malloc(len);
    memcpy(copy, data, len);
    write_out(c, copy, len, NULL, NULL);
}

void srv_conn_write_ref(srv_conn *c, const char *data, size_t len, void (*release)(void *ctx),
                        void *ctx) {
    if (len == 0 || uv_is_closing((uv_handle_t *)&c->tcp)) {
        release(ctx);
        return;
    }
    write_out(c, (char *)data, len, release, ctx);
}

void srv_conn_close(srv_conn *c) {
    c->state = SRV_CLOSING;
    c->timer_lazy = false;
    uv_timer_stop(&c->timer);
    uv_timer_stop(&c->tick);
    /* Inside wslay's callbacks the last frames are still queued: srv_ws_feed lingers
     * after flushing them. */
    if (c->pending_writes == 0 && !c->in_recv) linger(c);
}

/* Every read lands in the loop's one buffer: the feeds copy what they keep, and a read's
 * callback ends before the next read starts. A buffer per read cost a 64 KiB malloc and
 * free per request, and glibc consolidates its free lists at each such free. */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    srv_server *s = ((srv_conn *)h->data)->srv;
    buf->base = s->read_chunk;
    buf->len = s->read_chunk ? SRV_READ_CHUNK : 0; /* 0: libuv reports UV_ENOBUFS */
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
    srv_conn *c = stream->data;
    if (n < 0) {
        conn_close_now(c);
        return;
    }
    if (n > 0) {
        il_phase_begin();
        note_read(c->srv);
        if (c->state == SRV_HTTP)
            srv_http_feed(c, buf->base, (size_t)n);
        else if (c->state == SRV_WS)
            srv_ws_feed(c, buf->base, (size_t)n);
        il_phase_mark(IL_PHASE_REST);
    }
}

void srv_conn_resume_reading(srv_conn *c) {
    if (!uv_is_closing((uv_handle_t *)&c->tcp))
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    /* Messages already received but not yet parsed (reading stopped mid-buffer). */
    if (c->state == SRV_WS && c->in_pos < c->in.len) srv_ws_feed(c, NULL, 0);
}

static void on_timer(uv_timer_t *t) {
    srv_conn *c = t->data;
    uint64_t now = uv_now(t->loop);
    if (c->timer_due > now) { /* moved later since it was armed */
        uv_timer_start(t, on_timer, c->timer_due - now, 0);
        return;
    }
    c->timer_lazy = false;
    srv_proto_timeout(c);
}

/* A probe answers at once, so a connection in a probe slot that is still waiting for its
 * request is more likely part of a flood than a probe: when the slots are all taken, the
 * one that has waited longest makes room. The connections are listed newest first. */
static bool evict_oldest_probe_slot(srv_server *s) {
    srv_conn *oldest = NULL;
    for (srv_conn *o = s->conns; o; o = o->next)
        if (o->probes_only && o->state == SRV_HTTP) oldest = o;
    if (!oldest) return false;
    conn_close_now(oldest);
    return true;
}

static void on_connection(uv_stream_t *server, int status) {
    srv_server *s = server->data;
    if (status < 0) return;
    srv_conn *c = calloc(1, sizeof *c);
    c->srv = s;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    uv_timer_init(s->loop, &c->tick);
    c->tcp.data = c;
    c->timer.data = c;
    c->tick.data = c;
    c->handles_open = 3;
    s->nalive++;
    c->next = s->conns;
    if (s->conns) s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        conn_close_now(c);
        return;
    }
    /* Small request/reply frames: do not let Nagle hold them back. */
    uv_tcp_nodelay(&c->tcp, 1);
    struct sockaddr_storage peer;
    int plen = sizeof peer;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&peer, &plen) == 0 &&
        peer.ss_family == AF_INET)
        uv_ip4_name((const struct sockaddr_in *)&peer, c->peer, sizeof c->peer);
    else
        snprintf(c->peer, sizeof c->peer, "0.0.0.0");
    memcpy(c->ip, c->peer, sizeof c->ip);
    srv_http_init(c);
    /* Reading also serves a refused connection: the lingering close reads until EOF. */
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    /* Past max_connections, SRV_PROBE_SLOTS more connections are let in for the health
       probes alone (srv_http: anything else is refused once the request is read), so that
       a flood of connections does not get a healthy server restarted. */
    int64_t limit = s->cfg->max_connections;
    bool per_peer_ok = srv_peer_conn_take(c);
    bool full = limit > 0 && s->nhttp >= (uint64_t)limit + SRV_PROBE_SLOTS;
    if (per_peer_ok && full) full = !evict_oldest_probe_slot(s);
    if (full || !per_peer_ok) {
        s->counters.rejections[SRV_REJ_HTTP_CONNECTIONS]++;
        const char *msg = full ? "Too many connections" : "Too many connections from this address";
        srv_http_respond(c, 503, "Service Unavailable", "text/plain; charset=utf-8", msg,
                         strlen(msg));
        srv_conn_close(c);
        return;
    }
    c->probes_only = limit > 0 && s->nhttp >= (uint64_t)limit;
    s->nhttp++;
    c->counted_http = true;
    srv_timer_start(c, (uint64_t)s->cfg->header_timeout_ms);
}

/* After finished jobs' `done`s: notifications to deliver, a sync to schedule. */
static void after_jobs(void *server) {
    srv_deliver_kick(server);
    srv_durability_after_jobs(server);
}

static void on_signal(uv_signal_t *sig, int signum) {
    (void)signum;
    srv_server *s = sig->data;
    fprintf(stderr, "Shutting down\n");
    uv_close((uv_handle_t *)&s->listener, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    uv_close((uv_handle_t *)&s->expiry, NULL);
    uv_close((uv_handle_t *)&s->sweep, NULL);
    uv_close((uv_handle_t *)&s->release, NULL);
    uv_close((uv_handle_t *)&s->deliver_timer, NULL);
    srv_deliver_drop_queue(s);
    uv_close((uv_handle_t *)&s->deliver_idle, NULL);
    uv_close((uv_handle_t *)&s->sync_timer, NULL);
    s->stopping = true;
    /* WebSocket clients get a notice and a close frame; the loop ends once every
     * connection has written its last bytes and closed. */
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->state == SRV_WS)
            srv_notice_close(c, SRV_N_SERVER_SHUTDOWN, "Server shutting down", 1001);
        else
            conn_close_now(c);
    }
    srv_shutdown_check(s);
}

void srv_shutdown_check(srv_server *s) {
    /* The pool's handle closes once the last connection is freed (its session closes in
     * a job) and no job is left. */
    if (s->stopping && s->nalive == 0) srv_pool_close_when_idle(&s->pool);
}

int srv_loop_run(srv_server *s) {
    const char *host = s->cfg->host;
    int port = (int)s->cfg->port;
    struct sockaddr_in addr;
    if (uv_ip4_addr(host, port, &addr) != 0) {
        fprintf(stderr, "ERROR: invalid address %s:%d\n", host, port);
        return 1;
    }
    s->read_chunk = malloc(SRV_READ_CHUNK);
    if (!s->read_chunk) {
        fprintf(stderr, "ERROR: out of memory\n");
        return 1;
    }
    uv_tcp_init(s->loop, &s->listener);
    s->listener.data = s;
    int rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&s->listener, 1024, on_connection);
    if (rc != 0) {
        fprintf(stderr, "ERROR: cannot listen on %s:%d: %s\n", host, port, uv_strerror(rc));
        uv_close((uv_handle_t *)&s->listener, NULL);
        s->stopping = true;
        srv_shutdown_check(s);
        uv_run(s->loop, UV_RUN_DEFAULT);
        return 1;
    }
    uv_signal_init(s->loop, &s->sigint);
    uv_signal_init(s->loop, &s->sigterm);
    s->sigint.data = s->sigterm.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_timer_init(s->loop, &s->expiry);
    s->expiry.data = s;
    uv_timer_init(s->loop, &s->sweep);
    s->sweep.data = s;
    uv_timer_init(s->loop, &s->release);
    s->release.data = s;
    uv_timer_init(s->loop, &s->deliver_timer);
    s->deliver_timer.data = s;
    uv_idle_init(s->loop, &s->deliver_idle);
    s->deliver_idle.data = s;
    s->deliver_tail = &s->deliver_queue;
    uv_timer_init(s->loop, &s->sync_timer);
    s->sync_timer.data = s;
    srv_pool_on_drained(&s->pool, after_jobs, s);
    srv_fence_schedule(s);
    /* with --port 0 the system chose: report the port really bound */
    struct sockaddr_storage bound;
    int len = sizeof bound;
    if (uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &len) == 0 &&
        bound.ss_family == AF_INET)
        port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    printf("HTTP server listening on: http://%s:%d\n", host, port);
    fflush(stdout);
    run_loop(s);
    return 0;
}

/* Every request moves the idle deadline: moving it later only records it, and the timer,
 * when it fires, is armed again for what is left. Rearming it on each message had been a
 * removal from the loop's timer heap and an insertion, every request. */
void srv_timer_start(srv_conn *c, uint64_t ms) {
    if (ms == 0) {
        c->timer_lazy = false;
        uv_timer_stop(&c->timer);
        return;
    }
    uint64_t now = uv_now(c->tcp.loop);
    c->timer_due = now + ms;
    if (c->timer_lazy && uv_is_active((uv_handle_t *)&c->timer) &&
        c->timer_due >= now + uv_timer_get_due_in(&c->timer))
        return;
    c->timer_lazy = true;
    uv_timer_start(&c->timer, on_timer, ms, 0);
}
