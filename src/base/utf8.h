/* UTF-8 one code point at a time: encoding, and decoding by the rules of RFC 3629 (no
 * overlong forms, no surrogates, nothing above U+10FFFF). Shared by the string builtins,
 * the IQL lexer's \u{...} escapes, the server's TOML reader and its JSON frame reader. */
#ifndef IL_BASE_UTF8_H
#define IL_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

enum { IL_UTF8_MAX = 4 }; /* bytes of the longest sequence */

/* Writes the bytes of cp (a Unicode scalar value; callers check) into out and returns
 * how many (1 to 4). */
size_t il_utf8_encode(uint32_t cp, char out[IL_UTF8_MAX]);
/* Appends the bytes of cp to b. */
void il_utf8_put(il_buf *b, uint32_t cp);
/* Decodes the code point at s[i] (n bytes in all) into *cp and returns its length; an
 * invalid or truncated sequence is one byte with *cp = -1. */
size_t il_utf8_decode(const unsigned char *s, size_t n, size_t i, int32_t *cp);

#endif
