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
 * and N with two (il_engine_set_eval_threads), alternated. Then, timed the same way, two
 * recursions that are not a closure: same generation over a random tree of 3,000 nodes
 * (`sg(X, Y) <- p(X, A), sg(A, B), p(Y, B)`, the general semi-naive rounds), and walks
 * of at most 8 steps with their length over the same 2,000 / 4,000 graph
 * (`walk(X, Z, D) <- walk(X, Y, D0), edge(Y, Z), D = D0 + 1, D < 8`, partitioned by X).
 * Prints one line per figure and the ratios. */
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

/* The one-row query q on one worker and on two, `runs` times each, alternated (after a
 * run of each to warm); the medians in ms. */
static void time_workers(ib_db *db, const char *q, int runs, double *one, double *two) {
    double *t[2] = {malloc((size_t)runs * sizeof(double)), malloc((size_t)runs * sizeof(double))};
    if (!t[0] || !t[1]) ib_die("out of memory");
    for (int r = -1; r < runs; r++)
        for (unsigned w = 1; w <= 2; w++) {
            il_engine_set_eval_threads(db->e, w);
            double t0 = ib_now_us();
            if (ib_run_query(db->s, q, strlen(q)) != 1) ib_die("a count did not give one row");
            if (r >= 0) t[w - 1][r] = (ib_now_us() - t0) / 1000.0;
        }
    *one = median(t[0], runs);
    *two = median(t[1], runs);
    free(t[0]);
    free(t[1]);
}

/* p(child, parent): a random tree of `nodes` nodes rooted at 0. */
static void load_tree(ib_db *db, uint64_t nodes, uint64_t seed) {
    gg_edge *p = malloc(nodes * sizeof *p);
    if (!p) ib_die("out of memory");
    for (uint64_t i = 1; i < nodes; i++)
        p[i - 1] = (gg_edge){(int64_t)i, (int64_t)(gg_splitmix64(&seed) % i)};
    if (gg_emit_edges("p", p, nodes - 1, GG_CHUNK, ib_exec_stmt_cb, db->s) != 0)
        ib_die("out of memory writing statements");
    free(p);
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
    ib_exec_str(db.s, "+walk(X, Y, 1) <- edge(X, Y)");
    ib_exec_str(db.s, "+walk(X, Z, D) <- walk(X, Y, D0), edge(Y, Z), D = D0 + 1, D < 8");
    ib_exec_str(db.s, "+nwalk(count<X>) <- walk(X, Y, D)");
    double w1, w2;
    time_workers(&db, "?nwalk(C)", runs, &w1, &w2);
    load_tree(&db, 3000, 7);
    ib_exec_str(db.s, "+sg(X, X) <- p(X, _)");
    ib_exec_str(db.s, "+sg(X, Y) <- p(X, A), sg(A, B), p(Y, B)");
    ib_exec_str(db.s, "+nsg(count<X>) <- sg(X, Y)");
    double s1, s2;
    time_workers(&db, "?nsg(C)", runs, &s1, &s2);
    ib_db_close(&db);

    double m1 = median(l1, runs), m2 = median(l2, runs);
    double k1 = median(c1, runs), k2 = median(c2, runs);
    printf("loop_1_thread_ms=%.2f loop_2_threads_ms=%.2f loop_ratio=%.3f runs=%d\n", m1, m2,
           m2 / m1, runs);
    printf("closure_1_worker_ms=%.2f closure_2_workers_ms=%.2f closure_ratio=%.3f runs=%d\n", k1,
           k2, k2 / k1, runs);
    printf("rounds_1_worker_ms=%.2f rounds_2_workers_ms=%.2f rounds_ratio=%.3f runs=%d\n", s1, s2,
           s2 / s1, runs);
    printf("partitions_1_worker_ms=%.2f partitions_2_workers_ms=%.2f partitions_ratio=%.3f "
           "runs=%d\n",
           w1, w2, w2 / w1, runs);
    free(l1);
    free(l2);
    free(c1);
    free(c2);
    return 0;
}
