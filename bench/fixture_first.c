/* delta_first (docs/performance.md 3.4, protocol-later.md 6.3 in ../shared/docs): what a
 * standing query's first delta costs against a warm one.
 *
 *   inputlayer-fixture delta_first --port P --api-key K [--host H] [--server-pid PID]
 *       [--cycles C (40)] [--quiet-ms Q (100)] [--grace-ms G (50)] [--timeout-ms T]
 *
 * The graph of delta_single with 2 probe edges (P_0, P_0 + 1), (P_1, P_1 + 1) and
 * `two_hop`, loaded through the server into knowledge graph `perf`. Then C cycles, each:
 * a fresh agent connection subscribes `.subscribe first<c> ?two_hop(1, Z)` (subscribe_us;
 * the snapshot checked row for row against the answer computed from the generated
 * edges); the writer sends `+edge(1, P_0)` and the agent's next delta must be exactly the
 * inserted row [1, P_0 + 1], seq 1 (first_delta_us, from the send); after Q ms of quiet
 * the same with P_1, seq 2 (warm_delta_us); the agent reads on for G ms (any delta then is
 * a stray one), closes, and the writer retracts both edges. A wrong, missing or extra row
 * makes the run INVALID (exit 3). --writes is taken as --cycles, so that one set of
 * arguments fits every fixture of bench/run-fixtures.sh.
 *
 * Prints one JSON line and one line for people; p99 needs 100 cycles (null otherwise). */
#include "fixture_first.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_data.h"
#include "fixture_rows.h"
#include "fixture_session.h"
#include "fixture_stats.h"

typedef struct first_options {
    fx_target target;
    pid_t server_pid; /* taken for the same command line as the other fixtures; unused */
    long cycles, quiet_ms, grace_ms;
} first_options;

/* Why a cycle stopped, and how. */
typedef struct outcome {
    int status;
    char why[512];
} outcome;

static void usage(FILE *f) {
    fputs("usage: inputlayer-fixture delta_first --port P --api-key K [--host H (127.0.0.1)]\n"
          "         [--server-pid PID] [--cycles C (40)] [--quiet-ms Q (100)]\n"
          "         [--grace-ms G (50)] [--timeout-ms T (60000)]\n"
          "  Exit 3: a wrong, missing or extra row (the run is INVALID).\n",
          f);
}

static int parse_args(int argc, char **argv, first_options *o) {
    fx_target_defaults(&o->target);
    o->cycles = 40, o->quiet_ms = 100, o->grace_ms = 50;
    const fx_opt opts[] = {
        {"--cycles", 1, 100000, &o->cycles, NULL},
        {"--writes", 1, 100000, &o->cycles, NULL}, /* the other fixtures' name for their count */
        {"--quiet-ms", 0, 60000, &o->quiet_ms, NULL},
        {"--grace-ms", 0, 60000, &o->grace_ms, NULL},
    };
    return fx_parse_options(argc, argv, "inputlayer-fixture", &o->target, &o->server_pid, opts,
                            sizeof opts / sizeof opts[0], usage);
}

static int load(ws_client *ws, const gg_edge *edges, size_t n, outcome *out) {
    fx_loader l = {.ws = ws};
    int rc = gg_emit_edges("edge", edges, n, GG_CHUNK, fx_load_statement, &l);
    if (rc == 0) rc = fx_load_statement(&l, "+two_hop(X, Z) <- edge(X, Y), edge(Y, Z)", 0);
    if (rc < 0) snprintf(l.why, sizeof l.why, "out of memory"), l.status = FX_FAILED;
    if (rc == 0 && l.inserted != n) {
        snprintf(l.why, sizeof l.why, "the server took %zu of %zu facts", l.inserted, n);
        l.status = FX_INVALID;
    }
    if (l.status != FX_OK) snprintf(out->why, sizeof out->why, "loading: %.400s", l.why);
    return out->status = l.status;
}

/* The agent's subscription. */
typedef struct probe_agent {
    ws_client *ws;
    char name[32];
    uint64_t generation, next_seq;
} probe_agent;

/* Waits on the agent for its next frame that is not a push, until deadline_ns; returns
 * the frame (NULL with *timed_out, or NULL on a connection error, in out). */
