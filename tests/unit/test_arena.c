/* Tests of base/arena.c with a caller's first buffer (il_arena_init_with): allocations come
 * from it, aligned, until it is full, then from chunks; a reset goes back to it and frees
 * the chunks; nothing of it is counted as held. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"

static bool inside(const void *p, const char *buf, size_t size) {
    return (const char *)p >= buf && (const char *)p < buf + size;
}

Test(arena, first_buffer_then_chunks) {
    _Alignas(16) char buf[256];
    il_arena a;
    il_arena_init_with(&a, buf, sizeof buf);
    void *p[20];
    for (int i = 0; i < 16; i++) {
        p[i] = il_arena_alloc(&a, 13);
        cr_assert(inside(p[i], buf, sizeof buf), "allocation %d outside the buffer", i);
        cr_assert_eq((uintptr_t)p[i] % 16, 0);
        memset(p[i], i, 13);
    }
    cr_expect_eq(a.bytes, 0, "the caller's buffer is not counted as held");
    p[16] = il_arena_alloc(&a, 13); /* 16 x 16 bytes: the buffer is full */
    cr_assert_not(inside(p[16], buf, sizeof buf));
    cr_expect_gt(a.bytes, 0);
    char *big = il_arena_alloc(&a, 100000);
    memset(big, 7, 100000);
    for (int i = 0; i < 16; i++) cr_expect_eq(((unsigned char *)p[i])[12], i);
    il_arena_reset(&a);
    cr_expect_eq(a.bytes, 0);
    cr_expect_eq(il_arena_alloc(&a, 1), (void *)buf, "a reset starts over in the buffer");
    char *s = il_arena_strndup(&a, "abc", 3);
    cr_expect(inside(s, buf, sizeof buf));
    cr_expect_str_eq(s, "abc");
    il_arena_destroy(&a);
}

Test(arena, a_larger_first_request_goes_to_a_chunk) {
    _Alignas(16) char buf[64];
    il_arena a;
    il_arena_init_with(&a, buf, sizeof buf);
    void *p = il_arena_calloc(&a, 200);
    cr_expect_not(inside(p, buf, sizeof buf));
    for (int i = 0; i < 200; i++) cr_assert_eq(((char *)p)[i], 0);
    il_arena_destroy(&a);
}
