/* Shared declarations of inputlayer-server: the server (one libuv loop, the compute pool,
 * one engine, the identity store, the limits), a connection (HTTP until it upgrades to a
 * WebSocket), a request of a connection's pipeline, and the functions each file provides.
 *
 * Threads: the loop thread owns sockets, timers, connections and pipelines; engine work
 * runs in jobs on the compute pool holding the engine lock (srv_pool.h). What a job may
 * touch: its connection's session and subscriptions, the engine, the per-graph revision
 * counters and the session counters (all under the engine lock), and the identity store
 * under users_lock. Frames a job produces are captured (srv_capture) and sent by the loop
 * thread when the job is done. */
#ifndef IL_SERVER_SERVER_H
#define IL_SERVER_SERVER_H

#include <http_parser.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>
#include <wslay/wslay.h>

#include "base/buf.h"
#include "base/json_str.h"
#include "inputlayer.h"
#include "server/srv_config.h"
#include "server/srv_pool.h"
#include "server/srv_users.h"

#define SRV_VERSION          "0.1.0"
#define SRV_PROTOCOL_VERSION 5
/* Incoming WebSocket messages over this are refused (close 1009). */
#define SRV_MAX_MESSAGE (16u * 1024 * 1024)
/* Before authentication a frame or message over this is refused (close 1009) as soon as
 * its header declares it: an auth frame is small, and nobody unauthenticated may make the
 * server buffer megabytes. */
#define SRV_MAX_PREAUTH_MESSAGE (8u * 1024)
/* A connection's input and output buffers keep at most this much capacity between
 * messages: a large message or reply does not stay allocated for the connection's life. */
#define SRV_CONN_BUF_KEEP (64u * 1024)
/* A reply whose single frame would exceed this is streamed in chunks. */
#define SRV_STREAM_THRESHOLD (1024u * 1024)
#define SRV_CHUNK_ROWS       500
/* A read run inline whose table has more rows than this goes to the pool: its encoding
 * must not hold the I/O thread (docs/server.md, Threads). */
#define SRV_INLINE_MAX_ROWS 10000u
/* While more than this waits to be written to a connection, nothing more of it is read,
 * started or released: a client that stops reading holds the server's memory to this
 * plus the replies of requests already started. */
#define SRV_OUTBOUND_LIMIT (8u * 1024 * 1024)
#define srv_outbound(c)    ((c)->pending_bytes + (c)->queued_bytes)
#define SRV_MAX_AUTH_FAILS 3
/* An HTTP connection that sends no complete request for this long is closed, so that
 * idle keep-alive connections cannot hold the max_connections slots. */
#define SRV_HTTP_IDLE_MS 60000
/* Connections over max_connections that only the health probes may use. */
#define SRV_PROBE_SLOTS 16

/* Counters behind /metrics/prometheus (labelled families). */
enum srv_reject {
    SRV_REJ_HTTP_CONNECTIONS,
    SRV_REJ_WS_CONNECTIONS,
    SRV_REJ_PER_IP_RATE,
    SRV_REJ_WS_PREAUTH,
    SRV_REJ_WS_RATE,
    SRV_REJ_LOGIN_BACKOFF,
    SRV_REJ_WS_ORIGIN,
    SRV_REJ_N
};
enum srv_auth_method { SRV_AUTH_PASSWORD, SRV_AUTH_API_KEY, SRV_AUTH_N };
enum srv_notice {
    SRV_N_AUTH_TIMEOUT,
    SRV_N_IDLE_TIMEOUT,
    SRV_N_LIFETIME,
    SRV_N_CREDENTIAL_REVOKED,
    SRV_N_CREDENTIAL_EXPIRED,
    SRV_N_MESSAGE_TOO_LARGE,
    SRV_N_SERVER_SHUTDOWN,
    SRV_N_REPLAY_GAP,
    SRV_N_NOTIFICATIONS_MISSED,
    SRV_N_SLOW_CONSUMER,
    SRV_N_N
};

