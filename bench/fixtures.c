/* inputlayer-fixture: the standing-query fixtures of the perf gate (docs/performance.md
 * 3.4 in ../shared/docs) against a running inputlayer-server, as bench/run-fixtures.sh
 * runs them on a fresh server each:
 *
 *   inputlayer-fixture delta_single|delta_fanout|delta_keyed|interference|sessions --port P
 *       --api-key K
 *       [--host H] [--server-pid PID] [--agents A] [--writes W] [--interval-ms I]
 *       [--grace-ms G] [--timeout-ms T] [--phase-signals 1]
 *   inputlayer-fixture delta_first ...   (bench/fixture_first.c)
 *   inputlayer-fixture insert_single|insert_batch|writers ...   (bench/fixture_insert.c)
 *   inputlayer-fixture paired_writes|paired_reads ...   (bench/fixture_paired.c)
 *   inputlayer-fixture writes ...   (bench/fixture_writes.c)
 *
 * It creates knowledge graph `perf`, loads the fixture's dataset and rule through the
 * server, and computes every answer from the generated edges itself:
 *   delta_single  random 2,500 / 10,000 plus W probe edges (P_k, P_k + 1), P_k = 2501 + 2k;
 *                 `two_hop`; 1 agent `.subscribe agent0 ?two_hop(1, Z)`; write k is
 *                 `+edge(1, P_k)`, from k >= 32 with `-edge(1, P_{k-32})` in the same
 *                 program; every 20 ms, 150 writes.
 *   delta_fanout  the same with 64 agents, every 80 ms, 100 writes.
 *   interference  delta_single's graph, rule and writes with 1 agent, every 30 ms, 120 writes,
 *                 while one connection loops the long join `?two_hop(X, Z), edge(Z, X)` and a
 *                 slow consumer leaves 8 large results unread (bench/fixture_background.c);
 *                 long_request_us: the long join's latencies, every answer checked.
 *   delta_keyed   hot chains of 100K edges; only `r1`; agent k `.subscribe k<k>
 *                 ?r1(<400k>, Y)`; write w is `+edge(400 (w mod 300), 4 chains + 1000 + w)`;
 *                 300 agents, every 20 ms, 120 writes.
 *   sessions      delta_single's graph with W probe edges and rule; agent k (0-based) is a
 *                 session of its own, `.subscribe s<k> ?two_hop(<k + 1>, Z)`; write w is
 *                 `+edge(K_w, P_w)` with K_w = w mod A + 1, from w >= 32 with
 *                 `-edge(K_{w-32}, P_{w-32})`: the key's agent sees (K_w, P_w + 1) come and
 *                 go, and so does every agent whose key has an edge to K_w, with (k + 1, P_w);
 *                 100 agents, every 200 ms, 100 writes. subscriptions_per_sec: agents over
 *                 the time of their subscribing, one after another; rss_kb_per_session: the
 *                 server's resident memory after it over that before, per agent.
 * Agents subscribe one after another (subscribe_us, the snapshot checked row for row), then
 * each reads on a thread of its own. The writer sends on a fixed schedule whatever the
 * replies do, and reads the replies in between (ack_us, from the send). Every row of every
 * delta must be an expected event that has not come yet (an insert or a retraction of a
 * given row, caused by a given write), the delta's seq must follow the previous one, and
 * every expected event must come within W x I + 60 s; a foreign, repeated or missing row,
 * or a retraction where none is expected, makes the run INVALID (exit 3). Once every event
 * has come, every agent goes on reading for G ms (500), so that a stray delta to an agent
 * that expects nothing is seen too.
 *
 * delta_us: from the write's scheduled send time to the delta's arrival at the agent, one
 * sample per event; last_agent_us: per write, to the arrival at the last agent. With
 * --server-pid, the server's CPU over the write phase (from just before the first send to
 * the last event) minus its idle rate over a quiet period of the same length just before
 * (once the server has settled after the load: under 2% of a CPU, for up to 30 s), per
 * write.
 *
 * With --phase-signals 1 (and --server-pid), SIGUSR1 goes to the server just before the
 * write phase and SIGUSR2 just after it: a server started with INPUTLAYER_PHASE_CPU=1
 * records its phases over exactly that (bench/run-phases.sh).
 *
 * Prints one JSON line and one line for people. Exit status: 0 done, 1 an error, 2 usage,
 * 3 INVALID. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_background.h"
#include "fixture_data.h"
#include "fixture_first.h"
#include "fixture_insert.h"
#include "fixture_paired.h"
#include "fixture_writes.h"
#include "fixture_rows.h"
#include "fixture_session.h"
#include "fixture_stats.h"
#include "gen_graph.h"

/* From the fixture definitions. */
enum {
    RETRACT_LAG = 32,
    KEYED_CHAIN_EDGES = 100000,
    HOT_STRIDE = 400,
    FRESH_NODE_GAP = 1000,
    COMPLETION_SLACK_MS = 60000,
    FIRST_WRITE_LEAD_MS = 100,
    AGENT_POLL_MS = 20,
    SETTLE_MAX_MS = 30000, /* for the server's background work after the load */
};

