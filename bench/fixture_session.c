/* Connections of the benchmark fixtures to inputlayer-server; see fixture_session.h. */
#include "fixture_session.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool fx_parse_long(const char *s, long min, long max, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return false;
    *out = v;
    return true;
}

void fx_target_defaults(fx_target *t) {
    *t = (fx_target){.host = "127.0.0.1", .timeout_ms = 60000};
    t->api_key = getenv("INPUTLAYER_API_KEY");
}

int fx_target_arg(fx_target *t, pid_t *server_pid, const char *key, const char *value) {
    long v;
    if (strcmp(key, "--port") == 0)
        t->port = value;
    else if (strcmp(key, "--host") == 0)
        t->host = value;
    else if (strcmp(key, "--api-key") == 0)
        t->api_key = value;
    else if (strcmp(key, "--timeout-ms") == 0) {
        if (!fx_parse_long(value, 1, 3600000, &v)) return -1;
        t->timeout_ms = (int)v;
    } else if (strcmp(key, "--server-pid") == 0) {
        if (!fx_parse_long(value, 1, 1L << 30, &v)) return -1;
        *server_pid = (pid_t)v;
    } else
        return 0;
    return 1;
}

int fx_bad_arg(const char *prog, const char *key, const char *value, void (*usage)(FILE *f)) {
    fprintf(stderr, "%s: bad argument '%s'%s%s\n", prog, key, value ? " " : "", value ? value : "");
    usage(stderr);
    return FX_USAGE;
}

int fx_parse_options(int argc, char **argv, const char *prog, fx_target *t, pid_t *server_pid,
                     const fx_opt *opts, size_t nopts, void (*usage)(FILE *f)) {
    for (int a = 2; a < argc; a += 2) {
        const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(k, "--help") == 0 || strcmp(k, "-h") == 0) {
            usage(stdout);
            return FX_OK;
        }
        int taken = v ? fx_target_arg(t, server_pid, k, v) : -1;
        for (size_t i = 0; i < nopts && taken == 0; i++)
            if ((opts[i].num || opts[i].text) && strcmp(k, opts[i].name) == 0) {
                if (opts[i].text) *opts[i].text = v;
                taken = opts[i].text || fx_parse_long(v, opts[i].min, opts[i].max, opts[i].num)
                            ? 1
                            : -1;
            }
        if (taken <= 0) return fx_bad_arg(prog, k, v, usage);
    }
    return fx_target_complete(prog, t) ? -1 : FX_USAGE;
}

bool fx_target_complete(const char *prog, const fx_target *t) {
    if (t->port && t->api_key) return true;
    fprintf(stderr, "%s: --port and --api-key (or $INPUTLAYER_API_KEY) are required\n", prog);
    return false;
}