/* Incremented with srv_count (relaxed atomics): jobs count errors too. */
typedef struct srv_counters {
    uint64_t rejections[SRV_REJ_N];
    uint64_t auth_failures[SRV_AUTH_N];
    uint64_t notices[SRV_N_N];
    uint64_t errors[20]; /* by index of srv_error_codes */
    uint64_t pings;
    uint64_t overloaded, deadline_exceeded, cancelled, memory_refused, snapshot_too_old;
    uint64_t delivery_rounds, notifications_delivered; /* srv_deliver.c */
    uint64_t writes_inline, writes_pooled; /* srv_pipeline.c: where writing programs ran */
    uint64_t reads_inline, reads_pooled;   /* srv_pipeline.c: where reading programs ran */
    uint64_t reads_spilled;       /* reads that overran the inline budget and ran again pooled */
    uint64_t reads_shared;        /* reads sent to the pool while others read (share_read) */
    uint64_t reads_pinned;        /* pooled reads that ran pinned, without the engine lock */
    uint64_t reads_published;     /* of those, pinned on a write's published revision */
    uint64_t statements_threaded; /* statements whose evaluation ran on several threads */
} srv_counters;
#define srv_count(field) __atomic_fetch_add(&(field), 1, __ATOMIC_RELAXED)

/* Per-client-address (and per-user-name) state: the HTTP request window, the count of
 * unauthenticated WebSockets, and the login backoff. */
typedef struct srv_ipent {
    struct srv_ipent *next;
    uint64_t window_ms;
    uint32_t count;
    uint32_t preauth;
    uint32_t conns; /* HTTP connections open from the address (a peer's entry) */
    uint32_t failures;
    uint64_t last_fail_ms, locked_until_ms; /* locked: addresses only */
    char key[];                             /* "ip:<address>" or "user:<name>" */
} srv_ipent;

typedef struct srv_iptab {
    srv_ipent **buckets;
    size_t nbuckets, n, sweep_at;
} srv_iptab;

enum { SRV_READ_CHUNK = 65536 };

typedef struct srv_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_signal_t sigint, sigterm;
    uv_timer_t expiry; /* fires when the next API key expires */
    il_engine *engine;
    il_session *stats; /* a private session used for /metrics counts */
    const srv_config *cfg;
    srv_pool pool;
    il_mem_budget *query_budget; /* max_total_query_memory_bytes */
    uv_timer_t sweep;            /* deadlines of queued requests */
    uv_timer_t release;          /* returns freed memory to the system after a quiet time */
    uint64_t release_first_ms;   /* when the first unreleased large peak finished (0: none) */
    char *read_chunk;            /* SRV_READ_CHUNK bytes: where every read lands */
    unsigned nqueued_reqs;       /* requests waiting in pipelines or the pool */
    bool stopping;
    pthread_mutex_t users_lock;
    srv_users users;
    srv_iptab clients;
    srv_counters counters;
    uint64_t started_ms;
    uint64_t query_count;
    pthread_mutex_t graphs_lock;
    il_buf graph_names;     /* NUL-separated, from the last srv_count_graphs */
    struct srv_static *gui; /* the web client's files; NULL: not served (srv_static.h) */
    size_t nkgs;
    unsigned nalive; /* connections not yet freed */
    unsigned nconns, nhttp, nws, nsessions, ndirty;
    char epoch[17];
    struct srv_conn *conns;       /* every open connection, for shutdown */
    struct srv_conn *busy;        /* connections with unreleased requests (the sweep's) */
    struct srv_kgrev *kgrevs;     /* srv_revision.c: per-graph revisions (engine lock) */
    uint64_t revision_stmt;       /* srv_revision.c: statements that changed some graph */
    const char *revision_last;    /* the graph the last of them changed (a kgrevs name) */
    uint64_t revision_base;       /* every graph's revision at start: the log position */
    struct srv_conn *subscribers; /* srv_subs.c: connections with subscriptions (engine lock) */
    struct srv_conn *sessions;    /* srv_deliver.c: connections with open sessions (engine lock) */
    struct srv_notify_log *notify;
    /* srv_deliver.c: notifications go to connections in paced rounds (loop thread). */
    uv_timer_t deliver_timer;
    uv_idle_t deliver_idle; /* writes queued batches a slice per loop iteration */
    struct srv_note_batch *deliver_queue, **deliver_tail;
    /* srv_durability.c: in `batched` mode, a sync after writes (loop thread). */
    uv_timer_t sync_timer;
    bool batched, syncing;
    bool group_commit; /* immediate mode: the pool's syncer syncs the log (srv_pool.h) */
    uint64_t log_records_at_start;    /* the log position the server opened at */
    uint64_t deliver_last_ns;         /* when the last round started */
    uint64_t deliver_covered;         /* the last seq that round read through */
    bool deliver_running;             /* a round is queued or running */
    bool deliver_again;               /* something was published meanwhile */
    uint64_t sub_graph_changes;       /* srv_notify_graph_changes when subscriptions last looked */
    struct srv_group *groups_touched; /* srv_subgroup.c: groups of such members */
    const struct srv_conn
        *last_writer;              /* srv_pipeline.c lone_writer: compared, never dereferenced */
    uint64_t last_writer_since_ns; /* when it became the last writer */
    unsigned cpus; /* the CPUs the process may run on (its affinity), at the start */
    const struct srv_conn *last_reader; /* srv_pipeline.c share_read: never dereferenced */
    uint64_t last_read_ns;              /* when it started its read */
    struct srv_quick_writer {           /* srv_pipeline.c quick_writers: busy polling only */
        const struct srv_conn *conn;    /* compared, never dereferenced */
        uint64_t at_ns;                 /* its last write that came quickly after a reply */
    } quick_writers[8];
    uint64_t busy_poll_ns;          /* http.busy_poll_us (loop.c run_loop); 0: sleep when idle */
    uint64_t busy_poll_last_ns;     /* the loop's last read or write (busy_poll_ns only) */
    uint64_t busy_poll_write_ns;    /* the loop's last write (busy_poll_ns only) */
    unsigned busy_poll_misses;      /* reads in a row that came too late to be caught */
    uint64_t busy_polled_ns;        /* time spent so (inputlayer_loop_busy_poll_seconds_total) */
    uint64_t test_reply_delay_ns;   /* INPUTLAYER_TEST_REPLY_DELAY_NS (docs/server.md) */
    uint64_t test_inline_stall_ns;  /* INPUTLAYER_TEST_INLINE_WRITE_STALL_NS (ditto) */
    uint64_t test_release_delay_ns; /* INPUTLAYER_TEST_RELEASE_DELAY_NS (ditto) */
} srv_server;