typedef struct fixture_spec {
    const char *name;
    bool keyed;
    long agents, writes, interval_ms;
    bool background; /* the interference fixture's long join and slow consumer */
    bool sessions;   /* each agent on its own key */
} fixture_spec;

static const fixture_spec FIXTURES[] = {
    {"delta_single", false, 1, 150, 20, false, false},
    {"delta_fanout", false, 64, 100, 80, false, false},
    {"delta_keyed", true, 300, 120, 20, false, false},
    {"interference", false, 1, 120, 30, true, false},
    {"sessions", false, 100, 100, 200, false, true},
};

typedef struct options {
    fixture_spec spec;
    fx_target target;
    pid_t server_pid; /* 0: no CPU figures */
    long grace_ms;
    long phase_signals; /* 1: SIGUSR1 and SIGUSR2 to the server around the write phase */
} options;

/* One change an agent must see exactly once. */
typedef struct event {
    fx_row r;
    bool retract;
    long write; /* the write that causes it */
    bool seen;
    uint64_t arrival_ns;
} event;

typedef struct run_state {
    atomic_long complete;            /* agents with every event seen */
    atomic_bool stop;                /* a failure somewhere: everyone ends */
    _Atomic uint64_t drain_until_ns; /* 0 until every event came (or the run stops) */
} run_state;

typedef struct agent {
    run_state *rs;
    ws_client *ws;
    char name[32];
    uint64_t generation, next_seq;
    event *events;
    size_t nevents, nseen;
    uint64_t subscribe_ns;
    int status;
    char why[512];
} agent;

typedef struct dataset {
    gg_edge *edges;
    size_t nedges, hot;
    int64_t fresh_base; /* keyed: the first fresh node */
} dataset;

static void usage(FILE *f) {
    fputs("usage: inputlayer-fixture delta_single|delta_fanout|delta_keyed|interference|sessions\n"
          "         --port P\n"
          "         --api-key K\n"
          "         [--host H (127.0.0.1)] [--server-pid PID] [--agents A] [--writes W]\n"
          "         [--interval-ms I] [--grace-ms G (500)] [--timeout-ms T (60000)]\n"
          "         [--phase-signals 1 (with --server-pid)]\n"
          "       inputlayer-fixture delta_first --help\n"
          "       inputlayer-fixture insert_single|insert_batch|writers --help\n"
          "       inputlayer-fixture paired_writes|paired_reads|writes --help\n"
          "  Exit 3: a wrong, missing or extra row (the run is INVALID).\n",
          f);
}

/* Returns -1 when the options are good, else the exit status. */
static int parse_args(int argc, char **argv, options *o) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? FX_USAGE : 0;
    }
    size_t i;
    for (i = 0; i < sizeof FIXTURES / sizeof *FIXTURES; i++)
        if (strcmp(argv[1], FIXTURES[i].name) == 0) break;
    if (i == sizeof FIXTURES / sizeof *FIXTURES) {
        fprintf(stderr, "inputlayer-fixture: unknown fixture '%s'\n", argv[1]);
        usage(stderr);
        return FX_USAGE;
    }
    o->spec = FIXTURES[i];
    fx_target_defaults(&o->target);
    o->grace_ms = 500;
    for (int a = 2; a < argc; a += 2) {
        const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        bool ok = v != NULL;
        int taken = ok ? fx_target_arg(&o->target, &o->server_pid, k, v) : 0;
        if (taken)
            ok = taken > 0;
        else if (ok && strcmp(k, "--agents") == 0)
            ok = fx_parse_long(v, 1, 1000, &o->spec.agents);
        else if (ok && strcmp(k, "--writes") == 0)
            ok = fx_parse_long(v, 1, 100000, &o->spec.writes);
        else if (ok && strcmp(k, "--interval-ms") == 0)
            ok = fx_parse_long(v, 1, 60000, &o->spec.interval_ms);
        else if (ok && strcmp(k, "--grace-ms") == 0)
            ok = fx_parse_long(v, 0, 600000, &o->grace_ms);
        else if (ok && strcmp(k, "--phase-signals") == 0)
            ok = fx_parse_long(v, 0, 1, &o->phase_signals);
        else
            ok = false;
        if (!ok) return fx_bad_arg("inputlayer-fixture", k, v, usage);
    }
    if (!fx_target_complete("inputlayer-fixture", &o->target)) return FX_USAGE;
    return -1;
}

