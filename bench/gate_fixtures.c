/* The perf gate's fixtures; see gate_fixtures.h. Sizes per profile: smoke (tiny, for
 * correctness only), small (the gate's reduced profile: the notes' datasets, shorter write
 * phases), standard (the notes' sizes). */
#include "gate_fixtures.h"

#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_data.h"
#include "fixture_rows.h"
#include "fixture_session.h"
#include "fixture_stats.h"
#include "gate_headline.h"
#include "gate_proc.h"
#include "gate_why.h"
#include "gen_graph.h"

enum { SEED = 42, FACT_CHUNK = 5000 };

static const char *const REACH_RULES[] = {"+reach(X, Y) <- edge(X, Y)",
                                          "+reach(X, Z) <- reach(X, Y), edge(Y, Z)", NULL};
static const char *const TWO_HOP_RULES[] = {"+two_hop(X, Z) <- edge(X, Y), edge(Y, Z)", NULL};
static const char *const HOT_REACH_RULES[] = {
    "+path(X, Y) <- edge(X, Y)", "+path(X, Z) <- edge(X, Y), path(Y, Z)",
    "+hot_reach(X, Y) <- label(X, \"hot\"), path(X, Y)", NULL};

/* One fixture's run on one arm: its scratch directory, its current server. */
typedef struct run_env {
    const gf_context *ctx;
    const gf_arm *arm;
    gr_result *res;
    char dir[600];
    int servers;      /* started so far, for their directories' names */
    const char *tag;  /* in those names: "a", "b" for the two arms of a paired run */
    const char *cpus; /* the servers' CPUs when not the context's (a paired run) */
    gx_server sv;
    fx_target t;
} run_env;

static long by_profile(const run_env *e, long smoke, long small, long standard) {
    return e->ctx->profile == GF_SMOKE ? smoke : e->ctx->profile == GF_SMALL ? small : standard;
}

static bool ok(const run_env *e) {
    return e->res->status == GR_OK;
}

/* ---- servers and clients -------------------------------------------------------------- */

static bool server_up(run_env *e) {
    char dir[700], data[720], why[600];
    snprintf(dir, sizeof dir, "%s/server%s%d", e->dir, e->tag ? e->tag : "", ++e->servers);
    snprintf(data, sizeof data, "%s/data", dir);
    if (!gx_server_start(&e->sv, e->arm->server, dir, data, e->arm->env, e->arm->nenv,
                         e->cpus ? e->cpus : e->ctx->server_cpus, why, sizeof why)) {
        gr_fail(e->res, GR_FAILED, "%s", why);
        return false;
    }
    fx_target_defaults(&e->t);
    e->t.port = e->sv.port;
    e->t.api_key = GX_API_KEY;
    return true;
}

/* Stops the server; with record, its resident memory first (server_rss_kb). */
static void server_down(run_env *e, bool record) {
    long rss, hwm;
    if (record && ok(e) && e->sv.pid > 0 && fx_process_memory_kb(e->sv.pid, &rss, &hwm)) {
        gr_add_metric(e->res, "server_rss_kb", (double)rss, 1, false);
        gr_add_metric(e->res, "server_peak_rss_kb", (double)hwm, 1, false);
    }
    /* A server must stop cleanly: a crash at shutdown, or a sanitizer's report in a
     * sanitized build, fails the run. */
    int rc = gx_server_stop(&e->sv);
    if (rc != 0 && ok(e)) {
        char err[720], tail[300];
        snprintf(err, sizeof err, "%s.err", e->sv.dir);
        gx_tail(err, tail, sizeof tail);
        gr_fail(e->res, GR_FAILED, "the server %s on SIGTERM: %s",
                rc < 0 ? "did not stop within 10 s" : "exited with an error", tail);
    }
}

/* Runs fixture client `tool` with args (NULL-terminated, after the tool's name); returns
 * its JSON lines as an array, or NULL with the result failed (INVALID for exit 3). */
static json_t *run_client(run_env *e, const char *tool, const char *const *args) {
    const char *argv[64];
    char path[700], out[700], err[700], why[600];
    size_t k = 0;
    snprintf(path, sizeof path, "%s/%s", e->ctx->tools, tool);
    argv[k++] = path;
    for (size_t i = 0; args[i] && k < 62; i++) argv[k++] = args[i];
    argv[k] = NULL;
    snprintf(out, sizeof out, "%s/client.out", e->dir);
    snprintf(err, sizeof err, "%s/client.err", e->dir);
    if (e->ctx->verbose) {
        fprintf(stderr, "   ");
        for (size_t i = 0; i < k; i++) fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
    }
    int rc = gx_run((char *const *)argv, e->ctx->client_cpus, out, err, e->ctx->timeout_s, why,
                    sizeof why);
    if (rc != 0) {
        char tail[400];
        gx_tail(err, tail, sizeof tail);
        gr_fail_exit(e->res, tool, rc, why, tail);
        return NULL;
    }
    json_t *lines = json_array();
    FILE *f = fopen(out, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        if (line[0] != '{') continue;
        json_t *o = json_loads(line, 0, NULL);
        if (o) json_array_append_new(lines, o);
    }
    free(line);
    if (f) fclose(f);
    if (json_array_size(lines) == 0) {
        json_decref(lines);
        gr_fail(e->res, GR_FAILED, "%s printed no JSON line", tool);
        return NULL;
    }
    return lines;
}

/* Adds metric `name` from numeric field `field` of o (null: not measured); nothing when
 * the field is absent. */
static void take(gr_result *res, const json_t *o, const char *field, const char *name, long samples,
                 bool higher_is_better) {
    const json_t *v = json_object_get(o, field);
    if (!v) return;
    gr_add_metric(res, name, json_is_number(v) ? json_number_value(v) : NAN, samples,
                  higher_is_better);
}

static long count_of(const json_t *o, const char *field) {
    return (long)json_number_value(json_object_get(o, field));
}

/* ---- datasets and answers ------------------------------------------------------------- */

typedef struct rows {
    fx_row *r;
    size_t n, cap;
} rows;

static bool push_row(rows *rs, int64_t a, int64_t b) {
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 1024;
        fx_row *grown = realloc(rs->r, cap * sizeof *grown);
        if (!grown) return false;
        rs->r = grown;
        rs->cap = cap;
    }
    rs->r[rs->n++] = (fx_row){a, b};
    return true;
}

/* Appends (src, y) for every y reachable from src in the sorted edges (nodes < limit),
 * breadth first. */
static bool reach_from(const gg_edge *e, size_t n, int64_t src, int64_t limit, rows *out) {
    bool *seen = calloc((size_t)limit, 1);
    int64_t *queue = malloc((size_t)limit * sizeof *queue);
    bool good = seen && queue;
    size_t head = 0, tail = 0;
    if (good) queue[tail++] = src;
    while (good && head < tail) {
        int64_t x = queue[head++];
        for (size_t i = fx_first_edge_from(e, n, x); good && i < n && e[i].src == x; i++) {
            int64_t y = e[i].dst;
            if (y < 0 || y >= limit || seen[y]) continue;
            seen[y] = true;
            queue[tail++] = y;
            good = push_row(out, src, y);
        }
    }
    free(seen), free(queue);
    return good;
}

/* Loads the edges (and `hot` labels) and the rules into a new graph `perf`; the open
 * connection in *ws. */
static bool load(run_env *e, const gg_edge *edges, size_t n, size_t hot, const char *const *rules,
                 ws_client **ws) {
    char why[600];
    *ws = NULL;
    if (fx_create_graph(&e->t, "perf", ws, why, sizeof why) != FX_OK) {
        gr_fail(e->res, GR_FAILED, "creating graph perf: %s", why);
        return false;
    }
    fx_loader l = {.ws = *ws};
    int rc = gg_emit_edges("edge", edges, n, GG_CHUNK, fx_load_statement, &l);
    if (rc == 0 && hot)
        rc = gg_emit_hot_labels("label", "hot", hot, GG_CHUNK, fx_load_statement, &l);
    for (size_t i = 0; rc == 0 && rules && rules[i]; i++)
        rc = fx_load_statement(&l, rules[i], strlen(rules[i]));
    if (rc != 0) {
        gr_fail(e->res, l.status == FX_INVALID ? GR_INVALID : GR_FAILED, "loading: %s",
                rc < 0 ? "out of memory" : l.why);
        return false;
    }
    if (l.inserted != n + hot) {
        gr_fail(e->res, GR_INVALID, "loading: the server took %zu of %zu facts", l.inserted,
                n + hot);
        return false;
    }
    return true;
}

