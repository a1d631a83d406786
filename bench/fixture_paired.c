/* paired_writes and paired_reads: one fixture on two servers at once, its requests
 * interleaved, for the perf gate's comparison of two arms (bench/README.md, "Durable
 * writes: both arms at once" and "Serial reads: both arms at once"). paired_writes runs the
 * durable-write fixtures (insert_single, insert_batch, writers), paired_reads one serial query
 * (cheap_query, bound_query). A durable write's latency is mostly the disk's sync, and this disk's
 * sync time swings by a factor of ten within seconds while other work writes to it: run one arm
 * after the other and the two see different disks. Interleaved in blocks of a few writes, both arms
 * see the same disk state, so their ratio is the servers' difference alone. A cheap query's latency
 * on a virtual machine has levels that change from one server run to the next (whether the server's
 * and the client's threads wake each other across CPUs): two servers up at once, their queries
 * alternating one by one, are measured at the same level.
 *
 *   inputlayer-fixture paired_writes --port A --server-pid PA --pair-port B
 *       --pair-server-pid PB --api-key K [--host H] [--writers C (1)] [--batch F (1)]
 *       [--warmup W (20)] [--writes N (200)] [--block K (1)] [--probe-dir DIR]
 *       [--timeout-ms T]
 *
 * Each server gets knowledge graph `perf` and C connections that write facts
 * `+event(i, i)`, F per execute (each i once per server), one request in flight each;
 * after W untimed writes per connection, N timed writes per connection go in blocks of K:
 * in a block, the C connections of one server write K each, together (started at once);
 * the blocks alternate between the servers A B B A A B B A ..., so that neither server is
 * always the first after a pause. insert_single is C 1, F 1, K 1 (the servers alternate
 * write by write); insert_batch F 1,000; writers C 4, K a few writes.
 *
 * With --probe-dir, after every pair of blocks the client itself writes 128 bytes into a
 * preallocated file there and fdatasyncs it (as bench/fsync_probe.c does): the disk's
 * floor over the same moments, reported beside (disk_fsync_us_p50, _p99).
 *
 * Per server, one JSON line, "arm": 0 for --port, 1 for --pair-port: ack_us (from just
 * before the send to the moment the reply was read; nearest rank), facts_per_sec (its
 * facts over the sum of its blocks' times, each block from its first send to its last
 * reply: the wall clock of the whole phase belongs to both servers), and with the PIDs the
 * server's CPU per write over the phase net of its idle rate (measured before, with both
 * servers quiet). paired_ack_ratio_p50: the median of its writes' acks over the other
 * server's, pair by pair (write i of one and write i of the other ran next to each other:
 * the same block, connection and place in it), which the gate takes as the round's ratio
 * of ack p50 (gate_report.h). Every reply is checked as in insert_single (fixture_facts.h), no two
 * writes of a server share a revision, and each graph must hold exactly the facts written;
 * anything else makes the run INVALID (exit 3).
 *
 *   inputlayer-fixture paired_reads --port A --server-pid PA --pair-port B
 *       --pair-server-pid PB --api-key K --program P --expect-rows-file FA
 *       [--pair-expect-rows-file FB (FA)] [--host H] [--warmup W (20)] [--queries N (200)]
 *       [--timeout-ms T]
 *
 * Both servers must hold knowledge graph `perf` with the data already. One connection per
 * server runs program P: W untimed queries each, then N timed ones per server, one at a
 * time, alternating A B B A A B ... Every reply's rows must be exactly the JSON array in
 * the server's file (FA for --port, FB for --pair-port: each server's own order), as
 * inputlayer-load checks them; anything else is INVALID (exit 3). Per server, one JSON
 * line: latency_us (from just before the send to the moment the reply's frame was read),
 * queries_per_sec (its queries over the sum of their latencies), server_cpu_us_per_query
 * (with the PIDs, net of the idle rate) and paired_latency_ratio_p50, as for the writes. */
#include "fixture_paired.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_facts.h"
#include "fixture_session.h"
#include "fixture_stats.h"

enum {
    QUIET_MS = 500,
    SETTLE_MAX_MS = 10000,
    MAX_WRITES = 1000000,
    MAX_BATCH = 100000,
    MAX_WRITERS = 64,
    PROBE_BYTES = 128,
    PROBE_FILE_BYTES = 16 << 20,
};