/* ---- the dataset and the answers ---------------------------------------------------- */

/* The random graph plus one probe edge per write; or the hot chains. */
static bool make_dataset(const options *o, dataset *d) {
    if (o->spec.keyed) {
        d->edges = gg_chains(KEYED_CHAIN_EDGES, &d->nedges);
        size_t chains = gg_chain_count(KEYED_CHAIN_EDGES);
        d->hot = gg_hot_count(chains);
        d->fresh_base = 4 * (int64_t)chains + FRESH_NODE_GAP;
        return d->edges != NULL;
    }
    d->edges = fx_delta_graph(o->spec.writes, &d->nedges);
    return d->edges != NULL;
}

static int64_t keyed_head(long agent_index) {
    return HOT_STRIDE * (int64_t)agent_index;
}

/* The sessions fixture's key of write w and of agent a. */
static int64_t session_key_of_write(const options *o, long w) {
    return w % o->spec.agents + 1;
}

static int64_t session_key(long agent_index) {
    return agent_index + 1;
}

/* The program of write w (0-based). */
static void write_program(const options *o, const dataset *d, long w, char *buf, size_t cap) {
    if (o->spec.sessions && w < RETRACT_LAG)
        snprintf(buf, cap, "+edge(%" PRId64 ", %" PRId64 ")", session_key_of_write(o, w),
                 fx_probe_node(w));
    else if (o->spec.sessions)
        snprintf(buf, cap, "+edge(%" PRId64 ", %" PRId64 ")\n-edge(%" PRId64 ", %" PRId64 ")",
                 session_key_of_write(o, w), fx_probe_node(w),
                 session_key_of_write(o, w - RETRACT_LAG), fx_probe_node(w - RETRACT_LAG));
    else if (o->spec.keyed)
        snprintf(buf, cap, "+edge(%" PRId64 ", %" PRId64 ")", keyed_head(w % o->spec.agents),
                 d->fresh_base + w);
    else if (w < RETRACT_LAG)
        snprintf(buf, cap, "+edge(%d, %" PRId64 ")", FX_DELTA_SOURCE, fx_probe_node(w));
    else
        snprintf(buf, cap, "+edge(%d, %" PRId64 ")\n-edge(%d, %" PRId64 ")", FX_DELTA_SOURCE,
                 fx_probe_node(w), FX_DELTA_SOURCE, fx_probe_node(w - RETRACT_LAG));
}

/* The sessions fixture's events of agent a from edge (K_v, P_v) coming (write w = v) or
 * going (write w = v + 32): its own row when K_v is its key, and (key, P_v) when its key
 * has an edge to K_v. */
static void session_events(const options *o, const dataset *d, long a, long v, long w, bool retract,
                           agent *ag) {
    int64_t key = session_key(a), to = session_key_of_write(o, v);
    if (to == key)
        ag->events[ag->nevents++] =
            (event){.r = {key, fx_probe_node(v) + 1}, .retract = retract, .write = w};
    if (fx_has_edge(d->edges, d->nedges, key, to))
        ag->events[ag->nevents++] =
            (event){.r = {key, fx_probe_node(v)}, .retract = retract, .write = w};
}

/* The events agent a must see: every write's two_hop change for the delta fixtures; for
 * the keyed one, the new edge of each write to its key; for sessions, session_events. */
static bool expect_events(const options *o, const dataset *d, long a, agent *ag) {
    long writes = o->spec.writes;
    ag->events = calloc((size_t)(4 * writes), sizeof *ag->events);
    if (ag->events && o->spec.sessions) {
        for (long w = 0; w < writes; w++) {
            session_events(o, d, a, w, w, false, ag);
            if (w >= RETRACT_LAG) session_events(o, d, a, w - RETRACT_LAG, w, true, ag);
        }
        return true;
    }
    if (!ag->events) return false;
    for (long w = 0; w < writes; w++) {
        if (o->spec.keyed) {
            if (w % o->spec.agents == a)
                ag->events[ag->nevents++] =
                    (event){.r = {keyed_head(a), d->fresh_base + w}, .write = w};
            continue;
        }
        ag->events[ag->nevents++] =
            (event){.r = {FX_DELTA_SOURCE, fx_probe_node(w) + 1}, .write = w};
        if (w >= RETRACT_LAG)
            ag->events[ag->nevents++] =
                (event){.r = {FX_DELTA_SOURCE, fx_probe_node(w - RETRACT_LAG) + 1},
                        .retract = true,
                        .write = w};
    }
    return true;
}

/* ---- loading ------------------------------------------------------------------------- */

