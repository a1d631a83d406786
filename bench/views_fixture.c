/* inputlayer-views: the views benchmark of the perf gate (`perf-gate views`,
 * docs/performance.md 3.4 in ../shared/docs), one phase per run against a fresh
 * inputlayer-server, as bench/run-views.sh runs it:
 *
 *   inputlayer-views reads|P0|P1|P2|P3|P4|P5|P6 --port P --api-key K [--server-pid PID]
 *       [--edges 10K|100K|1M|N] [--subscribers N] [--subs-per-conn C] [--writes W]
 *       [--warmup W] [--reads R] [--fillers A,B] [--idle-ms I] [--delta-timeout-ms T]
 *       [--grace-ms G] [--host H] [--timeout-ms T]
 *
 * Setup (every phase): knowledge graph `perf`, the hot chains for the requested edges
 * loaded in statements of 9,990 tuples with their `hot` labels, then the four rule
 * clauses `r1`, `path` (two) and `hot_reach`, each timed.
 *   reads  each of `?edge(400,Y)`, `?r1(X,Y)`, `?r1(400,Y)`, `?path(400,Y)`,
 *          `?hot_reach(X,Y)`, `?hot_reach(400,Y)` R times (10; 3 for the unbound
 *          `hot_reach` from 1M edges): the first read's latency, the median of all,
 *          and server CPU per read after the first.
 *   P0     writes with no subscribers;
 *   P1/P2  1 / 100 subscribers of `?r1(X,Y)`;
 *   P3     1 subscriber of `?hot_reach(X,Y)`;
 *   P4/P5  N keyed subscribers, subscriber i of `?r1(400i,Y)` / `?hot_reach(400i,Y)`;
 *   P6     1 subscriber of `?r1(X,Y)` after A filler rules `+f_i(X,L) <- label(X,L),
 *          X > i`, then again after B in all (50, 200): one report each.
 * Subscribers get a connection each (C per connection with --subs-per-conn, at most 64,
 * the server's cap); all their `.subscribe`s are sent before the first reply is read, and
 * subscribe_ms runs from the first sent to the last `subscribed` read.
 *
 * Writes are closed-loop: write w is `+edge(400k, fresh_w)` with k = w mod N for the keyed
 * phases and w mod hot otherwise, fresh_w = 4 chains + 1000 + w; then `?r1(400k,Y)` on the
 * writer's connection; then the wait for every subscriber's delta (--delta-timeout-ms,
 * 20 s). Every answer is checked against the rows the client computes itself
 * (views_model.h): each snapshot, each ad-hoc read, and each delta (views_hub.h), which
 * must insert exactly the written row at exactly the subscribers whose query it belongs
 * to (a hot head's key; nothing for a key beyond the hot heads) and retract nothing, with
 * seqs that follow each other. A foreign, repeated or missing row makes the run INVALID (exit 3).
 * After the last write the subscribers read on for G ms (500) to catch strays.
 *
 * Reported per phase: ack, read and delta (write send to arrival, one sample per
 * subscriber reached) p50/p99, the last delta per write, server CPU per write (its
 * schedstat over the measured writes minus its idle rate over I ms (1000) just before,
 * once it has settled after the setup: under 2% of a CPU, waited for up to 30 s),
 * frames the subscriber connections read per write, server RSS. p99s need 100 samples and
 * p50s 20 (null otherwise): pass --writes 2000 for CPU and latency figures. Writes default
 * to the gate's 30 (20 from 1M edges with subscribers); --warmup writes go first,
 * unmeasured. One JSON line per phase (per query for reads) and a line for people.
 * Exit status: 0 done, 1 an error, 2 usage, 3 INVALID. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fixture_rows.h"
#include "fixture_session.h"
#include "fixture_stats.h"
#include "gen_graph.h"
#include "views_hub.h"
#include "views_model.h"

enum {
    LOAD_CHUNK = 9990, /* the views benchmark's batches */
    MAX_SUBS_PER_CONN = 64,
    BIG_EDGES = 1000000, /* from here fewer writes and reads by default */
    SETTLE_MAX_MS = 30000,
};

