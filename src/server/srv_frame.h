/* A request frame as the server reads it (srv_frame.c): flat when it can be
 * (srv_jsonflat.h), by jansson otherwise; its id and type checked, and refused whole when
 * a string anywhere in it holds a NUL. srv_proto_message reads every frame through it,
 * and so does the request-path fuzzer (tests/fuzz/fuzz_request.c). */
#ifndef IL_SERVER_SRV_FRAME_H
#define IL_SERVER_SRV_FRAME_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/srv_jsonflat.h"

typedef struct srv_frame {
    srv_flat flat;
    bool is_flat;
    json_t *root; /* jansson's reading, or made from flat when asked (srv_frame_json) */
    /* The frame's string id (1 to 64 bytes, no NUL), or one probed from a text that is
       not JSON, or NULL; its string type, or NULL. */
    const char *id, *type;
    /* Why the frame is refused ("Invalid message format: ..."), or empty. */
    char bad[256];
    bool refused_nul; /* refused for a NUL in a string (bad says so) */
    char probed[72];
} srv_frame;

/* Reads msg (len bytes, any of them NUL) into f; srv_frame_free releases it. */
void srv_frame_read(srv_frame *f, const char *msg, size_t len);
void srv_frame_free(srv_frame *f);

/* The frame as a jansson object (made from a flat frame the first time), or NULL when the
 * frame is not an object or memory ran out. */
json_t *srv_frame_json(srv_frame *f);
/* Whether member key is there, whatever its value. */
bool srv_frame_has(const srv_frame *f, const char *key);
/* Member key's string (its length in *len when len is not NULL), or NULL when it is absent
 * or not a string. */
const char *srv_frame_str(const srv_frame *f, const char *key, size_t *len);
/* timeout_ms into *ms (0 when absent); false when it is not an integer >= 0. */
bool srv_frame_timeout(const srv_frame *f, int64_t *ms);

#endif
