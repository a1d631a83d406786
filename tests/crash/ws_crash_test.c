/* The crash test over /ws with a simulated power loss. An inputlayer-server runs on a fresh
 * data directory with small checkpoint and segment thresholds and the synced-length hook
 * (INPUTLAYER_TEST_SYNCED_LENGTH_FILE, docs/durability.md). Four writers (--writers N: 1 to
 * 4; one alone has its commits synced by the server's I/O thread), each on its own
 * WebSocket, send numbered programs one after another: program n of writer w inserts
 * cw(w, n, 1), cw(w, n, 2), cw(w, n, 3), and every fifth also deletes the three tuples of
 * program n - 3. A program is acknowledged when its `result` arrives. At a random moment
 * the server is killed with SIGKILL; the log is cut back to what the server last synced
 * (as a power loss would), the server restarts on the same directory, and queries of each
 * writer's tuples (a range of its numbers each, under the server's result cap) must show
 * every acknowledged program whole (unless an acknowledged later program deleted it), no
 * program partly present, nothing an acknowledged program deleted, and nothing never
 * sent. The program in flight at the kill may be there or not, but whole, its delete
 * included; what is seen of it must stay so. Then writing goes on.
 *
 * By default a program is several statements, one per line; --single sends the same
 * effects as one statement (a bulk insert, or an atomic update for the deleting ones).
 *
 * --keep-unsynced-pages keeps, instead of zeroing all of it, a random half of the pages
 * past the synced length (unsynced pages may reach the disk in any order before a power
 * loss): a damaged record followed by whole ones must then be taken for a torn tail, and
 * the server must start with every acknowledged program. --page-bytes N sets the page
 * size (4096): the few records in flight at a kill span several pages only when they
 * are small, which the short test uses to meet that case often.
 *
 * --set KEY=VALUE passes a setting to the server: with
 * `--set storage.persist.durability_mode=batched` (or `async`) acknowledged programs are
 * lost in the cut, and the test says so.
 *
 * usage: ws_crash_test SERVER_BIN KILLS [--single] [--writers N] [--seed N]
 *                      [--keep-unsynced-pages [--page-bytes N]] [--set KEY=VALUE]...
 * Prints a summary and "N passed, M failed" (N kills checked). */
#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../bench/ws_client.h"
#include "crash_disk.h"
#include "crash_server.h"
#include "crash_watch.h"

enum {
    MAX_WRITERS = 4,
    WS_TIMEOUT_MS = 30000,
    KILL_MIN_MS = 30,
    KILL_SPAN_MS = 400,
    AIMED_KILL_MAX_MS = 2000,
    CHECKPOINT_BYTES = 8 << 10,
    SEGMENT_BYTES = 8 << 10,
};

/* How many writers run (--writers): all four by default. */
static int nwriters = MAX_WRITERS;

/* What is known of a program number of a writer. */
typedef enum prog_state {
    P_UNSENT,   /* never sent: none of its tuples may exist */
    P_INFLIGHT, /* sent, no result before the kill: whole or absent */
    P_PRESENT,  /* acknowledged, or seen whole after a kill: all three tuples */
    P_ABSENT,   /* in flight at a kill and seen absent after it: stays absent */
    P_DELETED,  /* deleted by a program known to have run */
    P_BROKEN,   /* touched by a program found partly applied: reported once, then not
                   checked again (the run stops) */
} prog_state;

typedef struct writer {
    int id;
    bool single;
    const char *port, *key;
    unsigned char *state; /* prog_state per program number */
    long cap;
    long next;      /* the next number to send (numbers start at 1) */
    long acked;     /* programs acknowledged, all rounds */
    char err[1024]; /* a failure not caused by the kill */
} writer;

static atomic_bool killed;
static atomic_int ready;

static void grow(writer *w, long n) {
    if (n < w->cap) return;
    long nc = w->cap ? w->cap : 1024;
    while (nc <= n) nc *= 2;
    w->state = realloc(w->state, (size_t)nc);
    memset(w->state + w->cap, P_UNSENT, (size_t)(nc - w->cap));
    w->cap = nc;
}

static bool deletes(long n) {
    return n % 5 == 0;
}