typedef struct phase_spec {
    const char *name;
    bool writes;      /* a write phase (everything but reads) */
    vm_relation rel;  /* what the subscribers read */
    bool keyed;       /* subscriber i: key i; else unbound */
    long subscribers; /* by default */
    bool fillers;
} phase_spec;

static const phase_spec PHASES[] = {
    {"reads", false, VM_R1, false, 0, false},    {"P0", true, VM_R1, false, 0, false},
    {"P1", true, VM_R1, false, 1, false},        {"P2", true, VM_R1, false, 100, false},
    {"P3", true, VM_HOT_REACH, false, 1, false}, {"P4", true, VM_R1, true, 1, false},
    {"P5", true, VM_HOT_REACH, true, 1, false},  {"P6", true, VM_R1, false, 1, true},
};

static const char *const REL_NAMES[] = {
    [VM_EDGE] = "edge", [VM_R1] = "r1", [VM_PATH] = "path", [VM_HOT_REACH] = "hot_reach"};

typedef struct options {
    const phase_spec *phase;
    fx_target target;
    pid_t server_pid; /* 0: no CPU or memory figures */
    size_t edges;
    long subscribers, subs_per_conn, writes, warmup, reads, idle_ms, delta_timeout_ms, grace_ms;
    long fillers[2];
} options;

/* The samples of one report. */
typedef struct samples {
    uint64_t *ack, *read, *delta, *last;
    size_t nack, nread, ndelta, nlast, cap_delta;
} samples;

static void usage(FILE *f) {
    fputs("usage: inputlayer-views reads|P0|P1|P2|P3|P4|P5|P6 --port P --api-key K\n"
          "         [--server-pid PID] [--edges 10K|100K|1M|N (100K)] [--subscribers N]\n"
          "         [--subs-per-conn C (1)] [--writes W (30; 20 from 1M with subscribers)]\n"
          "         [--warmup W (0)] [--reads R (10)] [--fillers A,B (50,200)]\n"
          "         [--idle-ms I (1000)] [--delta-timeout-ms T (20000)] [--grace-ms G (500)]\n"
          "         [--host H (127.0.0.1)] [--timeout-ms T (60000)]\n"
          "  Exit 3: a wrong, missing or extra row (the run is INVALID).\n",
          f);
}

/* 10K, 100K, 1M or a plain number. */
static bool parse_edges(const char *s, size_t *out) {
    char digits[32];
    size_t len = strlen(s);
    long mult = 1, v;
    if (len == 0 || len >= sizeof digits) return false;
    memcpy(digits, s, len + 1);
    if (digits[len - 1] == 'K' || digits[len - 1] == 'k') mult = 1000, digits[len - 1] = '\0';
    if (digits[len - 1] == 'M' || digits[len - 1] == 'm') mult = 1000000, digits[len - 1] = '\0';
    if (!fx_parse_long(digits, 1, 100000000 / mult, &v) || v * mult < 3) return false;
    *out = (size_t)(v * mult);
    return true;
}

static bool parse_fillers(const char *s, long out[2]) {
    char a[16], b[16];
    const char *comma = strchr(s, ',');
    if (!comma || (size_t)(comma - s) >= sizeof a || strlen(comma + 1) >= sizeof b) return false;
    memcpy(a, s, (size_t)(comma - s));
    a[comma - s] = '\0';
    strcpy(b, comma + 1);
    return fx_parse_long(a, 0, 10000, &out[0]) && fx_parse_long(b, out[0], 10000, &out[1]);
}

