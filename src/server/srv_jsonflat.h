/* Reading request frames fast (srv_jsonflat.c): a JSON object whose members are all
 * strings, integers, true, false or null, which is what nearly every frame is. */
#ifndef IL_SERVER_SRV_JSONFLAT_H
#define IL_SERVER_SRV_JSONFLAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A flat frame's members, in the order of the text (a repeated key more than once). */
typedef enum srv_flat_kind {
    SRV_FLAT_STRING,
    SRV_FLAT_INT,
    SRV_FLAT_TRUE,
    SRV_FLAT_FALSE,
    SRV_FLAT_NULL,
} srv_flat_kind;

typedef struct srv_flat_member {
    const char *key; /* NUL-terminated; holds no NUL */
    size_t klen;
    srv_flat_kind kind;
    const char *str; /* SRV_FLAT_STRING: len bytes and a NUL; holds no NUL */
    size_t len;
    int64_t num;           /* SRV_FLAT_INT */
    size_t key_at, str_at; /* their offsets in the buffer while it is read */
} srv_flat_member;

/* More members than this are left to jansson. */
#define SRV_FLAT_MAX 32

typedef struct srv_flat {
    srv_flat_member m[SRV_FLAT_MAX];
    size_t n;
    char *buf; /* the keys and strings: small, or allocated when they do not fit */
    char small[1024];
} srv_flat;

/* Reads text into f when it is a JSON object whose members are all strings, integers of
 * at most 18 digits, true, false or null, with no \u escape and at most SRV_FLAT_MAX
 * members (then srv_flat_free releases it); false for anything else (nested values, \u
 * escapes, a fraction or exponent, invalid UTF-8, a syntax error...), with nothing to
 * release: the caller then uses json_loadb, which also reports the error. */
bool srv_flat_read(srv_flat *f, const char *text, size_t len);
void srv_flat_free(srv_flat *f);

/* The member named key (its last, as jansson keeps a repeated key), or NULL. */
const srv_flat_member *srv_flat_get(const srv_flat *f, const char *key);

/* The object json_loadb(text, len, JSON_ALLOW_NUL) builds from f's text (NULL when out
 * of memory). */
json_t *srv_flat_json(const srv_flat *f);

/* srv_flat_read and srv_flat_json in one: the object, or NULL when the text is not flat. */
json_t *srv_json_load_flat(const char *text, size_t len);

/* Whether a string anywhere in v (members and array elements, at any depth) holds a NUL.
 * Requests refuse such a frame (docs/server.md): everything after the frame reads names,
 * statements and credentials as C strings. */
bool srv_json_has_nul(const json_t *v);

/* For a frame that is not valid JSON (an integer too large, a truncated text...): the
 * string `id` member of its top-level object, when the text up to that member reads as
 * JSON and the id is 1 to 64 bytes without NUL; copied into out (cap bytes, at least
 * 65). False when no such id can be told. */
bool srv_json_probe_id(const char *text, size_t len, char *out, size_t cap);

#endif
