/* Chunks of one evaluation step on several threads (team.h). */
#include "exec/team.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "base/intern.h"
#include "base/meter.h"
#include "exec/guard.h"

typedef struct helper {
    exec_team *t;
    uint32_t worker;
    il_intern_scope *scope; /* the strings it makes, for the statement's scope; or NULL */
    pthread_t thread;
} helper;

struct exec_team {
    exec_ctx *x;
    exec_team_work work;
    void *ctx;
    size_t nchunks;
    size_t next_chunk;  /* atomic */
    int stop;           /* atomic: set once the step must stop */
    uint64_t *bytes;    /* atomic, per worker: what its uncounted buffers take */
    uint64_t *ticks;    /* per worker, its own: work counted (exec_team_ticks) */
    uint64_t charged;   /* of the workers' bytes, what the statement's meter counts */
    uint64_t meter_id;  /* the meter that counted it */
    pthread_mutex_t mu; /* with done_cv: the helpers still working */
    pthread_cond_t done_cv;
    uint32_t working;
    uint32_t threads;
};

uint32_t exec_team_threads(const exec_ctx *x) {
    return x->guard && x->guard->threads > 1 ? x->guard->threads : 1;
}

static bool take_chunk(exec_team *t, size_t *c) {
    if (__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) return false;
    *c = __atomic_fetch_add(&t->next_chunk, 1, __ATOMIC_RELAXED);
    return *c < t->nchunks;
}

static void *helper_main(void *arg) {
    helper *h = arg;
    il_intern_scope *outer = il_intern_scope_enter(h->scope);
    size_t c;
    while (take_chunk(h->t, &c)) h->t->work(h->t->ctx, h->t, h->worker, c);
    il_intern_scope_leave(outer);
    pthread_mutex_lock(&h->t->mu);
    h->t->working--;
    pthread_cond_signal(&h->t->done_cv);
    pthread_mutex_unlock(&h->t->mu);
    return NULL;
}

/* The calling thread's watch: charges what the workers' buffers grew by and counts
 * `ticks` of work towards the guard's checks; raises the stop flag when it must stop. */
static bool oversee(exec_team *t, uint64_t ticks) {
    uint64_t bytes = 0;
    for (uint32_t w = 0; w < t->threads; w++)
        bytes += __atomic_load_n(&t->bytes[w], __ATOMIC_RELAXED);
    if (bytes > t->charged) {
        uint64_t id = il_meter_charge(bytes - t->charged);
        if (id) t->meter_id = id;
        t->charged = bytes;
    }
    bool stop = ticks ? exec_tick_n(t->x, ticks) : exec_should_stop() || t->x->error;
    if (stop) __atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
    return !stop;
}

bool exec_team_poll(exec_team *t, uint32_t worker, uint64_t work) {
    if (worker == 0 && !oversee(t, work ? work : 1)) return true;
    return __atomic_load_n(&t->stop, __ATOMIC_RELAXED) != 0;
}

uint64_t *exec_team_ticks(exec_team *t, uint32_t worker) {
    return &t->ticks[worker];
}

void exec_team_bytes(exec_team *t, uint32_t worker, uint64_t bytes) {
    __atomic_store_n(&t->bytes[worker], bytes, __ATOMIC_RELAXED);
}

/* Waits for the helpers, checking the guard every millisecond meanwhile. */
static void wait_helpers(exec_team *t) {
    pthread_mutex_lock(&t->mu);
    while (t->working) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&t->done_cv, &t->mu, &until);
        if (t->working) {
            pthread_mutex_unlock(&t->mu);
            oversee(t, 0);
            pthread_mutex_lock(&t->mu);
        }
    }
    pthread_mutex_unlock(&t->mu);
}

bool exec_team_run(exec_ctx *x, uint32_t threads, size_t nchunks, exec_team_work work, void *ctx,
                   exec_team_charge *keep) {
    exec_team t = {.x = x, .work = work, .ctx = ctx, .nchunks = nchunks, .threads = threads};
    t.bytes = calloc(threads, sizeof *t.bytes);
    t.ticks = calloc(threads, sizeof *t.ticks);
    helper *helpers = calloc(threads, sizeof *helpers);
    if (!t.bytes || !t.ticks || !helpers) abort();
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.done_cv, NULL);
    bool in_scope = il_intern_in_scope();
    uint32_t started = 0;
    for (uint32_t i = 1; i < threads; i++) {
        helper *h = &helpers[started];
        *h = (helper){.t = &t, .worker = started + 1};
        if (in_scope) h->scope = il_intern_scope_new();
        t.working++;
        if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
            t.working--;
            il_intern_scope_free(h->scope);
            break;
        }
        started++;
    }
    size_t c;
    while (take_chunk(&t, &c)) work(ctx, &t, 0, c);
    wait_helpers(&t);
    for (uint32_t i = 0; i < started; i++) {
        pthread_join(helpers[i].thread, NULL);
        il_intern_scope_absorb(helpers[i].scope);
    }
    /* a stop raised after the last poll still ends the step */
    bool ok = oversee(&t, 0) && !__atomic_load_n(&t.stop, __ATOMIC_RELAXED);
    if (ok && x->error) ok = false;
    if (!ok && !x->error) x->error = EXEC_STOPPED;
    if (keep)
        *keep = (exec_team_charge){t.charged, t.meter_id};
    else if (t.charged)
        il_meter_release(t.meter_id, t.charged);
    pthread_mutex_destroy(&t.mu);
    pthread_cond_destroy(&t.done_cv);
    free(helpers);
    free(t.bytes);
    free(t.ticks);
    if (x->threads_used < started + 1) x->threads_used = started + 1;
    if (x->guard && x->guard->threads_used < started + 1) x->guard->threads_used = started + 1;
    return ok;
}
