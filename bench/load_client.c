/* inputlayer-load: the load generator of the server benchmark (bench/run-server.sh).
 *
 *   inputlayer-load server --url ws://HOST:PORT/ws[?kg=G] --api-key K --program P
 *                          --expect-rows JSON | --expect-rows-file PATH [common options]
 *   inputlayer-load echo   --url ws://HOST:PORT/ [--program P] [--echo-bytes B]
 *                          [--watchers N] [common options]
 *   common: [--clients N] [--warmup W] [--requests R] [--timeout-ms T] [--interval-us I]
 *           [--serial-base S]
 *
 * Each client is a thread with its own connection and one request in flight. In server
 * mode it authenticates with the API key, then sends {"type":"execute","id":"<n>",
 * "program":P} and checks every reply: a `result` with its id whose `rows` equal
 * --expect-rows exactly (or the JSON array in file PATH, for answers too long for an
 * argument). With --expect-proofs-file (`.why` programs) every reply's `proof_trees` must
 * also equal the JSON array in that file. In echo mode (against ws_echo_server) it sends those same
 * execute frames, byte for byte, and checks that each comes back unchanged; --echo-bytes
 * pads them to B bytes instead. With --watchers N it first opens N more connections that
 * only read, each registered with ws_echo_server by a `watch` message: the server then
 * pushes every request to one watcher in turn, and the run checks that the watchers
 * received each request, unchanged, exactly once (each watcher is read by a thread of its
 * own, as inputlayer-fixture reads each of its agents). Each client first sends W untimed
 * requests; then all clients start together and each times R round trips, from just before
 * the send to the moment the whole reply has been read (before it is checked). With
 * --interval-us each client starts a timed request every I µs (at once when the last reply
 * came later), as a paced writer does, instead of back to back.
 *
 * Prints one JSON line (p50/p90/p99/mean/max in microseconds, nearest rank over every
 * client's samples; the rate over all clients from the first timed send to the last
 * timed reply) and one line for people. Exit status: 0 done, 1 an error (connection,
 * timeout, authentication), 2 usage, 3 a wrong reply: the run is INVALID.
 *
 * `{n}` in the program (once) becomes each request's serial, unique over the clients:
 * --serial-base S (default 0, under 10^9) plus client index * 10^9 plus the request's
 * number, so that every insert of `+side({n})` adds a fact of its own. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ws_client.h"

enum { EXIT_USAGE = 2, EXIT_INVALID = 3 };

/* Bounds that keep a mistyped argument from exhausting memory. */
enum { MAX_CLIENTS = 4096, MAX_SAMPLES = 50000000, MAX_ECHO_BYTES = 16 << 20 };

typedef enum load_mode { MODE_SERVER, MODE_ECHO } load_mode;

typedef struct load_options {
    load_mode mode;
    const char *url;
    char host[256], port[16], path[2048]; /* from url */
    const char *api_key;
    const char *program;
    char *program_json;    /* the program as a JSON string literal, quotes included */
    int serial_at;         /* where `{n}` is in program_json (-1: nowhere) */
    long run_tag;          /* --serial-base: the first request's serial, plus client * 10^9 */
    json_t *expect_rows;   /* server mode: the exact rows array every reply must have */
    json_t *expect_proofs; /* NULL, or the proof_trees array every reply must have */
    long clients, warmup, requests;
    long interval_us; /* 0: back to back; else a timed request every interval_us */
    long echo_bytes;  /* echo mode: frame size, 0 = the execute frame's own size */
    long watchers;    /* echo mode: connections the server pushes each request to one of */
    long timeout_ms;
} load_options;

/* Holds every client thread at the start of the timed phase, so that the concurrent
 * requests really overlap; a client that fails before it opens the gate for the others
 * (they then stop). */
typedef struct start_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long arrived, expected;
    bool aborted;
} start_gate;

static void gate_init(start_gate *g, long expected) {
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->arrived = 0;
    g->expected = expected;
    g->aborted = false;
}

/* Returns false when the run was aborted. */
static bool gate_wait(start_gate *g) {
    pthread_mutex_lock(&g->mu);
    g->arrived++;
    if (g->arrived >= g->expected) pthread_cond_broadcast(&g->cv);
    while (g->arrived < g->expected && !g->aborted) pthread_cond_wait(&g->cv, &g->mu);
    bool go = !g->aborted;
    pthread_mutex_unlock(&g->mu);
    return go;
}

