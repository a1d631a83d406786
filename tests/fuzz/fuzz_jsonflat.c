/* libFuzzer target for the request frame reader (src/server/srv_jsonflat.c), against
 * jansson: whatever the bytes, the reader and the id probe must not crash, leak or hang,
 * and every object the reader returns must be the one json_loadb builds from the same
 * text, each member found by key (srv_flat_get) as jansson has it. Where it declines (it
 * returns NULL), the server uses jansson itself, so declining is always allowed. Run with
 * `make fuzz`. */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_jsonflat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The id probe (frames that are not JSON): whatever it finds is an id the server may
     * echo, 1 to 64 bytes without NUL. */
    char id[72];
    bool probed = srv_json_probe_id((const char *)data, size, id, sizeof id);
    if (probed && (strnlen(id, sizeof id) < 1 || strnlen(id, sizeof id) > 64)) {
        fprintf(stderr, "the probe found an id of %zu bytes\n", strnlen(id, sizeof id));
        abort();
    }
    /* On JSON that jansson reads (without duplicate keys), the probe finds what it does. */
    json_error_t perr;
    json_t *obj =
        json_loadb((const char *)data, size, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &perr);
    if (obj && json_is_object(obj)) {
        json_t *jid = json_object_get(obj, "id");
        size_t n = json_is_string(jid) ? json_string_length(jid) : 0;
        bool valid = n >= 1 && n <= 64 && !memchr(json_string_value(jid), 0, n);
        if (valid != probed || (valid && strcmp(id, json_string_value(jid)) != 0)) {
            fprintf(stderr, "the probe found %s where jansson reads %s\n", probed ? id : "no id",
                    valid ? json_string_value(jid) : "no valid id");
            abort();
        }
    }
    json_decref(obj);
    json_t *flat = srv_json_load_flat((const char *)data, size);
    if (!flat) return 0;
    json_error_t err;
    json_t *ref = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &err);
    if (!ref) {
        fprintf(stderr, "the reader accepted what jansson refuses: %s\n", err.text);
        abort();
    }
    if (!json_equal(flat, ref)) {
        char *a = json_dumps(flat, JSON_SORT_KEYS), *b = json_dumps(ref, JSON_SORT_KEYS);
        fprintf(stderr, "the reader read %s where jansson reads %s\n", a ? a : "?", b ? b : "?");
        abort();
    }
    /* The members as the server reads them (srv_flat_get): each key finds the value
       jansson keeps for it, the last of a repeated key. */
    srv_flat f;
    if (!srv_flat_read(&f, (const char *)data, size)) {
        fprintf(stderr, "the reader read the object once and not again\n");
        abort();
    }
    for (size_t i = 0; i < f.n; i++) {
        const srv_flat_member *m = srv_flat_get(&f, f.m[i].key);
        json_t *want = json_object_get(ref, f.m[i].key);
        bool same =
            m && want &&
            (m->kind == SRV_FLAT_STRING
                 ? json_is_string(want) && json_string_length(want) == m->len &&
                       memcmp(json_string_value(want), m->str, m->len) == 0
             : m->kind == SRV_FLAT_INT ? json_is_integer(want) && json_integer_value(want) == m->num
             : m->kind == SRV_FLAT_TRUE  ? json_is_true(want)
             : m->kind == SRV_FLAT_FALSE ? json_is_false(want)
                                         : json_is_null(want));
        if (!same) {
            fprintf(stderr, "member %s reads otherwise than jansson's\n", f.m[i].key);
            abort();
        }
    }
    srv_flat_free(&f);
    json_decref(flat);
    json_decref(ref);
    return 0;
}
