/* The stop conditions of the statement being evaluated: a cancel flag set from another
 * thread, a deadline, and its memory meter (base/meter.h). The evaluator checks them
 * every few thousand tuples (exec/eval.c); sorts and aggregation, which have no tuple
 * ticks, check the guard installed on the calling thread as they go. Nothing is checked
 * where no guard is installed (maintained views, applying a write), so that work is
 * never interrupted. */
#ifndef IL_EXEC_GUARD_H
#define IL_EXEC_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/meter.h"
#include "inputlayer.h"

/* The bound on old versions' memory (il_engine_set_snapshot_memory), set and read on any
 * thread: past `limit` bytes of bt_snapshot_bytes, the pinned read numbered `oldest`
 * stops. */
typedef struct exec_snap_watch {
    _Atomic uint64_t limit;  /* 0: none */
    _Atomic uint64_t oldest; /* the oldest live pin's number; 0: none */
} exec_snap_watch;

typedef struct exec_guard {
    const volatile int *cancel; /* may be NULL */
    uint64_t deadline_ns;       /* CLOCK_MONOTONIC; 0: none */
    il_meter meter;
    il_stop stop;          /* why it stopped, once a check found a reason (it stays) */
    uint32_t threads;      /* threads one evaluation may use, the calling one included (>= 1) */
    uint32_t threads_used; /* out: the most threads one of its steps ran on (exec/team.h) */
    /* a pinned read's: its pin's number (0: not pinned) and the bound it answers to */
    uint64_t pin;
    const exec_snap_watch *snap;
} exec_guard;

/* Starts the guard's meter; max_bytes 0 and budget NULL mean no memory limit. */
void exec_guard_init(exec_guard *g, const volatile int *cancel, uint64_t deadline_ns,
                     uint64_t max_bytes, il_mem_budget *budget);
/* Ends the meter: what it still counts goes back to the budget. */
void exec_guard_finish(exec_guard *g);

/* The guard installed on the calling thread, or NULL. */
extern _Thread_local exec_guard *exec_guard_installed;

/* Installs g (may be NULL) and its meter on the calling thread for an evaluation;
 * returns the guard it replaces, for exec_guard_leave. Inline, as the checks below: they
 * run a few times for every statement, however small. */
static inline exec_guard *exec_guard_enter(exec_guard *g) {
    exec_guard *prev = exec_guard_installed;
    exec_guard_installed = g;
    il_meter_install(g ? &g->meter : NULL);
    return prev;
}

static inline void exec_guard_leave(exec_guard *prev) {
    exec_guard_installed = prev;
    il_meter_install(prev ? &prev->meter : NULL);
}

/* The work of exec_guard_check when there is anything to check. */
il_stop exec_guard_check_conditions(exec_guard *g);

/* Checks every condition now (one clock read when there is a deadline); records and
 * returns the first reason to stop, IL_STOP_NONE when there is none. */
static inline il_stop exec_guard_check(exec_guard *g) {
    if (!g->stop && !g->cancel && !g->deadline_ns && !g->meter.over && !g->pin) return IL_STOP_NONE;
    return exec_guard_check_conditions(g);
}

/* exec_guard_check on the thread's guard; false when none is installed. For loops that
 * do at least a few thousand tuples' work between calls. */
bool exec_should_stop(void);

/* CLOCK_MONOTONIC in nanoseconds, the clock of deadlines. */
uint64_t exec_clock_ns(void);

#endif
