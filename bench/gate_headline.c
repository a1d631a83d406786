/* The headline fixtures of the perf gate; see gate_headline.h. Sizes per profile: smoke
 * (a tiny graph, every answer checked, seconds), small and standard (the notes' random
 * 2,000 / 4,000 and hot chains of 100,000 edges). */
#include "gate_headline.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fixture_session.h"
#include "gate_proc.h"

enum { SEED = 42 };

static long by_profile(const gh_run *r, long smoke, long small, long standard) {
    return r->ctx->profile == GF_SMOKE ? smoke : r->ctx->profile == GF_SMALL ? small : standard;
}

/* ---- the answers ---------------------------------------------------------------------- */

bool gh_count_closure(const gg_edge *edges, size_t n, int64_t from, int64_t to,
                      gh_closure_counts *out) {
    *out = (gh_closure_counts){0};
    int64_t nodes = 0;
    for (size_t i = 0; i < n; i++) {
        if (edges[i].src < 0 || edges[i].dst < 0) return false;
        if (edges[i].src >= nodes) nodes = edges[i].src + 1;
        if (edges[i].dst >= nodes) nodes = edges[i].dst + 1;
    }
    if (from >= nodes || to >= nodes) nodes = (from > to ? from : to) + 1;
    /* Adjacency in compressed rows: start[x] .. start[x + 1] in next. */
    size_t *start = calloc((size_t)nodes + 1, sizeof *start);
    int64_t *next = malloc((n ? n : 1) * sizeof *next);
    int64_t *queue = malloc((size_t)nodes * sizeof *queue);
    int64_t *seen = malloc((size_t)nodes * sizeof *seen); /* the source that saw it last */
    bool good = start && next && queue && seen;
    for (size_t i = 0; good && i < n; i++) start[edges[i].src + 1]++;
    for (int64_t x = 0; good && x < nodes; x++) start[x + 1] += start[x];
    size_t *fill = good ? malloc((size_t)nodes * sizeof *fill) : NULL;
    good = good && fill;
    if (good) {
        memcpy(fill, start, (size_t)nodes * sizeof *fill);
        for (size_t i = 0; i < n; i++) next[fill[edges[i].src]++] = edges[i].dst;
        for (int64_t x = 0; x < nodes; x++) seen[x] = -1;
    }
    for (int64_t src = 0; good && src < nodes; src++) {
        size_t head = 0, tail = 0;
        bool reaches_to = false;
        queue[tail++] = src;
        while (head < tail) {
            int64_t x = queue[head++];
            for (size_t k = start[x]; k < start[x + 1]; k++) {
                int64_t y = next[k];
                if (seen[y] == src) continue;
                seen[y] = src;
                queue[tail++] = y;
                out->pairs++;
                if (src == from) out->from++;
                if (y == to) reaches_to = true;
            }
        }
        if (reaches_to || src == to) out->into++;
    }
    free(start), free(next), free(queue), free(seen), free(fill);
    return good;
}

/* ---- running the arm's programs ------------------------------------------------------- */

/* Runs argv in dir (NULL: the run's directory), output in dir/NAME.out and .err; its exit
 * status (0 or the result failed: 3 INVALID, other FAILED) and resource use in *ru. The
 * seconds it took in *wall_ms. */
static int run_program(const gh_run *r, char *const *argv, const char *dir, const char *name,
                       struct rusage *ru, double *wall_ms) {
    char out[700], err[700], why[600];
    snprintf(out, sizeof out, "%s/%s.out", r->dir, name);
    snprintf(err, sizeof err, "%s/%s.err", r->dir, name);
    if (r->ctx->verbose) {
        fprintf(stderr, "   ");
        for (size_t i = 0; argv[i]; i++) fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
    }
    uint64_t t0 = fx_now_ns();
    int rc =
        gx_run_in(argv, r->ctx->client_cpus, dir, out, err, r->ctx->timeout_s, ru, why, sizeof why);
    if (wall_ms) *wall_ms = (double)(fx_now_ns() - t0) / 1e6;
    if (rc != 0) {
        char tail[400];
        gx_tail(err, tail, sizeof tail);
        gr_fail_exit(r->res, name, rc, why, tail);
    }
    return rc;
}

/* The JSON object an inputlayer-inproc run printed (NULL: the result failed). */
static json_t *inproc(const gh_run *r, const char *const *args) {
    const char *argv[32];
    size_t k = 0;
    argv[k++] = r->arm->inproc;
    for (size_t i = 0; args[i] && k < 31; i++) argv[k++] = args[i];
    argv[k] = NULL;
    if (run_program(r, (char *const *)argv, NULL, "inproc", NULL, NULL) != 0) return NULL;
    char out[700];
    snprintf(out, sizeof out, "%s/inproc.out", r->dir);
    json_error_t jerr;
    json_t *o = json_load_file(out, JSON_DISABLE_EOF_CHECK, &jerr);
    if (!json_is_object(o)) {
        json_decref(o);
        gr_fail(r->res, GR_FAILED, "inputlayer-inproc printed no JSON object: %s", jerr.text);
        return NULL;
    }
    return o;
}

