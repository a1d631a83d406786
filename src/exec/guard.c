/* Statement guards (see guard.h). */
#include "exec/guard.h"

#include <time.h>

#include "exec/btree.h"

_Thread_local exec_guard *exec_guard_installed;

void exec_guard_init(exec_guard *g, const volatile int *cancel, uint64_t deadline_ns,
                     uint64_t max_bytes, il_mem_budget *budget) {
    g->cancel = cancel;
    g->deadline_ns = deadline_ns;
    g->stop = IL_STOP_NONE;
    g->threads = 1;
    g->threads_used = 0;
    g->pin = 0;
    g->snap = NULL;
    il_meter_begin(&g->meter, max_bytes, budget);
}

void exec_guard_finish(exec_guard *g) {
    if (exec_guard_installed == g) exec_guard_installed = NULL;
    il_meter_end(&g->meter);
}

uint64_t exec_clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether old versions hold more than the bound and this read's pin is the oldest: the
 * one that keeps the most of them (everything replaced since it began). */
static bool too_old(const exec_guard *g) {
    uint64_t limit = atomic_load_explicit(&g->snap->limit, memory_order_relaxed);
    return limit && bt_snapshot_bytes() > limit &&
           atomic_load_explicit(&g->snap->oldest, memory_order_relaxed) == g->pin;
}

il_stop exec_guard_check_conditions(exec_guard *g) {
    if (g->stop) return g->stop;
    /* the flag is written by another thread: an atomic load keeps the read honest */
    if (g->cancel && __atomic_load_n(g->cancel, __ATOMIC_RELAXED))
        g->stop = IL_STOP_CANCELLED;
    else if (g->deadline_ns && exec_clock_ns() >= g->deadline_ns)
        g->stop = IL_STOP_DEADLINE;
    else if (g->meter.over)
        g->stop = g->meter.over;
    else if (g->pin && too_old(g))
        g->stop = IL_STOP_SNAPSHOT_TOO_OLD;
    return g->stop;
}

bool exec_should_stop(void) {
    return exec_guard_installed && exec_guard_check(exec_guard_installed) != IL_STOP_NONE;
}
