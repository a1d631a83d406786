/* Connections of the benchmark fixtures to inputlayer-server; see fixture_session.h. */
#include "fixture_session.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t fx_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

fx_frame_kind fx_classify(const json_t *frame) {
    static const char *const PUSHES[] = {"persistent_update", "rule_change", "kg_change",
                                         "schema_change",     "notice",      NULL};
    const char *type = json_string_value(json_object_get(frame, "type"));
    if (!type) return FX_FRAME_UNKNOWN;
    for (int i = 0; PUSHES[i]; i++)
        if (strcmp(type, PUSHES[i]) == 0) return FX_FRAME_PUSH;
    if (strcmp(type, "result") == 0) return FX_FRAME_RESULT;
    if (strcmp(type, "error") == 0) return FX_FRAME_ERROR;
    if (strcmp(type, "subscription_delta") == 0) return FX_FRAME_DELTA;
    if (strcmp(type, "subscription_error") == 0) return FX_FRAME_SUBSCRIPTION_ERROR;
    return FX_FRAME_UNKNOWN;
}

int fx_execute(ws_client *ws, const char *id, const char *program, json_t **result, char *why,
               size_t why_len) {
    if (result) *result = NULL;
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
    for (;;) {
        const char *msg;
        size_t len;
        if (wsc_recv_text(ws, &msg, &len) != 0) {
            snprintf(why, why_len, "waiting for the reply to %s: %s", id, wsc_error(ws));
            return FX_FAILED;
        }
        json_t *o = json_loadb(msg, len, 0, NULL);
        fx_frame_kind kind = fx_classify(o);
        if (kind == FX_FRAME_PUSH) {
            json_decref(o);
            continue;
        }
        const char *rid = json_string_value(json_object_get(o, "id"));
        const json_t *errors = json_object_get(o, "errors");
        rc = FX_INVALID;
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
