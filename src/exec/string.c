/* String builtins (iql-language.md 5.5): len, upper, lower, trim, substr, replace,
 * concat. Strings are counted and sliced by characters (UTF-8 aware), not bytes.
 * Non-string input gives Null. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "exec/builtin_impl.h"
#include "value/print.h"

static bool get_str(val_t v, const char **s, size_t *n) {
    if (val_type_of(v) != VT_STR) return false;
    *s = val_get_str(v, n);
    return true;
}

static size_t utf8_chars(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}

/* Byte offset of character index `ci` (clamped to n). */
static size_t utf8_offset(const char *s, size_t n, size_t ci) {
    size_t c = 0, i = 0;
    while (i < n && c < ci) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
        c++;
    }
    return i;
}

static val_t fn_len(const val_t *a) {
    const char *s;
    size_t n;
    if (!get_str(a[0], &s, &n)) return VAL_NULL;
    return val_int((int64_t)utf8_chars(s, n));
}

static val_t map_case(const val_t *a, bool up) {
    const char *s;
    size_t n;
    if (!get_str(a[0], &s, &n)) return VAL_NULL;
    char *t = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        t[i] = (char)(ch < 0x80 ? (up ? toupper(ch) : tolower(ch)) : ch);
    }
    val_t v = val_str(t, n);
    free(t);
    return v;
}
static val_t fn_upper(const val_t *a) {
    return map_case(a, true);
}
static val_t fn_lower(const val_t *a) {
    return map_case(a, false);
}

static val_t fn_trim(const val_t *a) {
    const char *s;
    size_t n;
    if (!get_str(a[0], &s, &n)) return VAL_NULL;
    size_t b = 0, e = n;
    while (b < e && isspace((unsigned char)s[b])) b++;
    while (e > b && isspace((unsigned char)s[e - 1])) e--;
    return val_str(s + b, e - b);
}

static val_t fn_substr(const val_t *a) {
    const char *s;
    size_t n;
    if (!get_str(a[0], &s, &n)) return VAL_NULL;
    int64_t start = val_type_of(a[1]) == VT_INT ? val_get_int(a[1]) : 0;
    int64_t len = val_type_of(a[2]) == VT_INT ? val_get_int(a[2]) : 0;
    if (start < 0 || len < 0) return val_str("", 0);
    size_t chars = utf8_chars(s, n);
    if ((uint64_t)start > chars) return val_str("", 0);
    size_t b = utf8_offset(s, n, (size_t)start);
    size_t e = utf8_offset(s, n, (size_t)start + (size_t)len);
    return val_str(s + b, e - b);
}

static val_t fn_replace(const val_t *a) {
    const char *s, *from, *to;
    size_t n, nf, nt;
    if (!get_str(a[0], &s, &n) || !get_str(a[1], &from, &nf) || !get_str(a[2], &to, &nt))
        return VAL_NULL;
    il_buf b;
    il_buf_init(&b);
    if (nf == 0) {
        il_buf_put(&b, to, nt);
        for (size_t i = 0; i < n;) {
            size_t j = i + 1;
            while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80) j++;
            il_buf_put(&b, s + i, j - i);
            il_buf_put(&b, to, nt);
            i = j;
        }
    } else {
        for (size_t i = 0; i < n;) {
            if (i + nf <= n && memcmp(s + i, from, nf) == 0) {
                il_buf_put(&b, to, nt);
                i += nf;
            } else {
                il_buf_putc(&b, s[i++]);
            }
        }
    }
    val_t v = val_str(il_buf_str(&b), b.len);
    il_buf_free(&b);
    return v;
}

static void concat_part(il_buf *b, val_t v) {
    switch (val_type_of(v)) {
    case VT_STR: {
        size_t n;
        const char *s = val_get_str(v, &n);
        il_buf_put(b, s, n);
        break;
    }
    case VT_INT:
        il_buf_printf(b, "%lld", (long long)val_get_int(v));
        break;
    case VT_FLOAT:
        fmt_f64_display(val_get_float(v), b);
        break;
    default: {
        /* Display without the quotes strings would get */
        val_fmt_display(v, b);
        break;
    }
    }
}

static val_t fn_concat(const val_t *a) {
    il_buf b;
    il_buf_init(&b);
    for (int i = 0; i < 3; i++) concat_part(&b, a[i]);
    val_t v = val_str(il_buf_str(&b), b.len);
    il_buf_free(&b);
    return v;
}

const exec_builtin exec_string_builtins[] = {
    {"len", 1, fn_len},       {"upper", 1, fn_upper},   {"lower", 1, fn_lower},
    {"trim", 1, fn_trim},     {"substr", 3, fn_substr}, {"replace", 3, fn_replace},
    {"concat", 3, fn_concat}, {NULL, 0, NULL},
};