/* Loads the dataset and the fixture's rule through ws, a connection to graph `perf`. */
static int load(const options *o, const dataset *d, ws_client *ws, char *why, size_t why_len) {
    fx_loader l = {.ws = ws};
    int rc = gg_emit_edges("edge", d->edges, d->nedges, GG_CHUNK, fx_load_statement, &l);
    size_t expected = d->nedges + d->hot;
    if (rc == 0 && d->hot > 0)
        rc = gg_emit_hot_labels("label", "hot", d->hot, GG_CHUNK, fx_load_statement, &l);
    if (rc == 0)
        rc = fx_load_statement(&l,
                               o->spec.keyed ? "+r1(X, Y) <- edge(X, Y), label(X, \"hot\")"
                                             : "+two_hop(X, Z) <- edge(X, Y), edge(Y, Z)",
                               0);
    if (rc < 0) {
        snprintf(l.why, sizeof l.why, "out of memory");
        l.status = FX_FAILED;
    }
    if (rc == 0 && l.inserted != expected) {
        snprintf(l.why, sizeof l.why, "the server took %zu of %zu facts", l.inserted, expected);
        l.status = FX_INVALID;
    }
    if (l.status != FX_OK) snprintf(why, why_len, "loading: %.400s", l.why);
    return l.status;
}

/* ---- agents -------------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int agent_fail(agent *ag, int status, const char *fmt,
                                                            ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ag->why, sizeof ag->why, fmt, ap);
    va_end(ap);
    ag->status = status;
    return status;
}

/* Subscribes on a fresh connection and checks the snapshot against `expected`. */
static int subscribe(const options *o, agent *ag, const char *query, const fx_row *expected,
                     size_t nexpected) {
    char program[256], why[512];
    ag->ws = fx_open(&o->target, "perf", why, sizeof why);
    if (!ag->ws) return agent_fail(ag, FX_FAILED, "%s", why);
    snprintf(program, sizeof program, ".subscribe %s %s", ag->name, query);
    json_t *res;
    uint64_t t0 = fx_now_ns();
    int rc = fx_execute(ag->ws, "subscribe", program, &res, why, sizeof why);
    ag->subscribe_ns = fx_now_ns() - t0;
    if (rc == FX_OK)
        rc = fx_check_subscribed(res, ag->name, expected, nexpected, &ag->generation, why,
                                 sizeof why);
    ag->next_seq = 1;
    json_decref(res);
    return rc == FX_OK ? FX_OK : agent_fail(ag, rc, "%s", why);
}

/* Marks the event of row r (an insert or a retraction) as seen at t. */
static int take_row(agent *ag, const json_t *v, bool retract, uint64_t t) {
    fx_row r;
    if (!fx_read_row(v, &r))
        return agent_fail(ag, FX_INVALID, "a delta row that is not [int, int]");
    for (size_t i = 0; i < ag->nevents; i++) {
        event *e = &ag->events[i];
        if (e->retract != retract || e->r.head != r.head || e->r.tail != r.tail) continue;
        if (e->seen) break;
        e->seen = true;
        e->arrival_ns = t;
        ag->nseen++;
        return FX_OK;
    }
    return agent_fail(ag, FX_INVALID, "an unexpected or repeated %s row [%" PRId64 ",%" PRId64 "]",
                      retract ? "retracted" : "inserted", r.head, r.tail);
}

static int take_delta(agent *ag, const json_t *o, uint64_t t) {
    char why[512];
    if (fx_check_delta_header(o, ag->name, ag->generation, &ag->next_seq, why, sizeof why) != FX_OK)
        return agent_fail(ag, FX_INVALID, "%s", why);
    const json_t *ins = json_object_get(o, "inserted"), *ret = json_object_get(o, "retracted");
    for (size_t i = 0; i < json_array_size(ins); i++)
        if (take_row(ag, json_array_get(ins, i), false, t) != FX_OK) return ag->status;
    for (size_t i = 0; i < json_array_size(ret); i++)
        if (take_row(ag, json_array_get(ret, i), true, t) != FX_OK) return ag->status;
    return FX_OK;
}

