/* An oracle for statements that cannot parse, independent of the parser: a statement
 * (not a meta command) whose `(`/`)` or `[`/`]` do not pair up outside strings and `//`
 * comments, or whose string literal never ends, is not IQL, so the API must answer it
 * with an error and never with rows. Shared by the engine fuzzer and the unit tests. */
#ifndef IL_TESTS_SYNTAX_ORACLE_H
#define IL_TESTS_SYNTAX_ORACLE_H

#include <stdbool.h>
#include <stddef.h>

static inline bool syntax_oracle_malformed(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    if (i == n || s[i] == '.') return false;
    char stack[64];
    size_t depth = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\') i++;
            if (i >= n) return true; /* the string never ends */
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            break;
        } else if (c == '(' || c == '[') {
            if (depth == sizeof stack) return false; /* too deep to judge: no verdict */
            stack[depth++] = c == '(' ? ')' : ']';
        } else if (c == ')' || c == ']') {
            if (depth == 0 || stack[depth - 1] != c) return true;
            depth--;
        }
    }
    return depth != 0;
}

#endif
