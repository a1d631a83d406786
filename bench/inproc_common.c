/* The in-process benchmarks' shared parts; see inproc_common.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "inproc_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *g_program = "bench";
/* Not in every commit's library (inputlayer-inproc is built against older ones too);
 * `.why` queries need it. */
extern const char *il_result_proof_trees(const il_result *r) __attribute__((weak));

static int g_wrong_status = 1;
static volatile il_value g_sink; /* keeps the row reads from being optimised away */

void ib_set_program(const char *name) {
    g_program = name;
}

void ib_set_wrong_answer_status(int status) {
    g_wrong_status = status;
}

void ib_die(const char *what) {
    fprintf(stderr, "%s: %s\n", g_program, what);
    exit(1);
}

double ib_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void print_result_lines(const il_result *r) {
    size_t n = il_result_nlines(r);
    for (size_t i = 0; i < n; i++) fprintf(stderr, "  %s\n", il_result_line(r, i));
}

void ib_exec(il_session *s, const char *text, size_t len) {
    il_result *r = il_execute(s, text, len);
    il_result_kind k = il_result_kind_of(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR) {
        fprintf(stderr, "%s: statement failed: %.200s%s\n", g_program, text,
                len > 200 ? "..." : "");
        print_result_lines(r);
        il_result_free(r);
        exit(1);
    }
    il_result_free(r);
}

void ib_exec_str(il_session *s, const char *text) {
    ib_exec(s, text, strlen(text));
}

int ib_exec_stmt_cb(void *ctx, const char *stmt, size_t len) {
    ib_exec(ctx, stmt, len);
    return 0;
}

ib_db ib_db_open(const char *kg) {
    char *err = NULL;
    ib_db db;
    db.e = il_engine_open(NULL, &err);
    if (!db.e) {
        fprintf(stderr, "%s: il_engine_open: %s\n", g_program, err ? err : "failed");
        free(err);
        exit(1);
    }
    db.s = il_session_open(db.e);
    if (!db.s) ib_die("il_session_open failed");
    char create[128];
    snprintf(create, sizeof create, ".kg create %s", kg);
    ib_exec_str(db.s, create);
    return db;
}

void ib_db_close(ib_db *db) {
    il_session_close(db->s);
    il_engine_close(db->e);
}

void ib_load_edges(ib_db *db, const gg_edge *edges, size_t n) {
    if (gg_emit_edges("edge", edges, n, GG_CHUNK, ib_exec_stmt_cb, db->s) != 0)
        ib_die("out of memory writing statements");
}

void ib_load_reach_graph(ib_db *db) {
    gg_edge *edges = gg_random_graph(2000, 4000, 42);
    if (!edges) ib_die("out of memory");
    ib_load_edges(db, edges, 4000);
    free(edges);
    ib_exec_str(db->s, "+reach(X, Y) <- edge(X, Y)");
    ib_exec_str(db->s, "+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
}

void ib_load_hot_labels(ib_db *db, size_t hot) {
    if (gg_emit_hot_labels("label", "hot", hot, GG_CHUNK, ib_exec_stmt_cb, db->s) != 0)
        ib_die("out of memory writing statements");
}

size_t ib_run_query(il_session *s, const char *query, size_t len) {
    il_result *r = il_execute(s, query, len);
    il_result_kind k = il_result_kind_of(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR) {
        fprintf(stderr, "%s: query failed: %.*s\n", g_program, (int)len, query);
        print_result_lines(r);
        il_result_free(r);
        exit(1);
    }
    size_t rows = 0;
    if (k == IL_RESULT_TABLE) {
        rows = il_result_nrows(r);
        /* `.why`: the proof trees are part of the answer */
        if (strncmp(query, ".why", 4) == 0) {
            if (!il_result_proof_trees) ib_die("this library has no il_result_proof_trees");
            const char *proofs = il_result_proof_trees(r);
            if (!proofs) ib_die("a .why result without proof trees");
            g_sink ^= (il_value)strlen(proofs);
        }
        il_value acc = 0;
        for (size_t i = 0; i < rows; i++) {
            size_t width = 0;
            const il_value *v = il_result_row(r, i, &width);
            for (size_t j = 0; j < width; j++) acc ^= v[j];
        }
        g_sink ^= acc;
    }
    il_result_free(r);
    return rows;
}

int ib_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ib_quantile(const double *sorted, int n, double p) {
    int i = (int)(p * (n - 1) + 0.5);
    return sorted[i];
}

double *ib_time_query(ib_db *db, const char *name, const char *query, long keys, int runs,
                      size_t expected) {
    /* A key adds at most 20 digits to the format; without keys the text is the query's
     * own (a vector query's runs to kilobytes). */
    size_t cap = strlen(query) + 32;
    char *text = keys > 0 ? malloc(cap) : NULL;
    int warmup = runs / 10 < 5 ? 5 : runs / 10;
    double *t = malloc((size_t)runs * sizeof *t);
    if (!t || (keys > 0 && !text)) ib_die("out of memory");
    for (int i = -warmup; i < runs; i++) {
        const char *q = query;
        size_t len = strlen(query);
        if (keys > 0) {
            int n = snprintf(text, cap, query, 400 * ((i + warmup) % keys));
            if (n < 0 || (size_t)n >= cap) ib_die("query text too long");
            q = text;
            len = (size_t)n;
        }
        double t0 = ib_now_us();
        size_t rows = ib_run_query(db->s, q, len);
        if (i >= 0) t[i] = ib_now_us() - t0;
        if (rows != expected) {
            fprintf(stderr, "%s: ERROR: %s: %.200s returned %zu rows, expected %zu\n", g_program,
                    name, q, rows, expected);
            exit(g_wrong_status);
        }
    }
    free(text);
    qsort(t, (size_t)runs, sizeof *t, ib_cmp_double);
    return t;
}