static void program_text(const writer *w, long n, char *out, size_t cap) {
    int id = w->id;
    long d = n - 3;
    if (w->single && deletes(n))
        snprintf(out, cap,
                 "-cw(W, D, 1), -cw(W, D, 2), -cw(W, D, 3), +cw(W, N, 1), +cw(W, N, 2), "
                 "+cw(W, N, 3) <- cw_one(X), W = %d, D = %ld, N = %ld",
                 id, d, n);
    else if (w->single)
        snprintf(out, cap, "+cw[(%d, %ld, 1), (%d, %ld, 2), (%d, %ld, 3)]", id, n, id, n, id, n);
    else if (deletes(n))
        snprintf(out, cap,
                 "+cw(%d, %ld, 1)\n+cw(%d, %ld, 2)\n+cw(%d, %ld, 3)\n"
                 "-cw[(%d, %ld, 1), (%d, %ld, 2), (%d, %ld, 3)]",
                 id, n, id, n, id, n, id, d, id, d, id, d);
    else
        snprintf(out, cap, "+cw(%d, %ld, 1)\n+cw(%d, %ld, 2)\n+cw(%d, %ld, 3)", id, n, id, n, id,
                 n);
}

static int send_json(ws_client *c, json_t *frame) {
    char *text = json_dumps(frame, JSON_COMPACT);
    json_decref(frame);
    int rc = wsc_send_text(c, text, strlen(text));
    free(text);
    return rc;
}

/* The next frame that answers request id (notifications and notices are skipped), or
 * NULL on a broken connection (see wsc_error). */
static json_t *reply_to(ws_client *c, const char *id) {
    for (;;) {
        const char *msg;
        size_t len;
        if (wsc_recv_text(c, &msg, &len) != 0) return NULL;
        json_t *f = json_loadb(msg, len, 0, NULL);
        const char *fid = json_string_value(json_object_get(f, "id"));
        if (f && fid && strcmp(fid, id) == 0) return f;
        json_decref(f);
    }
}

static ws_client *connect_auth(const char *port, const char *key, char *err, size_t errlen) {
    ws_client *c = wsc_connect("127.0.0.1", port, "/ws", WS_TIMEOUT_MS, err, errlen);
    if (!c) return NULL;
    json_t *f = NULL;
    if (send_json(c, json_pack("{s:s, s:s, s:s}", "type", "authenticate", "api_key", key, "id",
                               "auth")) != 0 ||
        !(f = reply_to(c, "auth"))) {
        snprintf(err, errlen, "authenticate: %s", wsc_error(c));
    } else if (strcmp(json_string_value(json_object_get(f, "type")), "authenticated") != 0) {
        snprintf(err, errlen, "authenticate: unexpected reply %s",
                 json_string_value(json_object_get(f, "type")));
        json_decref(f);
        f = NULL;
    }
    if (!f) {
        wsc_close(c);
        return NULL;
    }
    json_decref(f);
    return c;
}

static void *write_programs(void *arg) {
    writer *w = arg;
    ws_client *c = connect_auth(w->port, w->key, w->err, sizeof w->err);
    atomic_fetch_add(&ready, 1);
    if (!c) return NULL;
    char text[512], id[48];
    for (;;) {
        long n = w->next++;
        grow(w, n);
        w->state[n] = P_INFLIGHT;
        program_text(w, n, text, sizeof text);
        snprintf(id, sizeof id, "w%d-%ld", w->id, n);
        json_t *f = NULL;
        if (send_json(c, json_pack("{s:s, s:s, s:s}", "type", "execute", "id", id, "program",
                                   text)) != 0 ||
            !(f = reply_to(c, id))) {
            if (!atomic_load(&killed))
                snprintf(w->err, sizeof w->err, "writer %d, program %ld: %s", w->id, n,
                         wsc_error(c));
            break;
        }
        const char *type = json_string_value(json_object_get(f, "type"));
        json_t *errors = json_object_get(f, "errors");
        if (strcmp(type, "result") != 0 || json_array_size(errors) != 0) {
            char *dump = json_dumps(f, JSON_COMPACT);
            snprintf(w->err, sizeof w->err, "writer %d, program %ld failed: %.900s", w->id, n,
                     dump);
            free(dump);
            json_decref(f);
            break;
        }
        json_decref(f);
        w->state[n] = P_PRESENT;
        if (deletes(n)) w->state[n - 3] = P_DELETED;
        w->acked++;
    }
    wsc_close(c);
    return NULL;
}

/* ---- the check after a restart ---- */

