/* The compute pool: a FIFO of jobs, `permits` worker threads taking them, the engine
 * lock around every run, and a finished list drained on the loop thread, woken through an
 * eventfd once per batch of finished jobs; with group commit, a syncer thread between
 * the two for jobs that wait for the log. */
#include "server/srv_pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "server/srv_pipeline.h"

/* How long the syncer waits for concurrent writers' commits to join a sync: about the
 * spread of their requests' arrival after the previous sync's replies. */
enum { GATHER_NS = 100 * 1000 };

/* A lone writer is synced on the loop thread only while syncs take less than this. */
#define LONE_SYNC_MAX_NS 2000000u

/* Under p->mu, on the loop thread: the batch it gathered goes to the syncer, which takes
 * it without waiting for more (the caller wakes it). */
static void hand_over(srv_pool *p) {
    __atomic_store_n(&p->loop_gathering, false, __ATOMIC_RELAXED);
    p->gathered = true;
    p->loop_batches++;
}

/* Under p->mu. True when the caller must wake the loop (signal_loop, after unlocking):
 * the first job finished since the loop last took the list. */
static bool finish(srv_pool *p, srv_job *j) {
    j->next = NULL;
    if (p->done_tail)
        p->done_tail->next = j;
    else
        p->done_head = j;
    p->done_tail = j;
    if (p->wake_pending) return false;
    p->wake_pending = true;
    return true;
}

/* Wakes the loop thread to take the finished list. Not uv_async_send: libuv 1.44's loop
 * spins, up to 997 `pause`s and then sched_yield, on a handle whose sender is between its
 * eventfd write and its release, which is where that write's wake-up preempts a sender
 * on the loop's CPU (measured with `perf stat`, the server on one CPU, one run of the
 * `writers` fixture: 331 such spins ran out and yielded, 40-50 us each). The flag above,
 * under the list's own mutex, makes one write per batch and no spin. */
static void signal_loop(srv_pool *p) {
    uint64_t one = 1;
    while (write(p->wake_fd, &one, sizeof one) < 0 && errno == EINTR) continue;
    /* EAGAIN: the counter is full, so the loop is woken anyway. */
}

/* After a job ran, engine lock held: whatever it saw or wrote is in the log up to here,
 * and it may tell anyone only once that is on disk. Puts it on the waiting list (true)
 * when it must wait for a sync, or when jobs that ran before it wait; otherwise lists it
 * as finished, on a worker (false), and on the loop thread when finished jobs are listed
 * that the loop has not taken yet (true). Finished jobs keep their run order: each sends
 * the deltas it computed to other connections when it is done, so a job that overtook an
 * earlier one would send a later revision's deltas first. */
static bool after_run(srv_pool *p, srv_job *j, bool on_worker, bool *wake) {
    bool wait = false, signal_syncer = false;
    *wake = false;
    if (p->log_engine) {
        j->log_lsn = j->pinned ? j->pin_lsn : il_engine_log_written(p->log_engine);
        wait = j->log_lsn > il_engine_log_durable(p->log_engine);
    }
    pthread_mutex_lock(&p->mu);
    if (on_worker) p->running--;
    if (wait || p->pend_head || p->sync_busy) {
        j->next = NULL;
        if (p->pend_tail)
            p->pend_tail->next = j;
        else
            p->pend_head = j;
        p->pend_tail = j;
        p->npend++;
        if (!on_worker && p->loop_polls && p->gather_target > 1) {
            /* The polling loop gathers the batch itself (srv_pool_gather_for). */
            signal_syncer = p->npend >= p->gather_target;
            if (signal_syncer) {
                hand_over(p);
            } else if (!p->loop_gathering) {
                __atomic_store_n(&p->loop_gathering, true, __ATOMIC_RELAXED);
                p->gather_since_ns = srv_mono_ns();
            }
        } else {
            /* The syncer needs waking for the first job, and once it gathered enough (a
               wake-up per job costs a context switch each). */
            signal_syncer = p->npend == 1 || p->npend >= p->last_batch;
        }
        wait = true;
    } else if (on_worker || p->done_head) {
        *wake = finish(p, j);
        wait = !on_worker;
    }
    pthread_mutex_unlock(&p->mu);
    /* Signalled after the unlock: the syncer, woken on this CPU, would otherwise run only
       to wait for the mutex, and be woken once more by its release. */
    if (signal_syncer) pthread_cond_signal(&p->pend);
    return wait;
}

