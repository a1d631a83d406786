/* String builtins (iql-language.md 5.5): len, upper, lower, trim, substr, replace,
 * concat. Strings are counted and sliced by characters, not bytes (the original counted
 * and sliced bytes: the conformance class `utf8`). Case mapping and trimming are
 * Unicode-aware, one code point at a time (a mapping to several characters, like German
 * sharp s to "SS", is not made). Bytes that are not valid UTF-8 are kept as they are,
 * each counted as a character. Non-string input gives Null. */
#include <ctype.h>
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "exec/builtin_impl.h"
#include "value/print.h"

static bool get_str(val_t v, const char **s, size_t *n) {
    if (val_type_of(v) != VT_STR) return false;
    *s = val_get_str(v, n);
    return true;
}

/* The number of characters in s (an invalid byte is one). */
static size_t utf8_chars(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t c = 0;
    for (size_t i = 0; i < n; c++) {
        int32_t cp;
        i += il_utf8_decode(u, n, i, &cp);
    }
    return c;
}

/* Byte offset of character index ci (n when past the end). */
static size_t utf8_offset(const char *s, size_t n, uint64_t ci) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    for (uint64_t c = 0; i < n && c < ci; c++) {
        int32_t cp;
        i += il_utf8_decode(u, n, i, &cp);
    }
    return i;
}

/* glibc's C.UTF-8 locale carries the Unicode case tables, whatever the process locale.
 * One for the process, made once: the case functions only read it, from any thread. (One
 * per thread leaked with each worker thread that ended.) */
static locale_t g_unicode_locale;
static pthread_once_t g_unicode_once = PTHREAD_ONCE_INIT;

static void make_unicode_locale(void) {
    g_unicode_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static locale_t unicode_locale(void) {
    pthread_once(&g_unicode_once, make_unicode_locale);
    return g_unicode_locale;
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
    locale_t loc = unicode_locale();
    il_buf b;
    il_buf_init(&b);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        int32_t cp;
        size_t len = il_utf8_decode(u, n, i, &cp);
        if (cp < 0) {
            il_buf_put(&b, s + i, len);
        } else if (cp < 0x80 || !loc) {
            if (cp < 0x80) cp = up ? toupper(cp) : tolower(cp);
            il_utf8_put(&b, (uint32_t)cp);
        } else {
            il_utf8_put(&b,
                        (uint32_t)(up ? towupper_l((wint_t)cp, loc) : towlower_l((wint_t)cp, loc)));
        }
        i += len;
    }
    val_t v = val_str(b.data ? b.data : "", b.len);
    il_buf_free(&b);
    return v;
}
static val_t fn_upper(const val_t *a) {
    return map_case(a, true);
}
static val_t fn_lower(const val_t *a) {
    return map_case(a, false);
}

/* Rust's char::is_whitespace: the White_Space property. */
static bool unicode_space(int32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

static val_t fn_trim(const val_t *a) {
    const char *s;
    size_t n;
    if (!get_str(a[0], &s, &n)) return VAL_NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t b = 0, e = n;
    while (b < e) {
        int32_t cp;
        size_t len = il_utf8_decode(u, e, b, &cp);
        if (cp < 0 || !unicode_space(cp)) break;
        b += len;
    }
    while (e > b) {
        size_t start = e - 1; /* back to the start of the last character */
        while (start > b && (u[start] & 0xC0) == 0x80 && e - start < 4) start--;
        int32_t cp;
        size_t len = il_utf8_decode(u, e, start, &cp);
        if (cp < 0 || start + len != e || !unicode_space(cp)) break;
        e = start;
    }
    return val_str(s + b, e - b);
}

static val_t fn_substr(const val_t *a) {
    const char *s;
    size_t n;
    if (!get_str(a[0], &s, &n)) return VAL_NULL;
    int64_t start = val_type_of(a[1]) == VT_INT ? val_get_int(a[1]) : 0;
    int64_t len = val_type_of(a[2]) == VT_INT ? val_get_int(a[2]) : 0;
    if (start < 0 || len < 0) return val_str("", 0);
    size_t b = utf8_offset(s, n, (uint64_t)start);
    size_t e = b + utf8_offset(s + b, n - b, (uint64_t)len);
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