typedef struct tally {
    long kills, sent, acked, inflight_present, inflight_absent, records_cut;
    uint64_t bytes_cut;
    long kills_in_checkpoint, aimed[3], aimed_hit[3], partial;
    long pages_kept, kept_after_hole;
} tally;

/* The rows of one query, streamed or not, added to present[] as counts per number. */
static bool query_rows(ws_client *c, const char *program, writer *w, unsigned char *seen, long cap,
                       char *err, size_t errlen) {
    if (send_json(c, json_pack("{s:s, s:s, s:s}", "type", "execute", "id", "q", "program",
                               program)) != 0) {
        snprintf(err, errlen, "query: %s", wsc_error(c));
        return false;
    }
    bool ok = true, more = true;
    size_t n_col = 0, k_col = 1; /* where N and K are in the rows (by the columns' names) */
    while (ok && more) {
        json_t *f = reply_to(c, "q");
        if (!f) {
            snprintf(err, errlen, "query: %s", wsc_error(c));
            return false;
        }
        const char *type = json_string_value(json_object_get(f, "type"));
        more = strcmp(type, "result_start") == 0 || strcmp(type, "result_chunk") == 0;
        size_t i;
        json_t *col;
        json_array_foreach(json_object_get(f, "columns"), i, col) {
            const char *name = json_string_value(col);
            if (name && strcmp(name, "N") == 0) n_col = i;
            if (name && strcmp(name, "K") == 0) k_col = i;
        }
        if (strcmp(type, "result_end") == 0 || strcmp(type, "result_start") == 0) {
            ok = !json_is_true(json_object_get(f, "truncated"));
            if (!ok) snprintf(err, errlen, "query %s: the result was truncated", program);
        } else if (strcmp(type, "result") == 0 || strcmp(type, "result_chunk") == 0) {
            ok = !json_is_true(json_object_get(f, "truncated"));
            if (!ok) snprintf(err, errlen, "query %s: the result was truncated", program);
            json_t *row;
            json_array_foreach(json_object_get(f, "rows"), i, row) {
                json_int_t n = json_integer_value(json_array_get(row, n_col));
                json_int_t k = json_integer_value(json_array_get(row, k_col));
                if (n < 1 || n >= cap || k < 1 || k > 3) {
                    snprintf(err, errlen, "writer %d: tuple (%lld, %lld) was never sent", w->id,
                             (long long)n, (long long)k);
                    ok = false;
                    break;
                }
                seen[n] |= (unsigned char)(1u << (k - 1));
            }
        } else {
            char *dump = json_dumps(f, JSON_COMPACT);
            snprintf(err, errlen, "query %s: %.900s", program, dump);
            free(dump);
            ok = false;
        }
        json_decref(f);
    }
    return ok;
}

static int popcount3(unsigned char m) {
    return (m & 1) + (m >> 1 & 1) + (m >> 2 & 1);
}

/* Compares what writer w's query found with what is known, reports every difference,
 * and settles the program that was in flight. Returns the number of violations. */
static int check_writer(writer *w, const unsigned char *seen, tally *t) {
    int bad = 0;
    for (long n = 1; n < w->next; n++) {
        if (w->state[n] != P_INFLIGHT) continue;
        int c = popcount3(seen[n]);
        bool whole = c == 3;
        if (c != 0 && c != 3) {
            fprintf(stderr,
                    "ws_crash_test: writer %d, program %ld (in flight) is partly present: "
                    "%d of its 3 tuples\n",
                    w->id, n, c);
            w->state[n] = P_BROKEN;
        } else if (deletes(n) && w->state[n - 3] == P_PRESENT &&
                   popcount3(seen[n - 3]) != (whole ? 0 : 3)) {
            fprintf(stderr,
                    "ws_crash_test: writer %d, program %ld (in flight) is partly present: its "
                    "inserts are %s, and %d of the 3 tuples of program %ld it deletes are there\n",
                    w->id, n, whole ? "there" : "not there", popcount3(seen[n - 3]), n - 3);
            w->state[n] = w->state[n - 3] = P_BROKEN;
        } else {
            w->state[n] = whole ? P_PRESENT : P_ABSENT;
            if (whole && deletes(n)) w->state[n - 3] = P_DELETED;
        }
        if (w->state[n] == P_BROKEN) {
            t->partial++;
            bad++;
        } else if (whole)
            t->inflight_present++;
        else
            t->inflight_absent++;
    }
    for (long n = 1; n < w->cap; n++) {
        int c = popcount3(seen[n]);
        prog_state s = n < w->next ? (prog_state)w->state[n] : P_UNSENT;
        const char *why = NULL;
        if (s == P_PRESENT && c != 3)
            why = c ? "is partly present" : "is missing";
        else if (s == P_DELETED && c)
            why = "came back after an acknowledged delete";
        else if (s == P_ABSENT && c)
            why = "was absent after an earlier kill and is back";
        else if (s == P_UNSENT && c)
            why = "was never sent but is present";
        if (why) {
            fprintf(stderr, "ws_crash_test: writer %d, program %ld %s (%d of 3 tuples)\n", w->id, n,
                    why, c);
            bad++;
        }
    }
    return bad;
}