/* The proofs of a `.why` answer: the graph they must hold in, and the file every later
 * answer's proof_trees are compared with. */
typedef struct proof_check {
    const gg_edge *edges;
    size_t nedges;
    const char *file;
} proof_check;

/* Runs the program once, checks its rows against the expected ones (sorted, unique) in any
 * order, and writes them as the server orders them to rows_file: every later answer must
 * be exactly that. With proofs, the answer's proof trees too (gate_why.h), written to
 * proofs->file. */
static bool check_answer(run_env *e, ws_client *ws, const char *program, fx_row *expected, size_t n,
                         const char *rows_file, const proof_check *proofs) {
    char why[600];
    json_t *res = NULL;
    int rc = fx_execute(ws, "check", program, &res, why, sizeof why);
    n = fx_rows_sort_unique(expected, n);
    if (rc == FX_OK) rc = fx_check_rows(json_object_get(res, "rows"), expected, n, why, sizeof why);
    if (rc == FX_OK && proofs &&
        !gw_check_proofs(json_object_get(res, "proof_trees"), json_object_get(res, "rows"),
                         proofs->edges, proofs->nedges, why, sizeof why))
        rc = FX_INVALID;
    if (rc == FX_OK && proofs &&
        json_dump_file(json_object_get(res, "proof_trees"), proofs->file, JSON_COMPACT) != 0) {
        snprintf(why, sizeof why, "cannot write %s", proofs->file);
        rc = FX_FAILED;
    }
    if (rc != FX_OK) {
        gr_fail(e->res, rc == FX_INVALID ? GR_INVALID : GR_FAILED, "%s: %s", program, why);
        json_decref(res);
        return false;
    }
    bool written = json_dump_file(json_object_get(res, "rows"), rows_file, JSON_COMPACT) == 0;
    json_decref(res);
    if (!written) gr_fail(e->res, GR_FAILED, "cannot write %s", rows_file);
    return written;
}

/* ---- query fixtures: one program, serial then concurrent (inputlayer-load) ----------- */

typedef struct query_plan {
    const char *program;
    long warmup, serial, clients, per_client;
    const char *prefix; /* of the metrics' names ("reach_" ...), or NULL */
    bool proofs;        /* a `.why`: its proof trees checked against the loaded graph */
} query_plan;

/* One inputlayer-load run; its JSON object (borrowed from *lines) or NULL. */
static const json_t *load_run(run_env *e, const query_plan *q, const char *rows_file, long clients,
                              long warmup, long requests, json_t **lines) {
    char url[128], c[24], w[24], r[24];
    snprintf(url, sizeof url, "ws://127.0.0.1:%s/ws?kg=perf", e->sv.port);
    snprintf(c, sizeof c, "%ld", clients);
    snprintf(w, sizeof w, "%ld", warmup);
    snprintf(r, sizeof r, "%ld", requests);
    char proofs_file[700];
    const char *args[20] = {"server",   "--url",      url,        "--api-key",
                            GX_API_KEY, "--program",  q->program, "--expect-rows-file",
                            rows_file,  "--clients",  c,          "--warmup",
                            w,          "--requests", r,          NULL};
    if (q->proofs) {
        snprintf(proofs_file, sizeof proofs_file, "%s.proofs", rows_file);
        args[15] = "--expect-proofs-file";
        args[16] = proofs_file;
        args[17] = NULL;
    }
    *lines = run_client(e, "inputlayer-load", args);
    return *lines ? json_array_get(*lines, 0) : NULL;
}

/* The rows file of a run: each arm of a paired run has its own (its server's order). */
static void rows_file_of(const run_env *e, char *out, size_t cap) {
    snprintf(out, cap, "%s/expected-rows%s.json", e->dir, e->tag ? e->tag : "");
}

/* A fresh server with the data and rules loaded and the first answer checked (its rows
 * written to rows_file_of). */
static bool query_server(run_env *e, const gg_edge *edges, size_t n, size_t hot,
                         const char *const *rules, fx_row *expected, size_t nexpected,
                         const query_plan *q) {
    char rows_file[700];
    rows_file_of(e, rows_file, sizeof rows_file);
    char proofs_file[720];
    snprintf(proofs_file, sizeof proofs_file, "%s.proofs", rows_file);
    proof_check proofs = {edges, n, proofs_file};
    ws_client *ws = NULL;
    if (!server_up(e)) return false;
    if (load(e, edges, n, hot, rules, &ws))
        check_answer(e, ws, q->program, expected, nexpected, rows_file, q->proofs ? &proofs : NULL);
    wsc_close(ws);
    return ok(e);
}

/* A metric's name with the plan's prefix, in buf. */
static const char *named(const query_plan *q, const char *metric, char *buf, size_t cap) {
    snprintf(buf, cap, "%s%s", q->prefix ? q->prefix : "", metric);
    return buf;
}

static void query_serial(run_env *e, const query_plan *q) {
    char rows_file[700], name[120];
    rows_file_of(e, rows_file, sizeof rows_file);
    json_t *lines = NULL;
    int64_t cpu0 = fx_process_cpu_ns(e->sv.pid);
    const json_t *s = load_run(e, q, rows_file, 1, q->warmup, q->serial, &lines);
    int64_t cpu1 = fx_process_cpu_ns(e->sv.pid);
    if (s) {
        long k = count_of(s, "samples");
        take(e->res, s, "p50_us", named(q, "latency_us.p50", name, sizeof name), k, false);
        take(e->res, s, "p99_us", named(q, "latency_us.p99", name, sizeof name), k, false);
        take(e->res, s, "rate_per_sec", named(q, "serial_queries_per_sec", name, sizeof name), k,
             true);
        /* Warm-up included: the server cannot tell them apart. */
        if (cpu0 >= 0 && cpu1 >= cpu0)
            gr_add_metric(e->res, named(q, "server_cpu_us_per_query", name, sizeof name),
                          (double)(cpu1 - cpu0) / 1000.0 / (double)(q->warmup + q->serial), k,
                          false);
    }
    json_decref(lines);
}

static void query_concurrent(run_env *e, const query_plan *q) {
    char rows_file[700], name[120];
    rows_file_of(e, rows_file, sizeof rows_file);
    json_t *lines = NULL;
    if (!ok(e) || q->clients <= 0) return;
    const json_t *c =
        load_run(e, q, rows_file, q->clients, q->warmup > 5 ? 5 : q->warmup, q->per_client, &lines);
    if (c) {
        long k = count_of(c, "samples");
        take(e->res, c, "p50_us", named(q, "concurrent_latency_us.p50", name, sizeof name), k,
             false);
        take(e->res, c, "p99_us", named(q, "concurrent_latency_us.p99", name, sizeof name), k,
             false);
        take(e->res, c, "rate_per_sec", named(q, "queries_per_sec", name, sizeof name), k, true);
    }
    json_decref(lines);
}

static void query_fixture(run_env *e, const gg_edge *edges, size_t n, size_t hot,
                          const char *const *rules, fx_row *expected, size_t nexpected,
                          const query_plan *q) {
    if (query_server(e, edges, n, hot, rules, expected, nexpected, q)) {
        query_serial(e, q);
        query_concurrent(e, q);
    }
    /* A fixture of several queries (prefixed) runs several servers: no single RSS. */
    server_down(e, q->prefix == NULL);
}

