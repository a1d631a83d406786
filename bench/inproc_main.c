/* inputlayer-inproc: the perf gate's in-process fixtures (bench/README.md), measured
 * through the library API (include/inputlayer.h) only, so that `inputlayer-bench compare`
 * can build this program against a baseline commit's library (bench/gate_build.c).
 *
 *   inputlayer-inproc first_read --nodes N --edges M --samples K --expect-rows R
 *       --expect-new W
 *     K times: a fresh engine with the seed-42 random graph and the reach rules; the
 *     first `?reach(X, Y)` timed (execute, read every row, free), then the first write
 *     after it, `+edge(1, N + 1)`, timed; then `?reach(X, N + 1)` must give W rows (the
 *     write really added rows). Then, alternated with those, K first reads on a fresh
 *     engine that evaluates (maintained views off: il_engine_set_maintained_views where
 *     the library has it, else a session fact, which makes every read evaluate). Prints
 *     the medians, and the first read's and the first write's ratio to the evaluation.
 *   inputlayer-inproc write_read --nodes N --edges M --writes W --expect-count C
 *     One engine with the seed-42 random graph, the reach rules and
 *     `+n(count<X>) <- reach(X, Y)`; `?n(C)` once (it makes `n` maintained, with
 *     everything it depends on); then W times `+edge(1, N + i)` (a new node) followed by
 *     `?n(C)`, each pair timed. The last count must be C. Prints the median and p90.
 *   inputlayer-inproc query (--random N M | --chains M) --rules reach|hot_reach
 *       --query Q --runs R --expect-rows E
 *     One engine with the data and rules; R timed runs of Q after untimed ones (plans
 *     cached, nothing else kept between runs). Prints the median and p10 / p90.
 *
 * One JSON line on stdout. Exit 0; 3 for a wrong answer; 1 when anything else fails. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_graph.h"
#include "inproc_common.h"
#include "inputlayer.h"

/* Not in every commit's library: used when the library has it. */
extern size_t il_result_total_rows(const il_result *r) __attribute__((weak));
extern void il_engine_set_maintained_views(il_engine *e, bool on) __attribute__((weak));

enum { SEED = 42, WRONG = 3, RESULT_LIMIT = 100000 };

static volatile il_value g_sink; /* keeps the row reads from being optimised away */

static const char *const REACH_RULES[] = {"+reach(X, Y) <- edge(X, Y)",
                                          "+reach(X, Z) <- reach(X, Y), edge(Y, Z)", NULL};
static const char *const HOT_REACH_RULES[] = {
    "+path(X, Y) <- edge(X, Y)", "+path(X, Z) <- edge(X, Y), path(Y, Z)",
    "+hot_reach(X, Y) <- label(X, \"hot\"), path(X, Y)", NULL};

static void usage(void) {
    fputs("usage: inputlayer-inproc first_read --nodes N --edges M --samples K --expect-rows R "
          "--expect-new W\n"
          "       inputlayer-inproc write_read --nodes N --edges M --writes W --expect-count C\n"
          "       inputlayer-inproc query (--random N M | --chains M) --rules reach|hot_reach "
          "--query Q --runs R --expect-rows E\n",
          stderr);
    exit(1);
}

static long number(const char *s) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0) usage();
    return v;
}

static __attribute__((noreturn)) void wrong(const char *fmt, size_t got, size_t want) {
    fprintf(stderr, "inputlayer-inproc: ");
    fprintf(stderr, fmt, got, want);
    fputc('\n', stderr);
    exit(WRONG);
}

