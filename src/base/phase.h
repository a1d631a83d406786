/* Where a request's CPU goes on the server's I/O thread, phase by phase: a diagnostic for
 * the paced write (bench/run-phases.sh), off unless INPUTLAYER_PHASE_CPU=1 is set when the
 * server starts.
 *
 * Sampling profilers mislead here: on a virtual machine their timer interrupts are
 * themselves exits to the host, and what a paced write costs is mostly cold caches and
 * wake-ups, which move with every extra interruption. So the I/O thread reads its own CPU
 * clock (CLOCK_THREAD_CPUTIME_ID) at a dozen points of a request's way, and each reading
 * charges the CPU used since the one before to the phase that ends there. Each reading is
 * a system call (0.24 us in a warm loop here, more after the thread slept), which the
 * figures include: about 15 of them per write of delta_keyed.
 *
 * Recording starts on SIGUSR1 (everything recorded before is forgotten) and ends on
 * SIGUSR2, which prints the phases to stderr per statement; both take effect at the next
 * point the I/O thread passes. Only the thread that calls il_phase_begin (the I/O thread,
 * at every read it handles) is measured: marks on other threads cost a branch. The points
 * are all in the server: the engine's code is left as it is (a mark inside it, passed a
 * few times a statement, moved the code of the views enough to slow the perf gate's
 * maintained_write by 8-10 %). */
#ifndef IL_BASE_PHASE_H
#define IL_BASE_PHASE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Each names the span that ends at its mark. */
typedef enum il_phase {
    IL_PHASE_WAIT,      /* since the last request: the loop's sleep, its wake-up, the read */
    IL_PHASE_FRAME,     /* the WebSocket frame's decoding (wslay) */
    IL_PHASE_DECODE,    /* the request's JSON, the rate and authentication checks */
    IL_PHASE_PREPARE,   /* the program's parse and plan, authorization, the way to the engine */
    IL_PHASE_STATEMENT, /* the statement in the engine: its run, its log record's write, the
                           maintained views catching up */
    IL_PHASE_PUBLISH,   /* notifications, the reply's encoding, subscription deltas */
    IL_PHASE_LOG_SYNC,  /* the log's sync, when the I/O thread makes it (a lone writer) */
    IL_PHASE_SEND_PREP, /* to a socket write: the request's completion, gathering frames */
    IL_PHASE_SEND,      /* one socket write (a reply, a push, a batch of notifications) */
    IL_PHASE_REST,      /* the rest of the read's handling */
    IL_PHASE_COUNT
} il_phase;

/* Whether INPUTLAYER_PHASE_CPU was set when il_phase_setup ran (read once, at start). */
extern bool il_phase_enabled;

/* Reads INPUTLAYER_PHASE_CPU and, when it is 1, installs the SIGUSR1 and SIGUSR2 handlers. */
void il_phase_setup(void);

/* The phases' totals: CPU nanoseconds and marks, per phase, since recording started. */
typedef struct il_phase_totals {
    uint64_t ns[IL_PHASE_COUNT];
    uint64_t marks[IL_PHASE_COUNT];
} il_phase_totals;

/* The calls the marks and the signals make, callable directly (tests): */
void il_phase_claim_thread(void);
void il_phase_record_start(void);
void il_phase_record(il_phase p);
il_phase_totals il_phase_record_stop(void);
/* The totals as a table, per statement run (per request when none ran). */
void il_phase_print(FILE *out, const il_phase_totals *t);

static inline void il_phase_mark(il_phase p) {
    if (il_phase_enabled) il_phase_record(p);
}

/* At the start of a read the I/O thread handles: claims the thread and marks WAIT. */
static inline void il_phase_begin(void) {
    if (!il_phase_enabled) return;
    il_phase_claim_thread();
    il_phase_record(IL_PHASE_WAIT);
}

#endif