uint64_t fx_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fx_sleep_ns(uint64_t ns) {
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

ws_client *fx_open(const fx_target *t, const char *kg, char *why, size_t why_len) {
    char path[256];
    snprintf(path, sizeof path, "/ws?kg=%s", kg);
    ws_client *ws = wsc_connect(t->host, t->port, path, t->timeout_ms, why, why_len);
    if (!ws) return NULL;
    json_t *req = json_pack("{s:s,s:s}", "type", "authenticate", "api_key", t->api_key);
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    const char *msg;
    size_t len;
    bool ok = false;
    if (!text) {
        snprintf(why, why_len, "out of memory");
    } else if (wsc_send_text(ws, text, strlen(text)) != 0 || wsc_recv_text(ws, &msg, &len) != 0) {
        snprintf(why, why_len, "authenticating: %s", wsc_error(ws));
    } else {
        json_t *o = json_loadb(msg, len, 0, NULL);
        const char *type = json_string_value(json_object_get(o, "type"));
        ok = type && strcmp(type, "authenticated") == 0;
        if (!ok)
            snprintf(why, why_len, "authentication failed: %.*s", (int)(len > 300 ? 300 : len),
                     msg);
        json_decref(o);
    }
    free(text);
    if (!ok) {
        wsc_close(ws);
        return NULL;
    }
    return ws;
}

int fx_create_graph(const fx_target *t, const char *kg, ws_client **ws, char *why, size_t why_len) {
    *ws = NULL;
    ws_client *setup = fx_open(t, "default", why, why_len);
    if (!setup) return FX_FAILED;
    char program[192];
    snprintf(program, sizeof program, ".kg create %s", kg);
    int status = fx_execute(setup, "create", program, NULL, why, why_len);
    wsc_close(setup);
    if (status != FX_OK) return status;
    *ws = fx_open(t, kg, why, why_len);
    return *ws ? FX_OK : FX_FAILED;
}

static const char *const PUSHES[] = {"persistent_update", "rule_change", "kg_change",
                                     "schema_change",     "notice",      NULL};

static bool is_push(const char *type, size_t len) {
    for (int i = 0; PUSHES[i]; i++)
        if (strlen(PUSHES[i]) == len && memcmp(type, PUSHES[i], len) == 0) return true;
    return false;
}

fx_frame_kind fx_classify(const json_t *frame) {
    const char *type = json_string_value(json_object_get(frame, "type"));
    if (!type) return FX_FRAME_UNKNOWN;
    if (is_push(type, strlen(type))) return FX_FRAME_PUSH;
    if (strcmp(type, "result") == 0) return FX_FRAME_RESULT;
    if (strcmp(type, "error") == 0) return FX_FRAME_ERROR;
    if (strcmp(type, "subscription_delta") == 0) return FX_FRAME_DELTA;
    if (strcmp(type, "subscription_error") == 0) return FX_FRAME_SUBSCRIPTION_ERROR;
    return FX_FRAME_UNKNOWN;
}

/* The frame's type read from its text, without parsing it, when the text starts with a
 * plain "type" member (the server writes it first in every frame); NULL otherwise. */
static const char *leading_type(const char *msg, size_t len, size_t *type_len) {
    static const char PREFIX[] = "{\"type\":\"";
    const size_t plen = sizeof PREFIX - 1;
    if (len <= plen || memcmp(msg, PREFIX, plen) != 0) return NULL;
    const char *type = msg + plen, *end = memchr(type, '"', len - plen);
    if (!end || memchr(type, '\\', (size_t)(end - type))) return NULL;
    *type_len = (size_t)(end - type);
    return type;
}

fx_frame_kind fx_classify_text(const char *msg, size_t len, json_t **frame) {
    size_t tlen;
    const char *type = leading_type(msg, len, &tlen);
    *frame = NULL;
    if (type && is_push(type, tlen)) return FX_FRAME_PUSH;
    *frame = json_loadb(msg, len, 0, NULL);
    return fx_classify(*frame);
}

/* Whether a frame is a push, parsing it only when its type does not lead its text. */
static bool push_frame(const char *msg, size_t len) {
    size_t tlen;
    const char *type = leading_type(msg, len, &tlen);
    if (type) return is_push(type, tlen);
    json_t *o = json_loadb(msg, len, 0, NULL);
    bool push = fx_classify(o) == FX_FRAME_PUSH;
    json_decref(o);
    return push;
}

int fx_send_execute(ws_client *ws, const char *id, const char *program, char *why, size_t why_len) {
    json_t *req = json_pack("{s:s,s:s,s:s}", "type", "execute", "id", id, "program", program);
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!text) {
        snprintf(why, why_len, "out of memory");
        return FX_FAILED;
    }
    int rc = wsc_send_text(ws, text, strlen(text));
    free(text);
    if (rc != 0) {
        snprintf(why, why_len, "sending request %s: %s", id, wsc_error(ws));
        return FX_FAILED;
    }
    return FX_OK;
}

