/* The lexical layer of IQL shared by the parser and the script reader: character
 * classes, string literals (escape-aware scanning and decoding), numbers in the
 * reference's Rust syntax, and bracket- and quote-aware searching and splitting of
 * text spans. Everything works on (text, begin, end) byte ranges and allocates nothing. */
#ifndef IL_IQL_LEXER_H
#define IL_IQL_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool iql_lex_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
static inline bool iql_lex_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}
static inline bool iql_lex_upper(unsigned char c) {
    return c >= 'A' && c <= 'Z';
}
static inline bool iql_lex_lower(unsigned char c) {
    return c >= 'a' && c <= 'z';
}
/* Identifier characters: ASCII alphanumerics, `_`, and every non-ASCII byte, so that
 * UTF-8 letters pass the way Rust's Unicode `is_alphanumeric` lets them. */
static inline bool iql_lex_ident(unsigned char c) {
    return iql_lex_digit(c) || iql_lex_upper(c) || iql_lex_lower(c) || c == '_' || c >= 0x80;
}

/* s[i] is `"`: returns the index of the closing quote (a backslash escapes the next
 * byte), or `e` when the literal is not closed before e. */
size_t iql_lex_string_end(const char *s, size_t i, size_t e);

/* Decodes the content of a string literal (the bytes between the quotes) into `out`,
 * which needs n + 1 bytes (decoding never grows the text). \n \t \r \\ \" \0 and
 * \u{X..} (1 to 6 hex digits, a Unicode scalar value) are decoded; any other escape
 * keeps its backslash. Returns the decoded length; out is NUL-terminated. */
size_t iql_lex_unescape(const char *s, size_t n, char *out);

/* Rust `i64::from_str`: [+-]?[0-9]+. Returns false when the syntax does not match;
 * when it matches but the value is out of range, returns true with *overflow set. */
bool iql_lex_int(const char *s, size_t n, int64_t *v, bool *overflow);
/* Rust `f64::from_str` restricted to finite decimal syntax:
 * [+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?; false when the syntax does not
 * match or the value overflows to infinity. */
bool iql_lex_float(const char *s, size_t n, double *v);

/* Position of the first `c` in [b, e) outside string literals, or e. */
size_t iql_lex_find(const char *s, size_t b, size_t e, char c);
/* Position of the first occurrence of the two-byte token `tok` in [b, e) outside
 * string literals, or e. */
size_t iql_lex_find2(const char *s, size_t b, size_t e, const char *tok);
/* s[i] is `(`: the index of its matching `)` (strings skipped), or e when unmatched. */
size_t iql_lex_match_paren(const char *s, size_t i, size_t e);

/* What a splitter counts as nesting besides `()` and `[]`, which always nest. */
enum {
    IQL_SPLIT_ANGLE = 1, /* `<` `>`, for aggregate parameters in atom arguments */
    IQL_SPLIT_BRACE = 2, /* `{` `}`, for record types */
};
/* The end of the piece starting at b: the first `,` at nesting depth 0 outside string
 * literals, or e. Depth is clamped at 0, so a stray closer does not hide later commas. */
size_t iql_lex_split(const char *s, size_t b, size_t e, unsigned flags);

#endif