static double number_of(const json_t *o, const char *field) {
    const json_t *v = json_object_get(o, field);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n == 0 ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- closure -------------------------------------------------------------------------- */

static int write_stmt(void *ctx, const char *stmt, size_t len) {
    return fwrite(stmt, 1, len, ctx) == len && fputc('\n', ctx) != EOF ? 0 : 1;
}

/* The script of bench/run-engine.sh: a knowledge graph, the edges, the reach rules, the
 * count and its query. */
static bool write_script(const char *path, const gg_edge *edges, size_t n) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool good = fputs(".kg create tc_bench\n", f) >= 0 &&
                gg_emit_edges("edge", edges, n, GG_CHUNK, write_stmt, f) == 0 &&
                fputs("+reach(X, Y) <- edge(X, Y)\n+reach(X, Z) <- reach(X, Y), edge(Y, Z)\n"
                      "+n(count<X>) <- reach(X, Y)\n?n(C)\n",
                      f) >= 0;
    return fclose(f) == 0 && good;
}

/* Whether the file holds the number as a whole word (the count in the printed table). */
static bool prints_count(const char *path, long count) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[4096], want[32];
    snprintf(want, sizeof want, "%ld", count);
    size_t len = strlen(want);
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        for (const char *p = strstr(line, want); p && !found; p = strstr(p + 1, want))
            found = (p == line || p[-1] < '0' || p[-1] > '9') && (p[len] < '0' || p[len] > '9');
    fclose(f);
    return found;
}

void gh_closure(const gh_run *r) {
    long nodes = by_profile(r, 200, 2000, 2000), nedges = by_profile(r, 300, 4000, 4000);
    long runs = by_profile(r, 1, 3, 5);
    gg_edge *edges = gg_random_graph((uint64_t)nodes, (size_t)nedges, SEED);
    gh_closure_counts want;
    char script[700];
    snprintf(script, sizeof script, "%s/tc.iql", r->dir);
    if (!edges || !gh_count_closure(edges, (size_t)nedges, 1, 1, &want)) {
        gr_fail(r->res, GR_FAILED, "out of memory");
    } else if (!write_script(script, edges, (size_t)nedges)) {
        gr_fail(r->res, GR_FAILED, "cannot write %s", script);
    }
    free(edges);
    double wall[16], rss[16];
    for (long k = 0; r->res->status == GR_OK && k < runs; k++) {
        /* Each run in a fresh directory: nothing a run leaves behind is seen by the next. */
        char dir[720], name[32], out[760];
        snprintf(dir, sizeof dir, "%s/run%ld", r->dir, k + 1);
        snprintf(name, sizeof name, "client%ld", k + 1);
        snprintf(out, sizeof out, "%s/%s.out", r->dir, name);
        if (!gx_mkdirs(dir)) {
            gr_fail(r->res, GR_FAILED, "cannot create %s", dir);
            break;
        }
        char *argv[] = {(char *)r->arm->client, "--local", "--script", script, NULL};
        struct rusage ru = {0};
        if (run_program(r, argv, dir, name, &ru, &wall[k]) != 0) break;
        if (!prints_count(out, want.pairs)) {
            char tail[300];
            gx_tail(out, tail, sizeof tail);
            gr_fail(r->res, GR_INVALID, "the closure script did not print %ld: %s", want.pairs,
                    tail);
            break;
        }
        rss[k] = (double)ru.ru_maxrss;
        gx_rmtree(dir);
    }
    if (r->res->status != GR_OK) return;
    gr_add_metric(r->res, "wall_ms", median(wall, (size_t)runs), runs, false);
    gr_add_metric(r->res, "peak_rss_kb", median(rss, (size_t)runs), runs, false);
}

/* ---- in process ----------------------------------------------------------------------- */

/* The closure counts of the random graph of the run's profile, into 1 (an edge from 1 to
 * a new node adds a pair for 1 and every node that reaches 1); false when it failed. */
static bool random_counts(const gh_run *r, long *nodes, long *nedges, gh_closure_counts *want) {
    *nodes = by_profile(r, 200, 2000, 2000);
    *nedges = by_profile(r, 300, 4000, 4000);
    gg_edge *edges = gg_random_graph((uint64_t)*nodes, (size_t)*nedges, SEED);
    bool counted = edges && gh_count_closure(edges, (size_t)*nedges, 1, 1, want);
    free(edges);
    if (!counted) gr_fail(r->res, GR_FAILED, "out of memory");
    return counted;
}