int fx_await_frame(ws_client *ws, const char *id, const char **msg, size_t *len, uint64_t *at_ns,
                   char *why, size_t why_len) {
    for (;;) {
        if (wsc_recv_text(ws, msg, len) != 0) {
            snprintf(why, why_len, "waiting for the reply to %s: %s", id, wsc_error(ws));
            return FX_FAILED;
        }
        if (at_ns) *at_ns = fx_now_ns();
        if (!push_frame(*msg, *len)) return FX_OK;
    }
}

/* Whether o, of that kind, parsed from msg, is the result of request id with no statement
 * errors and not truncated; it is returned in *result or freed. */
static int check_result(const char *id, const char *msg, size_t len, json_t *o, fx_frame_kind kind,
                        json_t **result, char *why, size_t why_len) {
    const char *rid = json_string_value(json_object_get(o, "id"));
    const json_t *errors = json_object_get(o, "errors");
    int rc = FX_INVALID;
    if (kind != FX_FRAME_RESULT || !rid || strcmp(rid, id) != 0)
        snprintf(why, why_len, "request %s got: %.*s", id, (int)(len > 300 ? 300 : len), msg);
    else if (json_array_size(errors) > 0 || json_is_true(json_object_get(o, "truncated")))
        snprintf(why, why_len, "request %s failed or was truncated: %.*s", id,
                 (int)(len > 300 ? 300 : len), msg);
    else
        rc = FX_OK;
    if (rc == FX_OK && result)
        *result = o;
    else
        json_decref(o);
    return rc;
}

int fx_result_of_text(const char *id, const char *msg, size_t len, json_t **result, char *why,
                      size_t why_len) {
    if (result) *result = NULL;
    json_t *o;
    fx_frame_kind kind = fx_classify_text(msg, len, &o);
    return check_result(id, msg, len, o, kind, result, why, why_len);
}

int fx_await_result(ws_client *ws, const char *id, json_t **result, uint64_t *at_ns, char *why,
                    size_t why_len) {
    if (result) *result = NULL;
    const char *msg;
    size_t len;
    int rc = fx_await_frame(ws, id, &msg, &len, at_ns, why, why_len);
    return rc == FX_OK ? fx_result_of_text(id, msg, len, result, why, why_len) : rc;
}

int fx_execute(ws_client *ws, const char *id, const char *program, json_t **result, char *why,
               size_t why_len) {
    if (result) *result = NULL;
    int rc = fx_send_execute(ws, id, program, why, why_len);
    return rc == FX_OK ? fx_await_result(ws, id, result, NULL, why, why_len) : rc;
}

long long fx_inserted_count(const json_t *result) {
    const char *msg =
        json_string_value(json_array_get(json_array_get(json_object_get(result, "rows"), 0), 0));
    unsigned long long n;
    if (!msg || sscanf(msg, "Inserted %llu fact", &n) != 1) return -1;
    return (long long)n;
}

int fx_load_statement(void *ctx, const char *stmt, size_t len) {
    (void)len;
    fx_loader *l = ctx;
    char id[32];
    snprintf(id, sizeof id, "load%ld", ++l->statements);
    json_t *res;
    l->status = fx_execute(l->ws, id, stmt, &res, l->why, sizeof l->why);
    if (l->status != FX_OK) return 1;
    long long n = fx_inserted_count(res);
    if (n > 0) l->inserted += (size_t)n;
    json_decref(res);
    return 0;
}

int64_t fx_process_cpu_ns(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int64_t sum = 0;
    bool any = false;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char file[320];
        snprintf(file, sizeof file, "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
        FILE *f = fopen(file, "r");
        if (!f) continue; /* the thread ended meanwhile */
        int64_t on_cpu;
        if (fscanf(f, "%" SCNd64, &on_cpu) == 1) {
            sum += on_cpu;
            any = true;
        }
        fclose(f);
    }
    closedir(d);
    return any ? sum : -1;
}

bool fx_process_memory_kb(pid_t pid, long *rss_kb, long *hwm_kb) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %ld", rss_kb) == 1 || sscanf(line, "VmHWM: %ld", hwm_kb) == 1)
            found++;
    }
    fclose(f);
    return found == 2;
}
