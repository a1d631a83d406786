/* bench_provenance: what row provenance costs a query on a session with data of its own
 * (docs/server.md, `row_provenance`; src/kg/provenance.c, prov_delta.c), in process:
 *
 *   bench_provenance [--runs N] [QUERY...]
 *
 * The seed-42 random 2,000 / 4,000 graph with the two `reach` rules, `node(1..2003)`, and
 * the persistent rules
 *
 *   +unreached(X) <- node(X), !reach(1, X)
 *   +leaf(X) <- reach(1, X), !edge(X, _)
 *   +deg(X, count<Y>) <- edge(X, Y)
 *   +reached(count<Y>) <- reach(1, Y)
 *
 * then three session edges, `edge(1, 2001)`, `edge(2001, 2002)`, `edge(2002, 2003)`. For
 * each query (default the four above) one run untimed, then N timed (default 101): the
 * rows, how many of them are ephemeral, and the median in µs, one line per query. Public
 * API only, so the same source builds against an older library. With --runs 0 and 2 under
 * `valgrind --tool=callgrind`, the difference of the totals, halved, is one query's
 * instructions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inproc_common.h"

static const char *const DEFAULT_QUERIES[] = {"?leaf(X)", "?reached(C)", "?deg(X, C)",
                                              "?unreached(X)"};

int main(int argc, char **argv) {
    ib_set_program("bench_provenance");
    int runs = 101, first = 1;
    if (argc > 2 && strcmp(argv[1], "--runs") == 0) {
        runs = atoi(argv[2]);
        first = 3;
    }
    if (runs < 0) ib_die("--runs must be 0 or more");
    ib_db db = ib_db_open("prov");
    ib_load_reach_graph(&db);
    char buf[64];
    for (int i = 1; i <= 2003; i++) {
        snprintf(buf, sizeof buf, "+node(%d)", i);
        ib_exec_str(db.s, buf);
    }
    ib_exec_str(db.s, "+unreached(X) <- node(X), !reach(1, X)");
    ib_exec_str(db.s, "+leaf(X) <- reach(1, X), !edge(X, _)");
    ib_exec_str(db.s, "+deg(X, count<Y>) <- edge(X, Y)");
    ib_exec_str(db.s, "+reached(count<Y>) <- reach(1, Y)");
    ib_exec_str(db.s, "edge(1, 2001)");
    ib_exec_str(db.s, "edge(2001, 2002)");
    ib_exec_str(db.s, "edge(2002, 2003)");
    int nq = argc > first ? argc - first : (int)(sizeof DEFAULT_QUERIES / sizeof *DEFAULT_QUERIES);
    double *t = malloc(((size_t)runs + 1) * sizeof *t);
    for (int qi = 0; qi < nq; qi++) {
        const char *q = argc > first ? argv[first + qi] : DEFAULT_QUERIES[qi];
        il_result *r = il_execute(db.s, q, strlen(q));
        if (il_result_kind_of(r) != IL_RESULT_TABLE) ib_die(q);
        size_t rows = il_result_nrows(r), eph = 0;
        for (size_t i = 0; i < rows; i++)
            eph += strcmp(il_result_row_provenance(r, i), "ephemeral") == 0;
        il_result_free(r);
        for (int i = 0; i < runs; i++) {
            double t0 = ib_now_us();
            ib_run_query(db.s, q, strlen(q));
            t[i] = ib_now_us() - t0;
        }
        qsort(t, (size_t)runs, sizeof *t, ib_cmp_double);
        printf("%-16s rows %6zu (ephemeral %zu)  median %10.1f us over %d runs\n", q, rows, eph,
               runs ? t[runs / 2] : 0.0, runs);
    }
    free(t);
    ib_db_close(&db);
    return 0;
}