/* Returns -1 when the options are good, else the exit status. */
static int parse_args(int argc, char **argv, options *o) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? FX_USAGE : FX_OK;
    }
    const phase_spec *phase = NULL;
    for (size_t i = 0; i < sizeof PHASES / sizeof *PHASES; i++)
        if (strcmp(argv[1], PHASES[i].name) == 0) phase = &PHASES[i];
    if (!phase) {
        fprintf(stderr, "inputlayer-views: unknown phase '%s'\n", argv[1]);
        usage(stderr);
        return FX_USAGE;
    }
    fx_target target;
    fx_target_defaults(&target);
    *o = (options){.phase = phase,
                   .target = target,
                   .edges = 100000,
                   .subscribers = phase->subscribers,
                   .subs_per_conn = 1,
                   .writes = -1,
                   .reads = 10,
                   .idle_ms = 1000,
                   .delta_timeout_ms = 20000,
                   .grace_ms = 500,
                   .fillers = {50, 200}};
    for (int a = 2; a < argc; a += 2) {
        const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        bool ok = v != NULL;
        int taken = ok ? fx_target_arg(&o->target, &o->server_pid, k, v) : 0;
        if (taken)
            ok = taken > 0;
        else if (ok && strcmp(k, "--edges") == 0)
            ok = parse_edges(v, &o->edges);
        else if (ok && strcmp(k, "--subscribers") == 0)
            ok = fx_parse_long(v, 1, 100000, &o->subscribers);
        else if (ok && strcmp(k, "--subs-per-conn") == 0)
            ok = fx_parse_long(v, 1, MAX_SUBS_PER_CONN, &o->subs_per_conn);
        else if (ok && strcmp(k, "--writes") == 0)
            ok = fx_parse_long(v, 1, 10000000, &o->writes);
        else if (ok && strcmp(k, "--warmup") == 0)
            ok = fx_parse_long(v, 0, 10000000, &o->warmup);
        else if (ok && strcmp(k, "--reads") == 0)
            ok = fx_parse_long(v, 1, 1000000, &o->reads);
        else if (ok && strcmp(k, "--fillers") == 0)
            ok = parse_fillers(v, o->fillers);
        else if (ok && strcmp(k, "--idle-ms") == 0)
            ok = fx_parse_long(v, 0, 600000, &o->idle_ms);
        else if (ok && strcmp(k, "--delta-timeout-ms") == 0)
            ok = fx_parse_long(v, 1, 3600000, &o->delta_timeout_ms);
        else if (ok && strcmp(k, "--grace-ms") == 0)
            ok = fx_parse_long(v, 0, 600000, &o->grace_ms);
        else
            ok = false;
        if (!ok) return fx_bad_arg("inputlayer-views", k, v, usage);
    }
    if (!fx_target_complete("inputlayer-views", &o->target)) return FX_USAGE;
    if (o->phase->subscribers == 0 && o->subscribers != 0) {
        fprintf(stderr, "inputlayer-views: %s has no subscribers\n", o->phase->name);
        return FX_USAGE;
    }
    if (o->writes < 0) o->writes = o->edges >= BIG_EDGES && o->subscribers > 0 ? 20 : 30;
    return -1;
}

__attribute__((format(printf, 3, 4))) static int fail(char *why, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, 512, fmt, ap);
    va_end(ap);
    return status;
}

/* ---- setup -------------------------------------------------------------------------- */

static double ms_since(uint64_t t0) {
    return (double)(fx_now_ns() - t0) / 1e6;
}

/* Runs one statement that must succeed (rules); returns its milliseconds, or -1 with the
 * status in *status. */
static double timed_statement(ws_client *ws, const char *id, const char *stmt, int *status,
                              char *why) {
    uint64_t t0 = fx_now_ns();
    *status = fx_execute(ws, id, stmt, NULL, why, 512);
    return *status == FX_OK ? ms_since(t0) : -1;
}

static const char *const RULES[] = {
    "+r1(X, Y) <- edge(X, Y), label(X, \"hot\")",
    "+path(X, Y) <- edge(X, Y)",
    "+path(X, Z) <- edge(X, Y), path(Y, Z)",
    "+hot_reach(X, Y) <- label(X, \"hot\"), path(X, Y)",
};
enum { NRULES = sizeof RULES / sizeof *RULES };

typedef struct setup_times {
    double load_ms, rules_ms[NRULES];
} setup_times;

