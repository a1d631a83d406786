/* bench_engine: in-process benchmark of the engine through the library API
 * (include/inputlayer.h), on the datasets and rules of docs/performance.md 3.2/3.3.
 *
 *   bench_engine [--runs N] [--only NAME] [--no-memory]
 *
 * For each workload it loads a dataset into a fresh engine (knowledge graph `bench`, by
 * executing the IQL bulk-insert statements), registers the rules, then times a query:
 * warm-up runs, then N timed runs (default 100) of il_execute + reading every row +
 * il_result_free. It prints one line per query,
 *   name rows=N median_us=.. p10_us=.. p90_us=.. runs=N
 * and exits 1 when a query's row count is not the expected one. The setup (load + rules)
 * is timed separately and printed as a `setup` line. `memory_chains1m` prints the resident
 * growth per fact after loading the 1M-edge chains `edge` relation into a fresh engine
 * (measured in a fresh process so that earlier workloads' freed memory does not count; run
 * last, or skipped with --no-memory). --only NAME runs the workloads whose name contains
 * NAME. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "inputlayer.h"
#include "gen_graph.h"
#include "inproc_common.h"
#include "gen_vectors.h"
#include "exec/vecdist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int g_runs = 100;
static const char *g_only;
static bool g_memory_child; /* this process only measures memory */
static bool g_no_memory;    /* skip the memory measurement */

static int selected(const char *name) {
    return !g_only || strstr(name, g_only) != NULL;
}

/* Times a query, or with keys > 0 a family of them: run i fills the format's one %ld
 * with 400 * (i mod keys), a hot chain's head, so that each run asks for another constant
 * (as a key-value client does) and no run reuses the text of the one before. Exits 1 when
 * a run's row count is not `expected`. */
static void measure_keys(ib_db *db, const char *name, const char *query, long keys,
                         size_t expected) {
    if (!selected(name)) return;
    double *t = ib_time_query(db, name, query, keys, g_runs, expected);
    printf("%s rows=%zu median_us=%.2f p10_us=%.2f p90_us=%.2f runs=%d\n", name, expected,
           ib_quantile(t, g_runs, 0.5), ib_quantile(t, g_runs, 0.1), ib_quantile(t, g_runs, 0.9),
           g_runs);
    fflush(stdout);
    free(t);
}

static void measure(ib_db *db, const char *name, const char *query, size_t expected) {
    measure_keys(db, name, query, 0, expected);
}

/* Times g_runs single-edge writes, each an insert of an edge from node 1 to a new node
 * and, in the next statement, its delete: the median of each. */
static void measure_writes(ib_db *db, const char *name) {
    if (!selected(name)) return;
    double *ti = malloc((size_t)g_runs * sizeof *ti), *td = malloc((size_t)g_runs * sizeof *td);
    if (!ti || !td) ib_die("out of memory");
    char stmt[64];
    for (int i = 0; i < g_runs; i++) {
        snprintf(stmt, sizeof stmt, "+edge(1, %d)", 1000000 + i);
        double t0 = ib_now_us();
        ib_exec_str(db->s, stmt);
        ti[i] = ib_now_us() - t0;
        stmt[0] = '-';
        t0 = ib_now_us();
        ib_exec_str(db->s, stmt);
        td[i] = ib_now_us() - t0;
    }
    qsort(ti, (size_t)g_runs, sizeof *ti, ib_cmp_double);
    qsort(td, (size_t)g_runs, sizeof *td, ib_cmp_double);
    printf("%s insert_median_us=%.2f delete_median_us=%.2f runs=%d\n", name,
           ib_quantile(ti, g_runs, 0.5), ib_quantile(td, g_runs, 0.5), g_runs);
    fflush(stdout);
    free(ti);
    free(td);
}

static void print_setup(const char *name, size_t facts, double t0) {
    printf("setup %s facts=%zu ms=%.1f\n", name, facts, (ib_now_us() - t0) / 1e3);
    fflush(stdout);
}