/* The echo server beside cheap_query (`run --peers`): the transport's floor. */
static void echo_peer(run_env *e, const query_plan *q) {
    char dir[700], path[700], why[600], url[128], w[24], r[24];
    snprintf(dir, sizeof dir, "%s/echo", e->dir);
    snprintf(path, sizeof path, "%s/ws_echo_server", e->ctx->tools);
    char *argv[] = {path, "--port", "0", NULL};
    gx_server echo = {0};
    if (!gx_start_listening(&echo, argv, dir, NULL, 0, e->ctx->server_cpus, why, sizeof why)) {
        gr_fail(e->res, GR_FAILED, "the echo server: %s", why);
        return;
    }
    snprintf(url, sizeof url, "ws://127.0.0.1:%s/", echo.port);
    snprintf(w, sizeof w, "%ld", q->warmup);
    snprintf(r, sizeof r, "%ld", q->serial);
    const char *args[] = {"echo",     "--url", url,          "--program", q->program,
                          "--warmup", w,       "--requests", r,           NULL};
    json_t *lines = run_client(e, "inputlayer-load", args);
    if (lines) {
        const json_t *o = json_array_get(lines, 0);
        long k = count_of(o, "samples");
        take(e->res, o, "p50_us", "peer_echo_latency_us.p50", k, false);
        take(e->res, o, "p99_us", "peer_echo_latency_us.p99", k, false);
    }
    json_decref(lines);
    gx_server_stop(&echo);
}

/* A query fixture's data, answer and plan. */
typedef struct query_case {
    gg_edge *edges;
    size_t nedges, hot; /* hot: the hot chains' heads, for hot_head (0: none) */
    const char *const *rules;
    rows expected;
    query_plan q;
} query_case;

static void query_case_free(query_case *c) {
    free(c->edges), free(c->expected.r);
}

/* `?edge(1, Y)` on the random 2,000 / 4,000; false (the result failed) on OOM. */
static bool cheap_query_case(run_env *e, query_case *c) {
    *c = (query_case){
        .edges = gg_random_graph(2000, 4000, SEED), .nedges = 4000, .rules = REACH_RULES};
    for (size_t i = fx_first_edge_from(c->edges, c->edges ? 4000 : 0, 1);
         c->edges && i < 4000 && c->edges[i].src == 1; i++)
        push_row(&c->expected, 1, c->edges[i].dst);
    c->q = (query_plan){"?edge(1, Y)",
                        by_profile(e, 5, 50, 50),
                        by_profile(e, 30, 400, 400),
                        by_profile(e, 2, 8, 8),
                        by_profile(e, 10, 150, 150),
                        NULL,
                        false};
    if (c->edges && c->expected.r) return true;
    gr_fail(e->res, GR_FAILED, "out of memory");
    return false;
}

/* `?reach(1, Y)` on the same graph. */
static bool bound_query_case(run_env *e, query_case *c) {
    *c = (query_case){
        .edges = gg_random_graph(2000, 4000, SEED), .nedges = 4000, .rules = REACH_RULES};
    c->q = (query_plan){"?reach(1, Y)",
                        by_profile(e, 2, 10, 10),
                        by_profile(e, 25, 150, 150),
                        by_profile(e, 2, 8, 8),
                        by_profile(e, 5, 25, 25),
                        NULL,
                        false};
    if (c->edges && reach_from(c->edges, 4000, 1, 2001, &c->expected)) return true;
    gr_fail(e->res, GR_FAILED, "out of memory");
    return false;
}

/* `?hot_reach(X, Y)` on the hot chains (the 3 rows of each hot head). */
static bool recursive_query_case(run_env *e, query_case *c) {
    size_t want = (size_t)by_profile(e, 10000, 100000, 100000), n = 0;
    gg_edge *edges = gg_chains(want, &n);
    *c = (query_case){.edges = edges, .nedges = n, .rules = HOT_REACH_RULES};
    c->hot = gg_hot_count(gg_chain_count(want));
    bool good = c->edges != NULL;
    for (size_t i = 0; good && i < c->hot; i++)
        for (int64_t k = 1; good && k <= 3; k++)
            good = push_row(&c->expected, 400 * (int64_t)i, 400 * (int64_t)i + k);
    c->q = (query_plan){"?hot_reach(X, Y)", 3, by_profile(e, 20, 50, 50), 0, 0, NULL, false};
    if (good) return true;
    gr_fail(e->res, GR_FAILED, "out of memory");
    return false;
}

static void case_fixture(run_env *e, const query_case *c) {
    query_fixture(e, c->edges, c->nedges, c->hot, c->rules, c->expected.r, c->expected.n, &c->q);
}

static void run_cheap_query(run_env *e) {
    query_case c;
    if (cheap_query_case(e, &c)) case_fixture(e, &c);
    if (ok(e) && e->ctx->peers) echo_peer(e, &c.q);
    query_case_free(&c);
}

/* Builds a query fixture's case (cheap_query_case, ...); false when it failed the result. */
typedef bool (*case_builder)(run_env *e, query_case *c);

static void run_case(run_env *e, case_builder build) {
    query_case c;
    if (build(e, &c)) case_fixture(e, &c);
    query_case_free(&c);
}

static void run_bound_query(run_env *e) {
    run_case(e, bound_query_case);
}

static void run_recursive_query(run_env *e) {
    run_case(e, recursive_query_case);
}

static void run_rule_query(run_env *e) {
    gg_edge *edges = gg_random_graph(2500, 10000, SEED);
    size_t nex = 0;
    fx_row *ex = edges ? fx_two_hop_rows(edges, 10000, &nex) : NULL;
    query_plan q = {"?two_hop(1, Z)",
                    by_profile(e, 5, 30, 30),
                    by_profile(e, 30, 300, 300),
                    by_profile(e, 2, 8, 8),
                    by_profile(e, 10, 100, 100),
                    NULL,
                    false};
    if (!ex)
        gr_fail(e->res, GR_FAILED, "out of memory");
    else
        query_fixture(e, edges, 10000, 0, TWO_HOP_RULES, ex, nex, &q);
    free(edges), free(ex);
}

/* sqlite3's recursive CTE over the same edges (`run --peers`), the closure's peer: the
 * whole process, from the CSV import to the count, the median of 5 runs; the count must
 * be the closure's. Skipped when sqlite3 is not installed. */
