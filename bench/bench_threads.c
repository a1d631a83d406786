/* bench_threads: one heavy query on one worker and on two, beside what this machine gives
 * two threads on a loop with nothing shared (issue: the full closure with two workers in
 * at most 0.75 of its one-worker time, the machine's own speed-up measured in the same
 * run).
 *
 *   bench_threads [--runs N]
 *
 * The loop: a fixed number of SplitMix64 steps summed, on one thread, then split in two
 * halves on two threads; median of N runs of each, alternated. The closure: the seed-42
 * random 2,000 / 4,000 graph, the two `reach` rules and `+n(count<X>) <- reach(X, Y)`,
 * maintained views off (il_engine_set_maintained_views) so that every run of `?n(C)`
 * evaluates the closure afresh (its program cached); median of N runs with one worker
 * and N with two (il_engine_set_eval_threads), alternated. Prints one line per figure
 * and the two ratios. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_graph.h"
#include "inproc_common.h"
#include "inputlayer.h"

#define LOOP_STEPS (1u << 27)

typedef struct part {
    uint64_t from, to, sum;
} part;

static void *spin(void *arg) {
    part *p = arg;
    uint64_t sum = 0;
    for (uint64_t i = p->from; i < p->to; i++) {
        uint64_t z = i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        sum += z ^ (z >> 31);
    }
    p->sum = sum;
    return NULL;
}

/* The loop on `threads` threads (1 or 2); its sum, so that nothing is optimized away. */
static uint64_t loop_on(unsigned threads, double *ms) {
    part parts[2] = {{0, LOOP_STEPS, 0}, {0, 0, 0}};
    if (threads == 2) {
        parts[0].to = LOOP_STEPS / 2;
        parts[1] = (part){LOOP_STEPS / 2, LOOP_STEPS, 0};
    }
    double t0 = ib_now_us();
    pthread_t other;
    if (threads == 2 && pthread_create(&other, NULL, spin, &parts[1]) != 0)
        ib_die("cannot start a thread");
    spin(&parts[0]);
    if (threads == 2) pthread_join(other, NULL);
    *ms = (ib_now_us() - t0) / 1000.0;
    return parts[0].sum + parts[1].sum;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ib_cmp_double);
    return ib_quantile(v, n, 0.5);
}

int main(int argc, char **argv) {
    int runs = 11;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_threads [--runs N]\n");
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    ib_set_program("bench_threads");
    double *l1 = malloc((size_t)runs * sizeof *l1), *l2 = malloc((size_t)runs * sizeof *l2);
    double *c1 = malloc((size_t)runs * sizeof *c1), *c2 = malloc((size_t)runs * sizeof *c2);
    if (!l1 || !l2 || !c1 || !c2) ib_die("out of memory");

    uint64_t sums[2] = {0, 0};
    for (int r = 0; r < runs; r++) {
        sums[0] = loop_on(1, &l1[r]);
        sums[1] = loop_on(2, &l2[r]);
        if (sums[0] != sums[1]) ib_die("the loop's halves do not add up");
    }

    ib_db db = ib_db_open("bench");
    il_engine_set_maintained_views(db.e, false);
    ib_load_reach_graph(&db);
    ib_exec_str(db.s, "+n(count<X>) <- reach(X, Y)");
    const char *q = "?n(C)";
    for (unsigned w = 1; w <= 2; w++) { /* warm: the program cached, the memory touched */
        il_engine_set_eval_threads(db.e, w);
        if (ib_run_query(db.s, q, strlen(q)) != 1) ib_die("?n(C) did not give one row");
    }
    for (int r = 0; r < runs; r++)
        for (unsigned w = 1; w <= 2; w++) {
            il_engine_set_eval_threads(db.e, w);
            double t0 = ib_now_us();
            size_t rows = ib_run_query(db.s, q, strlen(q));
            double ms = (ib_now_us() - t0) / 1000.0;
            if (rows != 1) ib_die("?n(C) did not give one row");
            (w == 1 ? c1 : c2)[r] = ms;
        }
    ib_db_close(&db);

    double m1 = median(l1, runs), m2 = median(l2, runs);
    double k1 = median(c1, runs), k2 = median(c2, runs);
    printf("loop_1_thread_ms=%.2f loop_2_threads_ms=%.2f loop_ratio=%.3f runs=%d\n", m1, m2,
           m2 / m1, runs);
    printf("closure_1_worker_ms=%.2f closure_2_workers_ms=%.2f closure_ratio=%.3f runs=%d\n", k1,
           k2, k2 / k1, runs);
    free(l1);
    free(l2);
    free(c1);
    free(c2);
    return 0;
}
