/* JSON strings written by hand (the server's frames, the notification log, `.why` proof
 * trees): one escaping for all of them. */
#ifndef IL_BASE_JSON_STR_H
#define IL_BASE_JSON_STR_H

#include <stddef.h>

#include "base/buf.h"

/* Appends s[0, len) as a JSON string: `"` and `\` escaped, newline, carriage return and
 * tab as \n \r \t, the other control characters as \u00XX; every other byte as it is
 * (the text is taken to be UTF-8 already). */
void il_json_str(il_buf *b, const char *s, size_t len);

#endif
