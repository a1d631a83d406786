/* The notification log of one engine run (protocol-later.md 1.9): every committed change
 * the engine reports (il_engine_set_change_hook) becomes one notification frame
 * (`persistent_update`, `rule_change`, `kg_change`, `schema_change`) with the next `seq`,
 * kept in a bounded ring so that a reconnecting client can have what it missed replayed,
 * or be told exactly why it cannot (`notice replay_gap`).
 *
 * Thread-safe with one mutex: a statement's changes are published from the thread that
 * ran it while connections replay from the loop thread. Publishing numbers, stores and
 * forwards (the sink) under that lock, so seq order, ring order and delivery order are
 * one order. No network code here: the server decides who receives what with
 * srv_notify_visible and sends the frames. */
#ifndef IL_SERVER_SRV_NOTIFY_H
#define IL_SERVER_SRV_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inputlayer.h"

/* http.rate_limit.notification_buffer_size: its default, and the largest ring kept. */
#define SRV_NOTIFY_DEFAULT_CAPACITY 4096
#define SRV_NOTIFY_MAX_CAPACITY     100000

typedef struct srv_notify_log srv_notify_log;

/* One published notification. Owned by the log; valid while the caller holds it (in a
 * sink or a filter call) only. */
typedef struct srv_notification {
    uint64_t seq;        /* 1, 2, ... in publication order, without gaps */
    il_change_kind kind; /* FACTS = persistent_update, RULE = rule_change, GRAPH = kg_change,
                            SCHEMA = schema_change */
    const char *graph;   /* the frame's knowledge_graph */
    const char *json;    /* the whole frame, `{"type":...,"seq":N}` */
    size_t len;
} srv_notification;

/* Called under the log's lock for every notification as it is published, in seq order
 * (for instance to queue it for the loop thread). It must copy what it keeps and must not
 * call into the log. */
typedef void (*srv_notify_sink)(void *ctx, const srv_notification *n);

/* The ring capacity for a configured notification_buffer_size, corrected as the original
 * does: 0 means the default 4096, and more than 100000 means 100000. */
size_t srv_notify_capacity(int64_t configured);

/* A log for one engine run. `epoch` is the run's stream_epoch (16 lowercase hex chars);
 * `configured` the notification_buffer_size (corrected by srv_notify_capacity); `sink`
 * may be NULL. */
srv_notify_log *srv_notify_new(const char *epoch, int64_t configured, srv_notify_sink sink,
                               void *sink_ctx);
void srv_notify_free(srv_notify_log *log);

const char *srv_notify_epoch(const srv_notify_log *log);
size_t srv_notify_ring_capacity(const srv_notify_log *log);
/* The seq of the last notification published, 0 before the first. */
uint64_t srv_notify_last_seq(srv_notify_log *log);
/* How many kg_change notifications were published (graphs created or dropped). */
uint64_t srv_notify_graph_changes(srv_notify_log *log);

/* Publishes one statement's changes (as the change hook receives them): each becomes a
 * notification with the next seq, `timestamp_ms` the wall-clock time of the commit.
 * Anything about `_internal` is dropped. The statement's notifications get consecutive
 * seqs. Returns the last seq assigned (the previous last seq when nothing was
 * published). */
uint64_t srv_notify_publish(srv_notify_log *log, const il_change *changes, size_t n,
                            uint64_t timestamp_ms);

/* An il_change_fn publishing into the log given as ctx, stamped with the current wall
 * clock: il_engine_set_change_hook(engine, srv_notify_change_hook, log). */
void srv_notify_change_hook(void *log, const il_change *changes, size_t n);

/* ---- who may see a notification ---- */

/* Whether the user may read a knowledge graph (an ACL lookup), asked at the time of
 * delivery so that a revoked grant takes effect at once. */
typedef bool (*srv_notify_readable_fn)(void *ctx, const char *graph);

/* The visibility rule: nothing about `_internal`; a notification of the connection's
 * current graph while the user may read that graph (admins always may); `kg_change` of
 * another graph for admins only. `readable` NULL means every graph is readable. */
bool srv_notify_visible(const srv_notification *n, const char *conn_graph, bool is_admin,
                        srv_notify_readable_fn readable, void *readable_ctx);

/* The same rule as a filter for srv_notify_replay: pass srv_notify_viewer_sees with a
 * srv_notify_viewer describing the connection. */
typedef struct srv_notify_viewer {
    const char *graph; /* the connection's current knowledge graph */
    bool is_admin;
    srv_notify_readable_fn readable; /* NULL: every graph */
    void *readable_ctx;
} srv_notify_viewer;
bool srv_notify_viewer_sees(void *viewer, const srv_notification *n);

/* ---- live reading ---- */

/* A filter: whether the connection may see n (called under the log's lock; must not
 * call into the log). */
typedef bool (*srv_notify_filter)(void *ctx, const srv_notification *n);

/* Reads, under the lock, the retained notifications after seq `after` in seq order,
 * calling emit(emit_ctx, n) for each that filter accepts (all when filter is NULL).
 * Returns the last published seq (the new cursor); *evicted is how many after `after`
 * were no longer retained. */
uint64_t srv_notify_read_after(srv_notify_log *log, uint64_t after, srv_notify_filter filter,
                               void *filter_ctx, void (*emit)(void *ctx, const srv_notification *n),
                               void *emit_ctx, uint64_t *evicted);

/* ---- replay on (re)connect ---- */

/* The client's cursor from `?last_seq=N&epoch=E`; either may be absent. */
typedef struct srv_notify_cursor {
    bool has_last_seq;
    uint64_t last_seq;
    const char *epoch; /* NULL when absent */
} srv_notify_cursor;

typedef enum srv_replay_kind {
    SRV_REPLAY_NONE,   /* no cursor: nothing to send */
    SRV_REPLAY_FRAMES, /* send frames[0..nframes) in order (possibly none) */
    SRV_REPLAY_GAP,    /* send notice{code:"replay_gap", message: gap_message} */
} srv_replay_kind;

typedef struct srv_notify_frame {
    uint64_t seq;
    char *json;
    size_t len;
} srv_notify_frame;

typedef struct srv_notify_replay {
    srv_replay_kind kind;
    srv_notify_frame *frames; /* SRV_REPLAY_FRAMES: copies, owned by the result */
    size_t nframes;
    char *gap_message; /* SRV_REPLAY_GAP */
    /* The last seq published when the ring was read: this replay covers everything up
       to it, so the connection takes live notifications with a greater seq only (none
       twice, none missed), whatever the kind. */
    uint64_t through_seq;
} srv_notify_replay;

/* Reads the ring for a cursor, under the lock. Without last_seq: SRV_REPLAY_NONE (an
 * epoch alone is no position). A replay_gap when the epoch is missing or not this run's,
 * when last_seq is past the last published seq, or when notifications after it have
 * been evicted; otherwise the retained notifications after last_seq that `filter`
 * accepts (all of them when filter is NULL). */
void srv_notify_replay_read(srv_notify_log *log, const srv_notify_cursor *cur,
                            srv_notify_filter filter, void *filter_ctx, srv_notify_replay *out);
void srv_notify_replay_free(srv_notify_replay *r);

#endif
