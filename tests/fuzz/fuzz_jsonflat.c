/* libFuzzer target for the request frame reader (src/server/srv_jsonflat.c), against
 * jansson: whatever the bytes, the reader must not crash, leak or hang, and every object
 * it returns must be the one json_loadb builds from the same text. Where it declines (it
 * returns NULL), the server uses jansson itself, so declining is always allowed. Run with
 * `make fuzz`. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/srv_jsonflat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
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
    json_decref(flat);
    json_decref(ref);
    return 0;
}