static void *agent_main(void *arg) {
    agent *ag = arg;
    run_state *rs = ag->rs;
    bool counted = false;
    for (;;) {
        if (!counted && ag->nseen == ag->nevents) {
            atomic_fetch_add(&rs->complete, 1);
            counted = true;
        }
        uint64_t until = atomic_load(&rs->drain_until_ns), now = fx_now_ns();
        if ((until && now >= until) || atomic_load(&rs->stop)) break;
        long long wait = AGENT_POLL_MS * 1000000LL;
        if (until && (long long)(until - now) < wait) wait = (long long)(until - now);
        int ready = wsc_wait_readable(ag->ws, wait);
        const char *msg;
        size_t len;
        if (ready < 0 || (ready > 0 && wsc_recv_text(ag->ws, &msg, &len) != 0)) {
            agent_fail(ag, FX_FAILED, "reading: %s", wsc_error(ag->ws));
            break;
        }
        if (ready == 0) continue;
        uint64_t t = fx_now_ns();
        json_t *o = json_loadb(msg, len, 0, NULL);
        switch (fx_classify(o)) {
        case FX_FRAME_PUSH:
            break;
        case FX_FRAME_DELTA:
            take_delta(ag, o, t);
            break;
        default:
            agent_fail(ag, FX_INVALID, "an agent got: %.*s", (int)(len > 300 ? 300 : len), msg);
        }
        json_decref(o);
        if (ag->status != FX_OK) break;
    }
    if (ag->status != FX_OK) atomic_store(&rs->stop, true);
    return NULL;
}

/* ---- the writer ---------------------------------------------------------------------- */

typedef struct write_log {
    uint64_t *scheduled_ns, *sent_ns, *ack_ns; /* ack_ns: from the send */
    uint64_t start_ns, end_ns;
} write_log;

/* Sends every write at its time and reads the replies in between. */
static int run_writer(const options *o, const dataset *d, ws_client *ws, run_state *rs,
                      write_log *log, char *why, size_t why_len) {
    long writes = o->spec.writes, sent = 0, acked = 0;
    uint64_t interval = (uint64_t)o->spec.interval_ms * 1000000u;
    uint64_t deadline =
        log->start_ns + (uint64_t)writes * interval + COMPLETION_SLACK_MS * 1000000ull;
    char program[256], frame[512], id[32];
    while (acked < writes && !atomic_load(&rs->stop)) {
        uint64_t now = fx_now_ns(), due = log->start_ns + (uint64_t)sent * interval;
        if (sent < writes && now >= due) {
            write_program(o, d, sent, program, sizeof program);
            int n = snprintf(frame, sizeof frame,
                             "{\"type\":\"execute\",\"id\":\"w%ld\",\"program\":\"%s\"}", sent,
                             program);
            /* The only character of these programs JSON must escape is the newline. */
            char *nl = strchr(frame, '\n');
            if (nl) {
                memmove(nl + 2, nl + 1, strlen(nl + 1) + 1);
                nl[0] = '\\', nl[1] = 'n', n++;
            }
            log->scheduled_ns[sent] = due;
            log->sent_ns[sent] = fx_now_ns();
            if (wsc_send_text(ws, frame, (size_t)n) != 0) {
                snprintf(why, why_len, "sending write %ld: %s", sent, wsc_error(ws));
                return FX_FAILED;
            }
            sent++;
            continue;
        }
        if (now > deadline) {
            snprintf(why, why_len, "write %ld was not answered in time", acked);
            return FX_FAILED;
        }
        long long wait = sent < writes ? (long long)(due - now) : (long long)interval;
        int ready = wsc_wait_readable(ws, wait);
        const char *msg;
        size_t len;
        if (ready < 0 || (ready > 0 && wsc_recv_text(ws, &msg, &len) != 0)) {
            snprintf(why, why_len, "waiting for write %ld's reply: %s", acked, wsc_error(ws));
            return FX_FAILED;
        }
        if (ready == 0) continue;
        uint64_t t = fx_now_ns();
        json_t *r = json_loadb(msg, len, 0, NULL);
        fx_frame_kind kind = fx_classify(r);
        snprintf(id, sizeof id, "w%ld", acked);
        const char *rid = json_string_value(json_object_get(r, "id"));
        bool ok =
            kind == FX_FRAME_PUSH || (kind == FX_FRAME_RESULT && rid && strcmp(rid, id) == 0 &&
                                      json_array_size(json_object_get(r, "errors")) == 0);
        json_decref(r);
        if (!ok) {
            snprintf(why, why_len, "write %ld got: %.*s", acked, (int)(len > 300 ? 300 : len), msg);
            return FX_INVALID;
        }
        if (kind == FX_FRAME_RESULT) log->ack_ns[acked] = t - log->sent_ns[acked], acked++;
    }
    return FX_OK;
}

/* What subscribing every agent took: the time, and the server's memory before and after. */
typedef struct subscribe_phase {
    uint64_t wall_ns;
    long rss_before_kb, rss_after_kb; /* 0: unknown */
} subscribe_phase;

/* ---- the report ---------------------------------------------------------------------- */