/* The chains, their labels and the four rule clauses, through ws (graph `perf`). */
static int setup(const vm_model *m, size_t edges, ws_client *ws, setup_times *t, char *why) {
    size_t n;
    gg_edge *chain_edges = gg_chains(edges, &n);
    if (!chain_edges) return fail(why, FX_FAILED, "out of memory");
    fx_loader l = {.ws = ws};
    uint64_t t0 = fx_now_ns();
    int rc = gg_emit_edges("edge", chain_edges, n, LOAD_CHUNK, fx_load_statement, &l);
    if (rc == 0) rc = gg_emit_hot_labels("label", "hot", m->hot, LOAD_CHUNK, fx_load_statement, &l);
    t->load_ms = ms_since(t0);
    free(chain_edges);
    if (rc < 0) return fail(why, FX_FAILED, "out of memory");
    if (l.status != FX_OK) return fail(why, l.status, "loading: %.400s", l.why);
    if (l.inserted != n + m->hot)
        return fail(why, FX_INVALID, "loading: the server took %zu of %zu facts", l.inserted,
                    n + m->hot);
    int status = FX_OK;
    for (int i = 0; i < NRULES && status == FX_OK; i++) {
        char id[16];
        snprintf(id, sizeof id, "rule%d", i);
        t->rules_ms[i] = timed_statement(ws, id, RULES[i], &status, why);
    }
    return status;
}

/* Filler rules f_from .. f_{to-1}; returns their milliseconds in all. */
static double add_fillers(ws_client *ws, long from, long to, int *status, char *why) {
    uint64_t t0 = fx_now_ns();
    *status = FX_OK;
    for (long i = from; i < to && *status == FX_OK; i++) {
        char id[24], stmt[96];
        snprintf(id, sizeof id, "filler%ld", i);
        snprintf(stmt, sizeof stmt, "+f_%ld(X, L) <- label(X, L), X > %ld", i, i);
        *status = fx_execute(ws, id, stmt, NULL, why, 512);
    }
    return ms_since(t0);
}

/* Sends execute{id, program} and waits for its result; *ns runs from the send to the
 * reply's arrival. */
static int timed_execute(ws_client *ws, const char *id, const char *program, json_t **res,
                         uint64_t *ns, char *why) {
    uint64_t t0 = fx_now_ns(), at = t0;
    int rc = fx_send_execute(ws, id, program, why, 512);
    if (rc == FX_OK) rc = fx_await_result(ws, id, res, &at, why, 512);
    *ns = at - t0;
    return rc;
}

/* Runs query `program` and checks its rows; *ns is its round trip. */
static int checked_read(ws_client *ws, const char *id, const char *program, const fx_row *expected,
                        size_t n, uint64_t *ns, char *why) {
    json_t *res;
    int rc = timed_execute(ws, id, program, &res, ns, why);
    char diff[400];
    if (rc == FX_OK &&
        (rc = fx_check_rows(json_object_get(res, "rows"), expected, n, diff, sizeof diff)) != FX_OK)
        fail(why, rc, "%s: %s", program, diff);
    json_decref(res);
    return rc;
}

/* Measures the server's idle rate once it has settled after the setup. */
static void measure_idle(const options *o, fx_cpu_meter *idle) {
    if (o->server_pid && !fx_cpu_settle(o->server_pid, SETTLE_MAX_MS * 1000000ull))
        fprintf(stderr,
                "inputlayer-views: note: the server was still busy %d s after the setup; "
                "its CPU figures include that work\n",
                SETTLE_MAX_MS / 1000);
    fx_cpu_idle(idle, o->server_pid, (uint64_t)o->idle_ms * 1000000u);
}

/* ---- the idle reads ----------------------------------------------------------------- */

