/* The compute pool: worker threads (the compute permits) that run engine work off the
 * event loop, and the engine lock. The engine is not safe for concurrent statements, so
 * every job runs holding the engine lock, but a read that pinned its session (srv_job.pin),
 * which holds it only to pin; the loop thread never waits for it (it may
 * only try it, for the inline fast path). A finished job goes back to the loop thread,
 * in the order jobs finished, where its `done` runs. */
#ifndef IL_SERVER_SRV_POOL_H
#define IL_SERVER_SRV_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "inputlayer.h"
#include "server/srv_lanes.h"

typedef struct srv_job {
    srv_lane_node node;             /* its place in its lane's queue; node.lane: the lane */
    struct srv_job *next;           /* on the finished list or the list waiting for a sync */
    void (*run)(struct srv_job *j); /* on a worker, engine lock held (but see pin) */
    /* On a worker, engine lock held, before run (NULL: none): true when run may go without
       the lock (a read on a pinned session, il_session_pin); unpin then follows run, still
       without the lock (il_session_unpin may run beside serialized statements). */
    bool (*pin)(struct srv_job *j);
    /* On a worker, the engine lock busy, before pin (NULL: none): true when it pinned
       without the lock (il_session_pin_published); run and unpin follow, as after pin. */
    bool (*pin_published)(struct srv_job *j);
    void (*unpin)(struct srv_job *j);
    void (*done)(struct srv_job *j); /* on the loop thread, after run (or instead of it) */
    bool queued;                     /* waiting for a worker (the pool's mutex guards it) */
    bool skipped;                    /* taken out of the queue: run was never called */
    bool sync_failed;                /* group commit: the sync covering its run failed */
    uint64_t log_lsn;                /* group commit: the log position its run may have seen */
    bool pinned;                     /* pin said yes: it ran without the lock */
    /* A forced job that only waits for the engine lock when it finds it busy (a round of
       notifications during a long write): it is parked off the worker, its permit given
       back, and queued again once the lock goes, so that it holds up no read. */
    bool park_if_busy;
    uint8_t parks;    /* times it was parked (a few at most: then it waits like any job) */
    uint64_t pin_lsn; /* the log position when it was pinned */
} srv_job;

typedef struct srv_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;
    srv_lanes lanes;                /* waiting jobs, in their lanes (srv_lanes.h) */
    srv_job *done_head, *done_tail; /* finished, for the loop */
    pthread_t *threads;
    unsigned nthreads, running;
    bool stopping;
    pthread_mutex_t engine;
    /* Finished jobs wake the loop through an eventfd it polls (see signal_loop). */
    uv_poll_t wake;
    int wake_fd;
    bool wake_pending;    /* written to wake_fd since the loop last found the list empty (mu) */
    unsigned outstanding; /* submitted and not yet done (loop thread only) */
    void (*drained)(void *ctx); /* after finished jobs' `done`s ran (loop thread) */
    void *drained_ctx;
    bool close_requested, closed;
    srv_job *parked; /* park_if_busy jobs that found the engine lock busy (mu) */
    bool any_parked; /* parked is not empty (atomic) */
    /* Group commit (srv_pool_group_commit): jobs that ran while log records were not yet
       on disk wait here, in the order they ran, for the sync that covers them. */
    il_engine *log_engine; /* NULL: group commit off */
    srv_job *pend_head, *pend_tail;
    unsigned npend, last_batch; /* jobs waiting; jobs the last sync covered */
    bool sync_busy;             /* the syncer holds a batch taken from the list */
    bool in_fsync;              /* the syncer is inside its fdatasync (atomic) */
    bool loop_polls;            /* set before the loop runs: http.busy_poll_us is on */
    bool wake_on_sync;          /* the loop sleeps until the next fdatasync starts (atomic) */
    uint64_t lone_syncs;        /* made by srv_pool_sync_alone (loop thread only) */
    /* With busy polling, the loop gathers the batches of the writes it runs (see
       srv_pool_gather_for). */
    unsigned gather_target;   /* writers expected to commit soon (loop thread only) */
    bool loop_gathering;      /* commits wait that the syncer was not told of (mu; atomic) */
    bool gathered;            /* the loop gathered the batch: no more waiting for it (mu) */
    uint64_t gather_since_ns; /* when the loop's gathering began (mu) */
    uint64_t sync_ended_ns;   /* when the syncer's last sync ended (mu) */
    uint64_t loop_batches;    /* batches the loop gathered (loop thread only) */
    uint64_t last_sync_ns;    /* how long the last sync took (atomic) */
    bool sync_stopping;
    pthread_cond_t pend;
    pthread_t syncer;
} srv_pool;

/* Starts `permits` workers (at least 1); max_queued 0 = unbounded; lim: the admission
 * lanes' limits (srv_lanes.h; NULL: the defaults). */
bool srv_pool_start(srv_pool *p, uv_loop_t *loop, unsigned permits, size_t max_queued,
                    const srv_lane_limits *lim);
/* Queues a job in its lane (j->node.lane, interactive when left 0); false when the
 * lane's queue or the pool's is full (the caller answers `overloaded`), unless forced
 * (work that must happen, such as closing a session). */
bool srv_pool_submit(srv_pool *p, srv_job *j, bool force);
/* Takes a job out of the queue if it has not started: its done runs (soon, on the loop)
 * with j->skipped set. False when it already started. timed_out: its deadline or longest
 * wait passed (else it was cancelled or its connection went), for the lane's counts. */
