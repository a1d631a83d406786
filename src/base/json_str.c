/* JSON string escaping (json_str.h). */
#include "base/json_str.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at p (its first byte >= 0x80, n bytes left), or
 * 0: RFC 3629's rules, as il_utf8_decode's (no overlong forms, no surrogates, nothing
 * above U+10FFFF), inline because replies are made of such strings. */
static inline size_t utf8_seq(const unsigned char *p, size_t n) {
    unsigned char c = p[0];
    if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (p[2] & 0xC0) != 0x80) return 0;
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 4 : 0;
    }
    return 0;
}

/* Whether the eight bytes at p are all printable ASCII other than '"' and '\\'. */
static inline bool plain8(const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t high = w & 0x8080808080808080ull;
    uint64_t ctl = (w - 0x2020202020202020ull) & ~w & 0x8080808080808080ull;
    uint64_t q = w ^ 0x2222222222222222ull, b = w ^ 0x5C5C5C5C5C5C5C5Cull;
    uint64_t quote = (q - 0x0101010101010101ull) & ~q & 0x8080808080808080ull;
    uint64_t bslash = (b - 0x0101010101010101ull) & ~b & 0x8080808080808080ull;
    return !(high | ctl | quote | bslash);
}

void il_json_str(il_buf *b, const char *s, size_t len) {
    static const char HEX[] = "0123456789abcdef";
    static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */
    il_buf_reserve(b, len + 2);
    il_buf_putc(b, '"');
    size_t run = 0;     /* start of the bytes not yet written */
    size_t word_at = 0; /* where to try a word again: after a failed try, eight bytes on */
    for (size_t i = 0; i < len; i++) {
        if (i >= word_at) { /* runs of plain text, a word at a time */
            while (len - i >= 8 && plain8(s + i)) i += 8;
            word_at = i + 8;
            if (i >= len) break;
        }
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') continue;
        if (ch >= 0x80) {
            size_t k = utf8_seq((const unsigned char *)s + i, len - i);
            if (k) {
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
    if (len > run) il_buf_put(b, s + run, len - run); /* s may be NULL when len is 0 */
    il_buf_putc(b, '"');
}