static void sqlite_peer(run_env *e, const gg_edge *edges, size_t n, size_t closure) {
    char dir[700], csv[720], sql[720], out[720], err[720], why[600];
    snprintf(dir, sizeof dir, "%s/sqlite", e->dir);
    snprintf(csv, sizeof csv, "%s/edges.csv", dir);
    snprintf(sql, sizeof sql, "%s/tc.sql", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    if (access("/usr/bin/sqlite3", X_OK) != 0 || !gx_mkdirs(dir)) return;
    FILE *f = fopen(csv, "w");
    for (size_t i = 0; f && i < n; i++)
        fprintf(f, "%" PRId64 ",%" PRId64 "\n", edges[i].src, edges[i].dst);
    if (f) fclose(f);
    f = fopen(sql, "w");
    if (f) {
        fprintf(f,
                ".mode csv\ncreate table edge(a int, b int);\n.import %s edge\n"
                "create index e1 on edge(a);\n"
                "select count(*) from (with recursive reach(x, y) as (select a, b from edge "
                "union select r.x, e.b from reach r join edge e on e.a = r.y) "
                "select * from reach);\n",
                csv);
        fclose(f);
    }
    uint64_t took[5];
    for (int i = 0; i < 5; i++) {
        char *argv[] = {"sqlite3", "-init", sql, ":memory:", ".quit", NULL};
        uint64_t t0 = fx_now_ns();
        int rc = gx_run(argv, e->ctx->client_cpus, out, err, e->ctx->timeout_s, why, sizeof why);
        took[i] = fx_now_ns() - t0;
        FILE *o = fopen(out, "r");
        long count = -1;
        if (o && fscanf(o, "%ld", &count) != 1) count = -1;
        if (o) fclose(o);
        if (rc != 0 || count != (long)closure) {
            gr_fail(e->res, GR_INVALID, "sqlite3 peer: status %d, count %ld, expected %zu", rc,
                    count, closure);
            return;
        }
    }
    gr_add_metric(e->res, "peer_sqlite3_closure_us.p50", fx_percentile_us(took, 5, 0.5), 5, false);
}

static void run_unbound_query(run_env *e) {
    gg_edge *edges = gg_random_graph(200, 300, SEED);
    rows ex = {0};
    bool good = edges != NULL;
    for (int64_t x = 1; good && x <= 200; x++) good = reach_from(edges, 300, x, 201, &ex);
    query_plan q = {"?reach(X, Y)",
                    by_profile(e, 1, 4, 4),
                    by_profile(e, 3, 40, 40),
                    by_profile(e, 2, 4, 4),
                    by_profile(e, 2, 10, 10),
                    NULL,
                    false};
    if (!good)
        gr_fail(e->res, GR_FAILED, "out of memory");
    else
        query_fixture(e, edges, 300, 0, REACH_RULES, ex.r, ex.n, &q);
    if (ok(e) && e->ctx->peers) sqlite_peer(e, edges, 300, ex.n);
    free(edges), free(ex.r);
}

/* `.why ?two_hop(1, Z)` on the random 2,500 / 10,000 (35 rows) and `.why ?reach(1, Y)` on
 * the random 200 / 300 (4 rows), each on a fresh server, serial: every answer's rows and
 * proof trees are those of the first, whose proofs were checked against the graph. */
static void run_why(run_env *e) {
    long warmup = by_profile(e, 1, 5, 5), serial = by_profile(e, 20, 20, 20);
    gg_edge *dense = gg_random_graph(2500, 10000, SEED), *sparse = gg_random_graph(200, 300, SEED);
    size_t ntwo = 0;
    fx_row *two = dense ? fx_two_hop_rows(dense, 10000, &ntwo) : NULL;
    rows reach = {0};
    if (!two || !sparse || !reach_from(sparse, 300, 1, 201, &reach)) {
        gr_fail(e->res, GR_FAILED, "out of memory");
    } else {
        query_plan q = {".why ?two_hop(1, Z)", warmup, serial, 0, 0, "two_hop_", true};
        query_fixture(e, dense, 10000, 0, TWO_HOP_RULES, two, ntwo, &q);
        query_plan r = {".why ?reach(1, Y)", warmup, serial, 0, 0, "reach_", true};
        if (ok(e)) query_fixture(e, sparse, 300, 0, REACH_RULES, reach.r, reach.n, &r);
    }
    free(dense), free(sparse), free(two), free(reach.r);
}

/* ---- fixtures of inputlayer-fixture ---------------------------------------------------- */

/* Runs `inputlayer-fixture NAME --port .. --api-key .. --server-pid .. extra...` on a fresh
 * server; its JSON object (free with json_decref of *lines) or NULL. */
static const json_t *fixture_run(run_env *e, const char *name, const char *const *extra,
                                 json_t **lines) {
    *lines = NULL;
    if (!server_up(e)) return NULL;
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)e->sv.pid);
    const char *args[48] = {name,       "--port",       e->sv.port, "--api-key",
                            GX_API_KEY, "--server-pid", pid};
    size_t k = 7;
    for (size_t i = 0; extra[i] && k < 47; i++) args[k++] = extra[i];
    args[k] = NULL;
    *lines = run_client(e, "inputlayer-fixture", args);
    return *lines ? json_array_get(*lines, 0) : NULL;
}

/* The serial figures of an insert_single, insert_batch or paired_writes line. */
static void take_insert(gr_result *res, const json_t *o) {
    long k = count_of(o, "writes");
    take(res, o, "ack_us_p50", "ack_us.p50", k, false);
    take(res, o, "ack_us_p99", "ack_us.p99", k, false);
    take(res, o, "facts_per_sec", "facts_per_sec", k, true);
    take(res, o, "server_cpu_per_write_ms", "server_cpu_per_write_ms", k, false);
}

/* fsync_probe in a fresh directory beside the fixture's (`run --peers`): the disk's floor. */
static void fsync_peer(run_env *e) {
    char dir[700], path[700], out[720], err[720], why[600];
    snprintf(dir, sizeof dir, "%s/probe", e->dir);
    snprintf(path, sizeof path, "%s/fsync_probe", e->ctx->tools);
    snprintf(out, sizeof out, "%s.out", dir);
    snprintf(err, sizeof err, "%s.err", dir);
    if (!gx_mkdirs(dir)) return;
    char *argv[] = {path,      "--dir", dir,          "--count",   "2000",
                    "--bytes", "128",   "--prealloc", "fallocate", NULL};
    if (gx_run(argv, e->ctx->server_cpus, out, err, e->ctx->timeout_s, why, sizeof why) != 0) {
        gr_fail(e->res, GR_FAILED, "fsync_probe: %s", why);
        return;
    }
    json_t *o = json_load_file(out, JSON_DISABLE_EOF_CHECK, NULL);
    take(e->res, o, "p50_us", "peer_fsync_us.p50", 2000, false);
    take(e->res, o, "p99_us", "peer_fsync_us.p99", 2000, false);
    json_decref(o);
}

static void run_insert_single(run_env *e) {
    char w[24], n[24], cw[24];
    snprintf(w, sizeof w, "%ld", by_profile(e, 2, 20, 20));
    snprintf(n, sizeof n, "%ld", by_profile(e, 20, 200, 200));
    snprintf(cw, sizeof cw, "%ld", by_profile(e, 5, 50, 50));
    json_t *lines;
    const char *single[] = {"--warmup", w, "--writes", n, NULL};
    const json_t *o = fixture_run(e, "insert_single", single, &lines);
    if (o) take_insert(e->res, o);
    json_decref(lines);
    server_down(e, true);
    if (!ok(e)) return;
    const char *writers[] = {"--writers", "4",        "--warmup", "5", "--writes",
                             cw,          "--rounds", "1",        NULL};
    o = fixture_run(e, "writers", writers, &lines);
    if (o) {
        long k = 4 * count_of(o, "writes_per_writer");
        take(e->res, o, "concurrent_ack_us_p50", "concurrent_ack_us.p50", k, false);
        take(e->res, o, "concurrent_ack_us_p99", "concurrent_ack_us.p99", k, false);
        take(e->res, o, "concurrent_facts_per_sec", "concurrent_facts_per_sec", k, true);
    }
    json_decref(lines);
    server_down(e, false);
    if (ok(e) && e->ctx->peers) fsync_peer(e);
}

static void run_insert_batch(run_env *e) {
    char n[24];
    snprintf(n, sizeof n, "%ld", by_profile(e, 3, 20, 20));
    const char *args[] = {"--warmup", "2", "--writes", n, "--batch", "1000", NULL};
    json_t *lines;
    const json_t *o = fixture_run(e, "insert_batch", args, &lines);
    if (o) take_insert(e->res, o);
    json_decref(lines);
    server_down(e, true);
    if (ok(e) && e->ctx->peers) fsync_peer(e);
}

/* Deletes, conditional deletes and updates, 150 each on 2,000 facts
 * (bench/fixture_writes.c). */
static void run_writes(run_env *e) {
    char f[24], n[24];
    snprintf(f, sizeof f, "%ld", by_profile(e, 100, 2000, 2000));
    snprintf(n, sizeof n, "%ld", by_profile(e, 20, 150, 150));
    const char *args[] = {"--facts", f, "--writes", n, NULL};
    json_t *lines;
    const json_t *o = fixture_run(e, "writes", args, &lines);
    static const char *const PHASES[] = {"delete", "conditional_delete", "update"};
    for (size_t p = 0; o && p < 3; p++) {
        char field[80], metric[80];
        long k = count_of(o, "writes");
        snprintf(field, sizeof field, "%s_ack_us_p50", PHASES[p]);
        snprintf(metric, sizeof metric, "%s_ack_us.p50", PHASES[p]);
        take(e->res, o, field, metric, k, false);
        snprintf(field, sizeof field, "%s_ack_us_p99", PHASES[p]);
        snprintf(metric, sizeof metric, "%s_ack_us.p99", PHASES[p]);
        take(e->res, o, field, metric, k, false);
        snprintf(field, sizeof field, "%s_server_cpu_per_write_ms", PHASES[p]);
        take(e->res, o, field, field, k, false);
    }
    json_decref(lines);
    server_down(e, true);
}

/* ---- durable writes, both arms interleaved (compare) ---------------------------------- */

/* A paired run is one run: a failure of either arm fails both. */
static bool pair_ok(run_env *const e[2]) {
    for (int k = 0; k < 2; k++)
        if (!ok(e[k]) && ok(e[1 - k]))
            gr_fail(e[1 - k]->res, e[k]->res->status, "the paired run failed: %s",
                    e[k]->res->message ? e[k]->res->message : "");
    return ok(e[0]) && ok(e[1]);
}

