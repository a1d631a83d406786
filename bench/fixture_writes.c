/* writes: the engine suite's deletes, conditional deletes and conditional updates
 * (docs/performance.md 3.4 of the specification notes: 150 each on 2,000 preloaded facts),
 * durable, through the server over /ws.
 *
 *   inputlayer-fixture writes --port P --api-key K [--host H] [--server-pid PID]
 *       [--facts F (2000)] [--writes N (150)] [--timeout-ms T]
 *
 * It creates knowledge graph `perf`, loads facts `+event(i, i)` for i in 0 .. F - 1, then
 * on one connection, one request in flight, three timed phases of N writes each:
 *   delete              `-event(i, i)` for i in 0 .. N - 1;
 *   conditional_delete  `-event(X, Y) <- event(X, Y), X = i` for i in N .. 2N - 1;
 *   update              `-event(K, V), +event(K, 0) <- event(K, V), K = i` for i in
 *                       2N .. 3N - 1.
 * Every reply must be the result of its request with the message saying it deleted (and
 * inserted) exactly one fact, and a revision above the last one; at the end the graph must
 * hold F - 3N facts event(X, X) and exactly the rows [i, 0] of the updates for
 * `?event(X, 0)`. Anything else makes the run INVALID (exit 3).
 *
 * Per phase: ack_us (send to reply, nearest rank) and, with --server-pid, the server's CPU
 * per write net of its idle rate. One JSON line and one line for people. */
#include "fixture_writes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_rows.h"
#include "fixture_session.h"
#include "fixture_stats.h"
#include "gen_graph.h"

enum { QUIET_MS = 500, SETTLE_MAX_MS = 10000, MAX_FACTS = 10000000, NPHASES = 3 };

typedef struct writes_options {
    fx_target target;
    pid_t server_pid;
    long facts, writes;
} writes_options;

typedef struct phase_kind {
    const char *name;
    const char *program; /* printf format of fact i, used three times at most */
    const char *reply;   /* the exact message of a write that changed one fact */
} phase_kind;

static const phase_kind PHASES[NPHASES] = {
    {"delete", "-event(%" PRId64 ", %" PRId64 ")", "Deleted 1 facts from 'event'."},
    {"conditional_delete", "-event(X, Y) <- event(X, Y), X = %" PRId64,
     "Conditional delete: 1 fact(s) deleted from 'event'."},
    {"update", "-event(K, V), +event(K, 0) <- event(K, V), K = %" PRId64,
     "Update: 1 deleted, 1 inserted."},
};

static void usage(FILE *f) {
    fputs("usage: inputlayer-fixture writes --port P --api-key K [--host H (127.0.0.1)]\n"
          "         [--server-pid PID] [--facts F (2000)] [--writes N (150 per phase)]\n"
          "         [--timeout-ms T (60000)]\n"
          "  Phases: delete, conditional_delete, update; 3 N must not exceed F.\n"
          "  Exit 3: a wrong reply or wrong facts at the end (the run is INVALID).\n",
          f);
}

static int parse_args(int argc, char **argv, writes_options *o) {
    *o = (writes_options){.facts = 2000, .writes = 150};
    fx_target_defaults(&o->target);
    const fx_opt opts[] = {
        {"--facts", 3, MAX_FACTS, &o->facts, NULL},
        {"--writes", 1, MAX_FACTS, &o->writes, NULL},
    };
    int rc = fx_parse_options(argc, argv, "inputlayer-fixture", &o->target, &o->server_pid, opts,
                              sizeof opts / sizeof opts[0], usage);
    if (rc != -1) return rc;
    if (3 * o->writes > o->facts) {
        fputs("inputlayer-fixture: writes: 3 x --writes exceeds --facts\n", stderr);
        return FX_USAGE;
    }
    return -1;
}

/* The reply's single message row must be `expected`, with a revision above *last. */
static int check_reply(const json_t *res, const char *id, const char *expected, int64_t *last,
                       char *why, size_t why_len) {
    const json_t *rows = json_object_get(res, "rows");
    const char *message = json_string_value(json_array_get(json_array_get(rows, 0), 0));
    if (json_array_size(rows) != 1 || !message || strcmp(message, expected) != 0) {
        char *text = json_dumps(rows, JSON_COMPACT);
        snprintf(why, why_len, "write %s: rows %.300s, expected [[\"%s\"]]", id, text ? text : "?",
                 expected);
        free(text);
        return FX_INVALID;
    }
    const json_t *revision = json_object_get(res, "revision");
    if (!json_is_integer(revision) || (int64_t)json_integer_value(revision) <= *last) {
        snprintf(why, why_len, "write %s: no revision above %" PRId64 " on its result", id, *last);
        return FX_INVALID;
    }
    *last = (int64_t)json_integer_value(revision);
    return FX_OK;
}

static int run_phase(ws_client *ws, const phase_kind *k, int64_t first, long n, uint64_t *ack_ns,
                     int64_t *last_revision, char *why, size_t why_len) {
    for (long w = 0; w < n; w++) {
        char program[160], id[48];
        int64_t i = first + w;
        snprintf(program, sizeof program, k->program, i, i);
        snprintf(id, sizeof id, "%s.%ld", k->name, w);
        json_t *res = NULL;
        uint64_t t0 = fx_now_ns(), t1 = 0;
        int rc = fx_send_execute(ws, id, program, why, why_len);
        if (rc == FX_OK) rc = fx_await_result(ws, id, &res, &t1, why, why_len);
        if (rc == FX_OK) rc = check_reply(res, id, k->reply, last_revision, why, why_len);
        json_decref(res);
        if (rc != FX_OK) return rc;
        ack_ns[w] = t1 - t0;
    }
    return FX_OK;
}