static srv_job *job_of(srv_lane_node *n) {
    return (srv_job *)((char *)n - offsetof(srv_job, node));
}

/* A read that found the engine busy and nothing published: the write holding the engine
 * may publish the revision before it in a moment (it does once it has parsed its
 * statement), so the read looks again a few times, for about 1.5 ms in all, before it
 * waits for the lock like any job: a holder that publishes nothing (a read under the
 * lock, a write begun before this) is not waited for in a spin. Returns whether it
 * pinned the published revision; else it holds the engine lock. */
static bool lock_or_pin_published(srv_pool *p, srv_job *j) {
    for (long wait_ns = 25000; wait_ns <= 800000; wait_ns *= 2) {
        struct timespec until;
        /* the realtime clock, which pthread_mutex_timedlock takes (and ThreadSanitizer
           knows): a clock step lengthens or shortens one wait, no more */
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += wait_ns;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_mutex_timedlock(&p->engine, &until) == 0) return false;
        if (j->pin_published(j)) return true;
    }
    pthread_mutex_lock(&p->engine);
    return false;
}

/* The pool whose engine lock this thread holds for the job it runs (srv_pool_serializer),
 * or NULL. */
static _Thread_local srv_pool *tl_engine_holder;

/* The pool this thread is a worker of, or NULL. */
static _Thread_local srv_pool *tl_worker_of;

/* How many times a park_if_busy job is parked at most. */
#define PARK_MAX 8

/* Queues the parked jobs again (mu held). */
static void requeue_parked(srv_pool *p) {
    __atomic_store_n(&p->any_parked, false, __ATOMIC_SEQ_CST);
    srv_job *j = p->parked;
    p->parked = NULL;
    while (j) {
        srv_job *next = j->next;
        j->next = NULL;
        if (srv_lanes_push(&p->lanes, &j->node, srv_mono_ns())) {
            j->queued = true;
        } else { /* cannot happen to a forced job; kept for the next release */
            j->next = p->parked;
            p->parked = j;
            __atomic_store_n(&p->any_parked, true, __ATOMIC_SEQ_CST);
        }
        j = next;
    }
}

/* After the engine lock went (mu not held): the jobs parked for it are queued again. */
static void unpark(srv_pool *p) {
    if (!__atomic_load_n(&p->any_parked, __ATOMIC_SEQ_CST)) return;
    pthread_mutex_lock(&p->mu);
    requeue_parked(p);
    pthread_mutex_unlock(&p->mu);
    pthread_cond_broadcast(&p->work);
}

/* A park_if_busy job that found the engine lock busy goes off the worker (mu held on
 * return, as the worker's loop wants it). The lock may have gone between the caller's
 * try and the parking, its release finding nothing parked: the lock is tried once more
 * after, and a free lock queues the job again at once. */
static void park(srv_pool *p, srv_job *j) {
    j->parks++;
    pthread_mutex_lock(&p->mu);
    p->running--;
    srv_lanes_finish(&p->lanes, &j->node, srv_mono_ns());
    j->next = p->parked;
    p->parked = j;
    __atomic_store_n(&p->any_parked, true, __ATOMIC_SEQ_CST);
    if (pthread_mutex_trylock(&p->engine) == 0) {
        pthread_mutex_unlock(&p->engine);
        requeue_parked(p);
    }
}