/* Runs `inputlayer-fixture MODE` (paired_writes, paired_reads) on the arms' servers (the
 * arms in the round's order); the JSON object of each arm in o[] (free *lines), or false. */
static bool paired_client(run_env *const e[2], const char *mode, const char *const *extra,
                          json_t **lines, const json_t *o[2]) {
    *lines = NULL;
    o[0] = o[1] = NULL;
    if (!pair_ok(e)) return false;
    char pid[2][24];
    for (int k = 0; k < 2; k++) snprintf(pid[k], sizeof pid[k], "%d", (int)e[k]->sv.pid);
    const char *args[48] = {mode,   "--port",      e[0]->sv.port, "--server-pid",
                            pid[0], "--pair-port", e[1]->sv.port, "--pair-server-pid",
                            pid[1], "--api-key",   GX_API_KEY};
    size_t k = 11;
    for (size_t i = 0; extra[i] && k < 47; i++) args[k++] = extra[i];
    args[k] = NULL;
    *lines = run_client(e[0], "inputlayer-fixture", args);
    for (size_t i = 0; *lines && i < json_array_size(*lines); i++) {
        const json_t *line = json_array_get(*lines, i);
        const json_t *arm = json_object_get(line, "arm");
        if (json_is_integer(arm) && json_integer_value(arm) >= 0 && json_integer_value(arm) < 2)
            o[json_integer_value(arm)] = line;
    }
    if (*lines && (!o[0] || !o[1]))
        gr_fail(e[0]->res, GR_FAILED, "%s printed no line for an arm", mode);
    return pair_ok(e);
}

/* A fresh server for each arm, then paired_writes on them, the probe file in the first's
 * directory. */
static bool paired_writes(run_env *const e[2], const char *const *extra, json_t **lines,
                          const json_t *o[2]) {
    for (int k = 0; k < 2; k++)
        if (ok(e[k])) server_up(e[k]);
    const char *args[24] = {"--probe-dir", e[0]->dir};
    size_t k = 2;
    for (size_t i = 0; extra[i] && k < 23; i++) args[k++] = extra[i];
    args[k] = NULL;
    return paired_client(e, "paired_writes", args, lines, o);
}

static void pair_down(run_env *const e[2], bool record) {
    for (int k = 0; k < 2; k++) server_down(e[k], record);
    pair_ok(e);
}

/* Sets metric `name`'s ratio to the other arm, measured pair by pair, from `field`. */
static void set_paired_ratio(gr_result *res, const json_t *o, const char *field, const char *name) {
    const json_t *ratio = json_object_get(o, field);
    if (json_is_number(ratio)) gr_set_paired_ratio(res, name, json_number_value(ratio));
}

/* The serial figures of one arm's paired_writes line. */
static void take_serial(gr_result *res, const json_t *o) {
    long k = count_of(o, "writes");
    take_insert(res, o);
    set_paired_ratio(res, o, "paired_ack_ratio_p50", "ack_us.p50");
    take(res, o, "disk_fsync_us_p50", "disk_fsync_us.p50", k, false);
    take(res, o, "disk_fsync_us_p99", "disk_fsync_us.p99", k, false);
}

static void pair_insert_single(run_env *const e[2]) {
    char w[24], n[24], cw[24];
    snprintf(w, sizeof w, "%ld", by_profile(e[0], 2, 20, 20));
    snprintf(n, sizeof n, "%ld", by_profile(e[0], 20, 400, 400));
    snprintf(cw, sizeof cw, "%ld", by_profile(e[0], 5, 50, 50));
    json_t *lines;
    const json_t *o[2];
    const char *single[] = {"--warmup", w, "--writes", n, NULL};
    if (paired_writes(e, single, &lines, o))
        for (int k = 0; k < 2; k++) take_serial(e[k]->res, o[k]);
    json_decref(lines);
    pair_down(e, true);
    if (!pair_ok(e)) return;
    /* The writers in blocks of 5 writes each, together: 4 x 5 per arm, alternating. */
    const char *writers[] = {"--writers", "4",       "--warmup", "5", "--writes",
                             cw,          "--block", "5",        NULL};
    if (paired_writes(e, writers, &lines, o))
        for (int k = 0; k < 2; k++) {
            long c = count_of(o[k], "writes");
            take(e[k]->res, o[k], "ack_us_p50", "concurrent_ack_us.p50", c, false);
            set_paired_ratio(e[k]->res, o[k], "paired_ack_ratio_p50", "concurrent_ack_us.p50");
            take(e[k]->res, o[k], "ack_us_p99", "concurrent_ack_us.p99", c, false);
            take(e[k]->res, o[k], "facts_per_sec", "concurrent_facts_per_sec", c, true);
        }
    json_decref(lines);
    pair_down(e, false);
}

static void pair_insert_batch(run_env *const e[2]) {
    char n[24];
    snprintf(n, sizeof n, "%ld", by_profile(e[0], 3, 60, 60));
    const char *args[] = {"--warmup", "2", "--writes", n, "--batch", "1000", NULL};
    json_t *lines;
    const json_t *o[2];
    if (paired_writes(e, args, &lines, o))
        for (int k = 0; k < 2; k++) take_serial(e[k]->res, o[k]);
    json_decref(lines);
    pair_down(e, true);
}

/* ---- serial queries, both arms interleaved (compare) ------------------------------------ */

/* Both arms' servers loaded at once; the serial queries by paired_reads, alternating
 * query by query; then each arm's concurrent run (inputlayer-load), one after the other. */
static void pair_query_fixture(run_env *const e[2], const query_case *c) {
    for (int k = 0; k < 2; k++)
        if (ok(e[k]))
            query_server(e[k], c->edges, c->nedges, c->hot, c->rules, c->expected.r, c->expected.n,
                         &c->q);
    char rows_file[2][700], warmup[24], queries[24];
    for (int k = 0; k < 2; k++) rows_file_of(e[k], rows_file[k], sizeof rows_file[k]);
    snprintf(warmup, sizeof warmup, "%ld", c->q.warmup);
    snprintf(queries, sizeof queries, "%ld", c->q.serial);
    const char *args[] = {"--program",
                          c->q.program,
                          "--expect-rows-file",
                          rows_file[0],
                          "--pair-expect-rows-file",
                          rows_file[1],
                          "--warmup",
                          warmup,
                          "--queries",
                          queries,
                          NULL};
    json_t *lines;
    const json_t *o[2];
    if (paired_client(e, "paired_reads", args, &lines, o))
        for (int k = 0; k < 2; k++) {
            gr_result *res = e[k]->res;
            long n = count_of(o[k], "queries");
            take(res, o[k], "latency_us_p50", "latency_us.p50", n, false);
            set_paired_ratio(res, o[k], "paired_latency_ratio_p50", "latency_us.p50");
            take(res, o[k], "latency_us_p99", "latency_us.p99", n, false);
            take(res, o[k], "queries_per_sec", "serial_queries_per_sec", n, true);
            take(res, o[k], "server_cpu_us_per_query", "server_cpu_us_per_query", n, false);
        }
    json_decref(lines);
    for (int k = 0; k < 2 && pair_ok(e); k++) query_concurrent(e[k], &c->q);
    pair_down(e, true);
}

static void pair_case(run_env *const e[2], case_builder build) {
    query_case c;
    if (build(e[0], &c)) pair_query_fixture(e, &c);
    pair_ok(e);
    query_case_free(&c);
}

static void pair_cheap_query(run_env *const e[2]) {
    pair_case(e, cheap_query_case);
}

static void pair_bound_query(run_env *const e[2]) {
    pair_case(e, bound_query_case);
}

static void pair_recursive_query(run_env *const e[2]) {
    pair_case(e, recursive_query_case);
}

