/* The TOML-subset parser of srv_toml.h: a hand-written recursive descent over the text,
 * one entry per key with its full dotted name, so that the configuration can look keys
 * up without knowing how the file grouped them into tables. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "server/srv_toml.h"

typedef struct tp {
    const char *s;
    size_t len, pos;
    int line;
    char *err;
    size_t errlen;
} tp;

static bool fail(tp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(tp *p, const char *fmt, ...) {
    int n = snprintf(p->err, p->errlen, "line %d: ", p->line);
    if (n < 0 || (size_t)n >= p->errlen) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static int peek(const tp *p) {
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int peek_at(const tp *p, size_t k) {
    return p->pos + k < p->len ? (unsigned char)p->s[p->pos + k] : -1;
}

static void skip_blank(tp *p) {
    while (peek(p) == ' ' || peek(p) == '\t') p->pos++;
}

static void skip_comment(tp *p) {
    if (peek(p) != '#') return;
    while (p->pos < p->len && p->s[p->pos] != '\n') p->pos++;
}

/* Consumes a line break (LF or CRLF); false when there is none here. */
static bool newline(tp *p) {
    if (peek(p) == '\r' && peek_at(p, 1) == '\n') p->pos++;
    if (peek(p) != '\n') return false;
    p->pos++;
    p->line++;
    return true;
}

/* After a table header or a value: blanks, an optional comment, then the end of the line. */
static bool end_of_line(tp *p) {
    skip_blank(p);
    skip_comment(p);
    if (p->pos >= p->len || newline(p)) return true;
    return fail(p, "unexpected '%c' after the value", p->s[p->pos]);
}

/* Inside arrays: blanks, comments and line breaks. */
static void skip_space(tp *p) {
    for (;;) {
        skip_blank(p);
        skip_comment(p);
        if (!newline(p)) return;
    }
}

static bool parse_escape(tp *p, il_buf *b) {
    int c = peek(p);
    p->pos++;
    switch (c) {
    case 'b':
        il_buf_putc(b, '\b');
        return true;
    case 't':
        il_buf_putc(b, '\t');
        return true;
    case 'n':
        il_buf_putc(b, '\n');
        return true;
    case 'f':
        il_buf_putc(b, '\f');
        return true;
    case 'r':
        il_buf_putc(b, '\r');
        return true;
    case '"':
        il_buf_putc(b, '"');
        return true;
    case '\\':
        il_buf_putc(b, '\\');
        return true;
    case 'u':
    case 'U': {
        size_t digits = c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t i = 0; i < digits; i++) {
            int h = peek(p);
            uint32_t d;
            if (h >= '0' && h <= '9')
                d = (uint32_t)(h - '0');
            else if (h >= 'a' && h <= 'f')
                d = (uint32_t)(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                d = (uint32_t)(h - 'A' + 10);
            else
                return fail(p, "\\%c needs %zu hex digits", c, digits);
            cp = cp * 16 + d;
            p->pos++;
        }
        if (cp == 0) return fail(p, "a NUL character in a string is not supported");
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return fail(p, "\\%c escape is not a Unicode scalar value", c);
        il_utf8_put(b, cp);
        return true;
    }
    default:
        return fail(p, "invalid escape sequence in a string");
    }
}

/* A basic ("...") or literal ('...') one-line string; the quote is at p->pos. */
static bool parse_string(tp *p, char **out) {
    char q = p->s[p->pos];
    if (peek_at(p, 1) == q && peek_at(p, 2) == q)
        return fail(p, "multi-line strings are not supported");
    p->pos++;
    il_buf b;
    il_buf_init(&b);
    for (;;) {
        int c = peek(p);
        if (c < 0 || c == '\n' || c == '\r') {
            il_buf_free(&b);
            return fail(p, "unterminated string");
        }
        p->pos++;
        if (c == q) break;
        if ((c < 0x20 && c != '\t') || c == 0x7F) {
            il_buf_free(&b);
            return fail(p, "control character in a string");
        }
        if (c == '\\' && q == '"') {
            if (!parse_escape(p, &b)) {
                il_buf_free(&b);
                return false;
            }
            continue;
        }
        il_buf_putc(&b, (char)c);
    }
    if (!b.data) il_buf_puts(&b, "");
    *out = il_buf_take(&b);
    return true;
}