typedef struct paired_options {
    bool reads; /* paired_reads, else paired_writes */
    fx_target target[2];
    pid_t pid[2];
    long writers, batch, warmup, writes, block; /* writes: the timed queries, for reads */
    const char *probe_dir;
    const char *program;      /* reads */
    const char *rows_file[2]; /* reads: each server's expected rows */
    json_t *expect_rows[2];
} paired_options;

/* One server's side: its writers (or reader) and what its timed requests took. */
typedef struct side {
    fx_fact_writer *w;
    ws_client *reader;
    int64_t next;     /* the next fact */
    uint64_t *ack_ns; /* each timed write's ack, or query's latency */
    size_t nacks;
    double paired_ratio; /* the median of its acks over the other side's, pair by pair */
    uint64_t busy_ns;    /* the sum of its blocks' times */
    fx_cpu_meter meter;
    double cpu_ms;
} side;

/* One connection's writes within a block. */
typedef struct block_part {
    fx_fact_writer *w;
    int64_t first_fact;
    long writes;
    uint64_t *ack_ns;
    uint64_t first_send_ns, last_ack_ns;
    struct start_gate *start; /* NULL: a lone writer */
} block_part;

/* Holds a block's writer threads until all of them are there, so that their writes
 * really overlap from the first; when one cannot be started, the others write nothing. */
typedef struct start_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open, cancelled;
} start_gate;