/* delta_single, delta_fanout, delta_keyed and interference: agents, writes, interval. */
static void stream_fixture(run_env *e, const char *name, long agents, long writes, long interval) {
    char a[24], w[24], i[24];
    snprintf(a, sizeof a, "%ld", agents);
    snprintf(w, sizeof w, "%ld", writes);
    snprintf(i, sizeof i, "%ld", interval);
    const char *args[] = {"--agents",   a,     "--writes", w, "--interval-ms", i,
                          "--grace-ms", "200", NULL};
    json_t *lines;
    const json_t *o = fixture_run(e, name, args, &lines);
    if (o) {
        long events = count_of(o, "events"), nw = count_of(o, "writes");
        take(e->res, o, "delta_us_p50", "delta_us.p50", events, false);
        take(e->res, o, "delta_us_p99", "delta_us.p99", events, false);
        /* One per write that reached some agent: each does in these fixtures. */
        take(e->res, o, "last_agent_us_p50", "last_agent_us.p50", nw, false);
        take(e->res, o, "last_agent_us_p99", "last_agent_us.p99", nw, false);
        take(e->res, o, "ack_us_p50", "ack_us.p50", nw, false);
        take(e->res, o, "ack_us_p99", "ack_us.p99", nw, false);
        take(e->res, o, "subscribe_us_p50", "subscribe_us.p50", count_of(o, "agents"), false);
        take(e->res, o, "server_cpu_per_write_ms", "server_cpu_per_write_ms", nw, false);
        take(e->res, o, "writes_per_server_cpu_sec", "writes_per_server_cpu_sec", nw, true);
        long nl = count_of(o, "long_requests");
        take(e->res, o, "long_request_us_p50", "long_request_us.p50", nl, false);
        take(e->res, o, "long_request_us_p99", "long_request_us.p99", nl, false);
    }
    json_decref(lines);
    server_down(e, true);
}

static void run_delta_single(run_env *e) {
    stream_fixture(e, "delta_single", 1, by_profile(e, 5, 120, 150), by_profile(e, 20, 10, 20));
}

static void run_delta_fanout(run_env *e) {
    stream_fixture(e, "delta_fanout", by_profile(e, 4, 64, 64), by_profile(e, 5, 100, 100),
                   by_profile(e, 20, 20, 80));
}

static void run_interference(run_env *e) {
    stream_fixture(e, "interference", 1, by_profile(e, 5, 110, 120), by_profile(e, 30, 15, 30));
}

static void run_delta_keyed(run_env *e) {
    stream_fixture(e, "delta_keyed", by_profile(e, 10, 300, 300), by_profile(e, 5, 120, 120),
                   by_profile(e, 20, 10, 20));
}

static void run_delta_first(run_env *e) {
    char n[24], q[24];
    snprintf(n, sizeof n, "%ld", by_profile(e, 3, 20, 40));
    snprintf(q, sizeof q, "%ld", by_profile(e, 20, 50, 100));
    const char *args[] = {"--cycles", n, "--quiet-ms", q, NULL};
    json_t *lines;
    const json_t *o = fixture_run(e, "delta_first", args, &lines);
    if (o) {
        long k = count_of(o, "cycles");
        take(e->res, o, "first_delta_us_p50", "first_delta_us.p50", k, false);
        take(e->res, o, "warm_delta_us_p50", "warm_delta_us.p50", k, false);
        take(e->res, o, "subscribe_us_p50", "subscribe_us.p50", k, false);
    }
    json_decref(lines);
    server_down(e, true);
}

/* 100 sessions, each subscribed to its own `?two_hop(k, Z)`, a write every 200 ms
 * (inputlayer-fixture sessions). */
static void run_sessions(run_env *e) {
    char a[24], w[24], i[24];
    snprintf(a, sizeof a, "%ld", by_profile(e, 5, 100, 100));
    snprintf(w, sizeof w, "%ld", by_profile(e, 10, 100, 100));
    snprintf(i, sizeof i, "%ld", by_profile(e, 20, 50, 200));
    const char *args[] = {"--agents",   a,     "--writes", w, "--interval-ms", i,
                          "--grace-ms", "200", NULL};
    json_t *lines;
    const json_t *o = fixture_run(e, "sessions", args, &lines);
    if (o) {
        long events = count_of(o, "events"), nw = count_of(o, "writes");
        long agents = count_of(o, "agents");
        take(e->res, o, "delta_us_p50", "delta_us.p50", events, false);
        take(e->res, o, "delta_us_p99", "delta_us.p99", events, false);
        take(e->res, o, "ack_us_p50", "ack_us.p50", nw, false);
        take(e->res, o, "subscribe_us_p50", "subscribe_us.p50", agents, false);
        take(e->res, o, "subscriptions_per_sec", "subscriptions_per_sec", agents, true);
        take(e->res, o, "rss_kb_per_session", "rss_kb_per_session", agents, false);
        take(e->res, o, "server_cpu_per_write_ms", "server_cpu_per_write_ms", nw, false);
    }
    json_decref(lines);
    server_down(e, true);
}

/* ---- rule_lookup_ws: a persistent rule's lookup beside a stored one, over /ws ----------- */

static void run_rule_lookup_ws(run_env *e) {
    size_t want = (size_t)by_profile(e, 10000, 100000, 100000), n = 0;
    gg_edge *edges = gg_chains(want, &n);
    size_t hot = gg_hot_count(gg_chain_count(want));
    static const char *const RULES[] = {"+r1(X, Y) <- edge(X, Y), label(X, \"hot\")", NULL};
    rows ex = {0};
    /* 400 is a hot head: the rule's one row is the stored edge's. */
    for (size_t i = fx_first_edge_from(edges, edges ? n : 0, 400);
         edges && i < n && edges[i].src == 400; i++)
        push_row(&ex, 400, edges[i].dst);
    if (!edges || !ex.r) {
        gr_fail(e->res, GR_FAILED, "out of memory");
        free(edges), free(ex.r);
        return;
    }
    long warmup = by_profile(e, 5, 50, 50), serial = by_profile(e, 30, 400, 400);
    query_plan rule = {"?r1(400, Y)", warmup, serial, 0, 0, "rule_", false};
    query_plan stored = {"?edge(400, Y)", warmup, serial, 0, 0, "stored_", false};
    ws_client *ws = NULL;
    char rows_file[700];
    rows_file_of(e, rows_file, sizeof rows_file);
    if (server_up(e) && load(e, edges, n, hot, RULES, &ws) &&
        check_answer(e, ws, stored.program, ex.r, ex.n, rows_file, NULL) &&
        check_answer(e, ws, rule.program, ex.r, ex.n, rows_file, NULL)) {
        /* Both return the same row: one rows file serves both. Stored first, then the
         * rule, in one server run, one after the other. */
        query_serial(e, &stored);
        if (ok(e)) query_serial(e, &rule);
    }
    wsc_close(ws);
    const gr_metric *a = gr_find_metric(e->res, "rule_latency_us.p50");
    const gr_metric *b = gr_find_metric(e->res, "stored_latency_us.p50");
    if (ok(e) && a && b)
        gr_add_metric(e->res, "rule_over_stored", a->value / b->value, a->samples, false);
    server_down(e, true);
    free(edges), free(ex.r);
}

/* ---- the headline fixtures of an arm's client and in-process benchmark ---------------- */

static void headline(run_env *e, void (*fn)(const gh_run *)) {
    gh_run r = {e->ctx, e->arm, e->dir, e->res};
    fn(&r);
}

static void run_closure(run_env *e) {
    headline(e, gh_closure);
}

static void run_first_read(run_env *e) {
    headline(e, gh_first_read);
}

static void run_maintained_write(run_env *e) {
    headline(e, gh_maintained_write);
}

static void run_reach_bound_inproc(run_env *e) {
    headline(e, gh_reach_bound_inproc);
}

static void run_hot_reach_inproc(run_env *e) {
    headline(e, gh_hot_reach_inproc);
}

/* ---- engine suite: memory and recovery ------------------------------------------------ */

