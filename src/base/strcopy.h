/* A C string copied into a fixed buffer, cut to fit, as snprintf(dst, cap, "%s", src)
 * does. A request's id and the graph a statement's check assumed are copied so on every
 * statement, and printf's machinery is a few kilobytes of code that a write arriving
 * after an idle pause finds cold. */
#ifndef IL_BASE_STRCOPY_H
#define IL_BASE_STRCOPY_H

#include <stddef.h>
#include <string.h>

/* Copies at most cap - 1 bytes of src (NULL: nothing) and a NUL into dst (cap > 0);
 * returns the length copied. */
static inline size_t il_str_copy(char *dst, size_t cap, const char *src) {
    size_t n = src ? strnlen(src, cap - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
    return n;
}

#endif