static bool is_bare(int c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* key = part (. part)*, each bare or quoted; appended to `key` joined by dots. */
static bool parse_key(tp *p, il_buf *key) {
    for (;;) {
        skip_blank(p);
        int c = peek(p);
        if (c == '"' || c == '\'') {
            char *part;
            if (!parse_string(p, &part)) return false;
            if (key->len) il_buf_putc(key, '.');
            il_buf_puts(key, part);
            free(part);
        } else if (is_bare(c)) {
            size_t b = p->pos;
            while (is_bare(peek(p))) p->pos++;
            if (key->len) il_buf_putc(key, '.');
            il_buf_put(key, p->s + b, p->pos - b);
        } else {
            return fail(p, "expected a key");
        }
        skip_blank(p);
        if (peek(p) != '.') return true;
        p->pos++;
    }
}

/* Digits with single underscores between them, copied without the underscores. */
static bool digits(tp *p, const char *tok, size_t *i, size_t n, il_buf *out) {
    size_t start = *i;
    while (*i < n) {
        char c = tok[*i];
        if (c >= '0' && c <= '9') {
            il_buf_putc(out, c);
        } else if (c == '_' && *i > start && *i + 1 < n && tok[*i + 1] >= '0' &&
                   tok[*i + 1] <= '9') {
            /* an underscore between two digits */
        } else {
            break;
        }
        (*i)++;
    }
    if (*i == start) return fail(p, "invalid number '%.*s'", (int)n, tok);
    return true;
}

/* A bare token: true, false, an integer or a float. */
static bool parse_scalar(tp *p, srv_toml_value *v) {
    size_t b = p->pos;
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (!is_bare(c) && c != '+' && c != '.' && c != ':') break;
        p->pos++;
    }
    const char *tok = p->s + b;
    size_t n = p->pos - b;
    if (n == 0) {
        if (peek(p) == '{') return fail(p, "inline tables are not supported");
        return fail(p, "expected a value");
    }
    if (n == 4 && memcmp(tok, "true", 4) == 0) {
        v->type = SRV_TOML_BOOL;
        v->b = true;
        return true;
    }
    if (n == 5 && memcmp(tok, "false", 5) == 0) {
        v->type = SRV_TOML_BOOL;
        v->b = false;
        return true;
    }
    if (memchr(tok, ':', n) || (n >= 10 && tok[4] == '-' && tok[7] == '-'))
        return fail(p, "dates and times are not supported");
    if (n > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'o' || tok[1] == 'b'))
        return fail(p, "only decimal integers are supported");
    il_buf num;
    il_buf_init(&num);
    size_t i = 0;
    if (tok[0] == '+' || tok[0] == '-') il_buf_putc(&num, tok[i++]);
    size_t int_start = i;
    bool ok = digits(p, tok, &i, n, &num);
    bool is_float = false;
    if (ok && tok[int_start] == '0' && i - int_start > 1 && tok[int_start + 1] != '.')
        ok = fail(p, "leading zeros are not allowed in '%.*s'", (int)n, tok);
    if (ok && i < n && tok[i] == '.') {
        il_buf_putc(&num, tok[i++]);
        is_float = true;
        ok = digits(p, tok, &i, n, &num);
    }
    if (ok && i < n && (tok[i] == 'e' || tok[i] == 'E')) {
        il_buf_putc(&num, tok[i++]);
        is_float = true;
        if (i < n && (tok[i] == '+' || tok[i] == '-')) il_buf_putc(&num, tok[i++]);
        ok = digits(p, tok, &i, n, &num);
    }
    if (ok && i != n) ok = fail(p, "invalid value '%.*s'", (int)n, tok);
    if (ok) {
        char *end;
        errno = 0;
        if (is_float) {
            v->type = SRV_TOML_FLOAT;
            v->f = strtod(num.data, &end);
        } else {
            v->type = SRV_TOML_INT;
            v->i = strtoll(num.data, &end, 10);
        }
        if (errno == ERANGE) ok = fail(p, "number out of range: '%.*s'", (int)n, tok);
    }
    il_buf_free(&num);
    return ok;
}