static int run_reads(const options *o, const vm_model *m, ws_client *ws, const setup_times *st,
                     char *why) {
    static const struct {
        const char *program, *label;
        vm_relation rel;
        long key;
    } QUERIES[] = {
        {"?edge(400, Y)", "edge_bound", VM_EDGE, 1},
        {"?r1(X, Y)", "r1_unbound", VM_R1, -1},
        {"?r1(400, Y)", "r1_bound", VM_R1, 1},
        {"?path(400, Y)", "path_bound", VM_PATH, 1},
        {"?hot_reach(X, Y)", "hot_reach_unbound", VM_HOT_REACH, -1},
        {"?hot_reach(400, Y)", "hot_reach_bound", VM_HOT_REACH, 1},
    };
    fx_cpu_meter meter;
    measure_idle(o, &meter);
    uint64_t *lat = calloc((size_t)o->reads, sizeof *lat);
    if (!lat) return fail(why, FX_FAILED, "out of memory");
    int rc = FX_OK;
    for (size_t q = 0; rc == FX_OK && q < sizeof QUERIES / sizeof *QUERIES; q++) {
        long reps = o->reads;
        bool big_unbound = QUERIES[q].rel == VM_HOT_REACH && QUERIES[q].key < 0;
        if (big_unbound && o->edges >= BIG_EDGES && reps > 3) reps = 3;
        size_t n;
        fx_row *expected = vm_rows(m, QUERIES[q].rel, QUERIES[q].key, &n);
        if (!expected) {
            rc = fail(why, FX_FAILED, "out of memory");
            break;
        }
        /* The first read of a query pays once for what later ones reuse (plans,
         * indexes): its latency is reported apart, and the CPU figure is the later
         * reads'. */
        fx_cpu_figures cpu = {0};
        for (long r = 0; rc == FX_OK && r < reps; r++) {
            char id[32];
            snprintf(id, sizeof id, "read%zu.%ld", q, r);
            if (r == 1) fx_cpu_start(&meter);
            rc = checked_read(ws, id, QUERIES[q].program, expected, n, &lat[r], why);
        }
        if (rc == FX_OK && reps > 1) cpu = fx_cpu_stop(&meter, reps - 1);
        free(expected);
        if (rc != FX_OK) break;
        double first = (double)lat[0] / 1000.0, med = fx_percentile_us(lat, (size_t)reps, 0.5);
        printf("{\"phase\":\"reads\",\"edges\":%zu,\"edges_loaded\":%zu,\"hot\":%zu,"
               "\"load_ms\":%.1f,\"query\":\"%s\",\"label\":\"%s\",\"rows\":%zu,\"reps\":%ld,"
               "\"latency_us_first\":%.1f,\"latency_us_median\":%.1f,\"latency_us_min\":%.1f,"
               "\"latency_us_max\":%.1f",
               o->edges, m->edges_loaded, m->hot, st->load_ms, QUERIES[q].program, QUERIES[q].label,
               n, reps, first, med, fx_percentile_us(lat, (size_t)reps, 0.0),
               fx_percentile_us(lat, (size_t)reps, 1.0));
        if (cpu.known) printf(",\"server_cpu_per_read_ms\":%.3f", cpu.per_op_ms);
        printf("}\nreads %s: %zu rows checked %ld times, first %.1f µs, median %.1f µs",
               QUERIES[q].program, n, reps, first, med);
        if (cpu.known) printf(", server CPU %.3f ms per later read", cpu.per_op_ms);
        printf("\n");
    }
    free(lat);
    return rc;
}

/* ---- subscribers -------------------------------------------------------------------- */

static void subscription_query(const options *o, long i, char *buf, size_t cap) {
    const char *rel = REL_NAMES[o->phase->rel];
    if (o->phase->keyed)
        snprintf(buf, cap, "?%s(%" PRId64 ", Y)", rel, vm_head(i));
    else
        snprintf(buf, cap, "?%s(X, Y)", rel);
}

/* Opens the connections, then sends every `.subscribe` before reading the first reply;
 * *subscribe_ns runs from the first sent to the last reply read. */
