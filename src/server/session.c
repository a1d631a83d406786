/* One engine session per authenticated connection: opened on authentication (bound to
 * the ?kg= knowledge graph), closed with the connection; and whether a knowledge graph
 * exists, asked of the engine. */
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "server/server.h"
#include "server/srv_subs.h"

static void uuid_v4(char out[37]) {
    unsigned char u[16];
    RAND_bytes(u, sizeof u);
    u[6] = (unsigned char)((u[6] & 0x0F) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3F) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

bool srv_session_open(srv_conn *c, const char *kg, char *err, size_t errlen) {
    il_session *s = il_session_open(c->srv->engine);
    if (strcmp(kg, "default") != 0) {
        if (strcmp(kg, "_internal") == 0) {
            snprintf(err, errlen, "Access denied: '_internal' is a system knowledge graph");
            il_session_close(s);
            return false;
        }
        char stmt[160];
        snprintf(stmt, sizeof stmt, ".kg use %s", kg);
        il_result *r = il_execute(s, stmt, strlen(stmt));
        bool ok = il_result_kind_of(r) == IL_RESULT_MESSAGE;
        if (!ok)
            snprintf(err, errlen, "%s",
                     il_result_nlines(r) ? il_result_line(r, 0)
                                         : "Cannot open the knowledge graph");
        il_result_free(r);
        if (!ok) {
            il_session_close(s);
            return false;
        }
    }
    c->session = s;
    c->srv->nsessions++;
    uuid_v4(c->session_id);
    return true;
}

void srv_session_close(srv_conn *c) {
    srv_subs_drop_all(c);
    if (!c->session) return;
    il_session_close(c->session);
    c->session = NULL;
    c->srv->nsessions--;
    if (c->dirty) c->srv->ndirty--;
    c->dirty = false;
}

bool srv_kg_exists(srv_server *s, const char *kg) {
    il_result *r = il_execute(s->stats, ".kg list", 8);
    bool found = false;
    size_t n = il_result_kind_of(r) == IL_RESULT_MESSAGE ? il_result_nlines(r) : 0;
    /* "Knowledge Graphs:" then "  <name>", with " *" after the stats session's own. */
    for (size_t i = 1; i < n && !found; i++) {
        const char *line = il_result_line(r, i);
        if (strncmp(line, "  ", 2) != 0) continue;
        line += 2;
        size_t len = strlen(line);
        if (len >= 2 && strcmp(line + len - 2, " *") == 0) len -= 2;
        found = len == strlen(kg) && strncmp(line, kg, len) == 0;
    }
    il_result_free(r);
    return found;
}
