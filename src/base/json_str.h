/* JSON strings written by hand (the server's frames, the notification log, `.why` proof
 * trees): one escaping for all of them. */
#ifndef IL_BASE_JSON_STR_H
#define IL_BASE_JSON_STR_H

#include <stddef.h>

#include "base/buf.h"

/* Appends s[0, len) as a JSON string: `"` and `\` escaped, newline, carriage return and
 * tab as \n \r \t, the other control characters (NUL included) as \u00XX; valid UTF-8
 * as it is, and each byte that is not part of a valid UTF-8 sequence as U+FFFD, so that
 * what is written is always valid UTF-8 (a message cut inside a character, say). */
void il_json_str(il_buf *b, const char *s, size_t len);

#endif