static void gate_abort(start_gate *g) {
    pthread_mutex_lock(&g->mu);
    g->aborted = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void gate_destroy(start_gate *g) {
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

typedef struct client_run {
    const load_options *opt;
    long index; /* 0-based */
    start_gate *gate;
    atomic_bool *stop; /* set by the first client that fails: the others end early */
    char *frame;       /* the request being sent */
    size_t frame_cap;
    uint64_t *samples_ns; /* one per timed request */
    size_t nsamples;
    uint64_t first_send_ns, last_reply_ns;
    size_t request_bytes, reply_bytes; /* of the first timed round trip */
    int status;                        /* 0, EXIT_FAILURE or EXIT_INVALID */
    char why[512];
    /* The raw bytes of the rows and proof_trees of the first reply that passed the full
       check (check_server_reply), for comparing the later ones without parsing them. */
    char *seen_rows, *seen_proofs;
    size_t seen_rows_len, seen_proofs_len;
} client_run;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f) {
    fputs("usage: inputlayer-load server --url ws://HOST:PORT/ws[?kg=G] --api-key K\n"
          "                              --program P --expect-rows JSON [options]\n"
          "       (or --expect-rows-file PATH: the JSON array in a file)\n"
          "       [--expect-proofs-file PATH: every reply's proof_trees, for .why]\n"
          "       inputlayer-load echo --url ws://HOST:PORT/ [--program P] [--echo-bytes B]\n"
          "                            [--watchers N] [options]\n"
          "  options: --clients N (1) --warmup W (100) --requests R (1000)\n"
          "           --timeout-ms T (30000: per send and per reply)\n"
          "           --interval-us I (0: back to back; else a timed request every I µs)\n"
          "           --serial-base S (0: what `{n}` in the program starts from)\n"
          "  The API key defaults to $INPUTLAYER_API_KEY. Exit 3: a wrong reply (INVALID).\n",
          f);
}

/* Splits ws://host[:port][/path[?query]] (http:// is accepted too). */
static bool parse_url(load_options *o) {
    const char *p = o->url;
    if (strncmp(p, "ws://", 5) == 0)
        p += 5;
    else if (strncmp(p, "http://", 7) == 0)
        p += 7;
    else
        return false;
    size_t hl = strcspn(p, ":/?");
    if (hl == 0 || hl >= sizeof o->host) return false;
    memcpy(o->host, p, hl);
    o->host[hl] = 0;
    p += hl;
    snprintf(o->port, sizeof o->port, "80");
    if (*p == ':') {
        size_t pl = strcspn(++p, "/?");
        if (pl == 0 || pl >= sizeof o->port || strspn(p, "0123456789") < pl) return false;
        memcpy(o->port, p, pl);
        o->port[pl] = 0;
        p += pl;
    }
    int n = snprintf(o->path, sizeof o->path, "%s%s", *p == '/' ? "" : "/", p);
    return n > 0 && (size_t)n < sizeof o->path;
}

static bool parse_count(const char *s, long min, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min) return false;
    *out = v;
    return true;
}

/* Writes request n (1-based) into buf (cap bytes) and returns its length, or the length
 * it needs: an execute frame, in echo mode padded to --echo-bytes by trailing spaces in
 * the program. Built by hand rather than with jansson so that making a request costs
 * next to nothing in both modes. */
static size_t format_request(const load_options *o, long client, long n, char *buf, size_t cap) {
    static const char FORMAT[] = "{\"type\":\"execute\",\"id\":\"%ld\",\"program\":%.*s%*s\"}";
    int program_open = (int)strlen(o->program_json) - 1; /* without the closing quote */
    if (o->serial_at >= 0) {
        /* `{n}` becomes the request's serial, unique over the clients (and over runs
           given different --serial-base) */
        static const char SERIAL[] =
            "{\"type\":\"execute\",\"id\":\"%ld\",\"program\":%.*s%ld%.*s\"}";
        long serial = o->run_tag + client * 1000000000L + n;
        return (size_t)snprintf(buf, cap, SERIAL, n, o->serial_at, o->program_json, serial,
                                program_open - o->serial_at - 3,
                                o->program_json + o->serial_at + 3);
    }
    int len = snprintf(NULL, 0, FORMAT, n, program_open, o->program_json, 0, "");
    int pad = o->echo_bytes > len ? (int)o->echo_bytes - len : 0;
    return (size_t)snprintf(buf, cap, FORMAT, n, program_open, o->program_json, pad, "");
}