/* The numbers of one writer read per query after a restart. */
#define QUERY_SPAN 30000L

static int check_all(const char *port, const char *key, writer *ws, tally *t, char *err,
                     size_t errlen) {
    ws_client *c = connect_auth(port, key, err, errlen);
    if (!c) return -1;
    int bad = 0;
    for (int i = 0; i < nwriters && bad >= 0; i++) {
        writer *w = &ws[i];
        long cap = w->next + 1;
        grow(w, cap);
        unsigned char *seen = calloc((size_t)w->cap, 1);
        /* In ranges of N, each at most 3 x QUERY_SPAN rows: under the server's result cap
           (max_result_rows, 100,000), which a fast disk lets one writer pass in a run. */
        bool read = true;
        for (long from = 1; read && from < cap; from += QUERY_SPAN) {
            char q[96];
            snprintf(q, sizeof q, "?cw(%d, N, K), N >= %ld, N < %ld", w->id, from,
                     from + QUERY_SPAN);
            read = query_rows(c, q, w, seen, w->cap, err, errlen);
        }
        if (!read)
            bad = -1;
        else
            bad += check_writer(w, seen, t);
        free(seen);
    }
    wsc_close(c);
    return bad;
}

static bool run_setup(const char *port, const char *key, char *err, size_t errlen) {
    ws_client *c = connect_auth(port, key, err, errlen);
    if (!c) return false;
    json_t *f = NULL;
    bool ok = send_json(c, json_pack("{s:s, s:s, s:s}", "type", "execute", "id", "one", "program",
                                     "+cw_one(1)")) == 0 &&
              (f = reply_to(c, "one")) &&
              strcmp(json_string_value(json_object_get(f, "type")), "result") == 0;
    if (!ok) snprintf(err, errlen, "setup: %s", f ? "+cw_one(1) failed" : wsc_error(c));
    json_decref(f);
    wsc_close(c);
    return ok;
}

/* Whether a checkpoint file was being written when the server died. */
static bool checkpoint_in_progress(const char *data) {
    char dir[4096];
    size_t n;
    snprintf(dir, sizeof dir, "%s/ckpt", data);
    char **names = disk_list(dir, "ckpt-", ".ckpt.tmp", &n);
    disk_free_names(names, n);
    return n > 0;
}

/* A sanitizer's report anywhere in the servers' output (a killed server reports nothing,
 * but one that found an error before its kill, or at the final stop, does). */
static bool sanitizer_report(const char *dir) {
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/server.log", dir);
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "AddressSanitizer") || strstr(line, "LeakSanitizer") ||
                strstr(line, "runtime error:") || strstr(line, "ThreadSanitizer");
    if (f) fclose(f);
    return found;
}

/* ---- the rounds ---- */

static void sleep_ms(long ms) {
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
}

/* Runs the writers until the server is killed: at a random moment, or as soon as the
 * aimed event happens (within a bound). False when a writer failed for another reason. */
