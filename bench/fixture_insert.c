/* insert_single, insert_batch and writers (docs/performance.md 3.4 in ../shared/docs, with
 * more samples): what a durable write costs through the server over /ws, as
 * bench/run-durable.sh runs them on a fresh server each, in `immediate` durability (a write
 * is acknowledged after its log record was synced), beside the disk's fsync floor.
 *
 *   inputlayer-fixture insert_single|insert_batch|writers --port P --api-key K [--host H]
 *       [--server-pid PID] [--warmup W] [--writes N] [--batch B] [--writers C]
 *       [--rounds R] [--timeout-ms T]
 *
 * Each creates knowledge graph `perf` and writes facts `+event(i, i)`, each i once in the
 * run, every connection in a closed loop (one request in flight):
 *   insert_single  W (100) untimed writes, then N (2,000) timed, one fact per execute.
 *   insert_batch   the same with B (1,000) facts per execute, `+event[(i, i), ...]`; W 5,
 *                  N 100.
 *   writers        C (4) connections, each W (20) untimed writes, then R (5) rounds of two
 *                  phases, their order flipped every round: one connection alone writes N
 *                  (1,000) single facts; all C write N each, started together. The other
 *                  connections stay open while one writes alone: the server sends every
 *                  connection of the graph a notification per write in both phases.
 *                  facts/s of a phase: its facts over the time from its first send to its
 *                  last reply; the ratio: the median of the rounds' concurrent / single
 *                  rates.
 * ack_us: from just before the send to the moment the reply was read; percentiles by
 * nearest rank. Every reply must be the result of its request saying that it inserted
 * exactly the facts sent, with a revision above the last one its connection saw; no two
 * writes may share a revision; at the end the graph must hold exactly the facts written.
 * Anything else makes the run INVALID (exit 3).
 *
 * With --server-pid: the server's CPU per write over the timed phases, from
 * /proc/PID/task/TID/schedstat, net of its idle rate over a quiet half second before.
 * Prints one JSON line and one line for people. */
#include "fixture_insert.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_facts.h"
#include "fixture_session.h"
#include "fixture_stats.h"

enum {
    QUIET_MS = 500,        /* for the server's idle rate */
    SETTLE_MAX_MS = 10000, /* for its work after the warm-up */
    MAX_WRITES = 1000000,
    MAX_BATCH = 100000,
    MAX_WRITERS = 64,
    MAX_ROUNDS = 100,
};

typedef enum insert_kind { INSERT_SINGLE, INSERT_BATCH, WRITERS } insert_kind;

typedef struct insert_options {
    insert_kind kind;
    const char *name;
    fx_target target;
    pid_t server_pid; /* 0: no CPU figures */
    long warmup, writes, batch, writers, rounds;
} insert_options;

static const char *const NAMES[] = {"insert_single", "insert_batch", "writers"};

bool fx_is_insert_fixture(const char *name) {
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
        if (strcmp(name, NAMES[i]) == 0) return true;
    return false;
}

static void usage(FILE *f) {
    fputs("usage: inputlayer-fixture insert_single|insert_batch|writers --port P --api-key K\n"
          "         [--host H (127.0.0.1)] [--server-pid PID] [--timeout-ms T (60000)]\n"
          "         [--warmup W (100; insert_batch 5; writers 20 per connection)]\n"
          "         [--writes N (2000; insert_batch 100; writers 1000 per connection and phase)]\n"
          "         insert_batch: [--batch B (1000 facts per write)]\n"
          "         writers: [--writers C (4)] [--rounds R (5)]\n"
          "  Exit 3: a wrong reply or a wrong count of facts (the run is INVALID).\n",
          f);
}