static json_t *next_frame(probe_agent *ag, uint64_t deadline_ns, uint64_t *at, bool *timed_out,
                          outcome *out) {
    *timed_out = false;
    for (;;) {
        uint64_t now = fx_now_ns();
        int ready =
            now < deadline_ns ? wsc_wait_readable(ag->ws, (long long)(deadline_ns - now)) : 0;
        const char *msg;
        size_t len;
        if (ready == 0) {
            *timed_out = true;
            return NULL;
        }
        if (ready < 0 || wsc_recv_text(ag->ws, &msg, &len) != 0) {
            snprintf(out->why, sizeof out->why, "agent %s: %s", ag->name, wsc_error(ag->ws));
            out->status = FX_FAILED;
            return NULL;
        }
        *at = fx_now_ns();
        json_t *frame;
        fx_frame_kind kind = fx_classify_text(msg, len, &frame);
        if (kind == FX_FRAME_PUSH) continue;
        if (kind != FX_FRAME_DELTA) {
            snprintf(out->why, sizeof out->why, "agent %s got: %.*s", ag->name,
                     (int)(len > 300 ? 300 : len), msg);
            out->status = FX_INVALID;
            json_decref(frame);
            return NULL;
        }
        return frame;
    }
}

/* Sends write `program` (id) and takes the agent's next delta, which must insert exactly
 * `expected`; *delta_ns is from the send to its arrival. Then the write's reply. */
static int probe(const first_options *o, ws_client *writer, probe_agent *ag, const char *id,
                 const char *program, fx_row expected, uint64_t *delta_ns, outcome *out) {
    uint64_t sent = fx_now_ns(), at = 0;
    if ((out->status = fx_send_execute(writer, id, program, out->why, sizeof out->why)) != FX_OK)
        return out->status;
    bool timed_out;
    json_t *d =
        next_frame(ag, sent + (uint64_t)o->target.timeout_ms * 1000000u, &at, &timed_out, out);
    if (!d) {
        if (timed_out) {
            snprintf(out->why, sizeof out->why,
                     "agent %s: no delta within %d ms of write %s (the missing row [%" PRId64
                     ",%" PRId64 "])",
                     ag->name, o->target.timeout_ms, id, expected.head, expected.tail);
            out->status = FX_INVALID;
        }
        return out->status;
    }
    *delta_ns = at - sent;
    char diff[256];
    out->status = fx_check_delta_header(d, ag->name, ag->generation, &ag->next_seq, out->why,
                                        sizeof out->why);
    if (out->status == FX_OK && json_array_size(json_object_get(d, "retracted")) != 0) {
        snprintf(out->why, sizeof out->why, "agent %s: write %s retracted rows", ag->name, id);
        out->status = FX_INVALID;
    }
    if (out->status == FX_OK &&
        fx_check_rows(json_object_get(d, "inserted"), &expected, 1, diff, sizeof diff) != FX_OK) {
        snprintf(out->why, sizeof out->why, "agent %s, the delta of write %s: %s", ag->name, id,
                 diff);
        out->status = FX_INVALID;
    }
    json_decref(d);
    if (out->status != FX_OK) return out->status;
    json_t *res;
    out->status = fx_await_result(writer, id, &res, NULL, out->why, sizeof out->why);
    if (out->status == FX_OK && fx_inserted_count(res) != 1) {
        snprintf(out->why, sizeof out->why, "write %s did not insert 1 fact", id);
        out->status = FX_INVALID;
    }
    json_decref(res);
    return out->status;
}

