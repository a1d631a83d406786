/* Tests of base/json_str.c, the JSON strings of the server's frames, the notification
 * log and `.why` proof trees: which bytes are escaped and how, that all the rest (UTF-8
 * included) is copied, that a NUL inside the length is written, that bytes which are not
 * UTF-8 become U+FFFD, that it appends, and that it writes what a byte-by-byte reference
 * writes on random text. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/json_str.h"
#include "base/utf8.h"

static il_buf buf;

static void setup(void) {
    il_buf_init(&buf);
}
static void teardown(void) {
    il_buf_free(&buf);
}

TestSuite(json_str, .init = setup, .fini = teardown);

static const char *json(const char *s, size_t len) {
    il_buf_clear(&buf);
    il_json_str(&buf, s, len);
    return il_buf_str(&buf);
}

static const char *json_c(const char *s) {
    return json(s, strlen(s));
}

Test(json_str, plain_text_is_quoted_as_it_is) {
    cr_assert_str_eq(json_c(""), "\"\"");
    cr_assert_str_eq(json_c("edge(1, 2)"), "\"edge(1, 2)\"");
    cr_assert_str_eq(json_c("caf\xc3\xa9 \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    cr_assert_str_eq(json_c("/ ' \x7f"), "\"/ ' \x7f\"");
}

Test(json_str, quote_and_backslash_are_escaped) {
    cr_assert_str_eq(json_c("He said \"hi\""), "\"He said \\\"hi\\\"\"");
    cr_assert_str_eq(json_c("C:\\dir\\"), "\"C:\\\\dir\\\\\"");
}

Test(json_str, control_characters_are_escaped) {
    cr_assert_str_eq(json_c("a\nb\rc\td"), "\"a\\nb\\rc\\td\"");
    cr_assert_str_eq(json_c("\x01\x08\x0c\x1f"), "\"\\u0001\\u0008\\u000c\\u001f\"");
    cr_assert_str_eq(json("a\0b", 3), "\"a\\u0000b\"");
}

Test(json_str, escapes_between_runs_of_plain_bytes) {
    cr_assert_str_eq(json_c("\"start"), "\"\\\"start\"");
    cr_assert_str_eq(json_c("end\n"), "\"end\\n\"");
    cr_assert_str_eq(json_c("\\\\"), "\"\\\\\\\\\"");
    cr_assert_str_eq(json("ab\ncd", 2), "\"ab\"", "only the given length is read");
}

Test(json_str, appends_to_what_the_buffer_holds) {
    il_buf_clear(&buf);
    il_buf_puts(&buf, "{\"k\":");
    il_json_str(&buf, "v", 1);
    il_buf_putc(&buf, '}');
    cr_assert_str_eq(il_buf_str(&buf), "{\"k\":\"v\"}");
}

Test(json_str, bytes_that_are_not_utf8_become_replacement_characters) {
    /* A lone continuation byte, a sequence cut by the length, an overlong form, a
     * surrogate and a lead byte followed by ASCII: each invalid byte is one U+FFFD. */
    cr_assert_str_eq(json_c("a\x80"
                            "b"),
                     "\"a\xef\xbf\xbd"
                     "b\"");
    cr_assert_str_eq(json("caf\xc3\xa9", 4), "\"caf\xef\xbf\xbd\"");
    cr_assert_str_eq(json_c("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    cr_assert_str_eq(json_c("\xed\xa0\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    cr_assert_str_eq(json_c("\xe2x\""), "\"\xef\xbf\xbdx\\\"\"");
}

/* The escaping byte by byte, with base/utf8.c's decoder: what il_json_str must write
 * whatever its word-at-a-time runs. */
static void reference(il_buf *b, const char *s, size_t len) {
    il_buf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x80) {
            int32_t cp;
            size_t k = il_utf8_decode((const unsigned char *)s, len, i, &cp);
            if (cp < 0) {
                il_buf_puts(b, "\xef\xbf\xbd");
            } else {
                il_buf_put(b, s + i, k);
                i += k - 1;
            }
        } else if (ch == '"' || ch == '\\') {
            il_buf_putc(b, '\\');
            il_buf_putc(b, (char)ch);
        } else if (ch == '\n' || ch == '\r' || ch == '\t') {
            il_buf_putc(b, '\\');
            il_buf_putc(b, ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't');
        } else if (ch < 0x20) {
            il_buf_printf(b, "\\u%04x", ch);
        } else {
            il_buf_putc(b, (char)ch);
        }
    }
    il_buf_putc(b, '"');
}

Test(json_str, agrees_with_a_byte_by_byte_reference_on_random_text) {
    static const char *const PIECES[] = {"a",
                                         "plain text ",
                                         "\"",
                                         "\\",
                                         "\n",
                                         "\x01",
                                         "\x1f",
                                         "\x7f",
                                         "\xc3\xa9",
                                         "\xe6\x97\xa5",
                                         "\xf0\x9f\x98\x80",
                                         "\x80",
                                         "\xc3",
                                         "\xe6\x97",
                                         "\xed\xa0\x80",
                                         "\xf4\x90\x80\x80",
                                         "\xc0\xaf",
                                         "\xff",
                                         "12345678",
                                         "\0"};
    unsigned seed = 12345;
    il_buf want, got;
    il_buf_init(&want);
    il_buf_init(&got);
    for (int round = 0; round < 20000; round++) {
        char text[256];
        size_t len = 0;
        seed = seed * 1103515245u + 12345u;
        int pieces = (int)((seed >> 16) % 24);
        for (int p = 0; p < pieces; p++) {
            seed = seed * 1103515245u + 12345u;
            size_t which = (seed >> 16) % (sizeof PIECES / sizeof *PIECES);
            size_t n = which == sizeof PIECES / sizeof *PIECES - 1 ? 1 : strlen(PIECES[which]);
            memcpy(text + len, PIECES[which], n);
            len += n;
        }
        il_buf_clear(&want);
        il_buf_clear(&got);
        reference(&want, text, len);
        il_json_str(&got, text, len);
        cr_assert(want.len == got.len && memcmp(want.data, got.data, want.len) == 0,
                  "round %d: %.*s", round, (int)want.len, want.data);
    }
    il_buf_free(&want);
    il_buf_free(&got);
}

Test(json_str, no_bytes_from_no_pointer) {
    /* an absent string of length 0 is the empty string (no offset from NULL: UBSan) */
    cr_assert_str_eq(json(NULL, 0), "\"\"");
}