static bool parse_value(tp *p, srv_toml_value *v) {
    memset(v, 0, sizeof *v);
    int c = peek(p);
    if (c == '"' || c == '\'') {
        v->type = SRV_TOML_STRING;
        return parse_string(p, &v->str);
    }
    if (c != '[') return parse_scalar(p, v);
    p->pos++;
    v->type = SRV_TOML_ARRAY;
    for (;;) {
        skip_space(p);
        if (peek(p) == ']') {
            p->pos++;
            return true;
        }
        if (peek(p) != '"' && peek(p) != '\'') {
            bool r = fail(p, "only arrays of strings are supported");
            srv_toml_value_free(v);
            return r;
        }
        char *s;
        if (!parse_string(p, &s)) {
            srv_toml_value_free(v);
            return false;
        }
        v->items = realloc(v->items, (v->nitems + 1) * sizeof *v->items);
        v->items[v->nitems++] = s;
        skip_space(p);
        if (peek(p) == ',') {
            p->pos++;
        } else if (peek(p) != ']') {
            bool r = fail(p, peek(p) < 0 ? "unterminated array" : "expected ',' or ']' in array");
            srv_toml_value_free(v);
            return r;
        }
    }
}

void srv_toml_value_free(srv_toml_value *v) {
    free(v->str);
    for (size_t i = 0; i < v->nitems; i++) free(v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

void srv_toml_free(srv_toml *t) {
    for (size_t i = 0; i < t->n; i++) {
        free(t->entries[i].key);
        srv_toml_value_free(&t->entries[i].v);
    }
    free(t->entries);
    t->entries = NULL;
    t->n = 0;
}

static bool seen(char **names, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

bool srv_toml_parse(const char *text, size_t len, srv_toml *out, char *err, size_t errlen) {
    tp p = {.s = text, .len = len, .line = 1, .err = err, .errlen = errlen};
    memset(out, 0, sizeof *out);
    char **tables = NULL; /* defined table names, to refuse a second [same] */
    size_t ntables = 0;
    il_buf prefix, key;
    il_buf_init(&prefix);
    il_buf_init(&key);
    bool ok = true;
    if (memchr(text, 0, len)) ok = fail(&p, "the file contains a NUL byte");
    while (ok) {
        skip_blank(&p);
        skip_comment(&p);
        if (p.pos >= p.len) break;
        if (newline(&p)) continue;
        if (peek(&p) == '[') {
            p.pos++;
            if (peek(&p) == '[') {
                ok = fail(&p, "arrays of tables are not supported");
                break;
            }
            il_buf_clear(&prefix);
            if (!(ok = parse_key(&p, &prefix))) break;
            if (peek(&p) != ']') {
                ok = fail(&p, "expected ']' after the table name");
                break;
            }
            p.pos++;
            if (seen(tables, ntables, prefix.data)) {
                ok = fail(&p, "table [%s] defined twice", prefix.data);
                break;
            }
            tables = realloc(tables, (ntables + 1) * sizeof *tables);
            tables[ntables++] = strdup(prefix.data);
            ok = end_of_line(&p);
            continue;
        }
        il_buf_clear(&key);
        if (prefix.len) il_buf_puts(&key, prefix.data);
        int line = p.line;
        if (!(ok = parse_key(&p, &key))) break;
        if (peek(&p) != '=') {
            ok = fail(&p, "expected '=' after the key");
            break;
        }
        p.pos++;
        skip_blank(&p);
        srv_toml_value v;
        if (!(ok = parse_value(&p, &v))) break;
        for (size_t i = 0; i < out->n && ok; i++)
            if (strcmp(out->entries[i].key, key.data) == 0)
                ok = fail(&p, "duplicate key '%s'", key.data);
        if (!ok) {
            srv_toml_value_free(&v);
            break;
        }
        out->entries = realloc(out->entries, (out->n + 1) * sizeof *out->entries);
        out->entries[out->n++] = (srv_toml_entry){strdup(key.data), line, v};
        ok = end_of_line(&p);
    }
    for (size_t i = 0; i < ntables; i++) free(tables[i]);
    free(tables);
    il_buf_free(&prefix);
    il_buf_free(&key);
    if (!ok) srv_toml_free(out);
    return ok;
}

bool srv_toml_parse_value(const char *text, size_t len, srv_toml_value *v, char *err,
                          size_t errlen) {
    tp p = {.s = text, .len = len, .line = 1, .err = err, .errlen = errlen};
    skip_blank(&p);
    if (!parse_value(&p, v)) return false;
    skip_blank(&p);
    if (p.pos < p.len) {
        srv_toml_value_free(v);
        return fail(&p, "unexpected text after the value");
    }
    return true;
}

const char *srv_toml_type_name(srv_toml_type t) {
    switch (t) {
    case SRV_TOML_STRING:
        return "a string";
    case SRV_TOML_INT:
        return "an integer";
    case SRV_TOML_FLOAT:
        return "a float";
    case SRV_TOML_BOOL:
        return "a boolean";
    case SRV_TOML_ARRAY:
        return "an array of strings";
    }
    return "?";
}