static int report(const options *o, agent *agents, const write_log *log, const fx_cpu_figures *cpu,
                  const subscribe_phase *sp, uint64_t *long_ns, size_t nlong) {
    long na = o->spec.agents, writes = o->spec.writes;
    size_t nevents = 0;
    for (long a = 0; a < na; a++) nevents += agents[a].nevents;
    uint64_t *delta = malloc((nevents ? nevents : 1) * sizeof *delta);
    uint64_t *last = calloc((size_t)writes, sizeof *last);
    uint64_t *sub = malloc((size_t)na * sizeof *sub);
    uint64_t *ack = malloc((size_t)writes * sizeof *ack);
    if (!delta || !last || !sub || !ack) {
        free(delta), free(last), free(sub), free(ack);
        fputs("inputlayer-fixture: out of memory\n", stderr);
        return FX_FAILED;
    }
    size_t nd = 0, nlast = 0;
    for (long a = 0; a < na; a++) {
        sub[a] = agents[a].subscribe_ns;
        for (size_t i = 0; i < agents[a].nevents; i++) {
            const event *e = &agents[a].events[i];
            uint64_t us = e->arrival_ns - log->scheduled_ns[e->write];
            delta[nd++] = us;
            if (us > last[e->write]) last[e->write] = us;
        }
    }
    /* Writes that changed no view (keyed: none here) have no last agent. */
    for (long w = 0; w < writes; w++)
        if (last[w]) last[nlast++] = last[w];
    uint64_t late = 0;
    for (long w = 0; w < writes; w++) {
        ack[w] = log->ack_ns[w];
        if (log->sent_ns[w] - log->scheduled_ns[w] > late)
            late = log->sent_ns[w] - log->scheduled_ns[w];
    }
    double d50 = fx_percentile_us(delta, nd, 0.5), d99 = fx_percentile_us(delta, nd, 0.99);
    double dmax = fx_percentile_us(delta, nd, 1.0);
    double l50 = fx_percentile_us(last, nlast, 0.5), l99 = fx_percentile_us(last, nlast, 0.99);
    double a50 = fx_percentile_us(ack, (size_t)writes, 0.5),
           a99 = fx_percentile_us(ack, (size_t)writes, 0.99);
    double s50 = fx_percentile_us(sub, (size_t)na, 0.5),
           s99 = fx_percentile_us(sub, (size_t)na, 0.99);
    double phase_ms = (double)(log->end_ns - log->start_ns) / 1e6;
    printf("{\"fixture\":\"%s\",\"agents\":%ld,\"writes\":%ld,\"interval_ms\":%ld,\"events\":%zu,"
           "\"delta_us_p50\":%.1f,\"delta_us_p99\":%.1f,\"delta_us_max\":%.1f,"
           "\"last_agent_us_p50\":%.1f,\"last_agent_us_p99\":%.1f,\"ack_us_p50\":%.1f,"
           "\"ack_us_p99\":%.1f,\"subscribe_us_p50\":%.1f,\"subscribe_us_p99\":%.1f,"
           "\"send_late_max_us\":%.1f,\"write_phase_ms\":%.1f",
           o->spec.name, na, writes, o->spec.interval_ms, nd, d50, d99, dmax, l50, l99, a50, a99,
           s50, s99, (double)late / 1000.0, phase_ms);
    if (o->spec.background) {
        printf(",\"long_requests\":%zu", nlong);
        fx_json_percentile(stdout, "long_request_us_p50", long_ns, nlong, 0.5);
        fx_json_percentile(stdout, "long_request_us_p99", long_ns, nlong, 0.99);
        fx_json_percentile(stdout, "long_request_us_max", long_ns, nlong, 1.0);
    }
    if (o->spec.sessions) {
        printf(",\"subscriptions_per_sec\":%.1f",
               sp->wall_ns ? (double)na * 1e9 / (double)sp->wall_ns : 0.0);
        if (sp->rss_before_kb)
            printf(",\"rss_kb_per_session\":%.1f",
                   (double)(sp->rss_after_kb - sp->rss_before_kb) / (double)na);
    }
    if (cpu->known)
        printf(",\"server_idle_cpu_ms_per_s\":%.2f,\"server_cpu_per_write_ms\":%.3f,"
               "\"writes_per_server_cpu_sec\":%.0f",
               cpu->idle_ms_per_s, cpu->per_op_ms, cpu->ops_per_cpu_sec);
    printf("}\n%s: %ld agent%s, %ld writes every %ld ms, %zu events checked: delta p50 %.1f µs, "
           "p99 %.1f µs; last agent p99 %.1f µs; ack p50 %.1f µs, p99 %.1f µs; subscribe p50 "
           "%.1f µs",
           o->spec.name, na, na == 1 ? "" : "s", writes, o->spec.interval_ms, nd, d50, d99, l99,
           a50, a99, s50);
    if (cpu->known)
        printf("; server CPU %.3f ms per write (%.0f writes per CPU second)", cpu->per_op_ms,
               cpu->ops_per_cpu_sec);
    printf("\n");
    free(delta), free(last), free(sub), free(ack);
    return fflush(stdout) == 0 ? FX_OK : FX_FAILED;
}