/* a) random 2,000 / 4,000 with the reach rules. */
static void workload_random2k(void) {
    if (!selected("random2k_edge1") && !selected("random2k_reach1") &&
        !selected("random2k_reach_all") && !selected("random2k_reach1_after_all") &&
        !selected("random2k_write_after_all"))
        return;
    gg_edge *edges = gg_random_graph(2000, 4000, 42);
    if (!edges) ib_die("out of memory");
    double t0 = ib_now_us();
    ib_db db = ib_db_open("bench");
    ib_load_edges(&db, edges, 4000);
    ib_exec_str(db.s, "+reach(X, Y) <- edge(X, Y)");
    ib_exec_str(db.s, "+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
    print_setup("random2k", 4000, t0);
    free(edges);
    measure(&db, "random2k_edge1", "?edge(1,Y)", 2);
    measure(&db, "random2k_reach1", "?reach(1,Y)", 1582);
    /* The read policy (src/views/read_policy.h): a full read makes `reach` maintained
       (its first run builds the view); afterwards bound reads seek the maintained
       relation and every write pays for its maintenance. The full answer is cut at the
       100,000-row result limit. */
    measure(&db, "random2k_reach_all", "?reach(X,Y)", 100000);
    measure(&db, "random2k_reach1_after_all", "?reach(1,Y)", 1582);
    measure_writes(&db, "random2k_write_after_all");
    ib_db_close(&db);
}

/* d) random 200 / 300 with the reach and two_hop rules: `.why` proof trees. */
static void workload_random200(void) {
    if (!selected("random200_why_reach1") && !selected("random200_why_two_hop1")) return;
    gg_edge *edges = gg_random_graph(200, 300, 42);
    if (!edges) ib_die("out of memory");
    double t0 = ib_now_us();
    ib_db db = ib_db_open("bench");
    ib_load_edges(&db, edges, 300);
    ib_exec_str(db.s, "+reach(X, Y) <- edge(X, Y)");
    ib_exec_str(db.s, "+reach(X, Z) <- reach(X, Y), edge(Y, Z)");
    ib_exec_str(db.s, "+two_hop(X, Z) <- edge(X, Y), edge(Y, Z)");
    print_setup("random200", 300, t0);
    free(edges);
    measure(&db, "random200_why_reach1", ".why ?reach(1,Y)", 4);
    measure(&db, "random200_why_two_hop1", ".why ?two_hop(1,Z)", 1);
    ib_db_close(&db);
}

/* e) 10,000 names `name(i, "user-i")`: queries that make strings of their own (freed with
   their results, docs/engine.md "Values") and one whose constant is stored. */
static void workload_strings10k(void) {
    if (!selected("strings10k_concat") && !selected("strings10k_absent_constant") &&
        !selected("strings10k_stored_constant"))
        return;
    double t0 = ib_now_us();
    ib_db db = ib_db_open("bench");
    enum { NAMES = 10000, CHUNK = 1000 };
    char *stmt = malloc((size_t)CHUNK * 40 + 16);
    if (!stmt) ib_die("out of memory");
    for (int base = 0; base < NAMES; base += CHUNK) {
        size_t n = (size_t)sprintf(stmt, "+name[");
        for (int i = base; i < base + CHUNK; i++)
            n += (size_t)sprintf(stmt + n, "%s(%d, \"user-%d\")", i > base ? ", " : "", i, i);
        n += (size_t)sprintf(stmt + n, "]");
        ib_exec(db.s, stmt, n);
    }
    free(stmt);
    print_setup("strings10k", NAMES, t0);
    measure(&db, "strings10k_concat", "?name(I, N), G = concat(N, \"-\", \"x\")", NAMES);
    measure(&db, "strings10k_absent_constant", "?name(I, \"nobody\")", 0);
    measure(&db, "strings10k_stored_constant", "?name(I, \"user-77\")", 1);
    ib_db_close(&db);
}

/* Loads hot chains of `requested` edges with their hot labels; returns the edge count. */
static size_t load_chains(ib_db *db, size_t requested) {
    size_t n;
    gg_edge *edges = gg_chains(requested, &n);
    if (!edges) ib_die("out of memory");
    ib_load_edges(db, edges, n);
    free(edges);
    ib_load_hot_labels(db, gg_hot_count(gg_chain_count(requested)));
    return n;
}

/* b) hot chains, 100K edges: path, hot_reach and r1. */
static void workload_chains100k(void) {
    if (!selected("chains100k_hot_reach") && !selected("chains100k_path400") &&
        !selected("chains100k_r1_400") && !selected("chains100k_r1_keys"))
        return;
    double t0 = ib_now_us();
    ib_db db = ib_db_open("bench");
    size_t n = load_chains(&db, 100000);
    ib_exec_str(db.s, "+path(X,Y) <- edge(X,Y)");
    ib_exec_str(db.s, "+path(X,Z) <- edge(X,Y), path(Y,Z)");
    ib_exec_str(db.s, "+hot_reach(X,Y) <- label(X,\"hot\"), path(X,Y)");
    ib_exec_str(db.s, "+r1(X,Y) <- edge(X,Y), label(X,\"hot\")");
    print_setup("chains100k", n + gg_hot_count(gg_chain_count(100000)), t0);
    measure(&db, "chains100k_hot_reach", "?hot_reach(X,Y)", 1002);
    measure(&db, "chains100k_path400", "?path(400,Y)", 3);
    measure(&db, "chains100k_r1_400", "?r1(400,Y)", 1);
    /* 334 hot heads: one query text per key, more than the plan cache holds */
    measure_keys(&db, "chains100k_r1_keys", "?r1(%ld,Y)", 334, 1);
    ib_db_close(&db);
}

/* c) hot chains, 1M edges: r1. */
static void workload_chains1m(void) {
    if (!selected("chains1m_r1_400")) return;
    double t0 = ib_now_us();
    ib_db db = ib_db_open("bench");
    size_t n = load_chains(&db, 1000000);
    ib_exec_str(db.s, "+r1(X,Y) <- edge(X,Y), label(X,\"hot\")");
    print_setup("chains1m", n + gg_hot_count(gg_chain_count(1000000)), t0);
    measure(&db, "chains1m_r1_400", "?r1(400,Y)", 1);
    ib_db_close(&db);
}

/* The original's cosine of two vectors as a plain scalar C loop: three sequential f32
 * sums, then 1 - clamp(dot / (|a| |b|)) (iql-language.md 5.2). */
static double scalar_cosine(const float *x, const float *y, uint32_t n) {
    float dot = 0.0f, xx = 0.0f, yy = 0.0f;
    for (uint32_t i = 0; i < n; i++) {
        float pxy = x[i] * y[i], pxx = x[i] * x[i], pyy = y[i] * y[i];
        dot += pxy;
        xx += pxx;
        yy += pyy;
    }
    double nx = sqrt((double)xx), ny = sqrt((double)yy);
    if (nx == 0.0 || ny == 0.0) return 0.0;
    double sim = (double)dot / (nx * ny);
    if (sim < -1.0) sim = -1.0;
    if (sim > 1.0) sim = 1.0;
    return 1.0 - sim;
}

enum { VEC_N = 10000, VEC_DIM = 128 };
#define VEC_THRESHOLD 0.5

/* Times `rounds` of fn (each a pass over the vectors) like a query: the median of g_runs
   after warm-up runs. Prints a line in measure's format. */
static void measure_pass(const char *name, size_t (*fn)(const float *, const float *),
                         const float *vecs, const float *q, size_t expected) {
    if (!selected(name)) return;
    int warmup = g_runs / 10 < 5 ? 5 : g_runs / 10;
    for (int i = 0; i < warmup; i++)
        if (fn(vecs, q) != expected) {
            fprintf(stderr, "bench_engine: ERROR: %s counted a different number of rows\n", name);
            exit(1);
        }
    double *t = malloc((size_t)g_runs * sizeof *t);
    if (!t) ib_die("out of memory");
    for (int i = 0; i < g_runs; i++) {
        double t0 = ib_now_us();
        size_t got = fn(vecs, q);
        t[i] = ib_now_us() - t0;
        if (got != expected) ib_die("a kernel pass counted a different number of rows");
    }
    qsort(t, (size_t)g_runs, sizeof *t, ib_cmp_double);
    printf("%s rows=%zu median_us=%.2f p10_us=%.2f p90_us=%.2f runs=%d\n", name, expected,
           ib_quantile(t, g_runs, 0.5), ib_quantile(t, g_runs, 0.1), ib_quantile(t, g_runs, 0.9),
           g_runs);
    fflush(stdout);
    free(t);
}

static volatile double g_dist_sink;

/* A pass of the plain scalar loop: every distance, counting those under the threshold. */
static size_t pass_scalar(const float *vecs, const float *q) {
    size_t hits = 0;
    double acc = 0;
    for (size_t i = 0; i < VEC_N; i++) {
        double d = scalar_cosine(vecs + i * VEC_DIM, q, VEC_DIM);
        acc += d;
        hits += d < VEC_THRESHOLD;
    }
    g_dist_sink = acc;
    return hits;
}

/* A pass of the engine's kernel as the query uses it: the norms are the vectors' heads
   (computed when they were stored), the fast SIMD dot gives bounds for a batch of rows
   per call, and only a row the bounds cannot reject gets the exact sequential dot. */
static val_vec_head g_heads[VEC_N], g_qhead;

static size_t pass_kernel(const float *vecs, const float *q) {
    enum { BATCH = 64 };
    size_t hits = 0;
    const float *xs[BATCH];
    const val_vec_head *hxs[BATCH];
    double lo[BATCH], hi[BATCH];
    for (size_t start = 0; start < VEC_N; start += BATCH) {
        size_t m = VEC_N - start < BATCH ? VEC_N - start : BATCH;
        for (size_t k = 0; k < m; k++) {
            xs[k] = vecs + (start + k) * VEC_DIM;
            hxs[k] = &g_heads[start + k];
        }
        vecdist_bounds_many(VECDIST_COSINE, q, &g_qhead, VEC_DIM, xs, hxs, m, lo, hi);
        for (size_t k = 0; k < m; k++) {
            if (lo[k] >= VEC_THRESHOLD) continue;
            double d = vecdist_cosine_from(vecdist_dot_seq(xs[k], q, VEC_DIM), hxs[k], &g_qhead);
            hits += d < VEC_THRESHOLD;
        }
    }
    return hits;
}

/* A pass of the exact kernel alone: the sequential dot of every vector (no bounds). */
static size_t pass_exact(const float *vecs, const float *q) {
    size_t hits = 0;
    for (size_t i = 0; i < VEC_N; i++) {
        double d = vecdist_cosine_from(vecdist_dot_seq(vecs + i * VEC_DIM, q, VEC_DIM), &g_heads[i],
                                       &g_qhead);
        hits += d < VEC_THRESHOLD;
    }
    return hits;
}

static val_vec_head head_of(const float *v) {
    val_vec_head h = {0.0f, 1, 0.0, 0.0};
    for (uint32_t d = 0; d < VEC_DIM; d++) {
        float sq = v[d] * v[d];
        h.sqnorm += sq;
    }
    h.norm = sqrt((double)h.sqnorm);
    h.inv_norm = h.norm > 0.0 ? 1.0 / h.norm : 0.0;
    return h;
}

/* e) the original's vector benchmark: 10,000 random 128-d vectors (seed 42), the
   brute-force cosine query with a filter against a query vector (seed 43), and beside it
   the distance kernel alone and a plain scalar loop over the same vectors. */
static void workload_vectors10k(void) {
    if (!selected("vectors10k_cosine_query") && !selected("vectors10k_kernel") &&
        !selected("vectors10k_kernel_exact") && !selected("vectors10k_scalar_loop"))
        return;
    float *vecs = gv_random_vectors(VEC_N, VEC_DIM, 42);
    float *q = gv_random_vectors(1, VEC_DIM, 43);
    size_t qcap = (size_t)VEC_DIM * 18 + 200;
    char *query = malloc(qcap);
    if (!vecs || !q || !query) ib_die("out of memory");
    double t0 = ib_now_us();
    ib_db db = ib_db_open("bench");
    if (gv_emit_vectors("vectors", vecs, VEC_N, VEC_DIM, GV_CHUNK, ib_exec_stmt_cb, db.s) != 0)
        ib_die("out of memory writing statements");
    print_setup("vectors10k", VEC_N, t0);
    int len = snprintf(query, qcap, "?vectors(Id, V), Dist = cosine(V, ");
    len += gv_format_vector(query + len, qcap - (size_t)len, q, VEC_DIM);
    snprintf(query + len, qcap - (size_t)len, "), Dist < %g", VEC_THRESHOLD);
    for (size_t i = 0; i < VEC_N; i++) g_heads[i] = head_of(vecs + i * VEC_DIM);
    g_qhead = head_of(q);
    size_t expected = pass_scalar(vecs, q);
    measure(&db, "vectors10k_cosine_query", query, expected);
    measure_pass("vectors10k_kernel", pass_kernel, vecs, q, expected);
    measure_pass("vectors10k_kernel_exact", pass_exact, vecs, q, expected);
    measure_pass("vectors10k_scalar_loop", pass_scalar, vecs, q, expected);
    ib_db_close(&db);
    free(query);
    free(q);
    free(vecs);
}

/* Resident set size in bytes, from /proc/self/statm. */
static long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!f) return -1;
    int ok = fscanf(f, "%ld %ld", &size, &resident) == 2;
    fclose(f);
    return ok ? resident * sysconf(_SC_PAGESIZE) : -1;
}