/* Returns -1 when the options are good, else the exit status. */
static int parse_args(int argc, char **argv, load_options *o) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "server") == 0)
        o->mode = MODE_SERVER;
    else if (strcmp(argv[1], "echo") == 0)
        o->mode = MODE_ECHO;
    else {
        fprintf(stderr, "inputlayer-load: unknown mode '%s' (server or echo)\n", argv[1]);
        return EXIT_USAGE;
    }
    o->clients = 1;
    o->warmup = 100;
    o->requests = 1000;
    o->timeout_ms = 30000;
    o->api_key = getenv("INPUTLAYER_API_KEY");
    const char *expect = NULL, *expect_file = NULL, *proofs_file = NULL;
    /* Every option takes a value. */
    for (int i = 2; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;
        if (ok && strcmp(a, "--url") == 0)
            o->url = v;
        else if (ok && strcmp(a, "--api-key") == 0)
            o->api_key = v;
        else if (ok && strcmp(a, "--program") == 0)
            o->program = v;
        else if (ok && strcmp(a, "--serial-base") == 0)
            ok = parse_count(v, 0, &o->run_tag) && o->run_tag < 1000000000L;
        else if (ok && strcmp(a, "--expect-rows") == 0)
            expect = v;
        else if (ok && strcmp(a, "--expect-rows-file") == 0)
            expect_file = v;
        else if (ok && strcmp(a, "--expect-proofs-file") == 0)
            proofs_file = v;
        else if (ok && strcmp(a, "--clients") == 0)
            ok = parse_count(v, 1, &o->clients);
        else if (ok && strcmp(a, "--warmup") == 0)
            ok = parse_count(v, 0, &o->warmup);
        else if (ok && strcmp(a, "--requests") == 0)
            ok = parse_count(v, 1, &o->requests);
        else if (ok && strcmp(a, "--interval-us") == 0)
            ok = parse_count(v, 0, &o->interval_us) && o->interval_us <= 10000000;
        else if (ok && strcmp(a, "--echo-bytes") == 0)
            ok = parse_count(v, 1, &o->echo_bytes);
        else if (ok && strcmp(a, "--watchers") == 0)
            ok = parse_count(v, 0, &o->watchers) && o->watchers <= MAX_CLIENTS;
        else if (ok && strcmp(a, "--timeout-ms") == 0)
            ok = parse_count(v, 1, &o->timeout_ms);
        else
            ok = false;
        if (!ok) {
            fprintf(stderr, "inputlayer-load: bad argument '%s'%s%s\n", a, v ? " " : "",
                    v ? v : "");
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!o->url || !parse_url(o)) {
        fprintf(stderr, "inputlayer-load: --url ws://HOST:PORT/PATH is required%s%s\n",
                o->url ? ", not " : "", o->url ? o->url : "");
        return EXIT_USAGE;
    }
    if (o->clients > MAX_CLIENTS || o->requests > MAX_SAMPLES / o->clients ||
        o->warmup > MAX_SAMPLES || o->timeout_ms > 3600000 || o->echo_bytes > MAX_ECHO_BYTES) {
        fprintf(stderr,
                "inputlayer-load: at most %d clients, %d timed requests in all, %d warm-up "
                "requests, --echo-bytes %d and a timeout of an hour\n",
                MAX_CLIENTS, MAX_SAMPLES, MAX_SAMPLES, MAX_ECHO_BYTES);
        return EXIT_USAGE;
    }
    if (!o->program) o->program = "?edge(1, Y)";
    json_t *program = json_string(o->program);
    o->program_json = program ? json_dumps(program, JSON_ENCODE_ANY) : NULL;
    json_decref(program);
    if (!o->program_json) {
        fputs("inputlayer-load: --program must be UTF-8 text\n", stderr);
        return EXIT_USAGE;
    }
    const char *serial = strstr(o->program_json, "{n}");
    o->serial_at = serial ? (int)(serial - o->program_json) : -1;
    size_t largest = format_request(o, MAX_CLIENTS, o->warmup + o->requests, NULL, 0);
    if (o->mode == MODE_ECHO && o->echo_bytes > 0 && (size_t)o->echo_bytes < largest) {
        fprintf(stderr, "inputlayer-load: --echo-bytes %ld is less than a request (%zu bytes)\n",
                o->echo_bytes, largest);
        return EXIT_USAGE;
    }
    if (o->watchers > 0 && o->mode != MODE_ECHO) {
        fputs("inputlayer-load: --watchers is for echo mode (ws_echo_server pushes to them)\n",
              stderr);
        return EXIT_USAGE;
    }
    if (o->mode == MODE_SERVER) {
        if (!o->api_key || !expect == !expect_file) {
            fputs("inputlayer-load: server mode needs --api-key (or $INPUTLAYER_API_KEY) and "
                  "one of --expect-rows and --expect-rows-file\n",
                  stderr);
            return EXIT_USAGE;
        }
        json_error_t jerr;
        o->expect_rows =
            expect ? json_loads(expect, 0, &jerr) : json_load_file(expect_file, 0, &jerr);
        if (!json_is_array(o->expect_rows)) {
            fprintf(stderr, "inputlayer-load: --expect-rows must be a JSON array: %s\n",
                    o->expect_rows ? "not an array" : jerr.text);
            return EXIT_USAGE;
        }
        if (proofs_file) {
            o->expect_proofs = json_load_file(proofs_file, 0, &jerr);
            if (!json_is_array(o->expect_proofs)) {
                fprintf(stderr,
                        "inputlayer-load: --expect-proofs-file must hold a JSON array: %s\n",
                        o->expect_proofs ? "not an array" : jerr.text);
                return EXIT_USAGE;
            }
        }
    }
    return -1;
}

/* Records a failure, its status in *status_out and its reason in why; returns status. */
__attribute__((format(printf, 5, 6))) static int fail_into(int *status_out, char *why, size_t cap,
                                                           int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    *status_out = status;
    return status;
}

/* Records why `who` (a client, or the watchers' reader) stopped; returns the status. */
#define run_fail(who, st, ...)                                                                     \
    fail_into(&(who)->status, (who)->why, sizeof(who)->why, (st), __VA_ARGS__)

/* A JSON value as compact text for a message (truncated), in buf. */
static const char *json_brief(const json_t *v, char *buf, size_t cap) {
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    snprintf(buf, cap, "%s", s ? s : "(missing)");
    free(s);
    return buf;
}

/* ---- the top level of a reply, without parsing its values ----
 * Parsing every reply of a 1,582-row read with jansson took the client about 1 ms a
 * request, between two requests of a serial run: its allocations and the reply's bytes
 * went through the caches the server runs in, and the server's next answer came about
 * 0.4 ms later for it (loaded machine, measured). Later replies are compared with the
 * first fully checked one as bytes. */