/* ---- the run ------------------------------------------------------------------------- */

/* Subscribes every agent, one after another, and prepares its events. */
static int open_agents(const options *o, const dataset *d, agent *agents, run_state *rs,
                       subscribe_phase *sp) {
    size_t nsnap = 0;
    fx_row *snapshot = o->spec.keyed ? NULL : fx_two_hop_rows(d->edges, d->nedges, &nsnap);
    if (!o->spec.keyed && !snapshot) return FX_FAILED;
    int rc = FX_OK;
    long hwm;
    if (o->server_pid && !fx_process_memory_kb(o->server_pid, &sp->rss_before_kb, &hwm))
        sp->rss_before_kb = 0;
    uint64_t t0 = fx_now_ns();
    for (long a = 0; rc == FX_OK && a < o->spec.agents; a++) {
        agent *ag = &agents[a];
        ag->rs = rs;
        char query[128];
        fx_row keyed_snapshot = {keyed_head(a), keyed_head(a) + 1};
        if (o->spec.sessions) {
            free(snapshot);
            snapshot = fx_two_hop_rows_from(d->edges, d->nedges, session_key(a), &nsnap);
            if (!snapshot) {
                rc = agent_fail(ag, FX_FAILED, "out of memory");
                break;
            }
            snprintf(ag->name, sizeof ag->name, "s%ld", a);
            snprintf(query, sizeof query, "?two_hop(%" PRId64 ", Z)", session_key(a));
        } else if (o->spec.keyed) {
            snprintf(ag->name, sizeof ag->name, "k%ld", a);
            snprintf(query, sizeof query, "?r1(%" PRId64 ", Y)", keyed_head(a));
        } else {
            snprintf(ag->name, sizeof ag->name, "agent%ld", a);
            snprintf(query, sizeof query, "?two_hop(%d, Z)", FX_DELTA_SOURCE);
        }
        if (!expect_events(o, d, a, ag))
            rc = agent_fail(ag, FX_FAILED, "out of memory");
        else
            rc = subscribe(o, ag, query, o->spec.keyed ? &keyed_snapshot : snapshot,
                           o->spec.keyed ? 1 : nsnap);
    }
    sp->wall_ns = fx_now_ns() - t0;
    if (!sp->rss_before_kb || !fx_process_memory_kb(o->server_pid, &sp->rss_after_kb, &hwm))
        sp->rss_after_kb = sp->rss_before_kb = 0;
    free(snapshot);
    return rc;
}