static void *worker(void *arg) {
    srv_pool *p = arg;
    tl_worker_of = p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        srv_lane_node *n = srv_lanes_take(&p->lanes, srv_mono_ns());
        if (!n) {
            /* Nothing queued, or every lane with work at its max_permits: a finish or a
               submit wakes this worker. Queued work still runs when stopping. */
            if (p->stopping && !srv_lanes_waiting(&p->lanes)) break;
            pthread_cond_wait(&p->work, &p->mu);
            continue;
        }
        srv_job *j = job_of(n);
        j->queued = false;
        p->running++;
        pthread_mutex_unlock(&p->mu);

        /* Finished jobs are listed before the engine lock goes, so that the loop sees
         * them in the order they ran: a job's pushes to a connection always precede the
         * job that closes that connection's session. */
        /* A read that finds the engine busy (a write, most likely) pins the revision the
           write published before it began, if any, and need not wait at all. */
        bool published = false;
        if (pthread_mutex_trylock(&p->engine) != 0) {
            /* A long write parks it once or twice; writes that follow one another
               closely would park it at each release, each time taking the lock first:
               after a few, it waits for the lock like any job, and gets it. */
            if (j->park_if_busy && j->parks < PARK_MAX &&
                !__atomic_load_n(&p->stopping, __ATOMIC_RELAXED)) {
                park(p, j);
                continue;
            }
            published = j->pin_published && j->pin_published(j);
            if (!published && j->pin_published)
                published = lock_or_pin_published(p, j);
            else if (!published)
                pthread_mutex_lock(&p->engine);
        }
        j->pinned = published || (j->pin && j->pin(j));
        /* held: a copy, for once it is listed as finished, the job is the loop's, which may
           free it */
        srv_lane_node held;
        bool wake;
        if (j->pinned) {
            /* It reads the revision pinned now: its reply waits for no later sync. Its
               unpin and its listing need no engine lock (it pushes nothing; docs/engine.md,
               "Concurrency"), so a long write that took the lock meanwhile holds up
               neither its reply nor this worker. */
            j->pin_lsn = p->log_engine ? il_engine_log_written(p->log_engine) : 0;
            if (!published) {
                pthread_mutex_unlock(&p->engine);
                unpark(p);
            }
            j->run(j);
            j->unpin(j);
            held = j->node;
            after_run(p, j, true, &wake);
        } else {
            tl_engine_holder = p;
            j->run(j);
            tl_engine_holder = NULL;
            held = j->node;
            after_run(p, j, true, &wake);
            pthread_mutex_unlock(&p->engine);
            unpark(p);
        }
        if (wake) signal_loop(p);
        pthread_mutex_lock(&p->mu);
        srv_lanes_finish(&p->lanes, &held, srv_mono_ns());
        /* A lane held back at its max_permits may run again. */
        if (srv_lanes_waiting(&p->lanes)) pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Syncs the log, noting how long it took (srv_pool_sync_alone reads it). */
static bool timed_sync(srv_pool *p) {
    char *err = NULL;
    uint64_t began = srv_mono_ns();
    bool ok = il_engine_sync(p->log_engine, &err);
    __atomic_store_n(&p->last_sync_ns, srv_mono_ns() - began, __ATOMIC_RELAXED);
    if (!ok) fprintf(stderr, "ERROR: syncing the log: %s\n", err ? err : "unknown error");
    free(err);
    return ok;
}

static void *syncer(void *arg) {
    srv_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->pend_head && !p->sync_stopping) pthread_cond_wait(&p->pend, &p->mu);
        if (!p->pend_head) break;
        /* Concurrent writers arrive a few microseconds apart: after a sync that covered
           several jobs, wait briefly for as many again before the next one, so that one
           sync keeps covering them all instead of alternating halves. A lone writer (the
           last sync covered one job) never waits, nor a batch the loop gathered. */
        bool gathered = p->gathered;
        if (!gathered && p->last_batch > 1 && p->npend < p->last_batch && !p->sync_stopping) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_nsec += GATHER_NS;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            int rc = 0;
            while (rc == 0 && p->npend < p->last_batch && !p->sync_stopping)
                rc = pthread_cond_timedwait(&p->pend, &p->mu, &until);
        }
        srv_job *batch = p->pend_head;
        if (!batch) continue; /* woken for a batch an earlier round took */
        __atomic_store_n(&p->loop_gathering, false, __ATOMIC_RELAXED);
        p->gathered = false;
        p->last_batch = p->npend;
        p->pend_head = p->pend_tail = NULL;
        p->npend = 0;
        p->sync_busy = true;
        pthread_mutex_unlock(&p->mu);
        uint64_t need = 0;
        for (srv_job *j = batch; j; j = j->next)
            if (j->log_lsn > need) need = j->log_lsn;
        bool ok = true;
        /* One fdatasync covers the whole batch, and whatever the workers wrote since. */
        if (need > il_engine_log_durable(p->log_engine)) {
            __atomic_store_n(&p->in_fsync, true, __ATOMIC_SEQ_CST);
            if (__atomic_exchange_n(&p->wake_on_sync, false, __ATOMIC_SEQ_CST)) signal_loop(p);
            ok = timed_sync(p);
            __atomic_store_n(&p->in_fsync, false, __ATOMIC_SEQ_CST);
        }
        pthread_mutex_lock(&p->mu);
        bool wake = false;
        while (batch) {
            srv_job *next = batch->next;
            batch->sync_failed = !ok;
            if (finish(p, batch)) wake = true;
            batch = next;
        }
        p->sync_busy = false;
        p->sync_ended_ns = srv_mono_ns();
        pthread_mutex_unlock(&p->mu);
        if (wake) signal_loop(p);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