bool srv_pool_unqueue(srv_pool *p, srv_job *j, bool timed_out);
/* A lane's counts, for metrics. */
void srv_pool_lane_stats(srv_pool *p, srv_lane_id id, srv_lane_stats *out);
/* Whether the job still waits for a worker. */
bool srv_pool_is_queued(srv_pool *p, const srv_job *j);
/* Calls fn(ctx) on the loop thread after each batch of finished jobs' `done`s. */
void srv_pool_on_drained(srv_pool *p, void (*fn)(void *ctx), void *ctx);
/* Calls that fn now: after work the loop thread did itself (a write run inline). */
void srv_pool_drained_now(srv_pool *p);
/* The engine lock for the loop thread's inline fast path: never waits. */
bool srv_pool_try_engine(srv_pool *p);
void srv_pool_leave_engine(srv_pool *p);
/* When this thread is a worker running a job under the engine lock: how that job lets
 * other jobs take the lock while it computes without the engine (il_subscribe_beside),
 * and true. False on the loop thread (an inline run) and for a pinned read. */
bool srv_pool_serializer(srv_pool *p, il_serializer *out);
/* Jobs waiting and workers busy, for metrics. */
void srv_pool_stats(srv_pool *p, size_t *queued, unsigned *running);
/* The permits no job holds or waits for, as far as lane's max_permits lets that lane
 * use them: 0 while any job is queued, and on a thread that is not p's worker. For the
 * helper threads of the job the calling worker runs (a big recursion shares its work out
 * to them, docs/server.md "Threads"). */
unsigned srv_pool_spare_permits(srv_pool *p, srv_lane_id lane);
/* What the pool's threads do, for a loop that busy-polls (http.busy_poll_us). */
typedef enum {
    SRV_POOL_BUSY,    /* a job queued or running, a commit waiting for a sync, or a sync
                         about to start or ending: they may need the loop's CPU */
    SRV_POOL_IDLE,    /* nothing */
    SRV_POOL_SYNCING, /* only the syncer, inside its fdatasync (waiting for the disk) or
                         about to take the batch the loop gathered for it */
} srv_pool_activity;
/* The loop polls unless BUSY: a CPU that keeps running while the disk works takes the
 * sync's completion sooner than one that halted, on a virtual machine 25-30 us sooner
 * (BENCHMARKS.md, "Busy polling"). Only a loop about to poll asks; when BUSY, it sleeps
 * instead, and the syncer wakes it when it starts its next fdatasync, so that it polls
 * through that. */
srv_pool_activity srv_pool_activity_now(srv_pool *p);
/* With busy polling, how many connections are expected to commit within GATHER_NS: those
 * writing in a closed loop (srv_pipeline.c). While more than one, a commit the loop runs
 * does not wake the syncer: the syncer is woken once, when that many commits wait or
 * GATHER_NS after the first (srv_pool_loop_gathers), and syncs them at once. The loop
 * keeps polling meanwhile, so the other writers' requests are read without a wake-up, and
 * the syncer is not switched in and out at the first commit only to wait for the rest;
 * nor do the batches settle into halves, as when each waits for as many as the last
 * sync covered. */
void srv_pool_gather_for(srv_pool *p, unsigned writers);
/* True while the loop gathers commits, so that it keeps polling; ends the gathering, and
 * wakes the syncer, once GATHER_NS passed since its first commit. *syncing tells whether
 * a sync runs meanwhile (the syncer then needs this CPU once it returns). */
bool srv_pool_loop_gathers(srv_pool *p, uint64_t now, bool *syncing);
/* Closes the loop-side handle once nothing is outstanding (at shutdown): now, or after
 * the last outstanding job is done. */
void srv_pool_close_when_idle(srv_pool *p);
/* Group commit for an engine in IMMEDIATE durability mode: statements write their log
 * records without syncing (il_engine_set_group_commit), and a job that ran while records
 * were not yet on disk finishes only after a sync covers them. A syncer thread takes all
 * such jobs at once, syncs with one fdatasync, and finishes them in the order they ran,
 * while the workers go on running the next jobs: one sync per burst of commits (after a
 * sync that covered several jobs it waits up to GATHER_NS for as many again). A read
 * finishes after the writes it saw are durable, so no reply, notification or delta tells
 * of a write a crash could lose; so does a job the loop ran inline (srv_pool_ran_inline).
 * A failed sync sets sync_failed on the jobs it covered. */
bool srv_pool_group_commit(srv_pool *p, il_engine *e);
/* The loop thread ran j inline, holding the engine lock (srv_pool_try_engine). True when
 * it must wait for a sync, or behind jobs that do, or behind finished jobs the loop has
 * not taken yet: it is then the pool's, and its `done` runs on the loop after theirs, as
 * a worker's job's would. False: nothing waits, and the caller finishes it at once. */
bool srv_pool_ran_inline(srv_pool *p, srv_job *j);
/* For a write the loop thread ran (srv_pool_try_engine held) while nothing else is in
 * flight (no job queued, running or waiting for a sync): syncs the log right there, so
 * that a lone writer's commit costs no hand-off to the syncer and back (two thread
 * wake-ups). Not after a sync that took over LONE_SYNC_MAX_NS: the loop thread serves
 * every connection and must not stall on a slow disk. Not when the loop polls
 * (loop_polls): it then waits for the syncer's sync polling, which is quicker. False,
 * doing nothing, when not alone (finished jobs the loop has not taken count), the disk is
 * slow or the loop polls; true when its records are durable (or the sync failed:
 * j->sync_failed). */
bool srv_pool_sync_alone(srv_pool *p, srv_job *j);
/* Joins the workers (after the loop ended). */
void srv_pool_stop(srv_pool *p);

/* The default number of permits: cores minus max(2, cores/4), at least 1. */
unsigned srv_pool_default_permits(void);

#endif
