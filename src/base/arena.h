/* Bump arenas: the allocator for everything whose lifetime is one statement or one
 * query (ASTs, plans being built, temporaries). Memory is taken in chunks and counted,
 * so a query's footprint is known at chunk granularity; it is never freed piecemeal,
 * only all at once with il_arena_reset or il_arena_destroy. */
#ifndef IL_BASE_ARENA_H
#define IL_BASE_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct il_arena_chunk il_arena_chunk;

typedef struct il_arena {
    il_arena_chunk *head; /* current chunk; older chunks follow through ->next */
    char *cur;            /* next free byte in head (or in first, before any chunk) */
    char *end;            /* one past the last usable byte of head (or of first) */
    size_t bytes;         /* total bytes held in chunks, the accounting figure */
    char *first;          /* the caller's buffer used before any chunk, or NULL */
    size_t first_size;
} il_arena;

void il_arena_init(il_arena *a);
/* An arena that takes its first bytes from buf (16-byte aligned, outliving the arena's
 * use), so that a statement's small tree costs no allocation; chunks follow when it is
 * full. */
void il_arena_init_with(il_arena *a, void *buf, size_t size);
void il_arena_destroy(il_arena *a);
/* Frees every chunk but the first (every chunk, when the arena has the caller's buffer),
 * so a reused arena does not grow the heap. */
void il_arena_reset(il_arena *a);
void *il_arena_alloc(il_arena *a, size_t size);  /* 16-byte aligned, uninitialised */
void *il_arena_calloc(il_arena *a, size_t size); /* zeroed */
char *il_arena_strndup(il_arena *a, const char *s, size_t n);
char *il_arena_strdup(il_arena *a, const char *s);
/* Copies an array into the arena; returns NULL for n == 0. */
void *il_arena_memdup(il_arena *a, const void *p, size_t size);

#endif