static int subscribe_all(const options *o, const vm_model *m, vh_hub *h, uint64_t *subscribe_ns,
                         char *why) {
    long per = o->subs_per_conn;
    for (long c = 0; c < h->nconns; c++) {
        vh_conn *sc = &h->conns[c];
        char reason[400];
        if (!(sc->ws = fx_open(&o->target, "perf", reason, sizeof reason)))
            return fail(why, FX_FAILED, "subscriber connection %ld of %ld: %s", c + 1, h->nconns,
                        reason);
    }
    char program[128];
    uint64_t t0 = fx_now_ns();
    for (long i = 0; i < h->nsubs; i++) {
        vh_sub *s = &h->subs[i];
        s->key = o->phase->keyed ? i : -1;
        int n = snprintf(program, sizeof program, ".subscribe %s ", s->name);
        subscription_query(o, i, program + n, sizeof program - (size_t)n);
        int rc = fx_send_execute(h->conns[i / per].ws, s->name, program, why, 512);
        if (rc != FX_OK) return rc;
    }
    fx_row *expected = NULL;
    size_t nexp = 0;
    uint64_t last = t0;
    int rc = FX_OK;
    for (long i = 0; rc == FX_OK && i < h->nsubs; i++) {
        vh_sub *s = &h->subs[i];
        /* Unbound subscribers all expect the same snapshot. */
        if (!expected || s->key >= 0) {
            free(expected);
            if (!(expected = vm_rows(m, o->phase->rel, s->key, &nexp)))
                return fail(why, FX_FAILED, "out of memory");
        }
        json_t *res;
        uint64_t at = t0;
        rc = fx_await_result(h->conns[i / per].ws, s->name, &res, &at, why, 512);
        if (at > last) last = at;
        if (rc == FX_OK)
            rc = fx_check_subscribed(res, s->name, expected, nexp, &s->generation, why, 512);
        json_decref(res);
    }
    *subscribe_ns = last - t0;
    free(expected);
    return rc;
}

/* ---- writes ------------------------------------------------------------------------- */

static bool samples_init(samples *sp, long writes, long subs) {
    *sp = (samples){0};
    sp->cap_delta = (size_t)writes * (size_t)(subs ? subs : 1);
    sp->ack = malloc((size_t)writes * sizeof *sp->ack);
    sp->read = malloc((size_t)writes * sizeof *sp->read);
    sp->last = malloc((size_t)writes * sizeof *sp->last);
    sp->delta = malloc(sp->cap_delta * sizeof *sp->delta);
    return sp->ack && sp->read && sp->last && sp->delta;
}

static void samples_free(samples *sp) {
    free(sp->ack), free(sp->read), free(sp->last), free(sp->delta);
}

/* One closed-loop write: the write, the ad-hoc read, the subscribers' deltas. Samples go
 * to sp unless it is NULL (warm-up). */
static int one_write(const options *o, vm_model *m, vh_hub *h, ws_client *writer, samples *sp,
                     char *why) {
    long w = m->writes;
    long key = o->phase->keyed ? w % o->subscribers : w % (long)m->hot;
    fx_row row = {vm_head(key), vm_fresh(m, w)};
    char program[96], id[32];
    /* Only a hot head's key has rows in r1 and hot_reach. */
    vh_expect(h, key, (size_t)key < m->hot, row);

    snprintf(program, sizeof program, "+edge(%" PRId64 ", %" PRId64 ")", row.head, row.tail);
    snprintf(id, sizeof id, "w%ld", w);
    json_t *res;
    uint64_t sent = fx_now_ns(), ack;
    int rc = timed_execute(writer, id, program, &res, &ack, why);
    long long inserted = rc == FX_OK ? fx_inserted_count(res) : 0;
    json_decref(res);
    if (rc != FX_OK) return rc;
    if (inserted != 1)
        return fail(why, FX_INVALID, "%s inserted %lld facts, not 1", program, inserted);
    if (!vm_write(m, key)) return fail(why, FX_FAILED, "out of memory");

    size_t n;
    fx_row *expected = vm_rows(m, VM_R1, key, &n);
    if (!expected) return fail(why, FX_FAILED, "out of memory");
    uint64_t read_ns;
    snprintf(program, sizeof program, "?r1(%" PRId64 ", Y)", row.head);
    snprintf(id, sizeof id, "r%ld", w);
    rc = checked_read(writer, id, program, expected, n, &read_ns, why);
    free(expected);
    if (rc != FX_OK) return rc;

    uint64_t last;
    rc = vh_wait(h, sent, o->delta_timeout_ms, sp ? sp->delta : NULL, sp ? &sp->ndelta : NULL,
                 &last, why, 512);
    if (sp && rc == FX_OK) {
        if (last) sp->last[sp->nlast++] = last;
        sp->ack[sp->nack++] = ack;
        sp->read[sp->nread++] = read_ns;
    }
    return rc;
}

