/* Tests of base/buf.c's decimal writer, il_buf_put_u64: it writes what printf's %llu
 * writes, at the bounds and for random values, appends, and keeps the text terminated. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

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
