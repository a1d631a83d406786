/* Growable byte buffers: how text is built (messages, tables, rule listings). The
 * contents are always NUL-terminated so they can be handed out as C strings. */
#ifndef IL_BASE_BUF_H
#define IL_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

typedef struct il_buf {
    char *data; /* NUL-terminated once anything was written; NULL before */
    size_t len; /* bytes written, excluding the NUL */
    size_t cap; /* bytes allocated */
} il_buf;

void il_buf_init(il_buf *b);
void il_buf_free(il_buf *b);
void il_buf_clear(il_buf *b); /* keeps the allocation */
/* The allocation for il_buf_reserve; callers use that. */
void il_buf_grow(il_buf *b, size_t extra);

/* The appends are inline: a reply is built of many small pieces (a keyed write's reply and
 * notifications made over a hundred), and out of line each paid two calls, and puts a
 * strlen that a literal's inlining folds away. */
static inline void il_buf_reserve(il_buf *b, size_t extra) {
    if (b->len + extra + 1 > b->cap) il_buf_grow(b, extra);
}

static inline void il_buf_put(il_buf *b, const void *p, size_t n) {
    il_buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

static inline void il_buf_puts(il_buf *b, const char *s) {
    il_buf_put(b, s, strlen(s));
}

static inline void il_buf_putc(il_buf *b, char c) {
    il_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}
/* Appends n in decimal: what printf's %llu writes, for the replies' hot paths. */
void il_buf_put_u64(il_buf *b, unsigned long long n);
void il_buf_printf(il_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void il_buf_vprintf(il_buf *b, const char *fmt, va_list ap);
/* Returns the text ("" when empty); the buffer keeps ownership. */
const char *il_buf_str(const il_buf *b);
/* Hands the malloc'ed text to the caller and resets the buffer. */
char *il_buf_take(il_buf *b);
/* Formats into a new malloc'ed string. */
char *il_vformat(const char *fmt, va_list ap);
char *il_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