/* d) resident growth per fact of the 1M-edge chains `edge` relation (in a child). */
static void memory_child(void) {
    size_t n;
    gg_edge *edges = gg_chains(1000000, &n);
    if (!edges) ib_die("out of memory");
    ib_db db = ib_db_open("bench");
    long before = rss_bytes();
    double t0 = ib_now_us();
    ib_load_edges(&db, edges, n);
    double ms = (ib_now_us() - t0) / 1e3;
    long after = rss_bytes();
    if (before < 0 || after < 0) ib_die("cannot read /proc/self/statm");
    printf("memory_chains1m facts=%zu rss_growth_bytes=%ld bytes_per_fact=%.1f load_ms=%.1f\n", n,
           after - before, (double)(after - before) / (double)n, ms);
    fflush(stdout);
    ib_db_close(&db);
    free(edges);
}

/* The memory figure needs a process that has touched little memory, so it runs in a
 * fresh one (posix_spawn of this program, not fork: a forked child's copy-on-write
 * pages slowed this process's later measurements by up to 1.7x). */
static void workload_memory(const char *self) {
    if (!selected("memory_chains1m")) return;
    if (g_memory_child) {
        memory_child();
        return;
    }
    fflush(stdout);
    fflush(stderr);
    char *const args[] = {(char *)self, "--memory-child", NULL};
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0)
        ib_die("cannot start the memory measurement");
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) ib_die("waitpid failed");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ib_die("memory_chains1m failed");
}

