/* Growable byte buffers (see buf.h). */
#include "base/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void il_buf_init(il_buf *b) {
    memset(b, 0, sizeof *b);
}

void il_buf_free(il_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

void il_buf_clear(il_buf *b) {
    b->len = 0;
    if (b->data) b->data[0] = 0;
}

void il_buf_grow(il_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) abort();
    b->data = p;
    b->cap = cap;
}

void il_buf_put_u64(il_buf *b, unsigned long long n) {
    char digits[20], *p = digits + sizeof digits;
    do *--p = (char)('0' + n % 10);
    while (n /= 10);
    il_buf_put(b, p, (size_t)(digits + sizeof digits - p));
}

void il_buf_vprintf(il_buf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof small) {
        il_buf_put(b, small, (size_t)n);
    } else {
        il_buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void il_buf_printf(il_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    il_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *il_buf_str(const il_buf *b) {
    return b->data ? b->data : "";
}

char *il_vformat(const char *fmt, va_list ap) {
    il_buf b;
    il_buf_init(&b);
    il_buf_vprintf(&b, fmt, ap);
    return il_buf_take(&b);
}

char *il_format(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = il_vformat(fmt, ap);
    va_end(ap);
    return s;
}

char *il_buf_take(il_buf *b) {
    char *p = b->data;
    if (!p) {
        p = malloc(1);
        if (!p) abort();
        p[0] = 0;
    }
    memset(b, 0, sizeof *b);
    return p;
}