/* Frames produced by a job: for its own connection, in order, and pushes (subscription
 * deltas) for other connections. */
typedef struct srv_push {
    struct srv_push *next;
    struct srv_conn *to;
    size_t len;
    char data[];
} srv_push;

/* Notification frames read from the log after one cursor, shared by every connection
 * that had that cursor and sees the same ones (srv_deliver.c): framed once as WebSocket
 * messages and written to each without a copy. The job that builds them sets refs to
 * the batches that use them; from then on only the loop thread counts. */
typedef struct srv_note_frames {
    unsigned refs;
    uint64_t evicted; /* notifications the ring lost before the cursor could have them */
    size_t count;     /* messages in wire */
    il_buf wire;      /* WebSocket text frames, back to back */
} srv_note_frames;

/* Notifications for one connection. */
typedef struct srv_note_batch {
    struct srv_note_batch *next;
    struct srv_conn *to;
    srv_note_frames *frames;
} srv_note_batch;

typedef struct srv_capture {
    struct srv_conn *conn;
    struct srv_req *req;   /* the request whose work this is (NULL for other jobs) */
    il_buf frames;         /* each frame: a size_t length, then its bytes */
    srv_note_batch *notes; /* this connection's notifications, after the frames */
    srv_push *pushes, **pushes_tail;
    srv_note_batch *push_notes; /* notifications of pushed-to connections, after pushes */
} srv_capture;

/* While set, srv_ws_send appends to it instead of the socket (per thread). */
extern _Thread_local srv_capture *srv_tl_capture;
void srv_capture_init(srv_capture *cap, struct srv_conn *c);
void srv_capture_free(srv_capture *cap);
/* Sends the captured frames of the connection (subject to its fence), then the pushes. */
void srv_capture_flush(srv_capture *cap);