static void usage(void) {
    fprintf(stderr, "usage: bench_engine [--runs N] [--only NAME] [--no-memory]\n"
                    "workloads: random2k_edge1 random2k_reach1 random2k_reach_all "
                    "random2k_reach1_after_all random2k_write_after_all chains100k_hot_reach "
                    "chains100k_path400 chains100k_r1_400 chains100k_r1_keys chains1m_r1_400 "
                    "random200_why_reach1 "
                    "random200_why_two_hop1 vectors10k_cosine_query vectors10k_kernel "
                    "vectors10k_kernel_exact vectors10k_scalar_loop strings10k_concat "
                    "strings10k_absent_constant strings10k_stored_constant memory_chains1m\n");
    exit(2);
}

int main(int argc, char **argv) {
    ib_set_program("bench_engine");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 10000000) usage();
            g_runs = (int)v;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            g_only = argv[++i];
        } else if (strcmp(argv[i], "--no-memory") == 0) {
            g_no_memory = true;
        } else if (strcmp(argv[i], "--memory-child") == 0) {
            g_memory_child = true;
            g_only = "memory_chains1m";
        } else {
            usage();
        }
    }
    if (g_memory_child) {
        workload_memory(argv[0]);
        return 0;
    }
    workload_random2k();
    workload_chains100k();
    workload_chains1m();
    workload_random200();
    workload_strings10k();
    workload_vectors10k();
    /* Last: on this machine, touching a lot of memory slows the next seconds' timings
       (the kernel reclaims and compacts behind it). */
    if (!g_no_memory) workload_memory(argv[0]);
    return 0;
}