static void add_rules(ib_db *db, const char *const *rules) {
    for (size_t i = 0; rules[i]; i++) ib_exec_str(db->s, rules[i]);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ib_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The first unbound read of `reach`, row iteration included; the engine's table keeps at
 * most RESULT_LIMIT rows of the answer (all of it is evaluated). Returns the µs taken. */
static double first_read(ib_db *db, size_t expect_rows, size_t *rows) {
    static const char Q[] = "?reach(X, Y)";
    double t0 = ib_now_us();
    il_result *r = il_execute(db->s, Q, sizeof Q - 1);
    il_value acc = 0;
    *rows = il_result_kind_of(r) == IL_RESULT_TABLE ? il_result_nrows(r) : 0;
    for (size_t i = 0; i < *rows; i++) {
        size_t width = 0;
        const il_value *v = il_result_row(r, i, &width);
        for (size_t j = 0; j < width; j++) acc ^= v[j];
    }
    double took = ib_now_us() - t0;
    if (il_result_kind_of(r) != IL_RESULT_TABLE) {
        il_result_free(r);
        wrong("?reach(X, Y) gave no table (%zu, %zu)", 0, expect_rows);
    }
    size_t total = il_result_total_rows ? il_result_total_rows(r) : *rows;
    il_result_free(r);
    if (total != expect_rows && !(total == RESULT_LIMIT && expect_rows > RESULT_LIMIT))
        wrong("?reach(X, Y): %zu rows, expected %zu", total, expect_rows);
    if (*rows != (expect_rows < RESULT_LIMIT ? expect_rows : RESULT_LIMIT))
        wrong("?reach(X, Y): %zu rows in the table, expected %zu", *rows,
              expect_rows < RESULT_LIMIT ? expect_rows : RESULT_LIMIT);
    g_sink ^= acc;
    return took;
}

/* Reads `--NAME number` pairs from argv[2..]: names[i] into *values[i] (-1 when absent);
 * anything else is a usage error. */
static void numeric_options(int argc, char **argv, const char *const *names, long **values) {
    for (size_t k = 0; names[k]; k++) *values[k] = -1;
    if (argc % 2) usage();
    for (int i = 2; i + 1 < argc; i += 2) {
        size_t k = 0;
        while (names[k] && strcmp(argv[i], names[k]) != 0) k++;
        if (!names[k]) usage();
        *values[k] = number(argv[i + 1]);
    }
}

static int cmd_first_read(int argc, char **argv) {
    long nodes, edges, samples, expect_rows, expect_new;
    static const char *const NAMES[] = {"--nodes",       "--edges",      "--samples",
                                        "--expect-rows", "--expect-new", NULL};
    numeric_options(argc, argv, NAMES,
                    (long *[]){&nodes, &edges, &samples, &expect_rows, &expect_new});
    if (argc % 2 || nodes < 2 || edges < 1 || samples < 1 || expect_rows < 0 || expect_new < 1)
        usage();
    gg_edge *g = gg_random_graph((uint64_t)nodes, (uint64_t)edges, SEED);
    double *reads = malloc((size_t)samples * sizeof *reads);
    double *writes = malloc((size_t)samples * sizeof *writes);
    double *evals = malloc((size_t)samples * sizeof *evals);
    if (!g || !reads || !writes || !evals) ib_die("out of memory");
    char write[64], check[64];
    snprintf(write, sizeof write, "+edge(1, %ld)", nodes + 1);
    snprintf(check, sizeof check, "?reach(X, %ld)", nodes + 1);
    size_t rows = 0;
    for (long k = 0; k < samples; k++) {
        /* evaluation, first on odd samples: neither side always runs on a warmer machine */
        for (int pass = 0; pass < 2; pass++) {
            if (pass != (int)(k % 2)) continue;
            ib_db ev = ib_db_open("bench");
            if (il_engine_set_maintained_views)
                il_engine_set_maintained_views(ev.e, false);
            else
                ib_exec_str(ev.s, "evaluate_only(1)");
            ib_load_edges(&ev, g, (size_t)edges);
            add_rules(&ev, REACH_RULES);
            size_t erows = 0;
            evals[k] = first_read(&ev, (size_t)expect_rows, &erows);
            ib_db_close(&ev);
        }
        ib_db db = ib_db_open("bench");
        ib_load_edges(&db, g, (size_t)edges);
        add_rules(&db, REACH_RULES);
        reads[k] = first_read(&db, (size_t)expect_rows, &rows);
        double t0 = ib_now_us();
        ib_exec_str(db.s, write);
        writes[k] = ib_now_us() - t0;
        size_t got = ib_run_query(db.s, check, strlen(check));
        if (got != (size_t)expect_new)
            wrong("after the write, %zu new rows, expected %zu", got, (size_t)expect_new);
        ib_db_close(&db);
    }
    double read_us = median(reads, (int)samples), write_us = median(writes, (int)samples);
    double eval_us = median(evals, (int)samples);
    printf("{\"first_read_ms\": %.3f, \"first_write_ms\": %.3f, \"eval_read_ms\": %.3f, "
           "\"read_over_eval\": %.4f, \"write_over_eval\": %.4f, \"samples\": %ld, \"rows\": "
           "%zu, \"answer_rows\": %ld}\n",
           read_us / 1e3, write_us / 1e3, eval_us / 1e3, read_us / eval_us, write_us / eval_us,
           samples, rows, expect_rows);
    free(g), free(reads), free(writes), free(evals);
    return 0;
}

/* The one count `?n(C)` answers. */
static long count_of(il_session *s) {
    static const char Q[] = "?n(C)";
    il_result *r = il_execute(s, Q, sizeof Q - 1);
    size_t width = 0;
    long c = -1;
    if (il_result_kind_of(r) == IL_RESULT_TABLE && il_result_nrows(r) == 1) {
        const il_value *v = il_result_row(r, 0, &width);
        char buf[32];
        if (width == 1 && il_value_format(v[0], buf, sizeof buf) < sizeof buf)
            c = strtol(buf, NULL, 10);
    }
    il_result_free(r);
    return c;
}

static int cmd_write_read(int argc, char **argv) {
    long nodes, edges, writes, expect;
    static const char *const NAMES[] = {"--nodes", "--edges", "--writes", "--expect-count", NULL};
    numeric_options(argc, argv, NAMES, (long *[]){&nodes, &edges, &writes, &expect});
    if (nodes < 2 || edges < 1 || writes < 1 || expect < 0) usage();
    gg_edge *g = gg_random_graph((uint64_t)nodes, (uint64_t)edges, SEED);
    double *t = malloc((size_t)writes * sizeof *t);
    if (!g || !t) ib_die("out of memory");
    ib_db db = ib_db_open("bench");
    ib_load_edges(&db, g, (size_t)edges);
    add_rules(&db, REACH_RULES);
    ib_exec_str(db.s, "+n(count<X>) <- reach(X, Y)");
    long c = count_of(db.s);
    for (long k = 0; k < writes; k++) {
        char w[64];
        snprintf(w, sizeof w, "+edge(1, %ld)", nodes + 1 + k);
        double t0 = ib_now_us();
        ib_exec_str(db.s, w);
        c = count_of(db.s);
        t[k] = ib_now_us() - t0;
    }
    if (c != expect) wrong("?n(C) after the writes: %zu, expected %zu", (size_t)c, (size_t)expect);
    double p50 = median(t, (int)writes); /* sorts t */
    printf("{\"write_read_ms_p50\": %.3f, \"write_read_ms_p90\": %.3f, \"writes\": %ld}\n",
           p50 / 1e3, t[(size_t)((double)writes * 0.9)] / 1e3, writes);
    ib_db_close(&db);
    free(g), free(t);
    return 0;
}

static int cmd_query(int argc, char **argv) {
    long nodes = -1, nedges = -1, runs = -1, expect = -1;
    const char *rules = NULL, *query = NULL;
    bool chains = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--random") == 0 && i + 2 < argc) {
            nodes = number(argv[++i]);
            nedges = number(argv[++i]);
        } else if (strcmp(argv[i], "--chains") == 0 && i + 1 < argc) {
            chains = true;
            nedges = number(argv[++i]);
        } else if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc) {
            rules = argv[++i];
        } else if (strcmp(argv[i], "--query") == 0 && i + 1 < argc) {
            query = argv[++i];
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = number(argv[++i]);
        } else if (strcmp(argv[i], "--expect-rows") == 0 && i + 1 < argc) {
            expect = number(argv[++i]);
        } else {
            usage();
        }
    }
    if (nedges < 1 || (!chains && nodes < 2) || !rules || !query || runs < 1 || expect < 0 ||
        strchr(query, '%'))
        usage();
    const char *const *rule_set = strcmp(rules, "reach") == 0       ? REACH_RULES
                                  : strcmp(rules, "hot_reach") == 0 ? HOT_REACH_RULES
                                                                    : NULL;
    if (!rule_set) usage();
    ib_db db = ib_db_open("bench");
    size_t n = (size_t)nedges;
    gg_edge *g = chains ? gg_chains((size_t)nedges, &n)
                        : gg_random_graph((uint64_t)nodes, (uint64_t)nedges, SEED);
    if (!g) ib_die("out of memory");
    ib_load_edges(&db, g, n);
    if (chains) ib_load_hot_labels(&db, gg_hot_count(gg_chain_count((size_t)nedges)));
    free(g);
    add_rules(&db, rule_set);
    double *t = ib_time_query(&db, query, query, 0, (int)runs, (size_t)expect);
    printf("{\"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f, \"runs\": %ld, \"rows\": "
           "%ld}\n",
           ib_quantile(t, (int)runs, 0.5), ib_quantile(t, (int)runs, 0.1),
           ib_quantile(t, (int)runs, 0.9), runs, expect);
    free(t);
    ib_db_close(&db);
    return 0;
}

int main(int argc, char **argv) {
    ib_set_program("inputlayer-inproc");
    ib_set_wrong_answer_status(WRONG);
    if (argc < 2) usage();
    if (strcmp(argv[1], "first_read") == 0) return cmd_first_read(argc, argv);
    if (strcmp(argv[1], "write_read") == 0) return cmd_write_read(argc, argv);
    if (strcmp(argv[1], "query") == 0) return cmd_query(argc, argv);
    usage();
}