static void run_memory_facts(run_env *e) {
    size_t n = (size_t)by_profile(e, 1000, 90000, 90000);
    gg_edge *facts = malloc(n * sizeof *facts);
    if (!facts) {
        gr_fail(e->res, GR_FAILED, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) facts[i] = (gg_edge){(int64_t)i, (int64_t)i};
    ws_client *ws = NULL;
    long rss0 = 0, rss1 = 0, hwm = 0;
    if (server_up(e)) {
        fx_cpu_settle(e->sv.pid, 5000000000ull);
        if (!fx_process_memory_kb(e->sv.pid, &rss0, &hwm))
            gr_fail(e->res, GR_FAILED, "cannot read the server's memory");
        if (ok(e) && load(e, facts, n, 0, NULL, &ws)) {
            fx_cpu_settle(e->sv.pid, 5000000000ull);
            fx_process_memory_kb(e->sv.pid, &rss1, &hwm);
            gr_add_metric(e->res, "idle_rss_kb", (double)rss0, 1, false);
            gr_add_metric(e->res, "rss_bytes_per_fact", (double)(rss1 - rss0) * 1024.0 / (double)n,
                          1, false);
            gr_add_metric(e->res, "peak_rss_bytes_per_fact",
                          (double)(hwm - rss0) * 1024.0 / (double)n, 1, false);
        }
        wsc_close(ws);
        server_down(e, false);
    }
    free(facts);
}

/* SIGKILL, then a restart on the same data directory: the time to the first login and to
 * the first (checked) answer. */
static void run_recovery(run_env *e) {
    long kills = by_profile(e, 1, 3, 3);
    size_t nfacts = (size_t)by_profile(e, 1000, 50000, 50000);
    gg_edge *edges = gg_random_graph(2500, 10000, SEED);
    gg_edge *facts = malloc(nfacts * sizeof *facts);
    rows ex = {0};
    for (size_t i = 0; facts && i < nfacts; i++) facts[i] = (gg_edge){(int64_t)i, (int64_t)i};
    for (size_t i = fx_first_edge_from(edges, edges ? 10000 : 0, 1);
         edges && i < 10000 && edges[i].src == 1; i++)
        push_row(&ex, 1, edges[i].dst);
    ws_client *ws = NULL;
    uint64_t *login = calloc((size_t)kills, sizeof *login),
             *first = calloc((size_t)kills, sizeof *first);
    if (!edges || !facts || !ex.r || !login || !first) {
        gr_fail(e->res, GR_FAILED, "out of memory");
    } else if (server_up(e) && load(e, edges, 10000, 0, NULL, &ws)) {
        fx_loader l = {.ws = ws};
        if (gg_emit_edges("fact", facts, nfacts, FACT_CHUNK, fx_load_statement, &l) != 0 ||
            l.inserted != nfacts)
            gr_fail(e->res, GR_FAILED, "loading the facts: %s", l.why);
    }
    wsc_close(ws);
    ws = NULL;
    char why[600], rows_file[700];
    snprintf(rows_file, sizeof rows_file, "%s/expected-rows.json", e->dir);
    for (long k = 0; ok(e) && k < kills; k++) {
        gx_server_kill(&e->sv);
        char dir[700], data[720];
        snprintf(dir, sizeof dir, "%s/server%d", e->dir, ++e->servers);
        snprintf(data, sizeof data, "%s/server1/data", e->dir);
        uint64_t t0 = fx_now_ns();
        if (!gx_server_start(&e->sv, e->arm->server, dir, data, e->arm->env, e->arm->nenv,
                             e->ctx->server_cpus, why, sizeof why)) {
            gr_fail(e->res, GR_FAILED, "restart %ld: %s", k + 1, why);
            break;
        }
        e->t.port = e->sv.port;
        ws = fx_open(&e->t, "perf", why, sizeof why);
        login[k] = fx_now_ns() - t0;
        if (!ws) {
            gr_fail(e->res, GR_FAILED, "restart %ld: login: %s", k + 1, why);
            break;
        }
        if (check_answer(e, ws, "?edge(1, Y)", ex.r, ex.n, rows_file, NULL))
            first[k] = fx_now_ns() - t0;
        wsc_close(ws);
    }
    if (ok(e)) {
        gr_add_metric(e->res, "restart_to_login_us.p50",
                      fx_percentile_us(login, (size_t)kills, 0.5), kills, false);
        gr_add_metric(e->res, "restart_to_first_answer_us.p50",
                      fx_percentile_us(first, (size_t)kills, 0.5), kills, false);
    }
    server_down(e, true);
    free(edges), free(facts), free(ex.r), free(login), free(first);
}

/* ---- views ----------------------------------------------------------------------------- */

/* A metric name part from free text: letters, digits and '_'. */
static void name_part(const char *in, char *out, size_t cap) {
    size_t k = 0;
    for (; *in && k + 1 < cap; in++) {
        bool word =
            (*in >= 'a' && *in <= 'z') || (*in >= 'A' && *in <= 'Z') || (*in >= '0' && *in <= '9');
        if (word || *in == '_')
            out[k++] = *in;
        else if (k && out[k - 1] != '_')
            out[k++] = '_';
    }
    while (k && out[k - 1] == '_') k--;
    out[k] = 0;
}

static void run_views(run_env *e) {
    static const char *const SMOKE[] = {"reads", "P1", "P4x10", NULL};
    static const char *const SMALL[] = {"reads", "P0",     "P1",    "P2x10",
                                        "P3",    "P4x100", "P5x10", NULL};
    static const char *const STANDARD[] = {"reads",  "P0",    "P1",     "P2",      "P3",
                                           "P4x1",   "P4x10", "P4x100", "P4x1000", "P5x1",
                                           "P5x100", "P6",    NULL};
    const char *const *phases = e->ctx->profile == GF_SMOKE   ? SMOKE
                                : e->ctx->profile == GF_SMALL ? SMALL
                                                              : STANDARD;
    const char *edges = e->ctx->profile == GF_STANDARD ? "100K" : "10K";
    char writes[24];
    snprintf(writes, sizeof writes, "%ld", by_profile(e, 5, 100, 2000));
    for (size_t p = 0; ok(e) && phases[p]; p++) {
        char name[16], subs[16], pid[24];
        snprintf(name, sizeof name, "%s", phases[p]);
        char *x = strchr(name, 'x');
        snprintf(subs, sizeof subs, "%s", x ? x + 1 : "");
        if (x) *x = 0;
        if (!server_up(e)) break;
        snprintf(pid, sizeof pid, "%d", (int)e->sv.pid);
        const char *args[32] = {name,           "--port", e->sv.port, "--api-key", GX_API_KEY,
                                "--server-pid", pid,      "--edges",  edges};
        size_t k = 9;
        if (*subs) args[k++] = "--subscribers", args[k++] = subs;
        if (strcmp(name, "reads") != 0) args[k++] = "--writes", args[k++] = writes;
        if (e->ctx->profile == GF_SMOKE) {
            static const char *const QUICK[] = {"--reads",    "2",   "--idle-ms", "100",
                                                "--grace-ms", "100", NULL};
            for (size_t i = 0; QUICK[i]; i++) args[k++] = QUICK[i];
        }
        args[k] = NULL;
        json_t *lines = run_client(e, "inputlayer-views", args);
        for (size_t i = 0; lines && i < json_array_size(lines); i++) {
            const json_t *o = json_array_get(lines, i);
            char metric[200], label[80];
            if (strcmp(name, "reads") == 0) {
                name_part(json_string_value(json_object_get(o, "label"))
                              ? json_string_value(json_object_get(o, "label"))
                              : "query",
                          label, sizeof label);
                long reps = count_of(o, "reps");
                snprintf(metric, sizeof metric, "reads_%s.latency_us_median", label);
                take(e->res, o, "latency_us_median", metric, reps, false);
                snprintf(metric, sizeof metric, "reads_%s.server_cpu_per_read_ms", label);
                take(e->res, o, "server_cpu_per_read_ms", metric, reps, false);
                continue;
            }
            long nw = count_of(o, "writes"), nd = count_of(o, "events");
            static const struct {
                const char *field, *metric;
                bool deltas;
            } FIELDS[] = {
                {"ack_us_p50", "ack_us.p50", false},
                {"ack_us_p99", "ack_us.p99", false},
                {"delta_us_p50", "delta_us.p50", true},
                {"delta_us_p99", "delta_us.p99", true},
                {"server_cpu_per_write_ms", "server_cpu_per_write_ms", false},
                {"subscribe_ms", "subscribe_ms", false},
            };
            name_part(phases[p], label, sizeof label);
            if (json_object_get(o, "fillers")) {
                size_t len = strlen(label);
                snprintf(label + len, sizeof label - len, "_%ld_fillers", count_of(o, "fillers"));
            }
            for (size_t f = 0; f < sizeof FIELDS / sizeof *FIELDS; f++) {
                snprintf(metric, sizeof metric, "%s.%s", label, FIELDS[f].metric);
                take(e->res, o, FIELDS[f].field, metric, FIELDS[f].deltas ? nd : nw, false);
            }
        }
        json_decref(lines);
        server_down(e, false);
    }
}

/* ---- the table -------------------------------------------------------------------------- */

typedef void (*fixture_fn)(run_env *);
typedef void (*pair_fn)(run_env *const e[2]);

#define FIXTURE(name, group)                                                                       \
    { #name, group, run_##name, NULL, 0 }
#define PAIRED_FIXTURE(name, group)                                                                \
    { #name, group, run_##name, pair_##name, 0 }
#define NEEDING_FIXTURE(name, group, needs)                                                        \
    { #name, group, run_##name, NULL, needs }

static const struct {
    const char *name, *group;
    fixture_fn fn;
    pair_fn pair;   /* compare: both arms in one run */
    unsigned needs; /* GF_NEEDS_* */
} TABLE[] = {
    PAIRED_FIXTURE(cheap_query, "gate"),
    PAIRED_FIXTURE(bound_query, "gate"),
    PAIRED_FIXTURE(insert_single, "gate"),
    PAIRED_FIXTURE(insert_batch, "gate"),
    FIXTURE(delta_single, "gate"),
    FIXTURE(delta_fanout, "gate"),
    FIXTURE(delta_first, "gate"),
    FIXTURE(interference, "gate"),
    FIXTURE(delta_keyed, "gate"),
    PAIRED_FIXTURE(recursive_query, "gate"),
    NEEDING_FIXTURE(closure, "gate", GF_NEEDS_CLIENT),
    NEEDING_FIXTURE(first_read, "gate", GF_NEEDS_INPROC),
    NEEDING_FIXTURE(maintained_write, "gate", GF_NEEDS_INPROC),
    NEEDING_FIXTURE(reach_bound_inproc, "gate", GF_NEEDS_INPROC),
    NEEDING_FIXTURE(hot_reach_inproc, "gate", GF_NEEDS_INPROC),
    FIXTURE(rule_lookup_ws, "gate"),
    FIXTURE(rule_query, "engine"),
    FIXTURE(unbound_query, "engine"),
    FIXTURE(writes, "engine"),
    FIXTURE(why, "engine"),
    FIXTURE(sessions, "engine"),
    FIXTURE(memory_facts, "engine"),
    FIXTURE(recovery, "engine"),
    FIXTURE(views, "views"),
};

enum { NFIXTURES = sizeof TABLE / sizeof *TABLE };

static void dispatch(const gf_context *ctx, const gf_arm *arm, gr_result *res);
static void dispatch_pair(const gf_context *ctx, const gf_arm *const arms[2],
                          gr_result *const res[2]);

static gf_fixture g_fixtures[NFIXTURES];

const gf_fixture *gf_all(size_t *n) {
    for (size_t i = 0; i < NFIXTURES; i++)
        g_fixtures[i] = (gf_fixture){TABLE[i].name, TABLE[i].group, dispatch,
                                     TABLE[i].pair ? dispatch_pair : NULL, TABLE[i].needs};
    *n = NFIXTURES;
    return g_fixtures;
}

const gf_fixture *gf_find(const char *name) {
    size_t n;
    const gf_fixture *all = gf_all(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].name, name) == 0) return &all[i];
    return NULL;
}

bool gf_missing(const gf_fixture *f, const gf_arm *arm, char *why, size_t cap) {
    if ((f->needs & GF_NEEDS_CLIENT) && !arm->client) {
        snprintf(why, cap, "no inputlayer-client: %s", arm->client_why ? arm->client_why : "?");
        return true;
    }
    if ((f->needs & GF_NEEDS_INPROC) && !arm->inproc) {
        snprintf(why, cap, "no inputlayer-inproc: %s", arm->inproc_why ? arm->inproc_why : "?");
        return true;
    }
    return false;
}

static size_t table_index(const char *name) {
    size_t i = 0;
    while (i < NFIXTURES && strcmp(TABLE[i].name, name) != 0) i++;
    return i;
}

static unsigned g_runs; /* for the scratch directories' names */

/* Every fixture runs in a scratch directory of its own, removed afterwards unless it
 * failed (its servers' output is then kept for a look). */
static void dispatch(const gf_context *ctx, const gf_arm *arm, gr_result *res) {
    run_env e = {.ctx = ctx, .arm = arm, .res = res};
    char why[700];
    const gf_fixture *f = gf_find(res->fixture);
    if (f && gf_missing(f, arm, why, sizeof why)) {
        gr_fail(res, GR_SKIPPED, "%s", why);
        return;
    }
    snprintf(e.dir, sizeof e.dir, "%s/%s-%u", ctx->scratch, res->fixture, ++g_runs);
    if (!gx_mkdirs(e.dir)) {
        gr_fail(res, GR_FAILED, "cannot create %s", e.dir);
        return;
    }
    uint64_t t0 = fx_now_ns();
    size_t i = table_index(res->fixture);
    if (i < NFIXTURES) TABLE[i].fn(&e);
    gx_server_stop(&e.sv);
    res->seconds = (double)(fx_now_ns() - t0) / 1e9;
    if (res->status == GR_OK)
        gx_rmtree(e.dir);
    else
        fprintf(stderr, "inputlayer-bench: %s: kept %s\n", res->fixture, e.dir);
}

/* The CPU both servers of a paired run share when --server-cpus is not given: the highest
 * this process may run on. Two servers on different CPUs of a busy machine wait behind
 * different work; on one, the same run queue delays both alike. */
static void shared_cpu(char *out, size_t cap) {
    cpu_set_t set;
    int cpu = -1;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set)) cpu = i;
    snprintf(out, cap, "%d", cpu < 0 ? 0 : cpu);
}

