/* JSON written by the server: strings, result values, the opening of a reply frame,
 * and the error and notice frames. (Requests are read with jansson in proto.c.) */
#include <stdio.h>
#include <string.h>

#include "server/server.h"
#include "value/print.h"
#include "value/value.h"

void srv_json_str(il_buf *b, const char *s, size_t len) {
    static const char HEX[] = "0123456789abcdef";
    il_buf_reserve(b, len + 2);
    il_buf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
        il_buf_put(b, s + run, i - run);
        run = i + 1;
        switch (ch) {
        case '"':
            il_buf_puts(b, "\\\"");
            break;
        case '\\':
            il_buf_puts(b, "\\\\");
            break;
        case '\n':
            il_buf_puts(b, "\\n");
            break;
        case '\r':
            il_buf_puts(b, "\\r");
            break;
        case '\t':
            il_buf_puts(b, "\\t");
            break;
        default: {
            char u[7] = {'\\', 'u', '0', '0', HEX[ch >> 4], HEX[ch & 15], 0};
            il_buf_puts(b, u);
        }
        }
    }
    il_buf_put(b, s + run, len - run);
    il_buf_putc(b, '"');
}

/* Strings as JSON strings of their bytes; every other value's cell text is already
 * JSON (integers, shortest round-trip floats, null for NaN/inf, booleans, vectors). */
void srv_json_value(il_buf *b, il_value v) {
    if (val_type_of(v) == VT_STR) {
        size_t len;
        const char *s = val_get_str(v, &len);
        srv_json_str(b, s, len);
    } else {
        val_fmt_cell(v, b);
    }
}

void srv_json_open(il_buf *b, const char *type, const char *id) {
    il_buf_printf(b, "{\"type\":\"%s\"", type);
    if (id) {
        il_buf_puts(b, ",\"id\":");
        srv_json_str(b, id, strlen(id));
    }
}

void srv_send_error(srv_conn *c, const char *id, const char *code, const char *msg) {
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "error", id);
    il_buf_puts(&b, ",\"message\":");
    srv_json_str(&b, msg, strlen(msg));
    il_buf_printf(&b, ",\"code\":\"%s\"}", code);
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}

void srv_send_notice(srv_conn *c, const char *code, const char *msg) {
    il_buf b;
    il_buf_init(&b);
    srv_json_open(&b, "notice", NULL);
    il_buf_printf(&b, ",\"code\":\"%s\",\"message\":", code);
    srv_json_str(&b, msg, strlen(msg));
    il_buf_putc(&b, '}');
    srv_ws_send(c, b.data, b.len);
    il_buf_free(&b);
}