static int run(const options *o) {
    long na = o->spec.agents, writes = o->spec.writes;
    char why[512] = "out of memory";
    dataset d = {0};
    agent *agents = calloc((size_t)na, sizeof *agents);
    pthread_t *threads = calloc((size_t)na, sizeof *threads);
    write_log log = {.scheduled_ns = calloc((size_t)writes, sizeof(uint64_t)),
                     .sent_ns = calloc((size_t)writes, sizeof(uint64_t)),
                     .ack_ns = calloc((size_t)writes, sizeof(uint64_t))};
    run_state rs = {0};
    ws_client *writer = NULL;
    long started = 0;
    int status = FX_FAILED;
    fx_cpu_figures cpu = {0};
    subscribe_phase sp = {0};
    fx_background *bg = NULL;
    uint64_t *long_ns = NULL;
    size_t nlong = 0;
    if (!agents || !threads || !log.scheduled_ns || !log.sent_ns || !log.ack_ns ||
        !make_dataset(o, &d))
        goto done;
    if (o->spec.keyed && (size_t)na > d.hot) {
        snprintf(why, sizeof why, "at most %zu keyed agents (one per hot head)", d.hot);
        status = FX_USAGE;
        goto done;
    }
    if ((status = fx_create_graph(&o->target, "perf", &writer, why, sizeof why)) != FX_OK ||
        (status = load(o, &d, writer, why, sizeof why)) != FX_OK)
        goto done;
    status = open_agents(o, &d, agents, &rs, &sp);
    if (status != FX_OK) {
        snprintf(why, sizeof why, "subscribing the agents failed");
        goto done;
    }
    for (; started < na; started++)
        if (pthread_create(&threads[started], NULL, agent_main, &agents[started]) != 0) {
            snprintf(why, sizeof why, "cannot start agent thread %ld", started);
            status = FX_FAILED;
            atomic_store(&rs.stop, true);
            goto done;
        }

    /* The server's own idle rate over a quiet period as long as the write phase: what it
     * spends with nothing to do (timers, sweeps) is not the writes' cost. */
    uint64_t quiet_ns = (uint64_t)writes * (uint64_t)o->spec.interval_ms * 1000000u;
    fx_cpu_meter meter;
    fx_cpu_settle(o->server_pid, SETTLE_MAX_MS * 1000000ull);
    fx_cpu_idle(&meter, o->server_pid, quiet_ns);
    fx_cpu_start(&meter);
    if (o->phase_signals && o->server_pid) kill(o->server_pid, SIGUSR1);
    if (o->spec.background &&
        !(bg = fx_background_start(&o->target, d.edges, d.nedges, why, sizeof why))) {
        status = FX_FAILED;
        atomic_store(&rs.stop, true);
        goto done;
    }

    log.start_ns = fx_now_ns() + FIRST_WRITE_LEAD_MS * 1000000ull;
    status = run_writer(o, &d, writer, &rs, &log, why, sizeof why);
    uint64_t deadline = log.start_ns + quiet_ns + COMPLETION_SLACK_MS * 1000000ull;
    while (status == FX_OK && atomic_load(&rs.complete) < na && !atomic_load(&rs.stop) &&
           fx_now_ns() < deadline)
        fx_sleep_ns(200000);
    log.end_ns = fx_now_ns();
    if (status == FX_OK) cpu = fx_cpu_stop(&meter, writes);
    if (o->phase_signals && o->server_pid) kill(o->server_pid, SIGUSR2);
    if (bg) {
        char bg_why[512];
        int bg_status = fx_background_stop(bg, &long_ns, &nlong, bg_why, sizeof bg_why);
        bg = NULL;
        if (status == FX_OK && bg_status != FX_OK) {
            status = bg_status;
            snprintf(why, sizeof why, "the long join: %.400s", bg_why);
        }
    }
    if (status != FX_OK) atomic_store(&rs.stop, true);
    atomic_store(&rs.drain_until_ns, fx_now_ns() + (uint64_t)o->grace_ms * 1000000u);

done:;
    /* Ends the agents at once unless the normal end above gave them their grace. */
    uint64_t not_set = 0;
    atomic_compare_exchange_strong(&rs.drain_until_ns, &not_set, 1);
    for (long a = 0; a < started; a++) pthread_join(threads[a], NULL);
    if (status != FX_OK) fprintf(stderr, "inputlayer-fixture: %s: %s\n", o->spec.name, why);
    /* A wrong delta outranks the errors it may have caused elsewhere. */
    for (long a = 0; agents && a < na; a++) {
        agent *ag = &agents[a];
        /* Events are missing only from a run that was not stopped by a failure. */
        if (ag->status == FX_OK && ag->events && started == na && ag->nseen < ag->nevents &&
            status == FX_OK && !atomic_load(&rs.stop)) {
            const event *e = ag->events;
            while (e->seen) e++;
            agent_fail(ag, FX_INVALID,
                       "%zu of %zu events missing, the first: %s [%" PRId64 ",%" PRId64
                       "] of write %ld",
                       ag->nevents - ag->nseen, ag->nevents, e->retract ? "retract" : "insert",
                       e->r.head, e->r.tail, e->write);
        }
        if (ag->status == FX_OK) continue;
        fprintf(stderr, "inputlayer-fixture: %sagent %s: %s\n",
                ag->status == FX_INVALID ? "INVALID run: " : "", ag->name, ag->why);
        if (status == FX_OK || ag->status == FX_INVALID) status = ag->status;
    }
    if (bg) fx_background_stop(bg, NULL, NULL, NULL, 0);
    if (status == FX_OK) status = report(o, agents, &log, &cpu, &sp, long_ns, nlong);
    free(long_ns);
    for (long a = 0; agents && a < na; a++) {
        wsc_close(agents[a].ws);
        free(agents[a].events);
    }
    wsc_close(writer);
    free(d.edges);
    free(log.scheduled_ns), free(log.sent_ns), free(log.ack_ns);
    free(threads);
    free(agents);
    return status;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "delta_first") == 0) return fx_delta_first_main(argc, argv);
    if (argc >= 2 && fx_is_insert_fixture(argv[1])) return fx_insert_main(argc, argv);
    if (argc >= 2 &&
        (strcmp(argv[1], "paired_writes") == 0 || strcmp(argv[1], "paired_reads") == 0))
        return fx_paired_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "writes") == 0) return fx_writes_main(argc, argv);
    options o = {0};
    int status = parse_args(argc, argv, &o);
    return status < 0 ? run(&o) : status;
}
