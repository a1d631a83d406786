/* bench_pin: what pinning a session costs a read (il_session_pin; docs/engine.md,
 * "Concurrency: pinned reads"), in process:
 *
 *   bench_pin [--runs N] [QUERY...]
 *
 * The seed-42 random 2,000 / 4,000 graph and the two `reach` rules; `?reach(X, Y)` read
 * once, so that `reach` is maintained (a pin then snapshots its rows too). For each query
 * (default `?reach(1, Y)` and `?edge(1, Y)`), N rounds (default 201) of: one run as
 * usual, one run between a pin and an unpin, and a pin and an unpin alone; the medians of
 * each, in µs, one line per query. A pinned run plans its query afresh: the pinned copy of
 * the graph has no plan cache of the graph's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inproc_common.h"

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ib_cmp_double);
    return v[n / 2];
}

int main(int argc, char **argv) {
    ib_set_program("bench_pin");
    int runs = 201, first = 1;
    if (argc > 2 && strcmp(argv[1], "--runs") == 0) {
        runs = atoi(argv[2]);
        first = 3;
    }
    if (runs < 1) ib_die("--runs must be positive");
    static const char *const defaults[] = {"?reach(1, Y)", "?edge(1, Y)"};
    const char *const *queries = argc > first ? (const char *const *)&argv[first] : defaults;
    int nqueries = argc > first ? argc - first : 2;
    ib_db db = ib_db_open("pin");
    ib_load_reach_graph(&db);
    ib_run_query(db.s, "?reach(X, Y)", 12);
    double *plain = malloc((size_t)runs * sizeof *plain);
    double *pinned = malloc((size_t)runs * sizeof *pinned);
    double *alone = malloc((size_t)runs * sizeof *alone);
    if (!plain || !pinned || !alone) ib_die("out of memory");
    for (int q = 0; q < nqueries; q++) {
        const char *text = queries[q];
        size_t len = strlen(text);
        for (int i = 0; i < 20; i++) ib_run_query(db.s, text, len);
        for (int i = 0; i < runs; i++) {
            double t0 = ib_now_us();
            ib_run_query(db.s, text, len);
            double t1 = ib_now_us();
            if (!il_session_pin(db.s)) ib_die("the session could not be pinned");
            ib_run_query(db.s, text, len);
            il_session_unpin(db.s);
            double t2 = ib_now_us();
            il_session_pin(db.s);
            il_session_unpin(db.s);
            double t3 = ib_now_us();
            plain[i] = t1 - t0;
            pinned[i] = t2 - t1;
            alone[i] = t3 - t2;
        }
        printf("%s: unpinned %.1f us, pinned %.1f us, pin and unpin alone %.1f us (medians "
               "of %d)\n",
               text, median(plain, runs), median(pinned, runs), median(alone, runs), runs);
    }
    free(plain);
    free(pinned);
    free(alone);
    ib_db_close(&db);
    return 0;
}
