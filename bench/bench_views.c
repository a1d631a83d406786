/* bench_views: cost of keeping a maintained view (src/views) current under single-edge
 * writes, against re-running its query, on the 100K-edge hot chains of
 * docs/performance.md 3.2 with the views rules of 3.3.
 *
 *   bench_views [--runs N] [--pace-us P]
 *
 * For each view it times N single-edge inserts and N deletes (an edge from a hot head
 * to a new node, then its removal): the statement without any view open, the same with
 * the view open (the difference is the maintenance), and one fresh run of the query.
 * Prints median microseconds. For our own checks; not a gate.
 *
 * With --pace-us, each insert and delete starts P µs after the one before ended, as the
 * server's writes come in the paced fixtures (delta_keyed writes every 5 ms): on a
 * virtual machine a CPU left idle between two statements runs the next one on cold
 * caches, and the medians then show what the same work costs there. */
#include "gen_graph.h"
#include "inputlayer.h"
#include "views/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int pace_us;

static void pace(void) {
    if (pace_us <= 0) return;
    struct timespec ts = {pace_us / 1000000, (long)(pace_us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void exec_ok(il_session *s, const char *text, size_t len) {
    il_result *r = il_execute(s, text, len);
    il_result_kind k = il_result_kind_of(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR) {
        fprintf(stderr, "bench_views: failed: %.200s: %s\n", text,
                il_result_nlines(r) ? il_result_line(r, 0) : "?");
        exit(1);
    }
    il_result_free(r);
}

static void exec_str(il_session *s, const char *text) {
    exec_ok(s, text, strlen(text));
}

static int exec_cb(void *ctx, const char *stmt, size_t len) {
    exec_ok(ctx, stmt, len);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Median times of n inserts and n deletes of edges (400 * (i % hot), 10^7 + i). */
static void time_writes(il_session *s, int n, size_t hot, double *ins, double *del) {
    double *ti = malloc((size_t)n * sizeof *ti), *td = malloc((size_t)n * sizeof *td);
    char stmt[128];
    for (int i = 0; i < n; i++) {
        long long head = 400LL * (long long)((size_t)i % hot);
        snprintf(stmt, sizeof stmt, "+edge(%lld, %d)", head, 10000000 + i);
        pace();
        double t0 = now_us();
        exec_str(s, stmt);
        ti[i] = now_us() - t0;
        stmt[0] = '-';
        pace();
        t0 = now_us();
        exec_str(s, stmt);
        td[i] = now_us() - t0;
    }
    *ins = median(ti, n);
    *del = median(td, n);
    free(ti);
    free(td);
}

static double time_query(il_session *s, const char *q, int n, size_t *rows) {
    double *t = malloc((size_t)n * sizeof *t);
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        il_result *r = il_execute(s, q, strlen(q));
        t[i] = now_us() - t0;
        *rows = il_result_total_rows(r);
        il_result_free(r);
    }
    double m = median(t, n);
    free(t);
    return m;
}

int main(int argc, char **argv) {
    int runs = 200;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--pace-us") == 0 && i + 1 < argc)
            pace_us = atoi(argv[++i]);
    char *err = NULL;
    il_engine *e = il_engine_open(NULL, &err);
    il_session *s = il_session_open(e);
    exec_str(s, ".kg create bench");
    exec_str(s, ".kg use bench");
    size_t n;
    gg_edge *edges = gg_chains(100000, &n);
    size_t hot = gg_hot_count(gg_chain_count(100000));
    gg_emit_edges("edge", edges, n, GG_CHUNK, exec_cb, s);
    gg_emit_hot_labels("label", "hot", hot, GG_CHUNK, exec_cb, s);
    free(edges);
    exec_str(s, "+r1(X,Y) <- edge(X,Y), label(X,\"hot\")");
    exec_str(s, "+path(X,Y) <- edge(X,Y)");
    exec_str(s, "+path(X,Z) <- edge(X,Y), path(Y,Z)");
    exec_str(s, "+hot_reach(X,Y) <- label(X,\"hot\"), path(X,Y)");
    double base_ins, base_del;
    time_writes(s, runs, hot, &base_ins, &base_del);
    printf("no view: insert_us=%.1f delete_us=%.1f\n", base_ins, base_del);
    const char *queries[] = {"?r1(X,Y)", "?hot_reach(X,Y)", "?path(X,Y)"};
    for (int q = 0; q < 3; q++) {
        const char *verr;
        double t0 = now_us();
        view_t *v = view_open(s, queries[q], &verr);
        double open_us = now_us() - t0;
        if (!v) {
            fprintf(stderr, "bench_views: %s: %s\n", queries[q], verr);
            return 1;
        }
        double ins, del;
        time_writes(s, runs, hot, &ins, &del);
        val_t *rows;
        size_t nv = view_rows(v, &rows);
        free(rows);
        size_t nq;
        double query_us = time_query(s, queries[q], q == 2 ? 5 : 20, &nq);
        printf("%-16s rows=%zu open_us=%.0f insert_us=%.1f (maintenance %.1f) delete_us=%.1f "
               "(maintenance %.1f) requery_us=%.0f\n",
               queries[q], nv, open_us, ins, ins - base_ins, del, del - base_del, query_us);
        if (nv != nq)
            fprintf(stderr, "bench_views: %s: view %zu rows, query %zu\n", queries[q], nv, nq);
        view_close(v);
    }
    il_session_close(s);
    il_engine_close(e);
    return 0;
}
