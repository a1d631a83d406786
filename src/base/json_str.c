/* JSON string escaping (json_str.h). */
#include "base/json_str.h"

#include "base/utf8.h"

void il_json_str(il_buf *b, const char *s, size_t len) {
    static const char HEX[] = "0123456789abcdef";
    static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */
    il_buf_reserve(b, len + 2);
    il_buf_putc(b, '"');
    size_t run = 0; /* start of the bytes not yet written */
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') continue;
        if (ch >= 0x80) {
            int32_t cp;
            size_t k = il_utf8_decode((const unsigned char *)s, len, i, &cp);
            if (cp >= 0) {
                i += k - 1;
                continue;
            }
            /* A WebSocket text frame must be UTF-8: a client drops the connection
             * otherwise. */
            il_buf_put(b, s + run, i - run);
            run = i + 1;
            il_buf_puts(b, REPLACEMENT);
            continue;
        }
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