typedef struct phase_result {
    double subscribe_ms, fillers_ms;
    long fillers;
    uint64_t frames;
    fx_cpu_figures cpu;
} phase_result;

static void report(const options *o, const vm_model *m, const vh_hub *h, const setup_times *st,
                   samples *sp, const phase_result *r) {
    printf("{\"phase\":\"%s\",\"edges\":%zu,\"edges_loaded\":%zu,\"hot\":%zu,\"query\":",
           o->phase->name, o->edges, m->edges_loaded, m->hot);
    if (h->nsubs && o->phase->keyed)
        printf("\"?%s(400i, Y)\"", REL_NAMES[o->phase->rel]);
    else if (h->nsubs)
        printf("\"?%s(X, Y)\"", REL_NAMES[o->phase->rel]);
    else
        printf("null");
    printf(",\"subscribers\":%ld,\"connections\":%ld,\"writes\":%zu,\"warmup\":%ld,"
           "\"events\":%zu,\"load_ms\":%.1f,\"rules_ms\":[%.1f,%.1f,%.1f,%.1f]",
           h->nsubs, h->nconns, sp->nack, o->warmup, sp->ndelta, st->load_ms, st->rules_ms[0],
           st->rules_ms[1], st->rules_ms[2], st->rules_ms[3]);
    if (o->phase->fillers)
        printf(",\"fillers\":%ld,\"fillers_ms\":%.1f", r->fillers, r->fillers_ms);
    if (h->nsubs) printf(",\"subscribe_ms\":%.2f", r->subscribe_ms);
    double a50 = fx_json_percentile(stdout, "ack_us_p50", sp->ack, sp->nack, 0.5);
    double a99 = fx_json_percentile(stdout, "ack_us_p99", sp->ack, sp->nack, 0.99);
    double r50 = fx_json_percentile(stdout, "read_us_p50", sp->read, sp->nread, 0.5);
    fx_json_percentile(stdout, "read_us_p99", sp->read, sp->nread, 0.99);
    double d50 = fx_json_percentile(stdout, "delta_us_p50", sp->delta, sp->ndelta, 0.5);
    double d99 = fx_json_percentile(stdout, "delta_us_p99", sp->delta, sp->ndelta, 0.99);
    fx_json_percentile(stdout, "last_delta_us_p50", sp->last, sp->nlast, 0.5);
    double l99 = fx_json_percentile(stdout, "last_delta_us_p99", sp->last, sp->nlast, 0.99);
    fx_json_percentile(stdout, "delta_us_max", sp->delta, sp->ndelta, 1.0);
    printf(",\"frames_per_write\":%.2f", sp->nack ? (double)r->frames / (double)sp->nack : 0.0);
    if (r->cpu.known)
        printf(",\"server_idle_cpu_ms_per_s\":%.2f,\"server_cpu_per_write_ms\":%.3f,"
               "\"writes_per_server_cpu_sec\":%.0f",
               r->cpu.idle_ms_per_s, r->cpu.per_op_ms, r->cpu.ops_per_cpu_sec);
    long rss, hwm;
    if (o->server_pid && fx_process_memory_kb(o->server_pid, &rss, &hwm))
        printf(",\"server_rss_kb\":%ld,\"server_hwm_kb\":%ld", rss, hwm);
    printf("}\n%s", o->phase->name);
    if (o->phase->fillers) printf(" after %ld filler rules", r->fillers);
    printf(" at %zu edges: %ld subscriber%s, %zu writes, %zu deltas checked; ack p50 %.1f p99 "
           "%.1f µs; read p50 %.1f µs; delta p50 %.1f p99 %.1f, last p99 %.1f µs",
           o->edges, h->nsubs, h->nsubs == 1 ? "" : "s", sp->nack, sp->ndelta, a50, a99, r50, d50,
           d99, l99);
    if (h->nsubs) printf("; subscribe %.2f ms", r->subscribe_ms);
    if (r->cpu.known) printf("; server CPU %.3f ms per write", r->cpu.per_op_ms);
    printf("%s\n", a99 < 0 || d99 < 0 || l99 < 0 ? " (-1: too few samples)" : "");
    fflush(stdout);
}