/* A request of a connection's pipeline (protocol-later.md 1.6). */
enum srv_access { SRV_SHARED, SRV_EXCLUSIVE };
enum srv_phase { SRV_REQ_QUEUED, SRV_REQ_STARTED, SRV_REQ_FINISHED };
enum srv_req_kind {
    SRV_RK_REPLY,     /* answered when read (pong, errors, cancel_ack) */
    SRV_RK_EXECUTE,   /* a program */
    SRV_RK_SUBSCRIBE, /* a `subscribe` frame (srv_subgroup.h) */
    SRV_RK_READ,      /* a `read` frame's queries (srv_read.h) */
};
/* Whether a started request may still be cancelled (srv_req.commit). */
enum { SRV_COMMIT_NOT_YET, SRV_COMMIT_BEGUN, SRV_COMMIT_CANCELLED };

typedef struct srv_fence_fx {
    struct srv_fence_fx *next;
    uint64_t key_id;     /* a key, or 0 for a user */
    bool passwords_only; /* for a user */
    enum srv_notice why; /* for a key */
    char user[];
} srv_fence_fx;

typedef struct srv_req {
    srv_job job; /* first: a job is its request */
    struct srv_req *next;
    struct srv_conn *conn;
    enum srv_req_kind kind;
    enum srv_access access;
    enum srv_phase phase;
    bool has_id, in_pool, inline_spilled, stopped;
    bool identity;          /* a .user / .apikey command: runs on the loop thread */
    bool fact_writes;       /* inserts and deletes of given facts only (srv_exec_classify) */
    struct srv_stmt *stmts; /* the program, prepared when it was classified */
    size_t nstmts;
    il_prepared **reads; /* READ: its queries, prepared at the first run (kept for a spill) */
    size_t nreads;
    char id[65];
    char *program; /* EXECUTE: the program; READ: the queries, packed by srv_read_pack */
    size_t len;
    struct srv_group_spec *group;      /* SRV_RK_SUBSCRIBE: the frame (one block) */
    uint64_t received_ns, deadline_ns; /* 0 = no deadline */
    uint64_t pooled_ns;                /* when it was queued for a worker */
    bool overloaded;                   /* taken out of the queue by admission.max_wait_ms */
    volatile int stop;                 /* read by the engine: cancelled or disconnected */
    int commit;                        /* SRV_COMMIT_*, atomic */
    uint64_t inline_budget_ns;         /* when run inline: give up at this time */
    uint64_t pool_run_ns;              /* its run's CPU time on a worker (0: none) */
    bool many_rows;                    /* a table of it had over SRV_INLINE_MAX_ROWS rows */
    uint64_t pinned_revision;          /* run pinned (job.pinned): its graph's revision then */
    srv_capture out;
    /* What the loop thread does when the request is done or released. */
    srv_fence_fx *fences;
    bool fence_schedule;
    bool close_credential; /* the credential ended: close with its notice */
    enum srv_notice close_why;
    uint64_t peak_bytes;
    /* execute.expect_revision (and expect_epoch): checked when the program starts, under
     * the engine lock, so that nothing commits between the check and the program. */
    bool has_expect, expect_epoch_ok;
    uint64_t expect_revision;
    char **expect_rels; /* expect_relations (malloc'ed), the scope; NULL: the whole graph */
    size_t nexpect_rels;
} srv_req;

/* How a connection authenticated: what ends its credential. */
enum srv_via { SRV_VIA_NONE, SRV_VIA_PASSWORD, SRV_VIA_KEY };

enum srv_conn_state { SRV_HTTP, SRV_WS, SRV_CLOSING };