bool srv_pool_group_commit(srv_pool *p, il_engine *e) {
    if (p->log_engine || !il_engine_set_group_commit(e, true)) return false;
    p->log_engine = e;
    if (pthread_create(&p->syncer, NULL, syncer, p) != 0) {
        il_engine_set_group_commit(e, false);
        p->log_engine = NULL;
        return false;
    }
    return true;
}

/* With mu held: no job queued or running, none waiting for a sync, no sync running. */
static bool idle(const srv_pool *p) {
    return !p->lanes.nqueued && !p->running && !p->pend_head && !p->sync_busy;
}

bool srv_pool_sync_alone(srv_pool *p, srv_job *j) {
    if (!p->log_engine || p->loop_polls) return false;
    /* A disk that has just been slow may stall again: the loop thread must not wait on it. */
    if (__atomic_load_n(&p->last_sync_ns, __ATOMIC_RELAXED) > LONE_SYNC_MAX_NS) return false;
    pthread_mutex_lock(&p->mu);
    /* Finished jobs the loop has not taken yet go first (after_run). */
    bool alone = idle(p) && !p->done_head;
    if (alone && il_engine_log_written(p->log_engine) <= il_engine_log_durable(p->log_engine)) {
        pthread_mutex_unlock(&p->mu);
        return true;
    }
    if (alone) p->sync_busy = true; /* the syncer stays out */
    pthread_mutex_unlock(&p->mu);
    if (!alone) return false;
    bool ok = timed_sync(p);
    j->sync_failed = !ok;
    p->lone_syncs++;
    pthread_mutex_lock(&p->mu);
    p->sync_busy = false;
    p->last_batch = 1;
    if (p->pend_head) pthread_cond_signal(&p->pend);
    pthread_mutex_unlock(&p->mu);
    return true;
}

bool srv_pool_ran_inline(srv_pool *p, srv_job *j) {
    bool wake;
    if (!after_run(p, j, false, &wake)) return false;
    p->outstanding++;
    if (wake) signal_loop(p); /* listed as finished: taken on the loop's next turn */
    return true;
}

static void on_wake(uv_poll_t *h, int status, int events) {
    (void)status;
    (void)events;
    srv_pool *p = h->data;
    uint64_t count;
    while (read(p->wake_fd, &count, sizeof count) < 0 && errno == EINTR) continue;
    /* One job at a time, each taken off the list only as its turn comes: a `done` may start
       the connection's next request inline, which must then find the jobs still to be done
       on the list and queue behind them (after_run), not send its deltas before theirs. A
       job finished meanwhile is taken here too; once the list is empty, the next one
       wakes the loop again. */
    for (;;) {
        pthread_mutex_lock(&p->mu);
        srv_job *j = p->done_head;
        if (j) {
            p->done_head = j->next;
            if (!p->done_head) p->done_tail = NULL;
        } else {
            p->wake_pending = false;
        }
        pthread_mutex_unlock(&p->mu);
        if (!j) break;
        p->outstanding--;
        j->done(j);
    }
    if (p->drained) p->drained(p->drained_ctx);
    if (p->close_requested) srv_pool_close_when_idle(p);
}