static bool write_until_killed(crash_server *srv, writer *ws, const char *key, unsigned *seed,
                               crash_watch *watch, watch_aim aim, tally *t) {
    pthread_t th[MAX_WRITERS];
    atomic_store(&killed, false);
    atomic_store(&ready, 0);
    for (int i = 0; i < nwriters; i++) {
        ws[i].port = srv->port;
        ws[i].key = key;
        pthread_create(&th[i], NULL, write_programs, &ws[i]);
    }
    while (atomic_load(&ready) < nwriters) sleep_ms(1);
    watch_drain(watch); /* what happened before the writing started is not aimed at */
    long ms =
        aim == AIM_TIME ? KILL_MIN_MS + (long)(rand_r(seed) % KILL_SPAN_MS) : AIMED_KILL_MAX_MS;
    t->aimed[aim]++;
    if (watch_wait(watch, aim, ms)) t->aimed_hit[aim]++;
    atomic_store(&killed, true);
    cs_kill(srv);
    bool ok = true;
    for (int i = 0; i < nwriters; i++) {
        pthread_join(th[i], NULL);
        if (ws[i].err[0]) {
            fprintf(stderr, "ws_crash_test: %s\n", ws[i].err);
            ok = false;
        }
    }
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fputs("usage: ws_crash_test SERVER_BIN KILLS [--single] [--writers N] [--seed N] "
              "[--keep-unsynced-pages [--page-bytes N]] [--set KEY=VALUE]...\n",
              stderr);
        return 2;
    }
    long kills = atol(argv[2]);
    bool single = false, keep_pages = false;
    uint64_t page_bytes = 4096;
    enum { MAX_EXTRA_SETS = 8 };
    const char *extra_sets[MAX_EXTRA_SETS];
    int nextra = 0;
    unsigned seed0 = (unsigned)time(NULL) ^ (unsigned)getpid();
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--single") == 0)
            single = true;
        else if (strcmp(argv[i], "--keep-unsynced-pages") == 0)
            keep_pages = true;
        else if (strcmp(argv[i], "--page-bytes") == 0 && i + 1 < argc) {
            page_bytes = strtoull(argv[++i], NULL, 10);
            if (page_bytes < 1 || page_bytes > (1u << 20)) {
                fputs("ws_crash_test: --page-bytes must be 1..1048576\n", stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--writers") == 0 && i + 1 < argc) {
            nwriters = atoi(argv[++i]);
            if (nwriters < 1 || nwriters > MAX_WRITERS) {
                fprintf(stderr, "ws_crash_test: --writers must be 1..%d\n", MAX_WRITERS);
                return 2;
            }
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed0 = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && nextra < MAX_EXTRA_SETS)
            extra_sets[nextra++] = argv[++i];
        else {
            fprintf(stderr, "ws_crash_test: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (kills < 1 || kills > 100000) {
        fputs("ws_crash_test: KILLS must be 1..100000\n", stderr);
        return 2;
    }
    char *bin = realpath(argv[1], NULL); /* the server runs in a directory of its own */
    if (!bin) {
        fprintf(stderr, "ws_crash_test: %s: not found\n", argv[1]);
        return 2;
    }
    unsigned seed = seed0;
    char dir[] = "/tmp/il_ws_crash_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char data[64], wal_dir[80], synced[80], key[64], synced_env[128], key_env[96];
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(wal_dir, sizeof wal_dir, "%s/wal", data);
    snprintf(synced, sizeof synced, "%s/synced-length", dir);
    snprintf(key, sizeof key, "ws-crash-test-%08x", seed0);
    snprintf(synced_env, sizeof synced_env, "INPUTLAYER_TEST_SYNCED_LENGTH_FILE=%s", synced);
    snprintf(key_env, sizeof key_env, "INPUTLAYER_BOOTSTRAP_API_KEY=%s", key);
    char ckpt_set[80], seg_set[80];
    snprintf(ckpt_set, sizeof ckpt_set, "storage.persist.max_wal_size_bytes=%d", CHECKPOINT_BYTES);
    snprintf(seg_set, sizeof seg_set, "storage.persist.wal_segment_bytes=%d", SEGMENT_BYTES);
    const char *sets[] = {ckpt_set,
                          seg_set,
                          "http.rate_limit.ws_max_messages_per_sec=0",
                          "http.rate_limit.per_ip_max_rps=0",
                          "http.rate_limit.max_connections=0",
                          "http.rate_limit.max_ws_connections=0",
                          "http.rate_limit.ws_max_preauth_per_ip=0",
                          "http.ws_ping_interval_ms=0",
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL};
    for (int i = 0; i < nextra; i++) sets[8 + i] = extra_sets[i]; /* later ones win */
    const char *env[] = {synced_env, key_env, NULL};

    writer ws[MAX_WRITERS] = {0};
    for (int i = 0; i < nwriters; i++) {
        ws[i].id = i;
        ws[i].single = single;
        ws[i].next = 1;
    }
    tally t = {0};
    crash_server srv = {0};
    crash_watch watch = {.fd = -1};
    char err[1024] = "";
    long passed = 0, failed = 0;
    bool ok = cs_start(&srv, bin, dir, data, sets, env, err, sizeof err) &&
              run_setup(srv.port, key, err, sizeof err) &&
              watch_open(&watch, data, err, sizeof err);
    for (long k = 0; ok && k < kills; k++) {
        /* one kill in three at a random moment, one as a checkpoint file starts being
           written, one as old log or an old checkpoint is deleted */
        watch_aim aim = k % 3 == 0 ? AIM_TIME : k % 3 == 1 ? AIM_CKPT_WRITE : AIM_DELETE;
        ok = write_until_killed(&srv, ws, key, &seed, &watch, aim, &t);
        t.kills++;
        if (checkpoint_in_progress(data)) t.kills_in_checkpoint++;
        watch_drain(&watch);
        disk_cut cut = {0};
        disk_keep keep = {&seed, page_bytes};
        ok = ok &&
             disk_cut_to_synced(wal_dir, synced, keep_pages ? &keep : NULL, &cut, err, sizeof err);
        t.records_cut += cut.records;
        t.bytes_cut += cut.bytes;
        t.pages_kept += cut.pages_kept;
        t.kept_after_hole += cut.kept_after_hole;
        ok = ok && cs_start(&srv, bin, dir, data, sets, env, err, sizeof err);
        int bad = ok ? check_all(srv.port, key, ws, &t, err, sizeof err) : -1;
        if (bad != 0) {
            if (bad > 0) snprintf(err, sizeof err, "%d violation(s) after kill %ld", bad, k + 1);
            ok = false;
        }
        if (ok)
            passed++;
        else
            failed++;
    }
    if (srv.pid > 0) {
        int status = cs_stop(&srv);
        if (ok && status != 0) {
            snprintf(err, sizeof err, "the server's exit status at the end was %d", status);
            ok = false;
            failed++;
        }
    }
    for (int i = 0; i < nwriters; i++) {
        t.sent += ws[i].next - 1;
        t.acked += ws[i].acked;
    }
    watch_drain(&watch);
    printf("ws crash test (%d writer%s, %s programs, seed %u): %ld kills (%ld at a random moment, "
           "%ld aimed "
           "at a checkpoint write of which %ld hit, %ld at a deletion of old log or checkpoints "
           "of which %ld hit); %ld kills while a checkpoint file was being written\n",
           nwriters, nwriters == 1 ? "" : "s", single ? "single-statement" : "multi-statement",
           seed0, t.kills, t.aimed[AIM_TIME], t.aimed[AIM_CKPT_WRITE], t.aimed_hit[AIM_CKPT_WRITE],
           t.aimed[AIM_DELETE], t.aimed_hit[AIM_DELETE], t.kills_in_checkpoint);
    printf("ws crash test: %ld programs sent, %ld acknowledged, in flight at a kill: %ld present "
           "after it and %ld absent; %ld checkpoints written, %ld log segments deleted; %ld "
           "records (%llu nonzero bytes) cut as unsynced\n",
           t.sent, t.acked, t.inflight_present, t.inflight_absent, watch.checkpoints,
           watch.segments_deleted, t.records_cut, (unsigned long long)t.bytes_cut);
    if (keep_pages)
        printf("ws crash test: %ld unsynced pages of %llu bytes holding records kept, %ld of "
               "them after a dropped one\n",
               t.pages_kept, (unsigned long long)page_bytes, t.kept_after_hole);
    watch_close(&watch);
    if (!ok) {
        fprintf(stderr, "ws_crash_test: %s (seed %u, directory kept: %s)\n",
                err[0] ? err : "a writer failed", seed0, dir);
        if (t.partial)
            fprintf(stderr, "ws_crash_test: %ld partly present program(s) found\n", t.partial);
    }
    if (ok && sanitizer_report(dir)) {
        snprintf(err, sizeof err, "a sanitizer report in the server's output");
        ok = false;
        failed++;
    }
    if (!ok && !failed) failed = 1; /* the first start or the setup failed */
    printf("%ld passed, %ld failed\n", passed, failed);
    if (ok) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) ok = false;
    }
    for (int i = 0; i < nwriters; i++) free(ws[i].state);
    free(bin);
    return ok ? 0 : 1;
}