typedef struct srv_conn {
    uv_tcp_t tcp;
    /* What each send and each delivery of notifications reads or writes, side by side
     * after the socket's handle, which a send reads too: a round of notifications writes
     * to hundreds of connections whose state has gone cold since the last, and these
     * fields lay on about ten cache lines across the structure (BENCHMARKS.md, "A
     * connection's hot fields together"). */
    srv_server *srv;
    enum srv_conn_state state;
    bool closed;   /* the socket is closed; the session closes in a last job */
    bool fenced;   /* the credential ended: no data frame may leave any more */
    bool in_recv;  /* inside wslay_event_recv */
    bool corked;   /* writes are gathered until srv_conn_uncork */
    unsigned refs; /* jobs in flight that point to this connection */
    unsigned pending_writes;
    unsigned ncorked;
    int handles_open;     /* tcp and timer: freed when both are closed */
    size_t pending_bytes; /* handed to the socket, not yet written */
    size_t queued_bytes;  /* queued in wslay, or framed into out, not yet written */
    wslay_event_context_ptr ws;
    il_buf out;        /* frames wslay produced, written after each batch */
    size_t out_framed; /* payload bytes framed into out by srv_ws_send, in queued_bytes */
    il_session *session;
    /* The last notification seq read for this connection (engine lock), by its replay or
     * by a delivery (srv_deliver.c). */
    uint64_t notify_through;
    uint64_t missed, missed_total; /* notifications dropped while it did not read */
    unsigned queued_batches;       /* in the server's deliver_queue (each holds a ref) */
    struct srv_conn *next_session, *prev_session; /* engine lock */

    uv_timer_t timer; /* auth deadline, then idle timeout, then the lingering close */
    /* srv_timer_start's deadline (the loop's ms): one later than the timer is armed for is
     * only recorded, and on_timer arms the timer again for the rest. */
    uint64_t timer_due;
    bool timer_lazy; /* timer runs on_timer, armed by srv_timer_start */
    uv_timer_t tick; /* WebSocket heartbeat pings and the lifetime limit */
    uv_shutdown_t shutdown;
    struct srv_conn *next, *prev;
    /* Writes gathered between srv_conn_cork and srv_conn_uncork (corked and ncorked
     * above), made as one writev. */
    struct srv_corked {
        char *data;
        size_t len;
        void (*release)(void *ctx);
        void *ctx;
    } cork[8];
    bool lingering; /* our side is shut down; reading and discarding until EOF */

    /* Addresses: the socket's peer, and the client's (from a trusted proxy's header). */
    char peer[46], ip[46];
    bool counted_http, counted_ws, counted_preauth, counted_peer;
    bool probes_only; /* in a slot kept for /health, /live and /ready: nothing else */

    /* A login delayed by its user name's backoff (srv_logindelay.c): the messages held
     * until the delay ends, the login's first. */
    il_buf held;
    bool login_waiting, login_delay_served;

    /* HTTP request being parsed. */
    http_parser parser;
    il_buf url, hname, hval, ws_key, auth_hdr, forwarded_for, real_ip;
    /* For CORS (srv_cors.h) and the static files' validators (srv_static.h). */
    il_buf origin, host, acr_method, acr_headers, if_none_match, if_modified_since;
    bool has_origin, has_acr_method;
    bool hval_started, upgrade_ok, keep_alive;
    bool ws_version_13; /* Sec-WebSocket-Version: 13, the only version served (RFC 6455) */

    /* WebSocket. */
    il_buf in; /* received bytes not yet consumed by wslay */
    size_t in_pos;
    uint64_t msg_len;       /* length of the message being received so far */
    bool too_big;           /* it went over SRV_MAX_MESSAGE */
    uint16_t pending_close; /* a close asked for inside it */
    /* Before authentication wslay is handed one frame at a time, so that each header is
     * checked before any of its payload is read: what is left of the current frame, and
     * the length of the message so far. */
    uint64_t preauth_frame_left, preauth_msg_len;
    bool preauth_too_big; /* a frame's header declared over SRV_MAX_PREAUTH_MESSAGE */

    /* Pipeline: unreleased requests in arrival order. */
    srv_req *reqs, *reqs_tail;
    unsigned nreqs;
    struct srv_conn *busy_next, *busy_prev; /* in the server's list while reqs is not empty */
    bool reading_paused;
    bool session_ready; /* the job that opens the session is done (loop thread) */
    uint32_t slow[8];   /* hashes of programs that spilled from the inline path */
    uint32_t read_hash; /* the program of its last read run, and what it cost */
    uint64_t read_cost_ns;
    uint64_t inline_writes_after; /* no writes inline before then (one took too long) */
    unsigned slow_next;
    uint64_t write_replied_ns; /* when its last write's reply went (srv_pipeline.c) */

    /* Session. */
    bool authed, dirty;
    int auth_failures;
    char kg[SRV_KG_NAME_MAX + 1]; /* the graph asked for when connecting (?kg=) */
    bool kg_too_long;             /* ?kg= named more than that: kg holds its start */
    char session_id[37];

    /* The principal: who authenticated, and with what. */
    char user[SRV_NAME_MAX + 1];
    enum srv_via via;
    uint64_t key_id;

    /* Limits. */
    uint64_t opened_ms, next_ping_ms;
    uint64_t rate_window_ms;
    uint32_t rate_count;

    /* Standing queries (srv_subs.c; engine lock). */
    struct srv_sub *subs;
    struct srv_group *groups; /* srv_subgroup.c */
    unsigned nsubs;           /* subscriptions, a group counting once per member */
    uint64_t sub_generation;
    bool backpressured; /* atomic: over SRV_OUTBOUND_LIMIT unwritten (set on the loop) */
    bool holds_deltas;  /* atomic: a subscription holds changes for it (set in jobs) */
    /* A job releasing the held changes is queued (loop thread): replies wait for it. */
    bool release_pending;
    struct srv_conn *next_subscriber, *prev_subscriber;

    /* Notifications (srv_deliver.c): the replay cursor from the URL (the last seq read
     * for this connection is above, with what a delivery touches). */
    bool has_cursor;
    uint64_t cursor_seq;
    char cursor_epoch[33];
    /* The last seq published before `authenticated` went out: a session opened without a
     * cursor takes the notifications after it, though it opens later, in a job (loop
     * thread, set before that job is submitted). */
    uint64_t notify_from;
} srv_conn;