void srv_pool_drained_now(srv_pool *p) {
    if (p->drained) p->drained(p->drained_ctx);
}

void srv_pool_on_drained(srv_pool *p, void (*fn)(void *ctx), void *ctx) {
    p->drained = fn;
    p->drained_ctx = ctx;
}

unsigned srv_pool_default_permits(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    long reserve = cores / 4 > 2 ? cores / 4 : 2;
    /* Two at least: a read pinned beside a write needs a worker of its own. */
    return cores - reserve >= 2 ? (unsigned)(cores - reserve) : 2u;
}

bool srv_pool_start(srv_pool *p, uv_loop_t *loop, unsigned permits, size_t max_queued,
                    const srv_lane_limits *lim) {
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_mutex_init(&p->engine, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* for the gathering wait */
    pthread_cond_init(&p->pend, &attr);
    pthread_condattr_destroy(&attr);
    srv_lane_limits defaults[SRV_NLANES];
    srv_lanes_default_limits(defaults);
    srv_lanes_init(&p->lanes, permits, max_queued, lim ? lim : defaults);
    p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->wake_fd < 0) return false;
    if (uv_poll_init(loop, &p->wake, p->wake_fd) != 0 ||
        uv_poll_start(&p->wake, UV_READABLE, on_wake) != 0) {
        close(p->wake_fd);
        p->wake_fd = -1;
        return false;
    }
    p->wake.data = p;
    p->nthreads = permits ? permits : 1;
    p->threads = calloc(p->nthreads, sizeof *p->threads);
    for (unsigned i = 0; i < p->nthreads; i++)
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
            p->nthreads = i;
            return false;
        }
    return true;
}

bool srv_pool_submit(srv_pool *p, srv_job *j, bool force) {
    pthread_mutex_lock(&p->mu);
    /* Forced jobs are the server's own work: they take no client's place in the queue. */
    j->node.forced = force;
    if (!srv_lanes_push(&p->lanes, &j->node, srv_mono_ns())) {
        pthread_mutex_unlock(&p->mu);
        return false;
    }
    j->queued = true;
    j->skipped = false;
    pthread_mutex_unlock(&p->mu);
    pthread_cond_signal(&p->work); /* after the unlock, as in after_run */
    p->outstanding++;
    return true;
}

bool srv_pool_unqueue(srv_pool *p, srv_job *j, bool timed_out) {
    pthread_mutex_lock(&p->mu);
    bool was = j->queued;
    bool wake = false;
    if (was) {
        srv_lanes_remove(&p->lanes, &j->node, timed_out);
        j->queued = false;
        j->skipped = true;
        wake = finish(p, j);
    }
    pthread_mutex_unlock(&p->mu);
    if (wake) signal_loop(p);
    return was;
}

void srv_pool_lane_stats(srv_pool *p, srv_lane_id id, srv_lane_stats *out) {
    pthread_mutex_lock(&p->mu);
    srv_lanes_stats(&p->lanes, id, out);
    pthread_mutex_unlock(&p->mu);
}

bool srv_pool_is_queued(srv_pool *p, const srv_job *j) {
    pthread_mutex_lock(&p->mu);
    bool queued = j->queued;
    pthread_mutex_unlock(&p->mu);
    return queued;
}

bool srv_pool_try_engine(srv_pool *p) {
    return pthread_mutex_trylock(&p->engine) == 0;
}

void srv_pool_leave_engine(srv_pool *p) {
    pthread_mutex_unlock(&p->engine);
    unpark(p);
}

