/* The figures of the benchmark fixtures; see fixture_stats.h. */
#include "fixture_stats.h"

#include <math.h>
#include <stdlib.h>

#include "fixture_session.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

double fx_percentile_us(uint64_t *ns, size_t n, double q) {
    if (n == 0) return 0;
    qsort(ns, n, sizeof *ns, cmp_u64);
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank > n) rank = n;
    return (double)ns[(rank < 1 ? 1 : rank) - 1] / 1000.0;
}

double fx_json_percentile(FILE *f, const char *name, uint64_t *ns, size_t n, double q) {
    size_t min = q >= 1.0 ? 1 : q >= 0.99 ? FX_MIN_P99_SAMPLES : q >= 0.5 ? FX_MIN_P50_SAMPLES : 1;
    if (n < min) {
        fprintf(f, ",\"%s\":null", name);
        return -1;
    }
    double v = fx_percentile_us(ns, n, q);
    fprintf(f, ",\"%s\":%.1f", name, v);
    return v;
}

bool fx_cpu_settle(pid_t pid, uint64_t max_ns) {
    enum { WINDOW_NS = 200000000, QUIET_PERMILLE = 20 };
    uint64_t end = fx_now_ns() + max_ns;
    int64_t c0 = pid ? fx_process_cpu_ns(pid) : -1;
    while (c0 >= 0 && fx_now_ns() < end) {
        fx_sleep_ns(WINDOW_NS);
        int64_t c1 = fx_process_cpu_ns(pid);
        if (c1 < 0) return false;
        if ((c1 - c0) * 1000 < (int64_t)WINDOW_NS * QUIET_PERMILLE) return true;
        c0 = c1;
    }
    return false;
}

void fx_cpu_idle(fx_cpu_meter *m, pid_t pid, uint64_t quiet_ns) {
    *m = (fx_cpu_meter){0};
    int64_t c0 = pid ? fx_process_cpu_ns(pid) : -1;
    if (c0 < 0) return;
    uint64_t t0 = fx_now_ns();
    fx_sleep_ns(quiet_ns);
    int64_t c1 = fx_process_cpu_ns(pid);
    uint64_t t1 = fx_now_ns();
    if (c1 < 0) return;
    m->pid = pid;
    m->idle_rate = (double)(c1 - c0) / (double)(t1 - t0);
}

void fx_cpu_start(fx_cpu_meter *m) {
    if (!m->pid) return;
    m->start_cpu_ns = fx_process_cpu_ns(m->pid);
    m->start_ns = fx_now_ns();
}

fx_cpu_figures fx_cpu_stop(const fx_cpu_meter *m, long ops) {
    fx_cpu_figures f = {0};
    int64_t cpu = m->pid ? fx_process_cpu_ns(m->pid) : -1;
    if (cpu < 0 || m->start_cpu_ns < 0 || ops <= 0) return f;
    double wall = (double)(fx_now_ns() - m->start_ns);
    double spent = (double)(cpu - m->start_cpu_ns) - m->idle_rate * wall;
    f.known = true;
    f.idle_ms_per_s = m->idle_rate * 1000.0;
    f.per_op_ms = spent / 1e6 / (double)ops;
    f.ops_per_cpu_sec = spent > 0 ? (double)ops / (spent / 1e9) : 0;
    return f;
}