/* loop.c */
void srv_conn_write(srv_conn *c, const char *data, size_t len);
/* The same without a copy: release(ctx) once the socket is done with data. */
void srv_conn_write_ref(srv_conn *c, const char *data, size_t len, void (*release)(void *ctx),
                        void *ctx);
/* Gathers c's writes until srv_conn_uncork, which makes them one system call: a reply and
 * the notifications sent with it cost one write instead of several. */
void srv_conn_cork(srv_conn *c);
void srv_conn_uncork(srv_conn *c);
void srv_conn_close(srv_conn *c); /* after the pending writes */
void srv_conn_resume_reading(srv_conn *c);
/* Frees a closed connection once no job refers to it (a last job closes its session). */
void srv_conn_maybe_free(srv_conn *c);
/* At shutdown: lets the loop end once every connection is freed. */
void srv_shutdown_check(srv_server *s);
uint64_t srv_now_ms(void);
void srv_timer_start(srv_conn *c, uint64_t ms); /* 0 = stop */
int srv_loop_run(srv_server *s);

/* http.c: feeds bytes to the HTTP parser, routing each complete request. */
void srv_http_init(srv_conn *c);
void srv_http_feed(srv_conn *c, const char *data, size_t len);
/* The query string of a /ws URL: ?kg= (the graph, `default` when none; kg_too_long when the
 * name cannot be one), and the notification replay cursor (last_seq, epoch). False when
 * last_seq is not an unsigned integer. */
bool srv_http_ws_query(srv_conn *c, const char *q);
/* A response with Content-Length and the CORS headers of the request (srv_cors.h). */
void srv_http_respond(srv_conn *c, int status, const char *reason, const char *ctype,
                      const char *body, size_t len);
void srv_http_not_found(srv_conn *c); /* the JSON 404 */

/* ws.c */
bool srv_ws_start(srv_conn *c); /* after the 101 response */
void srv_ws_feed(srv_conn *c, const char *data, size_t len);
void srv_ws_send(srv_conn *c, const char *json, size_t len); /* nothing once fenced */
/* Appends one text message, framed as the server sends it, to wire. */
void srv_ws_frame_text(il_buf *wire, const char *json, size_t len);
/* Writes messages framed by srv_ws_frame_text (wire[0..len)) after what c has queued,
 * without copying them; release(ctx) once the socket is done with them (at once when
 * nothing was written). */
void srv_ws_send_wire(srv_conn *c, const char *wire, size_t len, void (*release)(void *ctx),
                      void *ctx);
void srv_ws_ping(srv_conn *c);
void srv_ws_close(srv_conn *c, uint16_t code); /* queues a close frame and flushes */
void srv_ws_flush(srv_conn *c);
void srv_ws_free(srv_conn *c);

/* json.c */
/* Writes `{"type":"<type>"` plus `,"id":...` when id is non-NULL (no closing brace). */
void srv_json_open(il_buf *b, const char *type, const char *id);
void srv_send_error(srv_conn *c, const char *id, const char *code, const char *msg);
/* The same with more fields (`,"k":v...`, may be NULL) before the closing brace. */
void srv_send_error_fields(srv_conn *c, const char *id, const char *code, const char *msg,
                           const char *fields);
