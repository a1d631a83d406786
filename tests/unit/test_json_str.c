/* Tests of base/json_str.c, the JSON strings of the server's frames, the notification
 * log and `.why` proof trees: which bytes are escaped and how, that all the rest (UTF-8
 * included) is copied, that a NUL inside the length is written, that bytes which are not
 * UTF-8 become U+FFFD, and that it appends. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/json_str.h"

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