/* Warm-up, then the measured writes with the server's CPU around them. */
static int write_phase(const options *o, vm_model *m, vh_hub *h, ws_client *writer,
                       const fx_cpu_meter *idle, phase_result *r, samples *sp, char *why) {
    int rc = FX_OK;
    for (long i = 0; rc == FX_OK && i < o->warmup; i++) rc = one_write(o, m, h, writer, NULL, why);
    fx_cpu_meter meter = *idle;
    uint64_t frames0 = vh_frames(h);
    fx_cpu_start(&meter);
    for (long i = 0; rc == FX_OK && i < o->writes; i++) rc = one_write(o, m, h, writer, sp, why);
    r->cpu = fx_cpu_stop(&meter, o->writes);
    r->frames = vh_frames(h) - frames0;
    return rc;
}

static int run_writes(const options *o, vm_model *m, ws_client *writer, const setup_times *st,
                      char *why) {
    vh_hub h;
    phase_result r = {0};
    samples sp = {0};
    int rc = vh_init(&h, o->subscribers, o->subs_per_conn) ? FX_OK
                                                           : fail(why, FX_FAILED, "out of memory");
    if (rc == FX_OK && o->phase->fillers) {
        r.fillers = o->fillers[0];
        r.fillers_ms = add_fillers(writer, 0, r.fillers, &rc, why);
    }
    uint64_t sub_ns = 0;
    if (rc == FX_OK && o->subscribers > 0) rc = subscribe_all(o, m, &h, &sub_ns, why);
    r.subscribe_ms = (double)sub_ns / 1e6;
    if (rc == FX_OK) rc = vh_start(&h, why, 512);
    fx_cpu_meter idle;
    if (rc == FX_OK) measure_idle(o, &idle);
    for (int round = 0; rc == FX_OK && round < (o->phase->fillers ? 2 : 1); round++) {
        if (round == 1) {
            r.fillers_ms = add_fillers(writer, o->fillers[0], o->fillers[1], &rc, why);
            r.fillers = o->fillers[1];
        }
        if (rc == FX_OK && !samples_init(&sp, o->writes, o->subscribers))
            rc = fail(why, FX_FAILED, "out of memory");
        if (rc == FX_OK) rc = write_phase(o, m, &h, writer, &idle, &r, &sp, why);
        /* Strays: a delta after its write's expected one. */
        if (rc == FX_OK && h.nconns > 0 && round == (o->phase->fillers ? 1 : 0)) {
            fx_sleep_ns((uint64_t)o->grace_ms * 1000000u);
            rc = vh_status(&h, why, 512);
        }
        if (rc == FX_OK) report(o, m, &h, st, &sp, &r);
        samples_free(&sp);
    }
    vh_destroy(&h);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------ */

/* A thousand subscriber connections need more descriptors than the usual soft limit. */
static void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int main(int argc, char **argv) {
    options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    raise_fd_limit();
    vm_model m;
    vm_init(&m, o.edges);
    if (o.phase->keyed && (size_t)o.subscribers > m.hot)
        fprintf(stderr,
                "inputlayer-views: note: %zu hot heads at %zu edges: subscribers %zu.. watch "
                "keys without rows, and writes to them change no view\n",
                m.hot, o.edges, m.hot);
    char why[512] = "";
    setup_times st = {0};
    ws_client *writer = NULL;
    rc = fx_create_graph(&o.target, "perf", &writer, why, sizeof why);
    if (rc == FX_OK) rc = setup(&m, o.edges, writer, &st, why);
    if (rc == FX_OK)
        rc = o.phase->writes ? run_writes(&o, &m, writer, &st, why)
                             : run_reads(&o, &m, writer, &st, why);
    if (rc != FX_OK)
        fprintf(stderr, "inputlayer-views: %s%s: %s\n", rc == FX_INVALID ? "INVALID run: " : "",
                o.phase->name, why);
    wsc_close(writer);
    vm_free(&m);
    return rc;
}