static void gate_open(start_gate *g, bool cancelled) {
    pthread_mutex_lock(&g->mu);
    g->open = true;
    g->cancelled = cancelled;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Whether to write. */
static bool gate_wait(start_gate *g) {
    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    bool go = !g->cancelled;
    pthread_mutex_unlock(&g->mu);
    return go;
}

static void usage(FILE *f) {
    fputs("usage: inputlayer-fixture paired_writes --port A --server-pid PA --pair-port B\n"
          "         --pair-server-pid PB --api-key K [--host H (127.0.0.1)]\n"
          "         [--writers C (1)] [--batch F (1)] [--warmup W (20)] [--writes N (200)]\n"
          "         [--block K (1)] [--probe-dir DIR] [--timeout-ms T (60000)]\n"
          "       inputlayer-fixture paired_reads --port A --server-pid PA --pair-port B\n"
          "         --pair-server-pid PB --api-key K --program P --expect-rows-file FA\n"
          "         [--pair-expect-rows-file FB (FA)] [--host H (127.0.0.1)]\n"
          "         [--warmup W (20)] [--queries N (200)] [--timeout-ms T (60000)]\n"
          "  The two servers' writes interleaved in blocks of K per connection, A B B A ...;\n"
          "  or their queries of P (graph perf, loaded), one by one, A B B A ...\n"
          "  Exit 3: a wrong reply or a wrong count of facts (the run is INVALID).\n",
          f);
}

static int parse_args(int argc, char **argv, paired_options *o) {
    *o = (paired_options){.reads = strcmp(argv[1], "paired_reads") == 0,
                          .writers = 1,
                          .batch = 1,
                          .warmup = 20,
                          .writes = 200,
                          .block = 1};
    fx_target_defaults(&o->target[0]);
    long pair_pid = 0;
    bool r = o->reads, w = !o->reads;
    const fx_opt opts[] = {
        {"--pair-port", .text = &o->target[1].port},
        {"--pair-server-pid", 1, 1L << 30, &pair_pid, NULL},
        {"--program", .text = r ? &o->program : NULL},
        {"--expect-rows-file", .text = r ? &o->rows_file[0] : NULL},
        {"--pair-expect-rows-file", .text = r ? &o->rows_file[1] : NULL},
        {"--queries", 1, MAX_WRITES, r ? &o->writes : NULL, NULL},
        {"--writers", 1, MAX_WRITERS, w ? &o->writers : NULL, NULL},
        {"--batch", 1, MAX_BATCH, w ? &o->batch : NULL, NULL},
        {"--warmup", 0, MAX_WRITES, &o->warmup, NULL},
        {"--writes", 1, MAX_WRITES, w ? &o->writes : NULL, NULL},
        {"--block", 1, MAX_WRITES, w ? &o->block : NULL, NULL},
        {"--probe-dir", .text = w ? &o->probe_dir : NULL},
    };
    int rc = fx_parse_options(argc, argv, "inputlayer-fixture", &o->target[0], &o->pid[0], opts,
                              sizeof opts / sizeof opts[0], usage);
    if (rc != -1) return rc;
    o->pid[1] = (pid_t)pair_pid;
    if (!o->target[1].port) {
        fprintf(stderr, "inputlayer-fixture: %s needs --pair-port\n", argv[1]);
        usage(stderr);
        return FX_USAGE;
    }
    if (o->writes % o->block != 0) {
        fputs("inputlayer-fixture: --writes must be a multiple of --block\n", stderr);
        return FX_USAGE;
    }
    if (o->reads && (!o->program || !o->rows_file[0])) {
        fputs("inputlayer-fixture: paired_reads needs --program and --expect-rows-file\n", stderr);
        usage(stderr);
        return FX_USAGE;
    }
    const char *port = o->target[1].port;
    o->target[1] = o->target[0];
    o->target[1].port = port;
    for (int s = 0; o->reads && s < 2; s++) {
        const char *file = o->rows_file[s] ? o->rows_file[s] : o->rows_file[0];
        json_error_t jerr;
        o->expect_rows[s] = json_load_file(file, 0, &jerr);
        if (!json_is_array(o->expect_rows[s])) {
            fprintf(stderr, "inputlayer-fixture: %s must hold a JSON array: %s\n", file,
                    o->expect_rows[s] ? "not an array" : jerr.text);
            return FX_USAGE;
        }
    }
    return -1;
}

static void *run_part(void *arg) {
    block_part *p = arg;
    if (p->start && !gate_wait(p->start)) return NULL;
    for (long k = 0; k < p->writes; k++) {
        uint64_t sent, acked;
        if (fx_writer_write(p->w, p->first_fact + k * p->w->batch, &sent, &acked) != FX_OK) break;
        if (k == 0) p->first_send_ns = sent;
        p->last_ack_ns = acked;
        p->ack_ns[k] = acked - sent;
    }
    return NULL;
}

/* One block of one side: each of its connections writes `block` writes, together. */
static int run_block(const paired_options *o, side *s, char *why, size_t why_len) {
    long c = o->writers;
    block_part parts[MAX_WRITERS];
    pthread_t threads[MAX_WRITERS];
    start_gate start = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    bool threaded = c > 1;
    for (long i = 0; i < c; i++) {
        parts[i] = (block_part){.w = &s->w[i],
                                .first_fact = s->next,
                                .writes = o->block,
                                .ack_ns = s->ack_ns + s->nacks + (size_t)(i * o->block),
                                .start = threaded ? &start : NULL};
        s->next += o->block * o->batch;
    }
    long started = 0;
    int status = FX_OK;
    if (!threaded)
        run_part(&parts[0]);
    else {
        for (; started < c; started++)
            if (pthread_create(&threads[started], NULL, run_part, &parts[started]) != 0) {
                snprintf(why, why_len, "cannot start writer thread %ld", started);
                status = FX_FAILED;
                break;
            }
        gate_open(&start, status != FX_OK);
    }
    for (long i = 0; i < started; i++) pthread_join(threads[i], NULL);
    pthread_cond_destroy(&start.cv);
    pthread_mutex_destroy(&start.mu);
    if (status != FX_OK) return status;
    uint64_t first = UINT64_MAX, last = 0;
    for (long i = 0; i < c; i++) {
        if (s->w[i].status != FX_OK) {
            snprintf(why, why_len, "%s", s->w[i].why);
            if (status == FX_OK || s->w[i].status == FX_INVALID) status = s->w[i].status;
        }
        if (parts[i].first_send_ns < first) first = parts[i].first_send_ns;
        if (parts[i].last_ack_ns > last) last = parts[i].last_ack_ns;
    }
    if (status == FX_OK) {
        s->nacks += (size_t)(c * o->block);
        s->busy_ns += last - first;
    }
    return status;
}

/* One query of a side, its reply's rows checked; its latency in *took_ns when not NULL. */
static int run_query(const paired_options *o, side *s, int k, uint64_t *took_ns, char *why,
                     size_t why_len) {
    json_t *res = NULL;
    uint64_t sent = fx_now_ns(), read_at = 0;
    int status = fx_send_execute(s->reader, "q", o->program, why, why_len);
    if (status == FX_OK) status = fx_await_result(s->reader, "q", &res, &read_at, why, why_len);
    if (status == FX_OK && !json_equal(json_object_get(res, "rows"), o->expect_rows[k])) {
        char *got = json_dumps(json_object_get(res, "rows"), JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(why, why_len, "server %c: %s: rows %.200s differ from the expected ones",
                 k ? 'B' : 'A', o->program, got ? got : "(missing)");
        free(got);
        status = FX_INVALID;
    }
    json_decref(res);
    if (status == FX_OK && took_ns) *took_ns = read_at - sent;
    return status;
}

/* One timed request of side k: a block of writes, or one query. */
static int run_step(const paired_options *o, side *s, int k, char *why, size_t why_len) {
    if (!o->reads) return run_block(o, s, why, why_len);
    int status = run_query(o, s, k, &s->ack_ns[s->nacks], why, why_len);
    if (status == FX_OK) s->busy_ns += s->ack_ns[s->nacks++];
    return status;
}

/* The disk's floor: one 128-byte write into the preallocated probe file and its sync. */
typedef struct probe {
    int fd;
    off_t offset;
    uint64_t *ns;
    size_t n;
} probe;

static bool probe_open(probe *p, const char *dir, size_t count, char *why, size_t why_len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/paired-fsync-probe", dir);
    p->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    p->ns = calloc(count, sizeof *p->ns);
    if (p->fd < 0 || !p->ns || posix_fallocate(p->fd, 0, PROBE_FILE_BYTES) != 0 ||
        fsync(p->fd) != 0) {
        snprintf(why, why_len, "cannot prepare the probe file in %.400s", dir);
        return false;
    }
    unlink(path); /* gone with the descriptor */
    return true;
}

static bool probe_sync(probe *p) {
    char buf[PROBE_BYTES];
    memset(buf, 0x5a, sizeof buf);
    if (p->offset + PROBE_BYTES > PROBE_FILE_BYTES) p->offset = 0;
    uint64_t t0 = fx_now_ns();
    if (pwrite(p->fd, buf, sizeof buf, p->offset) != (ssize_t)sizeof buf) return false;
    if (fdatasync(p->fd) != 0) return false;
    p->ns[p->n++] = fx_now_ns() - t0;
    p->offset += PROBE_BYTES;
    return true;
}

static int open_side(const paired_options *o, int k, side *s, char *why, size_t why_len) {
    ws_client *setup = NULL;
    s->next = 1;
    s->ack_ns = calloc((size_t)(o->writers * o->writes), sizeof *s->ack_ns);
    if (o->reads) {
        s->reader = s->ack_ns ? fx_open(&o->target[k], "perf", why, why_len) : NULL;
        int status = s->reader ? FX_OK : FX_FAILED;
        if (!s->ack_ns) snprintf(why, why_len, "out of memory");
        for (long i = 0; status == FX_OK && i < o->warmup; i++)
            status = run_query(o, s, k, NULL, why, why_len);
        return status;
    }
    s->w = calloc((size_t)o->writers, sizeof *s->w);
    if (!s->w || !s->ack_ns) {
        snprintf(why, why_len, "out of memory");
        return FX_FAILED;
    }
    int status = fx_create_graph(&o->target[k], "perf", &setup, why, why_len);
    wsc_close(setup);
    for (long c = 0; status == FX_OK && c < o->writers; c++) {
        char name[24];
        snprintf(name, sizeof name, "%c%ld", k ? 'b' : 'a', c);
        status = fx_writer_open(&s->w[c], &o->target[k], name, o->batch);
        for (long i = 0; status == FX_OK && i < o->warmup; i++, s->next += o->batch)
            status = fx_writer_write(&s->w[c], s->next, NULL, NULL);
        if (status != FX_OK) snprintf(why, why_len, "%s", s->w[c].why);
    }
    return status;
}

/* The facts each graph holds and the revisions of its writes. */
static int check_side(const paired_options *o, side *s, char *why, size_t why_len) {
    int64_t *revisions = NULL;
    size_t n = 0, cap = 0;
    int status = fx_check_fact_count(&s->w[0], s->next - 1);
    if (status != FX_OK) snprintf(why, why_len, "%s", s->w[0].why);
    for (long c = 0; status == FX_OK && c < o->writers; c++)
        if (!fx_writer_take_revisions(&s->w[c], &revisions, &n, &cap)) {
            snprintf(why, why_len, "out of memory");
            status = FX_FAILED;
        }
    if (status == FX_OK) status = fx_check_distinct_revisions(revisions, n, why, why_len);
    free(revisions);
    return status;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Write i of one side ran right next to write i of the other (the same block, the same
 * connection, the same place in it): the median, by nearest rank, of ack_i / other_i. */
static bool pair_ratios(side *s) {
    size_t n = s[0].nacks;
    double *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return false;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < n; i++)
            r[i] = (double)s[k].ack_ns[i] / (double)(s[1 - k].ack_ns[i] ? s[1 - k].ack_ns[i] : 1);
        qsort(r, n, sizeof *r, cmp_double);
        s[k].paired_ratio = n ? r[(n + 1) / 2 - 1] : 0;
    }
    free(r);
    return true;
}

static void report_reads(side *s, int k) {
    double rate = s->busy_ns ? (double)s->nacks * 1e9 / (double)s->busy_ns : 0;
    printf("{\"fixture\":\"paired_reads\",\"arm\":%d,\"queries\":%zu", k, s->nacks);
    fx_json_percentile(stdout, "latency_us_p50", s->ack_ns, s->nacks, 0.5);
    fx_json_percentile(stdout, "latency_us_p99", s->ack_ns, s->nacks, 0.99);
    if (s->nacks >= FX_MIN_P50_SAMPLES)
        printf(",\"paired_latency_ratio_p50\":%.4f", s->paired_ratio);
    printf(",\"queries_per_sec\":%.0f", rate);
    if (s->meter.pid)
        printf(",\"server_cpu_us_per_query\":%.3f", s->cpu_ms * 1000.0 / (double)s->nacks);
    printf("}\n");
}

static void report(const paired_options *o, side *s, int k, probe *p) {
    if (o->reads) {
        report_reads(s, k);
        return;
    }
    long facts = (long)s->nacks * o->batch;
    double rate = s->busy_ns ? (double)facts * 1e9 / (double)s->busy_ns : 0;
    printf("{\"fixture\":\"paired_writes\",\"arm\":%d,\"writers\":%ld,\"facts_per_write\":%ld,"
           "\"block\":%ld,\"writes\":%zu",
           k, o->writers, o->batch, o->block, s->nacks);
    fx_json_percentile(stdout, "ack_us_p50", s->ack_ns, s->nacks, 0.5);
    fx_json_percentile(stdout, "ack_us_p99", s->ack_ns, s->nacks, 0.99);
    if (s->nacks >= FX_MIN_P50_SAMPLES) printf(",\"paired_ack_ratio_p50\":%.4f", s->paired_ratio);
    printf(",\"facts_per_sec\":%.0f", rate);
    if (s->meter.pid) printf(",\"server_cpu_per_write_ms\":%.4f", s->cpu_ms / (double)s->nacks);
    if (p->ns) {
        /* fx_percentile_us sorts: the second side gets them sorted already, as it should. */
        fx_json_percentile(stdout, "disk_fsync_us_p50", p->ns, p->n, 0.5);
        fx_json_percentile(stdout, "disk_fsync_us_p99", p->ns, p->n, 0.99);
    }
    printf("}\n");
}

/* Both servers' idle rates over the same quiet period (fx_cpu_idle, once for both);
 * nothing to wait for without their PIDs. */
static void idle_both(side *s, const pid_t *pid) {
    if (!pid[0] && !pid[1]) return;
    int64_t c0[2];
    for (int k = 0; k < 2; k++) {
        s[k].meter = (fx_cpu_meter){0};
        c0[k] = pid[k] ? fx_process_cpu_ns(pid[k]) : -1;
    }
    uint64_t t0 = fx_now_ns();
    fx_sleep_ns(QUIET_MS * 1000000ull);
    uint64_t t1 = fx_now_ns();
    for (int k = 0; k < 2; k++) {
        int64_t c1 = c0[k] < 0 ? -1 : fx_process_cpu_ns(pid[k]);
        if (c1 < 0) continue;
        s[k].meter.pid = pid[k];
        s[k].meter.idle_rate = (double)(c1 - c0[k]) / (double)(t1 - t0);
    }
}

int fx_paired_main(int argc, char **argv) {
    paired_options o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0) {
        for (int k = 0; k < 2; k++) json_decref(o.expect_rows[k]);
        return status;
    }
    side sides[2] = {{0}};
    probe pr = {.fd = -1};
    char why[512] = "";
    long blocks = o.writes / o.block;
    for (int k = 0; status < 0 && k < 2; k++) {
        int opened = open_side(&o, k, &sides[k], why, sizeof why);
        if (opened != FX_OK) status = opened == FX_INVALID ? FX_INVALID : FX_FAILED;
    }
    if (status < 0 && o.probe_dir && !probe_open(&pr, o.probe_dir, (size_t)blocks, why, sizeof why))
        status = FX_FAILED;
    if (status < 0) {
        for (int k = 0; k < 2; k++) fx_cpu_settle(o.pid[k], SETTLE_MAX_MS * 1000000ull);
        idle_both(sides, o.pid);
        for (int k = 0; k < 2; k++) fx_cpu_start(&sides[k].meter);
        status = FX_OK;
    }
    for (long b = 0; status == FX_OK && b < blocks; b++) {
        int first = (int)(b % 2); /* A B, B A, A B, ... */
        for (int i = 0; status == FX_OK && i < 2; i++)
            status =
                run_step(&o, &sides[i ? 1 - first : first], i ? 1 - first : first, why, sizeof why);
        if (status == FX_OK && pr.fd >= 0 && !probe_sync(&pr)) {
            snprintf(why, sizeof why, "the probe's write or sync failed");
            status = FX_FAILED;
        }
    }
    for (int k = 0; status == FX_OK && k < 2; k++) {
        fx_cpu_figures f = fx_cpu_stop(&sides[k].meter, (long)sides[k].nacks);
        sides[k].cpu_ms = f.known ? f.per_op_ms * (double)sides[k].nacks : 0;
        if (!f.known) sides[k].meter.pid = 0;
    }
    for (int k = 0; status == FX_OK && !o.reads && k < 2; k++)
        status = check_side(&o, &sides[k], why, sizeof why);
    if (status == FX_OK && !pair_ratios(sides)) {
        snprintf(why, sizeof why, "out of memory");
        status = FX_FAILED;
    }
    if (status != FX_OK)
        fprintf(stderr, "inputlayer-fixture: %s%s: %s\n",
                status == FX_INVALID ? "INVALID run: " : "", argv[1], why);
    else {
        for (int k = 0; k < 2; k++) report(&o, &sides[k], k, &pr);
        if (o.reads)
            printf("paired_reads: %zu queries of %s per server, alternating, every reply "
                   "checked: latency p50 %.1f / %.1f µs\n",
                   sides[0].nacks, o.program,
                   fx_percentile_us(sides[0].ack_ns, sides[0].nacks, 0.5),
                   fx_percentile_us(sides[1].ack_ns, sides[1].nacks, 0.5));
        else
            printf("paired_writes: %ld blocks of %ld write%s x %ld connection%s per server, "
                   "alternating, every reply checked: ack p50 %.1f / %.1f µs\n",
                   blocks, o.block, o.block == 1 ? "" : "s", o.writers, o.writers == 1 ? "" : "s",
                   fx_percentile_us(sides[0].ack_ns, sides[0].nacks, 0.5),
                   fx_percentile_us(sides[1].ack_ns, sides[1].nacks, 0.5));
        status = fflush(stdout) == 0 ? FX_OK : FX_FAILED;
    }
    for (int k = 0; k < 2; k++) {
        for (long c = 0; sides[k].w && c < o.writers; c++) fx_writer_close(&sides[k].w[c]);
        free(sides[k].w);
        free(sides[k].ack_ns);
        wsc_close(sides[k].reader);
        json_decref(o.expect_rows[k]);
    }
    if (pr.fd >= 0) close(pr.fd);
    free(pr.ns);
    return status;
}