/* What the graph holds at the end: F - 3N facts event(X, X), and event(i, 0) for exactly
 * the updated i. */
static int check_end(const writes_options *o, ws_client *ws, char *why, size_t why_len) {
    json_t *res = NULL;
    int rc = fx_execute(ws, "count", "writes_count(count<X>) <- event(X, X)\n?writes_count(N)",
                        &res, why, why_len);
    const json_t *n = json_array_get(json_array_get(json_object_get(res, "rows"), 0), 0);
    long want = o->facts - 3 * o->writes;
    if (rc == FX_OK && (!json_is_integer(n) || json_integer_value(n) != want)) {
        snprintf(why, why_len, "the graph holds %lld facts event(X, X), not %ld",
                 json_is_integer(n) ? (long long)json_integer_value(n) : -1LL, want);
        rc = FX_INVALID;
    }
    json_decref(res);
    res = NULL;
    fx_row *expected = malloc((size_t)o->writes * sizeof *expected);
    if (rc == FX_OK && !expected) {
        snprintf(why, why_len, "out of memory");
        rc = FX_FAILED;
    }
    for (long w = 0; expected && w < o->writes; w++) expected[w] = (fx_row){2 * o->writes + w, 0};
    if (rc == FX_OK) rc = fx_execute(ws, "updated", "?event(X, 0)", &res, why, why_len);
    if (rc == FX_OK)
        rc = fx_check_rows(json_object_get(res, "rows"), expected, (size_t)o->writes, why, why_len);
    json_decref(res);
    free(expected);
    return rc;
}

int fx_writes_main(int argc, char **argv) {
    writes_options o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0) return status;
    char why[512] = "out of memory";
    ws_client *ws = NULL;
    uint64_t *ack_ns[NPHASES] = {0};
    double cpu_ms[NPHASES] = {0};
    bool cpu_known = false;
    gg_edge *facts = malloc((size_t)o.facts * sizeof *facts);
    for (int p = 0; p < NPHASES; p++) ack_ns[p] = calloc((size_t)o.writes, sizeof *ack_ns[p]);
    status = facts && ack_ns[0] && ack_ns[1] && ack_ns[2]
                 ? fx_create_graph(&o.target, "perf", &ws, why, sizeof why)
                 : FX_FAILED;
    if (status == FX_OK) {
        for (long i = 0; i < o.facts; i++) facts[i] = (gg_edge){i, i};
        fx_loader l = {.ws = ws};
        int rc = gg_emit_edges("event", facts, (size_t)o.facts, GG_CHUNK, fx_load_statement, &l);
        if (rc != 0 || l.inserted != (size_t)o.facts) {
            snprintf(why, sizeof why, "loading: %.400s",
                     rc != 0 ? l.why : "the server did not take every fact");
            status = rc != 0 && l.status != FX_OK ? l.status : FX_INVALID;
        }
    }
    fx_cpu_meter meter = {0};
    if (status == FX_OK) {
        fx_cpu_settle(o.server_pid, SETTLE_MAX_MS * 1000000ull);
        fx_cpu_idle(&meter, o.server_pid, QUIET_MS * 1000000ull);
    }
    int64_t last_revision = 0;
    for (int p = 0; status == FX_OK && p < NPHASES; p++) {
        fx_cpu_start(&meter);
        status = run_phase(ws, &PHASES[p], p * o.writes, o.writes, ack_ns[p], &last_revision, why,
                           sizeof why);
        fx_cpu_figures f = fx_cpu_stop(&meter, o.writes);
        cpu_known = f.known;
        cpu_ms[p] = f.per_op_ms;
    }
    if (status == FX_OK) status = check_end(&o, ws, why, sizeof why);
    if (status != FX_OK) {
        fprintf(stderr, "inputlayer-fixture: %swrites: %s\n",
                status == FX_INVALID ? "INVALID run: " : "", why);
    } else {
        printf("{\"fixture\":\"writes\",\"facts\":%ld,\"writes\":%ld", o.facts, o.writes);
        double p50[NPHASES];
        for (int p = 0; p < NPHASES; p++) {
            char name[80];
            snprintf(name, sizeof name, "%s_ack_us_p50", PHASES[p].name);
            p50[p] = fx_json_percentile(stdout, name, ack_ns[p], (size_t)o.writes, 0.5);
            snprintf(name, sizeof name, "%s_ack_us_p99", PHASES[p].name);
            fx_json_percentile(stdout, name, ack_ns[p], (size_t)o.writes, 0.99);
            if (cpu_known)
                printf(",\"%s_server_cpu_per_write_ms\":%.4f", PHASES[p].name, cpu_ms[p]);
        }
        printf("}\nwrites: %ld each on %ld facts, every reply checked: ack p50 delete %.1f µs, "
               "conditional delete %.1f µs, update %.1f µs\n",
               o.writes, o.facts, p50[0], p50[1], p50[2]);
        status = fflush(stdout) == 0 ? FX_OK : FX_FAILED;
    }
    wsc_close(ws);
    free(facts);
    for (int p = 0; p < NPHASES; p++) free(ack_ns[p]);
    return status;
}