typedef struct span {
    const char *p;
    size_t n;
} span;

static const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* The end of the string that starts at p (at its quote), or NULL. */
static const char *skip_string(const char *p, const char *e) {
    for (p++; p < e; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* The end of the value that starts at p, or NULL. */
static const char *skip_value(const char *p, const char *e) {
    if (p >= e) return NULL;
    if (*p == '"') return skip_string(p, e);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < e) {
            if (*p == '"') {
                if (!(p = skip_string(p, e))) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if ((*p == '}' || *p == ']') && --depth == 0)
                return p + 1;
            p++;
        }
        return NULL;
    }
    const char *start = p;
    while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\n' &&
           *p != '\r')
        p++;
    return p > start ? p : NULL;
}

static bool span_is(span s, const char *text) {
    size_t n = strlen(text);
    return s.p && s.n == n && memcmp(s.p, text, n) == 0;
}

/* The values of the top-level keys "type", "id", "truncated", "rows" and "proof_trees"
 * of a reply that is one JSON object; false when it is not one, or names one of them
 * twice (a parser would keep one of the two: the full check decides then). */
static bool top_fields(const char *msg, size_t len, span out[5]) {
    static const char *const KEYS[5] = {"\"type\"", "\"id\"", "\"truncated\"", "\"rows\"",
                                        "\"proof_trees\""};
    memset(out, 0, 5 * sizeof *out);
    const char *p = skip_ws(msg, msg + len), *e = msg + len;
    if (p >= e || *p != '{') return false;
    p = skip_ws(p + 1, e);
    if (p < e && *p == '}') return skip_ws(p + 1, e) == e;
    for (;;) {
        if (p >= e || *p != '"') return false;
        const char *key = p;
        if (!(p = skip_string(p, e))) return false;
        span k = {key, (size_t)(p - key)};
        p = skip_ws(p, e);
        if (p >= e || *p != ':') return false;
        p = skip_ws(p + 1, e);
        const char *v = p;
        if (!(p = skip_value(p, e))) return false;
        for (int i = 0; i < 5; i++)
            if (span_is(k, KEYS[i])) {
                if (out[i].p) return false;
                out[i] = (span){v, (size_t)(p - v)};
            }
        p = skip_ws(p, e);
        if (p < e && *p == ',') {
            p = skip_ws(p + 1, e);
            continue;
        }
        return p < e && *p == '}' && skip_ws(p + 1, e) == e;
    }
}

/* Whether a reply is the awaited result with the same rows (and proof trees) as the first
 * fully checked one, byte for byte. False means only that the full check must decide. */
static bool same_as_checked(const client_run *r, const char *id, const char *msg, size_t len) {
    span f[5];
    if (!r->seen_rows || !top_fields(msg, len, f)) return false;
    char quoted[32];
    snprintf(quoted, sizeof quoted, "\"%s\"", id);
    if (!span_is(f[0], "\"result\"") || !span_is(f[1], quoted) ||
        (f[2].p && !span_is(f[2], "false")))
        return false;
    if (f[3].n != r->seen_rows_len || memcmp(f[3].p, r->seen_rows, f[3].n) != 0) return false;
    return !r->opt->expect_proofs ||
           (f[4].p && f[4].n == r->seen_proofs_len && memcmp(f[4].p, r->seen_proofs, f[4].n) == 0);
}

/* Keeps the raw rows (and proof trees) of a reply that passed the full check. */
static void remember_checked(client_run *r, const char *msg, size_t len) {
    span f[5];
    if (r->seen_rows || !top_fields(msg, len, f) || !f[3].p) return;
    r->seen_rows = malloc(f[3].n ? f[3].n : 1);
    r->seen_proofs = f[4].p ? malloc(f[4].n ? f[4].n : 1) : NULL;
    if (!r->seen_rows || (f[4].p && !r->seen_proofs)) {
        free(r->seen_rows), free(r->seen_proofs);
        r->seen_rows = r->seen_proofs = NULL;
        return;
    }
    memcpy(r->seen_rows, f[3].p, f[3].n);
    r->seen_rows_len = f[3].n;
    if (f[4].p) memcpy(r->seen_proofs, f[4].p, f[4].n), r->seen_proofs_len = f[4].n;
}

/* Checks a server reply to request `id`. Returns 0 when it is the awaited result, 1 when
 * it is a push to skip (no id: a notice, a notification), else EXIT_INVALID / the reason
 * in r->why. A reply whose rows are byte for byte those of an earlier reply that passed
 * this check passes it without being parsed. */
