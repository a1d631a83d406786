/* What the in-process benchmarks share (bench_engine, inputlayer-inproc): a fresh engine
 * with a session in a knowledge graph, statements executed or the program stopped, the
 * seed-42 datasets loaded through IQL, and a query timed as a client would see it (execute,
 * read every row, free). Only the public API (include/inputlayer.h) is used, so that the
 * perf gate can build inputlayer-inproc against an older commit's library. */
#ifndef IL_BENCH_INPROC_COMMON_H
#define IL_BENCH_INPROC_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "gen_graph.h"
#include "inputlayer.h"

/* The program's name in error messages (default "bench"). */
void ib_set_program(const char *name);
/* The exit status of a wrong answer (default 1; the perf gate's clients use 3). */
void ib_set_wrong_answer_status(int status);
/* Prints "program: what" and exits 1. */
__attribute__((noreturn)) void ib_die(const char *what);
double ib_now_us(void);

typedef struct ib_db {
    il_engine *e;
    il_session *s;
} ib_db;

/* A fresh in-memory engine and a session in a new knowledge graph `kg`. */
ib_db ib_db_open(const char *kg);
void ib_db_close(ib_db *db);

/* Executes a statement; exits on an error. */
void ib_exec(il_session *s, const char *text, size_t len);
void ib_exec_str(il_session *s, const char *text);
/* For gg_emit_* (ctx: the il_session). */
int ib_exec_stmt_cb(void *ctx, const char *stmt, size_t len);
void ib_load_edges(ib_db *db, const gg_edge *edges, size_t n);
/* The seed-42 random 2,000 / 4,000 graph as `edge`, and the two `reach` rules. */
void ib_load_reach_graph(ib_db *db);
void ib_load_hot_labels(ib_db *db, size_t hot);

/* One run of a query: execute, read every row, free. Returns the rows of its table (0 for
 * other results); exits when it fails. */
size_t ib_run_query(il_session *s, const char *query, size_t len);

int ib_cmp_double(const void *a, const void *b);
/* The p-quantile (0..1) of n sorted samples, nearest rank. */
double ib_quantile(const double *sorted, int n, double p);

/* Times `runs` runs of a query after max(5, runs / 10) untimed ones, or with keys > 0 a
 * family of them: run i fills the format's one %ld with 400 * (i mod keys), a hot chain's
 * head. Exits (the wrong answer's status) when a run's row count is not `expected`. Returns the
 * times in µs, sorted (malloc'ed, `runs` of them). */
double *ib_time_query(ib_db *db, const char *name, const char *query, long keys, int runs,
                      size_t expected);

#endif
