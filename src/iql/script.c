/* The script reader (script.h): program text to statements, as the CLI reads a script
 * file or a `.load`ed one. */
#include "iql/script.h"

#include <stdlib.h>
#include <string.h>

#include "iql/lexer.h"

/* Copies text without its comments. A block comment (nesting) becomes one space and
 * swallows its newlines, like the reference; a `//` comment runs to the end of its
 * line. Neither starts inside a string literal, and a string never continues past the
 * end of its line, so one stray quote cannot hide the comments of the rest of a file. */
static size_t strip_comments(const char *s, size_t n, char *out) {
    size_t o = 0, depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i], d = i + 1 < n ? s[i + 1] : 0;
        if (depth) {
            if (c == '/' && d == '*') {
                depth++;
                i++;
            } else if (c == '*' && d == '/') {
                i++;
                if (--depth == 0) out[o++] = ' ';
            }
            continue;
        }
        if (in_str) {
            out[o++] = c;
            if (c == '\n' || c == '"') {
                in_str = false;
            } else if (c == '\\' && d && d != '\n') {
                out[o++] = d;
                i++;
            }
            continue;
        }
        if (c == '/' && d == '*') {
            depth = 1;
            i++;
        } else if (c == '/' && d == '/') {
            while (i + 1 < n && s[i + 1] != '\n') i++;
        } else {
            in_str = c == '"';
            out[o++] = c;
        }
    }
    out[o] = 0;
    return o;
}

void iql_script_init(iql_script *s, const char *text, size_t len) {
    memset(s, 0, sizeof *s);
    s->content = malloc(len + 1);
    if (!s->content) abort();
    /* Most programs have no comment at all; memchr finds that out many times faster than
       the character loop (measured: a 20 KB batch of facts, 1 µs instead of 30). */
    if (!memchr(text, '/', len)) {
        memcpy(s->content, text, len);
        s->content[len] = 0;
        s->len = len;
        return;
    }
    s->len = strip_comments(text, len, s->content);
}

void iql_script_free(iql_script *s) {
    free(s->content);
    free(s->stmt);
    memset(s, 0, sizeof *s);
}

/* Bracket balance of the statement being accumulated, kept across its lines. */
typedef struct balance {
    long paren, bracket;
    bool in_str, escape;
} balance;

/* The characters balance_scan acts on; it skips the others in a tight loop. */
static const unsigned char BALANCE_CHAR[256] = {
    ['"'] = 1, ['('] = 1, [')'] = 1, ['['] = 1, [']'] = 1, ['\\'] = 1,
};

static void balance_scan(balance *b, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!b->escape)
            while (i < n && !BALANCE_CHAR[(unsigned char)p[i]]) i++;
        if (i == n) break;
        char c = p[i];
        if (b->in_str) {
            if (b->escape)
                b->escape = false;
            else if (c == '\\')
                b->escape = true;
            else if (c == '"')
                b->in_str = false;
            continue;
        }
        switch (c) {
        case '"':
            b->in_str = true;
            break;
        case '(':
            b->paren++;
            break;
        case ')':
            b->paren--;
            break;
        case '[':
            b->bracket++;
            break;
        case ']':
            b->bracket--;
            break;
        default:
            break;
        }
    }
}

static void append(iql_script *s, size_t *n, const char *p, size_t len) {
    if (*n + len + 2 > s->stmt_cap) {
        size_t cap = s->stmt_cap ? s->stmt_cap : 256;
        while (cap < *n + len + 2) cap *= 2;
        char *buf = realloc(s->stmt, cap);
        if (!buf) abort();
        s->stmt = buf;
        s->stmt_cap = cap;
    }
    if (*n) s->stmt[(*n)++] = ' ';
    memcpy(s->stmt + *n, p, len);
    *n += len;
    s->stmt[*n] = 0;
}

static bool ends_with(const char *p, size_t n, const char *lit) {
    size_t k = strlen(lit);
    return n >= k && memcmp(p + n - k, lit, k) == 0;
}

static bool emit(iql_script *s, size_t n, const balance *b, iql_script_item *item) {
    item->text = s->stmt;
    item->len = n;
    item->unterminated = b->paren > 0 || b->bracket > 0;
    return true;
}

bool iql_script_next(iql_script *s, iql_script_item *item) {
    size_t n = 0;
    balance b = {0};
    while (s->pos < s->len) {
        const char *line = s->content + s->pos;
        const char *nl = memchr(line, '\n', s->len - s->pos);
        size_t raw = nl ? (size_t)(nl - line) : s->len - s->pos;
        size_t lb = 0, le = raw;
        while (lb < le && iql_lex_space((unsigned char)line[lb])) lb++;
        while (le > lb && iql_lex_space((unsigned char)line[le - 1])) le--;
        if (lb == le) {
            s->pos += raw + (nl != NULL);
            continue;
        }
        /* A meta command line ends whatever is pending; it is read again next call. */
        if (line[lb] == '.' && n) return emit(s, n, &b, item);
        s->pos += raw + (nl != NULL);
        append(s, &n, line + lb, le - lb);
        if (line[lb] == '.') return emit(s, n, &b, item);
        balance_scan(&b, line + lb, le - lb);
        bool open = b.paren > 0 || b.bracket > 0;
        if (!open && !ends_with(s->stmt, n, ",") && !ends_with(s->stmt, n, "<-"))
            return emit(s, n, &b, item);
    }
    if (n) return emit(s, n, &b, item);
    return false;
}