static int check_server_reply(client_run *r, const char *id, const char *msg, size_t len) {
    if (same_as_checked(r, id, msg, len)) return 0;
    json_t *o = json_loadb(msg, len, 0, NULL);
    char brief[200], brief2[200];
    int rc = 0;
    const char *type = json_string_value(json_object_get(o, "type"));
    const char *rid = json_string_value(json_object_get(o, "id"));
    if (!json_is_object(o) || !type)
        rc = run_fail(r, EXIT_INVALID, "a frame that is not a JSON object with a type: %.*s",
                      (int)(len < 200 ? len : 200), msg);
    else if (!rid && strcmp(type, "result") != 0 && strcmp(type, "error") != 0)
        rc = 1;
    else if (!rid || strcmp(rid, id) != 0)
        rc = run_fail(r, EXIT_INVALID, "request %s got a %s for id %s", id, type,
                      rid ? rid : "(none)");
    else if (strcmp(type, "result") != 0)
        rc = run_fail(r, EXIT_INVALID, "request %s got '%s' instead of a result: %s", id, type,
                      json_brief(json_object_get(o, "message"), brief, sizeof brief));
    else if (json_is_true(json_object_get(o, "truncated")))
        rc = run_fail(r, EXIT_INVALID, "request %s got a truncated result", id);
    else if (!json_equal(json_object_get(o, "rows"), r->opt->expect_rows))
        rc = run_fail(r, EXIT_INVALID, "request %s: rows %s, expected %s", id,
                      json_brief(json_object_get(o, "rows"), brief, sizeof brief),
                      json_brief(r->opt->expect_rows, brief2, sizeof brief2));
    else if (r->opt->expect_proofs &&
             !json_equal(json_object_get(o, "proof_trees"), r->opt->expect_proofs))
        rc = run_fail(r, EXIT_INVALID, "request %s: proof_trees %s differ from the first answer's",
                      id, json_brief(json_object_get(o, "proof_trees"), brief, sizeof brief));
    json_decref(o);
    if (rc == 0) remember_checked(r, msg, len);
    return rc;
}

/* Checks an echo: the bytes sent must come back. The echo is also parsed as JSON, as a
 * server reply is, so that the client's own work per request is alike in both modes
 * (with several clients it shares the cores with the server being measured). */
static int check_echo_reply(client_run *r, const char *sent, size_t sent_len, const char *msg,
                            size_t len) {
    if (len != sent_len || memcmp(msg, sent, len) != 0)
        return run_fail(r, EXIT_INVALID,
                        "the echo of a %zu-byte frame differs (%zu bytes came back)", sent_len,
                        len);
    json_t *o = json_loadb(msg, len, 0, NULL);
    bool ok = json_is_object(o);
    json_decref(o);
    return ok ? 0 : run_fail(r, EXIT_INVALID, "the echoed request is not JSON");
}

/* One round trip of request i (0-based). Returns 0 or the exit status. */
static int round_trip(client_run *r, ws_client *ws, long i, bool timed) {
    const char *frame = r->frame;
    size_t flen = format_request(r->opt, r->index, i + 1, r->frame, r->frame_cap);
    uint64_t t0 = now_ns();
    if (wsc_send_text(ws, frame, flen) != 0)
        return run_fail(r, EXIT_FAILURE, "sending a request: %s", wsc_error(ws));
    char id[24];
    snprintf(id, sizeof id, "%ld", i + 1);
    for (;;) {
        const char *msg;
        size_t len;
        if (wsc_recv_text(ws, &msg, &len) != 0)
            return run_fail(r, EXIT_FAILURE, "waiting for a reply: %s", wsc_error(ws));
        uint64_t t1 = now_ns();
        int rc = r->opt->mode == MODE_SERVER ? check_server_reply(r, id, msg, len)
                                             : check_echo_reply(r, frame, flen, msg, len);
        if (rc == 1) continue;
        if (rc != 0) return rc;
        if (timed) {
            if (r->nsamples == 0) {
                r->first_send_ns = t0;
                r->request_bytes = flen;
                r->reply_bytes = len;
            }
            r->samples_ns[r->nsamples++] = t1 - t0;
            r->last_reply_ns = t1;
        }
        return 0;
    }
}

/* Authenticates with the API key: the first reply must be `authenticated`. Returns 0
 * or the exit status. */
static int authenticate(client_run *r, ws_client *ws) {
    json_t *req = json_pack("{s:s,s:s}", "type", "authenticate", "api_key", r->opt->api_key);
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!text) return run_fail(r, EXIT_FAILURE, "out of memory");
    int rc = wsc_send_text(ws, text, strlen(text));
    free(text);
    const char *msg;
    size_t len;
    if (rc != 0) return run_fail(r, EXIT_FAILURE, "sending authenticate: %s", wsc_error(ws));
    if (wsc_recv_text(ws, &msg, &len) != 0)
        return run_fail(r, EXIT_FAILURE, "waiting for authenticated: %s", wsc_error(ws));
    json_t *o = json_loadb(msg, len, 0, NULL);
    const char *type = json_string_value(json_object_get(o, "type"));
    const char *why = json_string_value(json_object_get(o, "message"));
    rc = type && strcmp(type, "authenticated") == 0 ? 0 : EXIT_FAILURE;
    if (rc != 0)
        run_fail(r, rc, "authentication failed: the reply was '%s'%s%s", type ? type : "(no type)",
                 why ? ": " : "", why ? why : "");
    json_decref(o);
    return rc;
}