void gh_first_read(const gh_run *r) {
    long nodes, nedges, samples = by_profile(r, 1, 3, 5);
    /* The write `+edge(1, nodes + 1)`: a new node, reached from 1 and all that reach 1. */
    gh_closure_counts want;
    if (!random_counts(r, &nodes, &nedges, &want)) return;
    char n[24], m[24], k[24], rows[24], added[24];
    snprintf(n, sizeof n, "%ld", nodes);
    snprintf(m, sizeof m, "%ld", nedges);
    snprintf(k, sizeof k, "%ld", samples);
    snprintf(rows, sizeof rows, "%ld", want.pairs);
    snprintf(added, sizeof added, "%ld", want.into);
    const char *args[] = {
        "first_read", "--nodes",      n,     "--edges", m, "--samples", k, "--expect-rows",
        rows,         "--expect-new", added, NULL};
    json_t *o = inproc(r, args);
    if (!o) return;
    gr_add_metric(r->res, "first_read_ms", number_of(o, "first_read_ms"), samples, false);
    gr_add_metric(r->res, "first_write_ms", number_of(o, "first_write_ms"), samples, false);
    gr_add_metric(r->res, "eval_read_ms", number_of(o, "eval_read_ms"), samples, false);
    gr_add_metric(r->res, "read_over_eval", number_of(o, "read_over_eval"), samples, false);
    gr_add_metric(r->res, "write_over_eval", number_of(o, "write_over_eval"), samples, false);
    json_decref(o);
}

void gh_maintained_write(const gh_run *r) {
    long nodes, nedges, writes = by_profile(r, 3, 30, 100);
    gh_closure_counts want;
    if (!random_counts(r, &nodes, &nedges, &want)) return;
    char n[24], m[24], w[24], count[24];
    snprintf(n, sizeof n, "%ld", nodes);
    snprintf(m, sizeof m, "%ld", nedges);
    snprintf(w, sizeof w, "%ld", writes);
    snprintf(count, sizeof count, "%ld", want.pairs + writes * want.into);
    const char *args[] = {"write_read",     "--nodes", n,   "--edges", m, "--writes", w,
                          "--expect-count", count,     NULL};
    json_t *o = inproc(r, args);
    if (!o) return;
    gr_add_metric(r->res, "write_read_ms.p50", number_of(o, "write_read_ms_p50"), writes, false);
    gr_add_metric(r->res, "write_read_ms.p90", number_of(o, "write_read_ms_p90"), writes, false);
    json_decref(o);
}

static void warm_query(const gh_run *r, const char *const *data, const char *rules,
                       const char *query, long expected) {
    char runs[24], rows[24];
    long nruns = by_profile(r, 20, 200, 500);
    snprintf(runs, sizeof runs, "%ld", nruns);
    snprintf(rows, sizeof rows, "%ld", expected);
    const char *args[16] = {"query"};
    size_t a = 1;
    for (size_t i = 0; data[i]; i++) args[a++] = data[i];
    const char *rest[] = {"--rules", rules,           "--query", query, "--runs",
                          runs,      "--expect-rows", rows,      NULL};
    for (size_t i = 0; rest[i]; i++) args[a++] = rest[i];
    args[a] = NULL;
    json_t *o = inproc(r, args);
    if (!o) return;
    gr_add_metric(r->res, "latency_us.p50", number_of(o, "median_us"), nruns, false);
    json_decref(o);
}

void gh_reach_bound_inproc(const gh_run *r) {
    long nodes = by_profile(r, 200, 2000, 2000), nedges = by_profile(r, 300, 4000, 4000);
    gg_edge *edges = gg_random_graph((uint64_t)nodes, (size_t)nedges, SEED);
    gh_closure_counts want;
    bool counted = edges && gh_count_closure(edges, (size_t)nedges, 1, 1, &want);
    free(edges);
    if (!counted) {
        gr_fail(r->res, GR_FAILED, "out of memory");
        return;
    }
    char n[24], m[24];
    snprintf(n, sizeof n, "%ld", nodes);
    snprintf(m, sizeof m, "%ld", nedges);
    const char *data[] = {"--random", n, m, NULL};
    warm_query(r, data, "reach", "?reach(1, Y)", want.from);
}

void gh_hot_reach_inproc(const gh_run *r) {
    long want = by_profile(r, 10000, 100000, 100000);
    char m[24];
    snprintf(m, sizeof m, "%ld", want);
    const char *data[] = {"--chains", m, NULL};
    /* Each hot chain's head reaches the 3 nodes of its chain. */
    long hot = (long)gg_hot_count(gg_chain_count((size_t)want));
    warm_query(r, data, "hot_reach", "?hot_reach(X, Y)", 3 * hot);
}