static int parse_args(int argc, char **argv, insert_options *o) {
    *o = (insert_options){.name = argv[1], .batch = 1, .writers = 4, .rounds = 5};
    o->kind = strcmp(argv[1], "insert_single") == 0  ? INSERT_SINGLE
              : strcmp(argv[1], "insert_batch") == 0 ? INSERT_BATCH
                                                     : WRITERS;
    o->warmup = o->kind == INSERT_SINGLE ? 100 : o->kind == INSERT_BATCH ? 5 : 20;
    o->writes = o->kind == INSERT_SINGLE ? 2000 : o->kind == INSERT_BATCH ? 100 : 1000;
    if (o->kind == INSERT_BATCH) o->batch = 1000;
    fx_target_defaults(&o->target);
    const fx_opt opts[] = {
        {"--warmup", 0, MAX_WRITES, &o->warmup, NULL},
        {"--writes", 1, MAX_WRITES, &o->writes, NULL},
        {"--batch", 1, MAX_BATCH, o->kind == INSERT_BATCH ? &o->batch : NULL, NULL},
        {"--writers", 1, MAX_WRITERS, o->kind == WRITERS ? &o->writers : NULL, NULL},
        {"--rounds", 1, MAX_ROUNDS, o->kind == WRITERS ? &o->rounds : NULL, NULL},
    };
    return fx_parse_options(argc, argv, "inputlayer-fixture", &o->target, &o->server_pid, opts,
                            sizeof opts / sizeof opts[0], usage);
}

/* ---- a timed phase on one connection ------------------------------------------------ */

/* The writes of one connection in one phase, and what they took. */
typedef struct phase {
    fx_fact_writer *w;
    int64_t first_fact;
    long writes;
    uint64_t *ack_ns; /* writes of them */
    uint64_t first_send_ns, last_ack_ns;
    struct start_gate *start; /* NULL: start at once */
    atomic_bool *stop;        /* set by a writer that failed: the others end too */
} phase;

/* Holds the writer threads of a phase until all of them are there, so that their writes
 * really overlap from the first; or lets them go without writing when one could not be
 * started. */
typedef struct start_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;
} start_gate;