static void wait_until(uint64_t due_ns) {
    if (now_ns() >= due_ns) return;
    struct timespec ts = {(time_t)(due_ns / 1000000000u), (long)(due_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void *client_main(void *arg) {
    client_run *r = arg;
    const load_options *o = r->opt;
    char err[512];
    ws_client *ws = wsc_connect(o->host, o->port, o->path, (int)o->timeout_ms, err, sizeof err);
    if (!ws) run_fail(r, EXIT_FAILURE, "%s", err);
    if (ws && o->mode == MODE_SERVER) authenticate(r, ws);
    for (long i = 0; r->status == 0 && i < o->warmup; i++) round_trip(r, ws, i, false);
    if (r->status != 0) {
        atomic_store(r->stop, true);
        gate_abort(r->gate);
    } else if (gate_wait(r->gate)) {
        uint64_t first = now_ns();
        for (long i = 0; r->status == 0 && i < o->requests && !atomic_load(r->stop); i++) {
            if (o->interval_us > 0)
                wait_until(first + (uint64_t)i * (uint64_t)o->interval_us * 1000u);
            round_trip(r, ws, o->warmup + i, true);
        }
        if (r->status != 0) atomic_store(r->stop, true);
    }
    wsc_close(ws);
    return NULL;
}

/* ---- watchers (echo mode): the connections ws_echo_server pushes each request to ---- */

/* What the watchers share. */
typedef struct watch_run {
    const load_options *opt;
    atomic_long *counts; /* per request number (1-based, at [n - 1]): its pushes received */
    atomic_long received;
    long expected;
    _Atomic uint64_t last_push_ns; /* when a push last came (or the clients ended) */
    atomic_bool clients_done;      /* every client thread has ended */
    atomic_bool *stop;             /* a client or a watcher failed: the others end */
} watch_run;

/* One watcher: its connection, read by a thread of its own, as inputlayer-fixture reads
 * each agent's. */
typedef struct watcher {
    watch_run *run;
    long index; /* 0-based */
    ws_client *ws;
    char *frame; /* a request as a client sent it, to compare a push with */
    size_t frame_cap;
    int status;
    char why[512];
} watcher;

/* Checks one push: a request some client sent, byte for byte, not seen more often than
 * the clients sent it. */
static int check_push(watcher *w, const char *msg, size_t len) {
    static const char HEAD[] = "{\"type\":\"execute\",\"id\":\"";
    watch_run *run = w->run;
    const load_options *o = run->opt;
    long n = 0;
    size_t i = sizeof HEAD - 1;
    if (len <= i || memcmp(msg, HEAD, i) != 0)
        return run_fail(w, EXIT_INVALID, "a push is not a request: %.*s",
                        (int)(len < 60 ? len : 60), msg);
    for (; i < len && msg[i] >= '0' && msg[i] <= '9' && n < 1000000000L; i++)
        n = n * 10 + (msg[i] - '0');
    if (n < 1 || n > o->warmup + o->requests)
        return run_fail(w, EXIT_INVALID, "a push has request number %ld, out of range", n);
    bool same = false;
    /* Without `{n}` every client's request n is the same frame. */
    long clients = o->serial_at >= 0 ? o->clients : 1;
    for (long c = 0; c < clients && !same; c++) {
        size_t flen = format_request(o, c, n, w->frame, w->frame_cap);
        same = flen == len && memcmp(w->frame, msg, len) == 0;
    }
    if (!same) return run_fail(w, EXIT_INVALID, "push of request %ld differs from it", n);
    if (atomic_fetch_add(&run->counts[n - 1], 1) >= o->clients)
        return run_fail(w, EXIT_INVALID, "request %ld was pushed more often than sent", n);
    atomic_store(&run->last_push_ns, now_ns());
    atomic_fetch_add(&run->received, 1);
    return 0;
}

/* Reads one watcher until all the pushes came to the watchers, or, once the clients have
 * ended, none came for the timeout. */
static void *watcher_main(void *arg) {
    watcher *w = arg;
    watch_run *run = w->run;
    uint64_t timeout_ns = (uint64_t)run->opt->timeout_ms * 1000000u;
    while (w->status == 0 && atomic_load(&run->received) < run->expected &&
           !atomic_load(run->stop)) {
        int ready = wsc_wait_readable(w->ws, 100000000LL);
        const char *msg;
        size_t len;
        if (ready < 0 || (ready > 0 && wsc_recv_text(w->ws, &msg, &len) != 0))
            run_fail(w, EXIT_FAILURE, "watcher %ld: %s", w->index + 1, wsc_error(w->ws));
        else if (ready > 0)
            check_push(w, msg, len);
        else if (atomic_load(&run->clients_done) &&
                 now_ns() - atomic_load(&run->last_push_ns) > timeout_ns)
            run_fail(w, EXIT_INVALID, "the watchers received %ld of %ld pushes",
                     atomic_load(&run->received), run->expected);
    }
    if (w->status != 0) atomic_store(run->stop, true);
    return NULL;
}

/* Opens watcher w's connection and registers it with a `watch` answered `watching`.
 * Returns 0 or the exit status, with the reason in w->why. */
static int open_watcher(watcher *w) {
    const load_options *o = w->run->opt;
    char err[512];
    w->frame_cap = format_request(o, MAX_CLIENTS, o->warmup + o->requests, NULL, 0) + 1;
    w->frame = malloc(w->frame_cap);
    if (!w->frame) return run_fail(w, EXIT_FAILURE, "out of memory");
    w->ws = wsc_connect(o->host, o->port, o->path, (int)o->timeout_ms, err, sizeof err);
    if (!w->ws) return run_fail(w, EXIT_FAILURE, "watcher %ld: %s", w->index + 1, err);
    const char *msg;
    size_t len;
    if (wsc_send_text(w->ws, "watch", 5) != 0 || wsc_recv_text(w->ws, &msg, &len) != 0)
        return run_fail(w, EXIT_FAILURE, "watcher %ld: %s", w->index + 1, wsc_error(w->ws));
    if (len != 8 || memcmp(msg, "watching", 8) != 0)
        return run_fail(w, EXIT_INVALID,
                        "watcher %ld: the server answered '%.*s', not 'watching' (is it "
                        "ws_echo_server?)",
                        w->index + 1, (int)(len < 60 ? len : 60), msg);
    return 0;
}

/* The watchers of a run and their threads. */
typedef struct watchers {
    watch_run run;
    watcher *w;
    pthread_t *threads;
    long n, started;
} watchers;

/* Opens o->watchers watchers and starts a thread for each. Returns 0, or the exit status
 * with the reason in why. */
static int watchers_start(watchers *ws, const load_options *o, atomic_bool *stop, char *why,
                          size_t cap) {
    long nreq = o->warmup + o->requests;
    ws->run = (watch_run){
        .opt = o, .expected = o->clients * nreq, .stop = stop, .last_push_ns = now_ns()};
    ws->n = o->watchers;
    ws->run.counts = calloc((size_t)nreq, sizeof *ws->run.counts);
    ws->w = calloc((size_t)ws->n, sizeof *ws->w);
    ws->threads = calloc((size_t)ws->n, sizeof *ws->threads);
    if (!ws->run.counts || !ws->w || !ws->threads) {
        snprintf(why, cap, "out of memory");
        return EXIT_FAILURE;
    }
    for (long i = 0; i < ws->n; i++) {
        watcher *w = &ws->w[i];
        *w = (watcher){.run = &ws->run, .index = i};
        if (open_watcher(w) != 0) {
            snprintf(why, cap, "%s%s", w->status == EXIT_INVALID ? "INVALID run: " : "", w->why);
            return w->status;
        }
    }
    for (; ws->started < ws->n; ws->started++)
        if (pthread_create(&ws->threads[ws->started], NULL, watcher_main, &ws->w[ws->started]) !=
            0) {
            snprintf(why, cap, "cannot start watcher thread %ld", ws->started + 1);
            return EXIT_FAILURE;
        }
    return 0;
}

/* Once the clients have ended: tells the watchers (their wait for the last pushes starts
 * now), waits for their threads, and returns 0 or the status of the first that failed (an
 * INVALID one first), its reason on stderr. */
static int watchers_finish(watchers *ws) {
    atomic_store(&ws->run.last_push_ns, now_ns());
    atomic_store(&ws->run.clients_done, true);
    for (long i = 0; i < ws->started; i++) pthread_join(ws->threads[i], NULL);
    ws->started = 0;
    watcher *first = NULL;
    for (long i = 0; i < ws->n; i++)
        if (ws->w[i].status != 0 &&
            (!first || (first->status != EXIT_INVALID && ws->w[i].status == EXIT_INVALID)))
            first = &ws->w[i];
    if (!first) return 0;
    fprintf(stderr, "inputlayer-load: %s%s\n", first->status == EXIT_INVALID ? "INVALID run: " : "",
            first->why);
    return first->status;
}

static void watchers_free(watchers *ws) {
    for (long i = 0; ws->w && i < ws->n; i++) {
        wsc_close(ws->w[i].ws);
        free(ws->w[i].frame);
    }
    free(ws->w);
    free(ws->threads);
    free(ws->run.counts);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least q of all samples at or below it. */
static double percentile_us(const uint64_t *sorted, size_t n, double q) {
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank < 1) rank = 1;
    return (double)sorted[rank - 1] / 1000.0;
}

static int report(const load_options *o, client_run *runs, long pushes) {
    size_t n = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (long c = 0; c < o->clients; c++) n += runs[c].nsamples;
    uint64_t *all = malloc(n * sizeof *all);
    if (!all) {
        fputs("inputlayer-load: out of memory\n", stderr);
        return EXIT_FAILURE;
    }
    size_t k = 0;
    double sum = 0;
    for (long c = 0; c < o->clients; c++) {
        client_run *r = &runs[c];
        memcpy(all + k, r->samples_ns, r->nsamples * sizeof *all);
        k += r->nsamples;
        if (r->first_send_ns < first) first = r->first_send_ns;
        if (r->last_reply_ns > last) last = r->last_reply_ns;
        for (size_t i = 0; i < r->nsamples; i++) sum += (double)r->samples_ns[i];
    }
    qsort(all, n, sizeof *all, cmp_u64);
    double p50 = percentile_us(all, n, 0.50), p90 = percentile_us(all, n, 0.90);
    double p99 = percentile_us(all, n, 0.99), max = (double)all[n - 1] / 1000.0;
    double mean = sum / (double)n / 1000.0;
    double elapsed_s = (double)(last - first) / 1e9;
    double rate = elapsed_s > 0 ? (double)n / elapsed_s : 0;
    const char *mode = o->mode == MODE_SERVER ? "server" : "echo";
    printf("{\"mode\":\"%s\",\"clients\":%ld,\"warmup\":%ld,\"requests_per_client\":%ld,"
           "\"samples\":%zu,\"request_bytes\":%zu,\"reply_bytes\":%zu,\"p50_us\":%.1f,"
           "\"p90_us\":%.1f,\"p99_us\":%.1f,\"mean_us\":%.1f,\"max_us\":%.1f,"
           "\"rate_per_sec\":%.0f,\"elapsed_ms\":%.1f,\"watchers\":%ld,\"pushes\":%ld}\n",
           mode, o->clients, o->warmup, o->requests, n, runs[0].request_bytes, runs[0].reply_bytes,
           p50, p90, p99, mean, max, rate, elapsed_s * 1000, o->watchers, pushes);
    printf("%s, %ld client%s x %ld requests (%zu-byte requests, %zu-byte replies): "
           "p50 %.1f µs, p90 %.1f µs, p99 %.1f µs, mean %.1f µs; %.0f requests/s\n",
           mode, o->clients, o->clients == 1 ? "" : "s", o->requests, runs[0].request_bytes,
           runs[0].reply_bytes, p50, p90, p99, mean, rate);
    if (o->watchers > 0)
        printf("each request also pushed to one of %ld watchers: %ld pushes, each received once\n",
               o->watchers, pushes);
    free(all);
    return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

/* Allocates what a client needs before anything is timed. */
static bool prepare_client(client_run *r) {
    const load_options *o = r->opt;
    r->frame_cap = format_request(o, MAX_CLIENTS, o->warmup + o->requests, NULL, 0) + 1;
    r->frame = malloc(r->frame_cap);
    r->samples_ns = calloc((size_t)o->requests, sizeof *r->samples_ns);
    return r->frame && r->samples_ns;
}

static void free_client(client_run *r) {
    free(r->frame);
    free(r->samples_ns);
    free(r->seen_rows);
    free(r->seen_proofs);
}

static int run(const load_options *o) {
    client_run *runs = calloc((size_t)o->clients, sizeof *runs);
    pthread_t *threads = calloc((size_t)o->clients, sizeof *threads);
    bool *started = calloc((size_t)o->clients, sizeof *started);
    start_gate gate;
    atomic_bool stop = false;
    gate_init(&gate, o->clients);
    int status = 0;
    char why[640] = "out of memory";
    if (!runs || !threads || !started) status = EXIT_FAILURE;
    watchers watch = {0};
    if (status == 0 && o->watchers > 0) status = watchers_start(&watch, o, &stop, why, sizeof why);
    for (long c = 0; status == 0 && c < o->clients; c++) {
        runs[c] = (client_run){.opt = o, .index = c, .gate = &gate, .stop = &stop};
        if (!prepare_client(&runs[c])) status = EXIT_FAILURE;
    }
    for (long c = 0; status == 0 && c < o->clients; c++) {
        int rc = pthread_create(&threads[c], NULL, client_main, &runs[c]);
        if (rc != 0) {
            snprintf(why, sizeof why, "cannot start client thread %ld: %s", c + 1, strerror(rc));
            status = EXIT_FAILURE;
            atomic_store(&stop, true);
            gate_abort(&gate);
        }
        started[c] = rc == 0;
    }
    for (long c = 0; threads && started && c < o->clients; c++)
        if (started[c]) pthread_join(threads[c], NULL);
    if (status != 0) atomic_store(&stop, true);
    int watched = watchers_finish(&watch);
    if (status != 0) fprintf(stderr, "inputlayer-load: %s\n", why);
    /* A wrong reply outranks the errors it may have caused in other clients. */
    for (long c = 0; status == 0 && runs && c < o->clients; c++)
        if (runs[c].status == EXIT_INVALID) status = EXIT_INVALID;
    for (long c = 0; runs && c < o->clients; c++) {
        client_run *r = &runs[c];
        if (r->status == 0 || (status == EXIT_INVALID && r->status != EXIT_INVALID)) continue;
        fprintf(stderr, "inputlayer-load: %sclient %ld: %s\n",
                r->status == EXIT_INVALID ? "INVALID run: " : "", c + 1, r->why);
        if (status == 0) status = r->status;
    }
    if (status == 0) status = watched;
    if (status == 0) status = report(o, runs, atomic_load(&watch.run.received));
    for (long c = 0; runs && c < o->clients; c++)
        if (runs[c].opt) free_client(&runs[c]);
    watchers_free(&watch);
    gate_destroy(&gate);
    free(started);
    free(threads);
    free(runs);
    return status;
}

int main(int argc, char **argv) {
    load_options o = {0};
    int status = parse_args(argc, argv, &o);
    if (status < 0) status = run(&o);
    json_decref(o.expect_rows);
    json_decref(o.expect_proofs);
    free(o.program_json);
    return status;
}
