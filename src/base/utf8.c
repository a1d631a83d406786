/* UTF-8 encoding and decoding of one code point (utf8.h). */
#include "base/utf8.h"

size_t il_utf8_encode(uint32_t cp, char out[IL_UTF8_MAX]) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

void il_utf8_put(il_buf *b, uint32_t cp) {
    char bytes[IL_UTF8_MAX];
    il_buf_put(b, bytes, il_utf8_encode(cp, bytes));
}

size_t il_utf8_decode(const unsigned char *s, size_t n, size_t i, int32_t *cp) {
    unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n) {
        *cp = -1;
        return 1;
    }
    int32_t v = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[i + k] & 0xC0) != 0x80) {
            *cp = -1;
            return 1;
        }
        v = (v << 6) | (s[i + k] & 0x3F);
    }
    static const int32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = -1;
        return 1;
    }
    *cp = v;
    return len;
}
