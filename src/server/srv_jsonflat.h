/* Reading request frames fast (srv_jsonflat.c): a JSON object whose members are all
 * strings, integers, true, false or null, which is what nearly every frame is. */
#ifndef IL_SERVER_SRV_JSONFLAT_H
#define IL_SERVER_SRV_JSONFLAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The object, as json_loadb(text, len, JSON_ALLOW_NUL) would build it, or NULL when the
 * text is anything else (nested values, \u escapes, a fraction or exponent, an integer
 * of 19 digits or more, invalid UTF-8, a syntax error...): the caller then uses
 * json_loadb, which also reports the error. */
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
