/* The phase recorder (phase.h): one measured thread's CPU clock, read at each mark and
 * charged to the phase that ends there. The signal handlers only raise flags; the measured
 * thread acts on them at its next mark, so the totals are only ever touched by it. */
#include "base/phase.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool il_phase_enabled;

static const char *const NAMES[IL_PHASE_COUNT] = {
    [IL_PHASE_WAIT] = "wait and read",  [IL_PHASE_FRAME] = "frame",
    [IL_PHASE_DECODE] = "decode",       [IL_PHASE_PREPARE] = "prepare",
    [IL_PHASE_STATEMENT] = "statement", [IL_PHASE_PUBLISH] = "publish",
    [IL_PHASE_LOG_SYNC] = "log sync",   [IL_PHASE_SEND_PREP] = "before a send",
    [IL_PHASE_SEND] = "send",           [IL_PHASE_REST] = "rest",
};

/* Lock-free atomics: safe to set in a handler, whichever thread it runs on. */
static atomic_int start_asked, stop_asked;
static _Thread_local bool measured;
static bool recording;
static uint64_t last_ns; /* the CPU clock at the last mark; 0: none yet */
static il_phase_totals totals;

static uint64_t thread_cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void on_start(int sig) {
    (void)sig;
    atomic_store(&start_asked, 1);
}

static void on_stop(int sig) {
    (void)sig;
    atomic_store(&stop_asked, 1);
}

void il_phase_setup(void) {
    const char *v = getenv("INPUTLAYER_PHASE_CPU");
    il_phase_enabled = false;
    if (!v || strcmp(v, "1") != 0) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_start;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_stop;
    sigaction(SIGUSR2, &sa, NULL);
    il_phase_enabled = true;
}

void il_phase_claim_thread(void) {
    measured = true;
}

void il_phase_record_start(void) {
    memset(&totals, 0, sizeof totals);
    last_ns = 0;
    recording = true;
}

il_phase_totals il_phase_record_stop(void) {
    recording = false;
    return totals;
}

void il_phase_record(il_phase p) {
    if (!measured) return;
    if (atomic_load_explicit(&start_asked, memory_order_relaxed) &&
        atomic_exchange(&start_asked, 0))
        il_phase_record_start();
    if (atomic_load_explicit(&stop_asked, memory_order_relaxed) &&
        atomic_exchange(&stop_asked, 0)) {
        if (recording) {
            il_phase_totals t = il_phase_record_stop();
            il_phase_print(stderr, &t);
        }
    }
    if (!recording) return;
    uint64_t now = thread_cpu_ns();
    if (last_ns) {
        totals.ns[p] += now - last_ns;
        totals.marks[p]++;
    }
    last_ns = now;
}

void il_phase_print(FILE *out, const il_phase_totals *t) {
    bool per_statement = t->marks[IL_PHASE_STATEMENT] > 0;
    uint64_t n = per_statement ? t->marks[IL_PHASE_STATEMENT] : t->marks[IL_PHASE_WAIT];
    const char *what = per_statement ? "statement" : "request";
    double per = n ? (double)n : 1.0, all = 0;
    fprintf(out, "phase CPU of the I/O thread over %llu %ss, in us per %s:\n",
            (unsigned long long)n, what, what);
    fprintf(out, "| phase | us per %s | marks per %s | us per mark |\n", what, what);
    fprintf(out, "|---|---:|---:|---:|\n");
    for (int i = 0; i < IL_PHASE_COUNT; i++) {
        double us = (double)t->ns[i] / 1000.0;
        all += us;
        if (!t->marks[i]) continue;
        fprintf(out, "| %s | %.1f | %.2f | %.1f |\n", NAMES[i], us / per, (double)t->marks[i] / per,
                us / (double)t->marks[i]);
    }
    fprintf(out, "| all | %.1f | | |\n", all / per);
    fflush(out);
}
