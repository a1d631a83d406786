/* The figures of the benchmark fixtures: nearest-rank percentiles of latency samples,
 * with the perf gate's minimum sample counts (docs/performance.md 3.5 in ../shared/docs),
 * and the server's CPU per operation over a phase, net of its idle rate. */
#ifndef IL_BENCH_FIXTURE_STATS_H
#define IL_BENCH_FIXTURE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Fewer samples make a p50 or a p99 meaningless (the gate calls it INVALID). */
enum { FX_MIN_P50_SAMPLES = 20, FX_MIN_P99_SAMPLES = 100 };

/* Nearest rank (rank = ceil(q n)) over n samples in ns (sorted here), in µs; 0 when there
 * are none. */
double fx_percentile_us(uint64_t *ns, size_t n, double q);

/* Prints `,"NAME":µs` for quantile q of the samples, or `,"NAME":null` when they are
 * fewer than the minimum for q: FX_MIN_P99_SAMPLES from q = 0.99, FX_MIN_P50_SAMPLES
 * from q = 0.5, one for the maximum (q = 1) and below 0.5. Returns the value, or -1 for
 * null. */
double fx_json_percentile(FILE *f, const char *name, uint64_t *ns, size_t n, double q);

/* Server CPU over a phase minus what the server spends idle (timers, sweeps): the idle
 * rate is measured first over a quiet period. */
typedef struct fx_cpu_meter {
    pid_t pid;            /* 0: no figures */
    double idle_rate;     /* CPU ns per wall ns while quiet */
    int64_t start_cpu_ns; /* at fx_cpu_start */
    uint64_t start_ns;
} fx_cpu_meter;

typedef struct fx_cpu_figures {
    bool known;
    double idle_ms_per_s, per_op_ms, ops_per_cpu_sec;
} fx_cpu_figures;

/* Waits until process pid spends under 2% of a CPU over 200 ms, for at most max_ns;
 * returns whether it did. After a big load the server works on in the background for a
 * while (a checkpoint, giving memory back), which an idle rate must not include. */
bool fx_cpu_settle(pid_t pid, uint64_t max_ns);

/* Measures the idle rate of process pid over quiet_ns (sleeping meanwhile). pid 0 or a
 * process whose CPU cannot be read leaves the meter off, at once. */
void fx_cpu_idle(fx_cpu_meter *m, pid_t pid, uint64_t quiet_ns);
/* Starts a phase. */
void fx_cpu_start(fx_cpu_meter *m);
/* Ends the phase: the CPU it took beyond the idle rate, per operation. */
fx_cpu_figures fx_cpu_stop(const fx_cpu_meter *m, long ops);

#endif
