/* JSON written by the server: the opening of a reply frame, and the error and notice
 * frames with their codes. (Strings are written by il_json_str, base/json_str.h, and
 * values by val_fmt_json; requests are read in proto.c, by srv_jsonflat.c or jansson.) */
#include <stdio.h>
#include <string.h>

#include "server/server.h"

void srv_json_open(il_buf *b, const char *type, const char *id) {
    il_buf_puts(b, "{\"type\":\"");
    il_buf_puts(b, type);
    il_buf_putc(b, '"');
    if (id) {
        il_buf_puts(b, ",\"id\":");
        il_json_str(b, id, strlen(id));
    }
}

/* The protocol's error codes (protocol-later.md 1.12), NULL-terminated. */
const char *const srv_error_codes[] = {
    "validation",
    "not_found",
    "conflict",
    "unsupported",
    "internal",
    "invalid_request",
    "rate_limited",
    "deadline_exceeded",
    "cancelled",
    "outcome_unknown",
    "store_read_only",
    "resource_exhausted",
    "precondition_failed",
    "replica_unconfirmed",
    "access_denied",
    "overloaded",
    NULL,
};

const char *const srv_notice_codes[SRV_N_N] = {
    [SRV_N_AUTH_TIMEOUT] = "auth_timeout",
    [SRV_N_IDLE_TIMEOUT] = "idle_timeout",
    [SRV_N_LIFETIME] = "lifetime_exceeded",
    [SRV_N_CREDENTIAL_REVOKED] = "credential_revoked",
    [SRV_N_CREDENTIAL_EXPIRED] = "credential_expired",
    [SRV_N_MESSAGE_TOO_LARGE] = "message_too_large",
    [SRV_N_SERVER_SHUTDOWN] = "server_shutdown",
    [SRV_N_REPLAY_GAP] = "replay_gap",
    [SRV_N_NOTIFICATIONS_MISSED] = "notifications_missed",
    [SRV_N_SLOW_CONSUMER] = "slow_consumer",
};

void srv_send_error_fields(srv_conn *c, const char *id, const char *code, const char *msg,
                           const char *fields) {
    for (size_t i = 0; srv_error_codes[i]; i++)
        if (strcmp(srv_error_codes[i], code) == 0) srv_count(c->srv->counters.errors[i]);
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "error", id);
    il_buf_puts(&b, ",\"message\":");
    il_json_str(&b, msg, strlen(msg));
    il_buf_printf(&b, ",\"code\":\"%s\"", code);
    if (fields) il_buf_puts(&b, fields);
    il_buf_putc(&b, '}');
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}

void srv_send_error(srv_conn *c, const char *id, const char *code, const char *msg) {
    srv_send_error_fields(c, id, code, msg, NULL);
}

void srv_send_notice(srv_conn *c, enum srv_notice n, const char *msg) {
    if (c->fenced) return;
    c->srv->counters.notices[n]++;
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "notice", NULL);
    il_buf_printf(&b, ",\"code\":\"%s\",\"message\":", srv_notice_codes[n]);
    il_json_str(&b, msg, strlen(msg));
    il_buf_putc(&b, '}');
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}

void srv_notice_close(srv_conn *c, enum srv_notice n, const char *msg, uint16_t code) {
    if (c->state != SRV_WS) return;
    srv_send_notice(c, n, msg);
    /* Nothing but the close frame may follow the notice. */
    c->fenced = true;
    srv_ws_close(c, code);
    srv_conn_close(c);
}