/* An unsolicited notice; the last frame before a close, so it passes the fence. */
void srv_send_notice(srv_conn *c, enum srv_notice n, const char *msg);
/* Sends notice n and a close frame, then closes the connection. */
void srv_notice_close(srv_conn *c, enum srv_notice n, const char *msg, uint16_t code);
extern const char *const srv_error_codes[];
extern const char *const srv_notice_codes[];

/* session.c */
bool srv_session_open(srv_conn *c, const char *kg, char *err, size_t errlen);
/* Opens the session in a job; requests start once it is open. */
void srv_session_open_async(srv_conn *c);
void srv_session_close(srv_conn *c);
/* Lists the knowledge graphs into s->graph_names and s->nkgs (engine lock held), for the
 * loop thread's srv_graph_known and /metrics. */
void srv_count_graphs(srv_server *s);
bool srv_graph_known(srv_server *s, const char *kg);
void srv_new_session_id(srv_conn *c);

/* auth.c: the identity store at start, and the credentials of a connection. */
bool srv_auth_bootstrap(srv_server *s);
void srv_random_hex(char *out, size_t nbytes); /* writes 2*nbytes hex chars + NUL */
/* The connection's user if its credential is still valid, else NULL and *why says how it
 * ended. Called with users_lock held. */
srv_user *srv_auth_current(srv_conn *c, enum srv_notice *why);

/* srv_fence.c: ends credentials. Every connection authenticated by a credential that
 * ended gets a final notice and is closed; no data frame of it leaves after the call. */
void srv_fence_user(srv_server *s, const char *user, bool passwords_only);
void srv_fence_key(srv_server *s, uint64_t key_id, enum srv_notice why);
/* Re-arms the timer for the next API key expiry (after any change to keys). */
void srv_fence_schedule(srv_server *s);

/* srv_limits.c */
srv_ipent *srv_client(srv_server *s, const char *kind, const char *name, bool create);
void srv_clients_free(srv_iptab *t);
/* The client's address: the peer's, or a trusted proxy's X-Forwarded-For / X-Real-IP. */
void srv_client_ip(srv_conn *c);
/* True when this HTTP request is within the client's per-second budget. */
bool srv_rate_http(srv_conn *c);
/* True when this WebSocket text message is within the connection's budget. */
bool srv_rate_ws(srv_conn *c);
bool srv_preauth_take(srv_conn *c);
void srv_preauth_release(srv_conn *c);
/* Login backoff. srv_login_wait: milliseconds the address stays locked (0 = may try);
 * srv_login_delay: milliseconds an attempt for the user name waits before it is checked. */
uint64_t srv_login_wait(srv_server *s, const char *ip);
uint64_t srv_login_delay(srv_server *s, const char *user);
/* HTTP connections per peer address (http.rate_limit.max_connections_per_ip): false when
 * the peer already holds as many; a trusted proxy's are not counted. */
bool srv_peer_conn_take(srv_conn *c);
void srv_peer_conn_release(srv_conn *c);
void srv_login_failed(srv_server *s, const char *ip, const char *user);
void srv_login_ok(srv_server *s, const char *user);

/* srv_logindelay.c. srv_login_held: true when a login is waiting, the message then held
 * behind it; srv_login_defer: holds the login's message for `ms`; srv_login_resume (at the
 * connection's timer): false when no login waits, else hands the held messages to
 * srv_proto_message, the login's without its delay. */
bool srv_login_held(srv_conn *c, const char *msg, size_t len);
void srv_login_defer(srv_conn *c, const char *msg, size_t len, uint64_t ms);
bool srv_login_resume(srv_conn *c);

/* srv_tick.c: heartbeat pings and the lifetime limit of a WebSocket. */
void srv_tick_start(srv_conn *c);

/* srv_metrics.c: GET /metrics and /metrics/prometheus. */
void srv_metrics_json(srv_conn *c);
void srv_metrics_prometheus(srv_conn *c);

/* proto.c: one complete text message from the client. */
void srv_proto_message(srv_conn *c, const char *msg, size_t len);
void srv_proto_timeout(srv_conn *c);

#endif
