/* Bump arenas (see arena.h). */
#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

struct il_arena_chunk {
    il_arena_chunk *next;
    size_t size; /* usable bytes after the header */
    max_align_t data[];
};

enum { ARENA_MIN_CHUNK = 16 * 1024 };

void il_arena_init(il_arena *a) {
    memset(a, 0, sizeof *a);
}

void il_arena_init_with(il_arena *a, void *buf, size_t size) {
    memset(a, 0, sizeof *a);
    a->first = buf;
    a->first_size = size;
    a->cur = buf;
    a->end = a->cur + size;
}

void il_arena_destroy(il_arena *a) {
    il_arena_chunk *c = a->head;
    while (c) {
        il_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    memset(a, 0, sizeof *a);
}

void il_arena_reset(il_arena *a) {
    if (a->first) {
        char *first = a->first;
        size_t size = a->first_size;
        il_arena_destroy(a);
        il_arena_init_with(a, first, size);
        return;
    }
    if (!a->head) return;
    il_arena_chunk *last = a->head;
    while (last->next) {
        il_arena_chunk *next = last->next;
        free(last);
        last = next;
    }
    a->head = last;
    a->cur = (char *)last->data;
    a->end = a->cur + last->size;
    a->bytes = last->size;
}

static void *arena_grow(il_arena *a, size_t size) {
    size_t want = size > ARENA_MIN_CHUNK ? size : ARENA_MIN_CHUNK;
    if (a->head && want < a->head->size * 2 && a->head->size < (1u << 20)) want = a->head->size * 2;
    il_arena_chunk *c = malloc(sizeof *c + want);
    if (!c) abort();
    c->size = want;
    c->next = a->head;
    a->head = c;
    a->bytes += want;
    a->cur = (char *)c->data + size;
    a->end = (char *)c->data + want;
    return c->data;
}

void *il_arena_alloc(il_arena *a, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    if ((size_t)(a->end - a->cur) < size) return arena_grow(a, size);
    void *p = a->cur;
    a->cur += size;
    return p;
}

void *il_arena_calloc(il_arena *a, size_t size) {
    void *p = il_arena_alloc(a, size);
    memset(p, 0, size);
    return p;
}

char *il_arena_strndup(il_arena *a, const char *s, size_t n) {
    char *p = il_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *il_arena_strdup(il_arena *a, const char *s) {
    return il_arena_strndup(a, s, strlen(s));
}

void *il_arena_memdup(il_arena *a, const void *p, size_t size) {
    if (size == 0) return NULL;
    void *q = il_arena_alloc(a, size);
    memcpy(q, p, size);
    return q;
}
