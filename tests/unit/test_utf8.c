/* Tests of base/utf8.c: the byte forms at each length's bounds, every scalar value
 * through encode and decode, and the sequences decoding refuses (overlong forms,
 * surrogates, above U+10FFFF, stray and missing continuation bytes, truncation). */
#include <criterion/criterion.h>
#include <string.h>

#include "base/utf8.h"

static const char *encoded(uint32_t cp, size_t *n) {
    static char out[IL_UTF8_MAX + 1];
    memset(out, 0, sizeof out);
    *n = il_utf8_encode(cp, out);
    return out;
}

Test(utf8, encodes_each_length_at_its_bounds) {
    static const struct {
        uint32_t cp;
        const char *bytes;
    } cases[] = {
        {0x41, "A"},
        {0x7F, "\x7f"},
        {0x80, "\xc2\x80"},
        {0xE9, "\xc3\xa9"},
        {0x7FF, "\xdf\xbf"},
        {0x800, "\xe0\xa0\x80"},
        {0x20AC, "\xe2\x82\xac"},
        {0xFFFF, "\xef\xbf\xbf"},
        {0x10000, "\xf0\x90\x80\x80"},
        {0x1F600, "\xf0\x9f\x98\x80"},
        {0x10FFFF, "\xf4\x8f\xbf\xbf"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n;
        const char *got = encoded(cases[i].cp, &n);
        cr_assert_eq(n, strlen(cases[i].bytes), "U+%04X", (unsigned)cases[i].cp);
        cr_assert_eq(memcmp(got, cases[i].bytes, n), 0, "U+%04X", (unsigned)cases[i].cp);
    }
    size_t n;
    encoded(0, &n);
    cr_assert_eq(n, 1, "U+0000 is one byte");
}

Test(utf8, put_appends_to_the_buffer) {
    il_buf b;
    il_buf_init(&b);
    il_buf_puts(&b, "caf");
    il_utf8_put(&b, 0xE9);
    il_utf8_put(&b, 0x1F600);
    cr_assert_str_eq(il_buf_str(&b), "caf\xc3\xa9\xf0\x9f\x98\x80");
    il_buf_free(&b);
}

Test(utf8, every_scalar_value_decodes_back) {
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp == 0xD800) cp = 0xE000; /* surrogates are not scalar values */
        size_t n;
        const char *s = encoded(cp, &n);
        int32_t got;
        size_t len = il_utf8_decode((const unsigned char *)s, n, 0, &got);
        if (len != n || got != (int32_t)cp)
            cr_assert_fail("U+%04X: length %zu of %zu, decoded %d", (unsigned)cp, len, n, got);
    }
}

Test(utf8, decodes_at_an_offset_in_a_text) {
    const char text[] = "a\xc3\xa9\xe2\x82\xac";
    const unsigned char *u = (const unsigned char *)text;
    size_t n = strlen(text);
    int32_t cp;
    cr_assert_eq(il_utf8_decode(u, n, 0, &cp), 1);
    cr_assert_eq(cp, 'a');
    cr_assert_eq(il_utf8_decode(u, n, 1, &cp), 2);
    cr_assert_eq(cp, 0xE9);
    cr_assert_eq(il_utf8_decode(u, n, 3, &cp), 3);
    cr_assert_eq(cp, 0x20AC);
}

Test(utf8, invalid_sequences_are_one_byte_of_minus_one) {
    static const char *const bad[] = {
        "\x80",             /* a continuation byte first */
        "\xbf",             /* the last continuation byte */
        "\xc0\x80",         /* overlong NUL */
        "\xc1\xbf",         /* overlong U+007F */
        "\xe0\x80\x80",     /* overlong three bytes */
        "\xe0\x9f\xbf",     /* overlong U+07FF */
        "\xf0\x8f\xbf\xbf", /* overlong U+FFFF */
        "\xed\xa0\x80",     /* surrogate U+D800 */
        "\xed\xbf\xbf",     /* surrogate U+DFFF */
        "\xf4\x90\x80\x80", /* U+110000 */
        "\xf5\x80\x80\x80", /* a lead byte past U+10FFFF */
        "\xf8\x88\x80\x80", /* five-byte lead */
        "\xff",             /* never in UTF-8 */
        "\xe2\x28\xa1",     /* second byte not a continuation */
        "\xe2\x82\x28",     /* third byte not a continuation */
        "\xc3",             /* truncated at the end of the text */
        "\xf0\x9f\x98",     /* truncated four-byte sequence */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int32_t cp = 0;
        size_t len = il_utf8_decode((const unsigned char *)bad[i], strlen(bad[i]), 0, &cp);
        cr_assert_eq(len, 1, "case %zu: length %zu", i, len);
        cr_assert_eq(cp, -1, "case %zu: decoded %d", i, cp);
    }
    /* the text's end, not the sequence, bounds the bytes read */
    int32_t cp;
    cr_assert_eq(il_utf8_decode((const unsigned char *)"\xc3\xa9", 1, 0, &cp), 1);
    cr_assert_eq(cp, -1);
}