static void gate_wait(start_gate *g) {
    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_open(start_gate *g) {
    pthread_mutex_lock(&g->mu);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void *run_phase(void *arg) {
    phase *p = arg;
    if (p->start) gate_wait(p->start);
    for (long k = 0; k < p->writes && !atomic_load(p->stop); k++) {
        uint64_t sent, acked;
        if (fx_writer_write(p->w, p->first_fact + k * p->w->batch, &sent, &acked) != FX_OK) {
            atomic_store(p->stop, true);
            break;
        }
        if (k == 0) p->first_send_ns = sent;
        p->last_ack_ns = acked;
        p->ack_ns[k] = acked - sent;
    }
    return NULL;
}

/* Untimed writes, facts from *next on. */
static int warm_up(fx_fact_writer *w, long writes, int64_t *next) {
    for (long k = 0; k < writes && w->status == FX_OK; k++, *next += w->batch)
        fx_writer_write(w, *next, NULL, NULL);
    return w->status;
}

/* The server's idle rate, once it settled after the warm-up. */
static void measure_idle(const insert_options *o, fx_cpu_meter *m) {
    fx_cpu_settle(o->server_pid, SETTLE_MAX_MS * 1000000ull);
    fx_cpu_idle(m, o->server_pid, QUIET_MS * 1000000ull);
}

/* The server's CPU net of its idle rate over a phase of `ops` writes, in ms; 0 unknown. */
static double phase_cpu_ms(const fx_cpu_meter *m, long ops) {
    fx_cpu_figures f = fx_cpu_stop(m, ops);
    return f.known ? f.per_op_ms * (double)ops : 0;
}

static double rate(long facts, uint64_t first_ns, uint64_t last_ns) {
    return last_ns > first_ns ? (double)facts * 1e9 / (double)(last_ns - first_ns) : 0;
}

/* A percentile for people: "n/a" for too few samples (fx_json_percentile's -1). */
static const char *us_text(double us, char *buf, size_t cap) {
    if (us < 0)
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.1f µs", us);
    return buf;
}

static void print_cpu(const fx_cpu_meter *m, const char *name, double cpu_ms, long ops) {
    if (!m->pid) return;
    printf(",\"%s\":%.4f", name, cpu_ms / (double)ops);
}

/* ---- insert_single and insert_batch ------------------------------------------------- */

static int serial_fixture(const insert_options *o) {
    fx_fact_writer w = {0};
    phase p = {.w = &w, .writes = o->writes};
    atomic_bool stop = false;
    p.stop = &stop;
    p.ack_ns = calloc((size_t)o->writes, sizeof *p.ack_ns);
    int64_t next = 1, *revisions = NULL;
    size_t nrev = 0, rev_cap = 0;
    ws_client *setup = NULL;
    char why[512] = "out of memory";
    int status =
        p.ack_ns ? fx_create_graph(&o->target, "perf", &setup, why, sizeof why) : FX_FAILED;
    wsc_close(setup);
    if (status == FX_OK) status = fx_writer_open(&w, &o->target, "w0", o->batch);
    if (status == FX_OK) status = warm_up(&w, o->warmup, &next);
    fx_cpu_meter meter = {0};
    double cpu_ms = 0;
    if (status == FX_OK) {
        measure_idle(o, &meter);
        fx_cpu_start(&meter);
        p.first_fact = next;
        run_phase(&p);
        cpu_ms = phase_cpu_ms(&meter, o->writes);
        next += o->writes * o->batch;
        status = w.status;
    }
    if (status == FX_OK) status = fx_check_fact_count(&w, next - 1);
    if (w.status != FX_OK) snprintf(why, sizeof why, "%s", w.why);
    if (status == FX_OK && !fx_writer_take_revisions(&w, &revisions, &nrev, &rev_cap))
        status = FX_FAILED;
    if (status == FX_OK) status = fx_check_distinct_revisions(revisions, nrev, why, sizeof why);
    if (status != FX_OK) {
        fprintf(stderr, "inputlayer-fixture: %s%s: %s\n",
                status == FX_INVALID ? "INVALID run: " : "", o->name, why);
    } else {
        size_t n = (size_t)o->writes;
        double facts_per_sec = rate(o->writes * o->batch, p.first_send_ns, p.last_ack_ns);
        printf("{\"fixture\":\"%s\",\"warmup\":%ld,\"writes\":%ld,\"facts_per_write\":%ld", o->name,
               o->warmup, o->writes, o->batch);
        double a50 = fx_json_percentile(stdout, "ack_us_p50", p.ack_ns, n, 0.5);
        fx_json_percentile(stdout, "ack_us_p90", p.ack_ns, n, 0.9);
        double a99 = fx_json_percentile(stdout, "ack_us_p99", p.ack_ns, n, 0.99);
        fx_json_percentile(stdout, "ack_us_max", p.ack_ns, n, 1.0);
        printf(",\"facts_per_sec\":%.0f", facts_per_sec);
        print_cpu(&meter, "server_cpu_per_write_ms", cpu_ms, o->writes);
        char t50[32], t99[32];
        printf("}\n%s: %ld writes of %ld fact%s after %ld untimed, every reply checked: ack p50 "
               "%s, p99 %s; %.0f facts/s",
               o->name, o->writes, o->batch, o->batch == 1 ? "" : "s", o->warmup,
               us_text(a50, t50, sizeof t50), us_text(a99, t99, sizeof t99), facts_per_sec);
        if (meter.pid) printf("; server CPU %.3f ms per write", cpu_ms / (double)o->writes);
        printf("\n");
        status = fflush(stdout) == 0 ? FX_OK : FX_FAILED;
    }
    fx_writer_close(&w);
    free(p.ack_ns);
    free(revisions);
    return status;
}

/* ---- writers ------------------------------------------------------------------------ */

/* What the rounds measured, per kind of phase (0 one writer, 1 all of them). */
typedef struct writers_figures {
    double *rates[2]; /* per round */
    double *ratios;   /* per round */
    uint64_t *ack_ns[2];
    size_t nacks[2];
    double cpu_ms[2];
    long ops[2];
} writers_figures;

static double median(const double *values, long n) {
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) return 0;
    memcpy(v, values, (size_t)n * sizeof *v);
    for (long i = 1; i < n; i++)
        for (long j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

/* One phase: `count` of the writers (1 or all), together. Returns FX_OK or the first
 * failure's status with its reason in why. */
static int writers_phase(const insert_options *o, fx_fact_writer *ws, long count, int64_t *next,
                         const fx_cpu_meter *idle, writers_figures *fig, int kind, long round,
                         char *why, size_t why_len) {
    phase *ps = calloc((size_t)count, sizeof *ps);
    pthread_t *threads = calloc((size_t)count, sizeof *threads);
    atomic_bool stop = false;
    start_gate start = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    int status = ps && threads ? FX_OK : FX_FAILED;
    long started = 0;
    for (long c = 0; status == FX_OK && c < count; c++) {
        ps[c] = (phase){.w = &ws[c],
                        .first_fact = *next,
                        .writes = o->writes,
                        .ack_ns = fig->ack_ns[kind] + fig->nacks[kind] + c * o->writes,
                        .start = &start,
                        .stop = &stop};
        *next += o->writes;
    }
    fx_cpu_meter meter = *idle;
    fx_cpu_start(&meter);
    for (; status == FX_OK && started < count; started++)
        if (pthread_create(&threads[started], NULL, run_phase, &ps[started]) != 0) {
            snprintf(why, why_len, "cannot start writer thread %ld", started);
            status = FX_FAILED;
        }
    if (status != FX_OK) atomic_store(&stop, true);
    gate_open(&start);
    for (long c = 0; c < started; c++) pthread_join(threads[c], NULL);
    if (status == FX_OK) {
        fig->cpu_ms[kind] += phase_cpu_ms(&meter, count * o->writes);
        fig->ops[kind] += count * o->writes;
    }
    uint64_t first = UINT64_MAX, last = 0;
    for (long c = 0; status == FX_OK && c < count; c++) {
        if (ws[c].status != FX_OK) {
            snprintf(why, why_len, "%s", ws[c].why);
            status = ws[c].status;
        }
        if (ps[c].first_send_ns < first) first = ps[c].first_send_ns;
        if (ps[c].last_ack_ns > last) last = ps[c].last_ack_ns;
    }
    if (status == FX_OK) {
        fig->nacks[kind] += (size_t)(count * o->writes);
        fig->rates[kind][round] = rate(count * o->writes, first, last);
    }
    pthread_cond_destroy(&start.cv);
    pthread_mutex_destroy(&start.mu);
    free(ps);
    free(threads);
    return status;
}

static int writers_report(const insert_options *o, writers_figures *fig, const fx_cpu_meter *m) {
    long r = o->rounds;
    for (long i = 0; i < r; i++)
        fig->ratios[i] = fig->rates[0][i] > 0 ? fig->rates[1][i] / fig->rates[0][i] : 0;
    double single = median(fig->rates[0], r), concurrent = median(fig->rates[1], r);
    double ratio = median(fig->ratios, r);
    printf("{\"fixture\":\"writers\",\"writers\":%ld,\"warmup\":%ld,\"writes_per_writer\":%ld,"
           "\"rounds\":%ld,\"single_facts_per_sec\":%.0f,\"concurrent_facts_per_sec\":%.0f,"
           "\"ratio\":%.3f",
           o->writers, o->warmup, o->writes, r, single, concurrent, ratio);
    const char *series[] = {"single_facts_per_sec_rounds", "concurrent_facts_per_sec_rounds",
                            "ratio_rounds"};
    const double *values[] = {fig->rates[0], fig->rates[1], fig->ratios};
    for (int s = 0; s < 3; s++) {
        printf(",\"%s\":[", series[s]);
        for (long i = 0; i < r; i++) printf("%s%.*f", i ? "," : "", s == 2 ? 3 : 0, values[s][i]);
        printf("]");
    }
    double s50 =
        fx_json_percentile(stdout, "single_ack_us_p50", fig->ack_ns[0], fig->nacks[0], 0.5);
    fx_json_percentile(stdout, "single_ack_us_p99", fig->ack_ns[0], fig->nacks[0], 0.99);
    double c50 =
        fx_json_percentile(stdout, "concurrent_ack_us_p50", fig->ack_ns[1], fig->nacks[1], 0.5);
    double c99 =
        fx_json_percentile(stdout, "concurrent_ack_us_p99", fig->ack_ns[1], fig->nacks[1], 0.99);
    print_cpu(m, "single_server_cpu_per_write_ms", fig->cpu_ms[0], fig->ops[0]);
    print_cpu(m, "concurrent_server_cpu_per_write_ms", fig->cpu_ms[1], fig->ops[1]);
    char t1[32], t2[32], t3[32];
    printf("}\nwriters: %ld rounds of 1 writer x %ld facts and %ld writers x %ld facts, every "
           "reply checked: %.0f facts/s alone, %.0f together (median ratio %.2f); ack p50 %s "
           "alone, %s together (p99 %s)\n",
           r, o->writes, o->writers, o->writes, single, concurrent, ratio,
           us_text(s50, t1, sizeof t1), us_text(c50, t2, sizeof t2), us_text(c99, t3, sizeof t3));
    return fflush(stdout) == 0 ? FX_OK : FX_FAILED;
}

static int writers_fixture(const insert_options *o) {
    long nw = o->writers, r = o->rounds;
    fx_fact_writer *ws = calloc((size_t)nw, sizeof *ws);
    writers_figures fig = {
        .rates = {calloc((size_t)r, sizeof(double)), calloc((size_t)r, sizeof(double))},
        .ratios = calloc((size_t)r, sizeof(double)),
        .ack_ns = {calloc((size_t)(r * o->writes), sizeof(uint64_t)),
                   calloc((size_t)(r * nw * o->writes), sizeof(uint64_t))}};
    int64_t next = 1, *revisions = NULL;
    size_t nrev = 0, rev_cap = 0;
    ws_client *setup = NULL;
    char why[512] = "out of memory";
    int status = ws && fig.rates[0] && fig.rates[1] && fig.ratios && fig.ack_ns[0] && fig.ack_ns[1]
                     ? fx_create_graph(&o->target, "perf", &setup, why, sizeof why)
                     : FX_FAILED;
    wsc_close(setup);
    for (long c = 0; status == FX_OK && c < nw; c++) {
        char name[24];
        snprintf(name, sizeof name, "w%ld", c);
        if (fx_writer_open(&ws[c], &o->target, name, 1) != FX_OK ||
            warm_up(&ws[c], o->warmup, &next) != FX_OK) {
            status = ws[c].status;
            snprintf(why, sizeof why, "%s", ws[c].why);
        }
    }
    fx_cpu_meter idle = {0};
    if (status == FX_OK) measure_idle(o, &idle);
    /* The order flips every round, so that drift of a shared machine hits both phases. */
    for (long i = 0; status == FX_OK && i < r; i++)
        for (int k = 0; status == FX_OK && k < 2; k++) {
            int kind = (int)((k + i) % 2);
            status =
                writers_phase(o, ws, kind ? nw : 1, &next, &idle, &fig, kind, i, why, sizeof why);
        }
    if (status == FX_OK && fx_check_fact_count(&ws[0], next - 1) != FX_OK) {
        status = ws[0].status;
        snprintf(why, sizeof why, "%s", ws[0].why);
    }
    for (long c = 0; status == FX_OK && c < nw; c++)
        if (!fx_writer_take_revisions(&ws[c], &revisions, &nrev, &rev_cap)) status = FX_FAILED;
    if (status == FX_OK) status = fx_check_distinct_revisions(revisions, nrev, why, sizeof why);
    if (status != FX_OK)
        fprintf(stderr, "inputlayer-fixture: %swriters: %s\n",
                status == FX_INVALID ? "INVALID run: " : "", why);
    else
        status = writers_report(o, &fig, &idle);
    for (long c = 0; ws && c < nw; c++) fx_writer_close(&ws[c]);
    free(ws);
    free(fig.rates[0]), free(fig.rates[1]), free(fig.ratios);
    free(fig.ack_ns[0]), free(fig.ack_ns[1]);
    free(revisions);
    return status;
}

int fx_insert_main(int argc, char **argv) {
    insert_options o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0) return status;
    return o.kind == WRITERS ? writers_fixture(&o) : serial_fixture(&o);
}