/* One cycle: subscribe, the first and the warm delta, a look for strays, close, retract. */
static int cycle(const first_options *o, ws_client *writer, long c, const fx_row *snapshot,
                 size_t nsnap, uint64_t *sub_ns, uint64_t *first_ns, uint64_t *warm_ns,
                 outcome *out) {
    probe_agent ag = {.next_seq = 1};
    snprintf(ag.name, sizeof ag.name, "first%ld", c);
    ag.ws = fx_open(&o->target, "perf", out->why, sizeof out->why);
    if (!ag.ws) return out->status = FX_FAILED;
    char program[128], id[32];
    snprintf(program, sizeof program, ".subscribe %s ?two_hop(%d, Z)", ag.name, FX_DELTA_SOURCE);
    json_t *res;
    uint64_t t0 = fx_now_ns();
    out->status = fx_execute(ag.ws, "subscribe", program, &res, out->why, sizeof out->why);
    *sub_ns = fx_now_ns() - t0;
    if (out->status == FX_OK)
        out->status = fx_check_subscribed(res, ag.name, snapshot, nsnap, &ag.generation, out->why,
                                          sizeof out->why);
    json_decref(res);
    for (long k = 0; out->status == FX_OK && k < 2; k++) {
        if (k == 1) fx_sleep_ns((uint64_t)o->quiet_ms * 1000000u);
        int64_t p = fx_probe_node(k);
        snprintf(program, sizeof program, "+edge(%d, %" PRId64 ")", FX_DELTA_SOURCE, p);
        snprintf(id, sizeof id, "c%ld.%ld", c, k);
        probe(o, writer, &ag, id, program, (fx_row){FX_DELTA_SOURCE, p + 1},
              k == 0 ? first_ns : warm_ns, out);
    }
    if (out->status == FX_OK) {
        bool timed_out;
        uint64_t at;
        json_t *stray =
            next_frame(&ag, fx_now_ns() + (uint64_t)o->grace_ms * 1000000u, &at, &timed_out, out);
        if (stray) {
            char *text = json_dumps(stray, JSON_COMPACT);
            snprintf(out->why, sizeof out->why, "agent %s: a stray delta: %.300s", ag.name,
                     text ? text : "?");
            free(text);
            json_decref(stray);
            out->status = FX_INVALID;
        }
    }
    wsc_close(ag.ws);
    if (out->status != FX_OK) return out->status;
    snprintf(program, sizeof program, "-edge(%d, %" PRId64 ")\n-edge(%d, %" PRId64 ")",
             FX_DELTA_SOURCE, fx_probe_node(0), FX_DELTA_SOURCE, fx_probe_node(1));
    snprintf(id, sizeof id, "c%ld.r", c);
    return out->status = fx_execute(writer, id, program, NULL, out->why, sizeof out->why);
}

static int report(const first_options *o, uint64_t *sub, uint64_t *first, uint64_t *warm) {
    size_t n = (size_t)o->cycles;
    printf("{\"fixture\":\"delta_first\",\"cycles\":%zu,\"quiet_ms\":%ld", n, o->quiet_ms);
    double f50 = fx_json_percentile(stdout, "first_delta_us_p50", first, n, 0.5);
    fx_json_percentile(stdout, "first_delta_us_p99", first, n, 0.99);
    fx_json_percentile(stdout, "first_delta_us_max", first, n, 1.0);
    double w50 = fx_json_percentile(stdout, "warm_delta_us_p50", warm, n, 0.5);
    fx_json_percentile(stdout, "warm_delta_us_p99", warm, n, 0.99);
    fx_json_percentile(stdout, "warm_delta_us_max", warm, n, 1.0);
    double s50 = fx_json_percentile(stdout, "subscribe_us_p50", sub, n, 0.5);
    fx_json_percentile(stdout, "subscribe_us_p99", sub, n, 0.99);
    printf("}\ndelta_first: %zu fresh agents, every delta checked: first delta p50 %.1f µs, warm "
           "delta p50 %.1f µs, subscribe p50 %.1f µs (max %.1f / %.1f µs)%s\n",
           n, f50, w50, s50, fx_percentile_us(first, n, 1.0), fx_percentile_us(warm, n, 1.0),
           n < FX_MIN_P50_SAMPLES ? " (too few cycles for a p50: -1)" : "");
    return fflush(stdout) == 0 ? FX_OK : FX_FAILED;
}

int fx_delta_first_main(int argc, char **argv) {
    first_options o = {0};
    int status = parse_args(argc, argv, &o);
    if (status >= 0) return status;
    outcome out = {.status = FX_FAILED, .why = "out of memory"};
    size_t nedges = 0, nsnap = 0, n = (size_t)o.cycles;
    gg_edge *edges = fx_delta_graph(2, &nedges);
    fx_row *snapshot = edges ? fx_two_hop_rows(edges, nedges, &nsnap) : NULL;
    uint64_t *sub = calloc(n, sizeof *sub), *first = calloc(n, sizeof *first),
             *warm = calloc(n, sizeof *warm);
    ws_client *writer = NULL;
    if (snapshot && sub && first && warm &&
        (out.status = fx_create_graph(&o.target, "perf", &writer, out.why, sizeof out.why)) ==
            FX_OK &&
        load(writer, edges, nedges, &out) == FX_OK)
        for (long c = 0; c < o.cycles; c++)
            if (cycle(&o, writer, c, snapshot, nsnap, &sub[c], &first[c], &warm[c], &out) != FX_OK)
                break;
    if (out.status != FX_OK)
        fprintf(stderr, "inputlayer-fixture: %sdelta_first: %s\n",
                out.status == FX_INVALID ? "INVALID run: " : "", out.why);
    else
        out.status = report(&o, sub, first, warm);
    wsc_close(writer);
    free(sub), free(first), free(warm), free(snapshot), free(edges);
    return out.status;
}
