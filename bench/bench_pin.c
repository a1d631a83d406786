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
 * the graph has no plan cache of the graph's.
 *
 * Then what readers about cost a write: N one-fact writes (an edge inserted, then deleted)
 * with no pin in the last second, and the same while another session holds a pin (each
 * write then publishes the revision before it, il_session_pin_published, and copies the
 * nodes it changes); the medians, in µs.
 *
 * Then a rule's first unbound read (`?reach(X, Y)`, which makes `reach` maintained) as a
 * serialized read and as a pinned one (the view made on the pin), and what adopting the
 * pin's view costs the next serialized statement (`?edge(1, Y)`) when one write
 * (`+edge(9002, 9003)`) committed meanwhile: the difference of `edge` handed to the view,
 * whose first maintenance builds what the lazy view left (an index of its rows), against
 * the first write after a serialized first read, which builds the same. Rounds of at most
 * 21 (a first read costs an evaluation); the medians, in µs.
 *
 * Last, what a pin costs in a graph of many rules (`+p<i>(X, Y) <- edge(X, Y), edge(Y, i)`,
 * 100, 1,000 and 3,000 of them, in graph `pinrules`): a pin and an unpin, N rounds, and
 * the first pin after a rule changed (21 rounds of a clause added, then a pin and an
 * unpin); the medians, in µs. Pins of one version of the rules share one copy of them.
 *
 * And what publishing costs a bulk load (il_session_set_publish): statements of 5,000 new
 * facts each into a fresh graph, in rounds of 40, alternately publishing the revision
 * before each statement and not (a write that publishes copies each node it changes);
 * the medians of the statements, in µs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    /* one fact in, one out: a write's median with nobody pinned lately, and beside a pin */
    il_session *reader = il_session_open(db.e);
    il_result_free(il_session_use(reader, "pin"));
    for (int with = 0; with < 2; with++) {
        if (!with) {
            struct timespec t = {1, 100000000}; /* past the last pin's second */
            nanosleep(&t, NULL);
        } else if (!il_session_pin(reader))
            ib_die("the reader could not be pinned");
        for (int i = 0; i < runs; i++) {
            double t0 = ib_now_us();
            ib_exec(db.s, i % 2 ? "-edge(9000, 9001)" : "+edge(9000, 9001)", 17);
            plain[i] = ib_now_us() - t0;
        }
        printf("a one-fact write %s: %.1f us (median of %d)\n",
               with ? "beside a pinned reader (publishing)" : "with no reader pinned lately",
               median(plain, runs), runs);
    }
    il_session_unpin(reader);
    /* a rule's first read, serialized and pinned, and the adoption of the pin's view */
    int rounds = runs < 21 ? runs : 21;
    double *adopt = malloc((size_t)rounds * sizeof *adopt);
    double *first_write = malloc((size_t)rounds * sizeof *first_write);
    if (!adopt || !first_write) ib_die("out of memory");
    for (int i = 0; i < rounds; i++) {
        il_engine_set_maintained_views(db.e, false); /* reach undecided again */
        il_engine_set_maintained_views(db.e, true);
        double t0 = ib_now_us();
        ib_run_query(db.s, "?reach(X, Y)", 12);
        double t1 = ib_now_us();
        ib_exec(db.s, i % 2 ? "-edge(9002, 9003)" : "+edge(9002, 9003)", 17);
        first_write[i] = ib_now_us() - t1;
        ib_exec(db.s, i % 2 ? "+edge(9002, 9003)" : "-edge(9002, 9003)", 17);
        il_engine_set_maintained_views(db.e, false);
        il_engine_set_maintained_views(db.e, true);
        if (!il_session_pin(reader)) ib_die("the reader could not be pinned");
        double t2 = ib_now_us();
        ib_run_query(reader, "?reach(X, Y)", 12);
        double t3 = ib_now_us();
        ib_exec(db.s, i % 2 ? "-edge(9002, 9003)" : "+edge(9002, 9003)", 17);
        il_session_unpin(reader);
        double t4 = ib_now_us();
        ib_run_query(db.s, "?edge(1, Y)", 11);
        double t5 = ib_now_us();
        plain[i] = t1 - t0;
        pinned[i] = t3 - t2;
        adopt[i] = t5 - t4;
    }
    printf("?reach(X, Y) first read: serialized %.1f us, then the first write %.1f us; on a "
           "pin %.1f us, then adopting the pin's view after one write %.1f us (medians of "
           "%d)\n",
           median(plain, rounds), median(first_write, rounds), median(pinned, rounds),
           median(adopt, rounds), rounds);
    free(adopt);
    free(first_write);
    /* a pin in a graph of many rules: shared, and the first after a change */
    il_result_free(il_execute(db.s, ".kg create pinrules", 19));
    il_result_free(il_session_use(reader, "pinrules"));
    ib_exec(db.s, "+edge(1, 2)", 11);
    static const int sizes[] = {100, 1000, 3000};
    int nrules = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char text[96];
        for (; nrules < sizes[k]; nrules++) {
            int n = snprintf(text, sizeof text, "+p%d(X, Y) <- edge(X, Y), edge(Y, %d)", nrules,
                             nrules);
            ib_exec(db.s, text, (size_t)n);
        }
        for (int i = 0; i < runs; i++) {
            double t0 = ib_now_us();
            if (!il_session_pin(reader)) ib_die("the reader could not be pinned");
            il_session_unpin(reader);
            plain[i] = ib_now_us() - t0;
        }
        for (int i = 0; i < rounds; i++) {
            /* a clause not added before (a repeated one changes nothing) */
            int n = snprintf(text, sizeof text, "+p0(X, Y) <- edge(Y, X), edge(X, %d)",
                             (int)k * rounds + i);
            ib_exec(db.s, text, (size_t)n);
            double t0 = ib_now_us();
            if (!il_session_pin(reader)) ib_die("the reader could not be pinned");
            il_session_unpin(reader);
            pinned[i] = ib_now_us() - t0;
        }
        printf("%d rules: a pin and an unpin %.1f us (median of %d); the first after a rule "
               "changed %.1f us (median of %d)\n",
               nrules, median(plain, runs), runs, median(pinned, rounds), rounds);
    }
    /* a bulk load, publishing before each statement and not */
    enum { LOAD_ROUNDS = 6, LOAD_STATEMENTS = 40, LOAD_FACTS = 5000 };
    double *load[2];
    size_t cap = LOAD_FACTS * 32 + 16;
    char *stmt = malloc(cap);
    if (!stmt) ib_die("out of memory");
    for (int pub = 0; pub < 2; pub++) {
        load[pub] = malloc(LOAD_ROUNDS * LOAD_STATEMENTS * sizeof *load[pub]);
        if (!load[pub]) ib_die("out of memory");
    }
    for (int round = 0; round < LOAD_ROUNDS; round++)
        for (int pub = 0; pub < 2; pub++) {
            char graph[32];
            int n = snprintf(graph, sizeof graph, ".kg create bulk%d_%d", round, pub);
            il_result_free(il_execute(reader, graph, (size_t)n));
            il_session_set_publish(reader, pub);
            for (int k = 0, i = 0; i < LOAD_STATEMENTS; i++) {
                size_t len = (size_t)snprintf(stmt, cap, "+edge[");
                for (int f = 0; f < LOAD_FACTS; f++, k++)
                    len += (size_t)snprintf(stmt + len, cap - len, "%s(%d, %d)", f ? ", " : "",
                                            k * 7919 % 1000003, k);
                len += (size_t)snprintf(stmt + len, cap - len, "]");
                double t0 = ib_now_us();
                ib_exec(reader, stmt, len);
                load[pub][round * LOAD_STATEMENTS + i] = ib_now_us() - t0;
            }
            il_session_set_publish(reader, false);
        }
    printf("a statement of %d new facts: %.1f us, publishing the revision before it %.1f us "
           "(medians of %d)\n",
           LOAD_FACTS, median(load[0], LOAD_ROUNDS * LOAD_STATEMENTS),
           median(load[1], LOAD_ROUNDS * LOAD_STATEMENTS), LOAD_ROUNDS * LOAD_STATEMENTS);
    free(load[0]);
    free(load[1]);
    free(stmt);
    il_session_close(reader);
    free(plain);
    free(pinned);
    free(alone);
    ib_db_close(&db);
    return 0;
}
