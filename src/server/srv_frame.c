/* Reading a request frame (srv_frame.h). Most frames are flat (string, integer and
 * literal members only) and are read without jansson; the rest, and anything that is not
 * JSON, go to json_loadb, which also words the error. Only jansson decodes \u0000 (the
 * flat reader leaves every \u escape to it), so only its reading is searched for a NUL. */
#include "server/srv_frame.h"

#include <stdio.h>
#include <string.h>

void srv_frame_read(srv_frame *f, const char *msg, size_t len) {
    f->is_flat = srv_flat_read(&f->flat, msg, len);
    f->root = NULL;
    f->id = f->type = NULL;
    f->bad[0] = 0;
    f->refused_nul = false;
    json_error_t je;
    bool decoded_nul = false;
    if (!f->is_flat) {
        f->root = json_loadb(msg, len, JSON_ALLOW_NUL, &je);
        decoded_nul = f->root && srv_json_has_nul(f->root);
    }
    if (!f->is_flat && !f->root) {
        snprintf(f->bad, sizeof f->bad, "Invalid message format: %s", je.text);
        /* Not JSON, but the id is echoed when the text still tells it (docs/server.md). */
        if (srv_json_probe_id(msg, len, f->probed, sizeof f->probed)) f->id = f->probed;
        return;
    }
    if (!f->is_flat && !json_is_object(f->root)) {
        snprintf(f->bad, sizeof f->bad, "Invalid message format: not a JSON object");
        return;
    }
    if (srv_frame_has(f, "id")) {
        size_t n = 0;
        const char *s = srv_frame_str(f, "id", &n);
        if (s && n >= 1 && n <= 64 && !memchr(s, 0, n))
            f->id = s;
        else
            snprintf(f->bad, sizeof f->bad,
                     "Invalid message format: id must be a string of 1 to 64 bytes");
    }
    f->type = srv_frame_str(f, "type", NULL);
    if (!f->bad[0] && !f->type)
        snprintf(f->bad, sizeof f->bad, "Invalid message format: missing type");
    /* Refused whole, so that no statement, name, credential or graph ever holds one. */
    f->refused_nul = !f->bad[0] && decoded_nul;
    if (f->refused_nul)
        snprintf(f->bad, sizeof f->bad,
                 "Invalid message format: strings may not contain the NUL character "
                 "(\\u0000)");
}

void srv_frame_free(srv_frame *f) {
    json_decref(f->root);
    f->root = NULL;
    if (f->is_flat) srv_flat_free(&f->flat);
    f->is_flat = false;
}

json_t *srv_frame_json(srv_frame *f) {
    if (!f->root && f->is_flat) f->root = srv_flat_json(&f->flat);
    return json_is_object(f->root) ? f->root : NULL;
}

bool srv_frame_has(const srv_frame *f, const char *key) {
    return f->is_flat ? srv_flat_get(&f->flat, key) != NULL : json_object_get(f->root, key) != NULL;
}

const char *srv_frame_str(const srv_frame *f, const char *key, size_t *len) {
    if (f->is_flat) {
        const srv_flat_member *m = srv_flat_get(&f->flat, key);
        if (!m || m->kind != SRV_FLAT_STRING) return NULL;
        if (len) *len = m->len;
        return m->str;
    }
    json_t *v = json_object_get(f->root, key);
    if (!json_is_string(v)) return NULL;
    if (len) *len = json_string_length(v);
    return json_string_value(v);
}

bool srv_frame_timeout(const srv_frame *f, int64_t *ms) {
    *ms = 0;
    if (f->is_flat) {
        const srv_flat_member *m = srv_flat_get(&f->flat, "timeout_ms");
        if (!m) return true;
        if (m->kind != SRV_FLAT_INT || m->num < 0) return false;
        *ms = m->num;
        return true;
    }
    json_t *t = json_object_get(f->root, "timeout_ms");
    if (!t) return true;
    if (!json_is_integer(t) || json_integer_value(t) < 0) return false;
    *ms = (int64_t)json_integer_value(t);
    return true;
}