/* Both arms of a paired fixture in one scratch directory, their servers told apart by
 * their names (servera1, serverb1, ...) and on the same CPUs (shared_cpu); each result
 * gets the run's whole time. */
static void dispatch_pair(const gf_context *ctx, const gf_arm *const arms[2],
                          gr_result *const res[2]) {
    run_env env[2];
    run_env *const e[2] = {&env[0], &env[1]};
    char cpu[16];
    shared_cpu(cpu, sizeof cpu);
    for (int k = 0; k < 2; k++)
        env[k] = (run_env){.ctx = ctx,
                           .arm = arms[k],
                           .res = res[k],
                           .tag = k ? "b" : "a",
                           .cpus = ctx->server_cpus ? NULL : cpu};
    snprintf(env[0].dir, sizeof env[0].dir, "%s/%s-%u", ctx->scratch, res[0]->fixture, ++g_runs);
    snprintf(env[1].dir, sizeof env[1].dir, "%s", env[0].dir);
    if (!gx_mkdirs(env[0].dir)) {
        for (int k = 0; k < 2; k++) gr_fail(res[k], GR_FAILED, "cannot create %s", env[0].dir);
        return;
    }
    uint64_t t0 = fx_now_ns();
    size_t i = table_index(res[0]->fixture);
    if (i < NFIXTURES && TABLE[i].pair) TABLE[i].pair(e);
    for (int k = 0; k < 2; k++) gx_server_stop(&env[k].sv);
    for (int k = 0; k < 2; k++) res[k]->seconds = (double)(fx_now_ns() - t0) / 1e9;
    if (res[0]->status == GR_OK && res[1]->status == GR_OK)
        gx_rmtree(env[0].dir);
    else
        fprintf(stderr, "inputlayer-bench: %s: kept %s\n", res[0]->fixture, env[0].dir);
}

bool gf_profile_parse(const char *name, gf_profile *p) {
    static const char *const NAMES[] = {"smoke", "small", "standard"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, NAMES[i]) == 0) {
            *p = (gf_profile)i;
            return true;
        }
    return false;
}

const char *gf_profile_name(gf_profile p) {
    return p == GF_SMOKE ? "smoke" : p == GF_SMALL ? "small" : "standard";
}