static void release_engine(void *ctx) {
    srv_pool *p = ctx;
    tl_engine_holder = NULL;
    pthread_mutex_unlock(&p->engine);
    unpark(p);
}

static void retake_engine(void *ctx) {
    srv_pool *p = ctx;
    pthread_mutex_lock(&p->engine);
    tl_engine_holder = p;
}

bool srv_pool_serializer(srv_pool *p, il_serializer *out) {
    if (tl_engine_holder != p) return false;
    *out = (il_serializer){.release = release_engine, .retake = retake_engine, .ctx = p};
    return true;
}

unsigned srv_pool_spare_permits(srv_pool *p, srv_lane_id lane) {
    if (tl_worker_of != p) return 0;
    pthread_mutex_lock(&p->mu);
    unsigned spare = 0;
    if (!p->lanes.nqueued && p->running < p->nthreads) {
        spare = p->nthreads - p->running;
        const srv_lane *l = &p->lanes.lane[lane];
        if (l->lim.max_permits) {
            unsigned left = l->lim.max_permits > l->running ? l->lim.max_permits - l->running : 0;
            if (left < spare) spare = left;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return spare;
}

void srv_pool_stats(srv_pool *p, size_t *queued, unsigned *running) {
    pthread_mutex_lock(&p->mu);
    *queued = p->lanes.nqueued;
    *running = p->running;
    pthread_mutex_unlock(&p->mu);
}

void srv_pool_gather_for(srv_pool *p, unsigned writers) {
    p->gather_target = writers;
}

bool srv_pool_loop_gathers(srv_pool *p, uint64_t now, bool *syncing) {
    *syncing = false;
    if (!__atomic_load_n(&p->loop_gathering, __ATOMIC_RELAXED)) return false;
    pthread_mutex_lock(&p->mu);
    bool gathering = p->loop_gathering;
    *syncing = p->sync_busy;
    /* Writers whose commits a running sync covers come back once it ends: with the window
       counted from then, the batches do not settle into halves, each with its own sync. */
    uint64_t from = p->gather_since_ns > p->sync_ended_ns ? p->gather_since_ns : p->sync_ended_ns;
    bool ends = gathering && !p->sync_busy && now - from >= GATHER_NS;
    if (ends) hand_over(p);
    pthread_mutex_unlock(&p->mu);
    if (ends) pthread_cond_signal(&p->pend);
    return gathering && !ends;
}

srv_pool_activity srv_pool_activity_now(srv_pool *p) {
    pthread_mutex_lock(&p->mu);
    srv_pool_activity a = SRV_POOL_BUSY;
    if (idle(p))
        a = SRV_POOL_IDLE;
    else if (!p->lanes.nqueued && !p->running && !p->pend_head &&
             __atomic_load_n(&p->in_fsync, __ATOMIC_SEQ_CST))
        a = SRV_POOL_SYNCING;
    else if (!p->lanes.nqueued && !p->running && p->gathered && !p->sync_busy)
        a = SRV_POOL_SYNCING; /* the syncer is woken for the loop's batch: it runs next */
    else
        __atomic_store_n(&p->wake_on_sync, true, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&p->mu);
    return a;
}

static void on_wake_closed(uv_handle_t *h) {
    srv_pool *p = h->data;
    close(p->wake_fd);
    p->wake_fd = -1;
}

void srv_pool_close_when_idle(srv_pool *p) {
    p->close_requested = true;
    if (p->outstanding == 0 && !p->closed) {
        p->closed = true;
        uv_close((uv_handle_t *)&p->wake, on_wake_closed);
    }
}

void srv_pool_stop(srv_pool *p) {
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->stopping, true, __ATOMIC_RELAXED);
    requeue_parked(p); /* they run now, waiting for the lock like any job */
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    free(p->threads);
    if (p->log_engine) {
        pthread_mutex_lock(&p->mu);
        p->sync_stopping = true;
        pthread_cond_broadcast(&p->pend);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->syncer, NULL);
        il_engine_set_group_commit(p->log_engine, false);
    }
    pthread_cond_destroy(&p->pend);
    pthread_mutex_destroy(&p->engine);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
}
