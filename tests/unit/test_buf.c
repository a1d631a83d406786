/* Tests of base/buf.c's decimal writer, il_buf_put_u64: it writes what printf's %llu
 * writes, at the bounds and for random values, appends, and keeps the text terminated;
 * and of base/strcopy.h's bounded copy, which copies what snprintf's %s copies. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/strcopy.h"

static void check(unsigned long long n) {
    char want[32];
    snprintf(want, sizeof want, "%llu", n);
    il_buf b;
    il_buf_init(&b);
    il_buf_put_u64(&b, n);
    cr_assert_str_eq(il_buf_str(&b), want);
    cr_assert_eq(b.len, strlen(want));
    il_buf_free(&b);
}

Test(buf, put_u64_writes_what_printf_writes_at_the_bounds) {
    unsigned long long bounds[] = {0,
                                   1,
                                   9,
                                   10,
                                   99,
                                   100,
                                   999,
                                   1000,
                                   65535,
                                   65536,
                                   4294967295,
                                   4294967296,
                                   1e15,
                                   1e18,
                                   9999999999999999999ull,
                                   10000000000000000000ull,
                                   18446744073709551615ull};
    for (size_t i = 0; i < sizeof bounds / sizeof *bounds; i++) check(bounds[i]);
}

Test(buf, put_u64_writes_what_printf_writes_for_random_values) {
    srand(7);
    for (int i = 0; i < 100000; i++) {
        unsigned long long n = ((unsigned long long)rand() << 42) ^
                               ((unsigned long long)rand() << 21) ^ (unsigned long long)rand();
        check(n >> (i % 64));
    }
}

Test(buf, put_u64_appends) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "{\"seq\":");
    il_buf_put_u64(&b, 42);
    il_buf_putc(&b, '}');
    cr_assert_str_eq(il_buf_str(&b), "{\"seq\":42}");
    il_buf_free(&b);
}

/* il_str_copy copies what snprintf(dst, cap, "%s", src) copies, and NULL as "". */
Test(strcopy, copies_as_snprintf_does) {
    const char *srcs[] = {"", "a", "abc", "abcdefg", "abcdefgh", "abcdefghijklmnop"};
    for (size_t cap = 1; cap <= 10; cap++) {
        for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
            char want[16], got[16];
            memset(got, 'x', sizeof got);
            snprintf(want, cap, "%s", srcs[i]);
            size_t n = il_str_copy(got, cap, srcs[i]);
            cr_assert_str_eq(got, want, "cap %zu, \"%s\"", cap, srcs[i]);
            cr_assert_eq(n, strlen(want));
            cr_assert_eq(got[cap], 'x', "nothing written past cap %zu", cap);
        }
    }
    char d[4] = "zzz";
    cr_assert_eq(il_str_copy(d, sizeof d, NULL), 0);
    cr_assert_str_eq(d, "");
}
