/* Text forms of values (see print.h): table cells, Display, and the float formats both
 * rest on.
 *
 * Shortest round-trip digits come from the C library: the correctly rounded "%.*e"
 * text at the smallest precision that reads back as the same number, found by binary
 * search (if p digits read back, so do p + 1). The layouts then follow the reference:
 * ryu's for cells and the wire, Rust's `{}` for Display. Table cells also pass through
 * the client's JSON float parser (serde_json without float_roundtrip), which is not
 * correctly rounded, because the transcripts show its result (3e100 prints as
 * 3.0000000000000002e100). */
#include "value/print.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_str.h"

/* Shortest decimal form of a positive finite number: value = 0.digits x 10^point. */
typedef struct shortest {
    char digits[24]; /* significant digits without trailing zeros; not NUL-terminated */
    int len;
    int point; /* iql-language.md 6.7 calls it kk */
} shortest;

static bool is_power_of_two(double x, bool as_f32) {
    if (as_f32) {
        float f = (float)x;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        return (bits & 0x007FFFFFu) == 0;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits & 0x000FFFFFFFFFFFFFull) == 0;
}

static double read_back(const char *text, bool as_f32) {
    return as_f32 ? (double)strtof(text, NULL) : strtod(text, NULL);
}

/* Digits and point of "D.DDDe±X" text. */
static void parse_sci(const char *text, shortest *s) {
    s->len = 0;
    const char *q = text;
    for (; *q != 'e'; q++)
        if (*q != '.') s->digits[s->len++] = *q;
    s->point = atoi(q + 1) + 1;
}

static void format_sci(const shortest *s, char *text, size_t cap) {
    snprintf(text, cap, "%c.%.*se%d", s->digits[0], s->len - 1, s->digits + 1, s->point - 1);
}

/* Adds one unit in the last digit. */
static void increment_last_digit(shortest *s) {
    int i = s->len - 1;
    while (i >= 0 && s->digits[i] == '9') s->digits[i--] = '0';
    if (i >= 0) {
        s->digits[i]++;
    } else {
        s->digits[0] = '1'; /* all nines: 99.9 -> 100.0, one more integer digit */
        s->point++;
    }
}

/* The nearest (p+1)-digit decimal to x, if it reads back as x. At a power of two the
 * gap below x is half the gap above, so when the nearest candidate lies below and misses,
 * the next one up may still read back; ryu (and Python's repr) would pick it. */
static bool digits_at_precision(double x, int p, bool as_f32, shortest *out) {
    char text[48];
    snprintf(text, sizeof text, "%.*e", p, x);
    parse_sci(text, out);
    double y = read_back(text, as_f32);
    if (y != x) {
        if (!(y < x && is_power_of_two(x, as_f32))) return false;
        increment_last_digit(out);
        format_sci(out, text, sizeof text);
        if (read_back(text, as_f32) != x) return false;
    }
    while (out->len > 1 && out->digits[out->len - 1] == '0') out->len--;
    return true;
}

/* x must be positive and finite (and exactly an f32 when as_f32). */
static void shortest_digits(double x, bool as_f32, shortest *out) {
    int lo = 0, hi = as_f32 ? 8 : 16; /* 9 and 17 significant digits always read back */
    bool have_hi = false;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        shortest cand;
        if (digits_at_precision(x, mid, as_f32, &cand)) {
            *out = cand;
            hi = mid;
            have_hi = true;
        } else {
            lo = mid + 1;
        }
    }
    if (!have_hi) digits_at_precision(x, hi, as_f32, out);
}

static char *put_zeros(char *p, int n) {
    for (; n > 0; n--) *p++ = '0';
    return p;
}

static char *put_digits(char *p, const char *d, int n) {
    if (n > 0) memcpy(p, d, (size_t)n);
    return p + (n > 0 ? n : 0);
}

/* ryu's layout (6.7 `ryu_f64`) of a finite number into text (at least 48 bytes);
 * returns the length. */
static int ryu_text(double x, bool as_f32, char *text) {
    char *p = text;
    if (signbit(x)) *p++ = '-';
    if (x == 0) {
        memcpy(p, "0.0", 3);
        return (int)(p + 3 - text);
    }
    shortest s;
    shortest_digits(fabs(x), as_f32, &s);
    int len = s.len, kk = s.point, k = kk - len;
    if (k >= 0 && kk <= 16) { /* integral: 100.0 */
        p = put_digits(p, s.digits, len);
        p = put_zeros(p, k);
        memcpy(p, ".0", 2);
        p += 2;
    } else if (kk > 0 && kk <= 16) { /* 3.14 */
        p = put_digits(p, s.digits, kk);
        *p++ = '.';
        p = put_digits(p, s.digits + kk, len - kk);
    } else if (kk > -5 && kk <= 0) { /* 0.001 */
        *p++ = '0';
        *p++ = '.';
        p = put_zeros(p, -kk);
        p = put_digits(p, s.digits, len);
    } else { /* 1e20, 2.5e-7 */
        *p++ = s.digits[0];
        if (len > 1) {
            *p++ = '.';
            p = put_digits(p, s.digits + 1, len - 1);
        }
        p += sprintf(p, "e%d", kk - 1);
    }
    *p = 0;
    return (int)(p - text);
}

void fmt_f64_shortest(double d, il_buf *out) {
    if (!isfinite(d)) {
        il_buf_puts(out, "null");
        return;
    }
    char text[64];
    il_buf_put(out, text, (size_t)ryu_text(d, false, text));
}

void fmt_f32_shortest(float f, il_buf *out) {
    if (!isfinite(f)) {
        il_buf_puts(out, "null");
        return;
    }
    char text[64];
    il_buf_put(out, text, (size_t)ryu_text((double)f, true, text));
}

void fmt_f64_display(double d, il_buf *out) {
    if (isnan(d)) {
        il_buf_puts(out, "NaN");
        return;
    }
    if (signbit(d)) il_buf_putc(out, '-');
    if (isinf(d)) {
        il_buf_puts(out, "inf");
        return;
    }
    if (d == 0) {
        il_buf_putc(out, '0');
        return;
    }
    shortest s;
    shortest_digits(fabs(d), false, &s);
    /* Never an exponent: up to 324 zeros on either side of the digits. */
    char text[400];
    char *p = text;
    if (s.point <= 0) {
        *p++ = '0';
        *p++ = '.';
        p = put_zeros(p, -s.point);
        p = put_digits(p, s.digits, s.len);
    } else if (s.point >= s.len) {
        p = put_digits(p, s.digits, s.len);
        p = put_zeros(p, s.point - s.len);
    } else {
        p = put_digits(p, s.digits, s.point);
        *p++ = '.';
        p = put_digits(p, s.digits + s.point, s.len - s.point);
    }
    il_buf_put(out, text, (size_t)(p - text));
}

/* serde_json's POW10: the correctly rounded doubles 1e0 .. 1e308. */
static const double pow10_table[309] = {
    1e0,   1e1,   1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,  1e12,
    1e13,  1e14,  1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22,  1e23,  1e24,  1e25,
    1e26,  1e27,  1e28,  1e29,  1e30,  1e31,  1e32,  1e33,  1e34,  1e35,  1e36,  1e37,  1e38,
    1e39,  1e40,  1e41,  1e42,  1e43,  1e44,  1e45,  1e46,  1e47,  1e48,  1e49,  1e50,  1e51,
    1e52,  1e53,  1e54,  1e55,  1e56,  1e57,  1e58,  1e59,  1e60,  1e61,  1e62,  1e63,  1e64,
    1e65,  1e66,  1e67,  1e68,  1e69,  1e70,  1e71,  1e72,  1e73,  1e74,  1e75,  1e76,  1e77,
    1e78,  1e79,  1e80,  1e81,  1e82,  1e83,  1e84,  1e85,  1e86,  1e87,  1e88,  1e89,  1e90,
    1e91,  1e92,  1e93,  1e94,  1e95,  1e96,  1e97,  1e98,  1e99,  1e100, 1e101, 1e102, 1e103,
    1e104, 1e105, 1e106, 1e107, 1e108, 1e109, 1e110, 1e111, 1e112, 1e113, 1e114, 1e115, 1e116,
    1e117, 1e118, 1e119, 1e120, 1e121, 1e122, 1e123, 1e124, 1e125, 1e126, 1e127, 1e128, 1e129,
    1e130, 1e131, 1e132, 1e133, 1e134, 1e135, 1e136, 1e137, 1e138, 1e139, 1e140, 1e141, 1e142,
    1e143, 1e144, 1e145, 1e146, 1e147, 1e148, 1e149, 1e150, 1e151, 1e152, 1e153, 1e154, 1e155,
    1e156, 1e157, 1e158, 1e159, 1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167, 1e168,
    1e169, 1e170, 1e171, 1e172, 1e173, 1e174, 1e175, 1e176, 1e177, 1e178, 1e179, 1e180, 1e181,
    1e182, 1e183, 1e184, 1e185, 1e186, 1e187, 1e188, 1e189, 1e190, 1e191, 1e192, 1e193, 1e194,
    1e195, 1e196, 1e197, 1e198, 1e199, 1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206, 1e207,
    1e208, 1e209, 1e210, 1e211, 1e212, 1e213, 1e214, 1e215, 1e216, 1e217, 1e218, 1e219, 1e220,
    1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227, 1e228, 1e229, 1e230, 1e231, 1e232, 1e233,
    1e234, 1e235, 1e236, 1e237, 1e238, 1e239, 1e240, 1e241, 1e242, 1e243, 1e244, 1e245, 1e246,
    1e247, 1e248, 1e249, 1e250, 1e251, 1e252, 1e253, 1e254, 1e255, 1e256, 1e257, 1e258, 1e259,
    1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266, 1e267, 1e268, 1e269, 1e270, 1e271, 1e272,
    1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279, 1e280, 1e281, 1e282, 1e283, 1e284, 1e285,
    1e286, 1e287, 1e288, 1e289, 1e290, 1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298,
    1e299, 1e300, 1e301, 1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308,
};

/* serde_json's f64_from_parts; an out-of-range result (an error there) comes back as
 * infinity here. */
static double serde_from_parts(bool negative, uint64_t significand, int64_t exponent) {
    double f = (double)significand;
    for (;;) {
        int64_t magnitude = exponent < 0 ? -exponent : exponent;
        if (magnitude <= 308) {
            f = exponent >= 0 ? f * pow10_table[magnitude] : f / pow10_table[magnitude];
            break;
        }
        if (f == 0) break;
        if (exponent >= 0) {
            f = INFINITY;
            break;
        }
        f /= 1e308;
        exponent += 308;
    }
    return negative ? -f : f;
}

/* Whether significand * 10 + digit would overflow a u64 (serde_json's `overflow!`). */
static inline bool serde_overflows(uint64_t significand, unsigned digit) {
    return significand >= UINT64_MAX / 10 &&
           (significand > UINT64_MAX / 10 || digit > UINT64_MAX % 10);
}

/* serde_json's default (not correctly rounded) float parser, for the number texts that
 * ryu_text writes. */
static double serde_parse_f64(const char *s) {
    bool negative = *s == '-';
    if (negative) s++;
    uint64_t significand = 0;
    int64_t exponent = 0;
    bool overflowed = false;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned digit = (unsigned)(*s - '0');
        /* Once the significand is full, integer digits only scale it. */
        if (!overflowed && serde_overflows(significand, digit)) overflowed = true;
        if (overflowed)
            exponent++;
        else
            significand = significand * 10 + digit;
    }
    if (*s == '.') {
        s++;
        bool full = false;
        for (; *s >= '0' && *s <= '9'; s++) {
            unsigned digit = (unsigned)(*s - '0');
            if (!full && serde_overflows(significand, digit)) full = true;
            if (!full) {
                significand = significand * 10 + digit;
                exponent--;
            }
        }
    }
    if (*s == 'e' || *s == 'E') exponent += strtol(s + 1, NULL, 10);
    return serde_from_parts(negative, significand, exponent);
}

/* A float as the client prints it: the server's ryu text, read back by serde_json,
 * printed by ryu again. */
static void fmt_f64_cell(double d, il_buf *out) {
    if (!isfinite(d)) {
        il_buf_puts(out, "null");
        return;
    }
    char text[64];
    int len = ryu_text(d, false, text);
    text[len] = 0;
    double seen = serde_parse_f64(text);
    if (seen != d) {
        fmt_f64_shortest(seen, out);
        return;
    }
    il_buf_put(out, text, (size_t)len);
}

/* Strings are stored decoded, so the escapes give back the literal that wrote them. */
void val_fmt_quoted(const char *s, size_t len, il_buf *out) {
    il_buf_putc(out, '"');
    size_t run = 0; /* start of the bytes not yet written */
    for (size_t i = 0; i < len; i++) {
        char escape;
        switch (s[i]) {
        case '\\':
            escape = '\\';
            break;
        case '"':
            escape = '"';
            break;
        case '\n':
            escape = 'n';
            break;
        case '\t':
            escape = 't';
            break;
        case '\r':
            escape = 'r';
            break;
        default:
            continue;
        }
        il_buf_put(out, s + run, i - run);
        il_buf_putc(out, '\\');
        il_buf_putc(out, escape);
        run = i + 1;
    }
    il_buf_put(out, s + run, len - run);
    il_buf_putc(out, '"');
}

static void fmt_str(val_t v, il_buf *out) {
    size_t len;
    const char *s = val_get_str(v, &len);
    val_fmt_quoted(s, len, out);
}

void val_fmt_cell(val_t v, il_buf *out) {
    switch (val_type_of(v)) {
    case VT_NULL:
        il_buf_puts(out, "null");
        return;
    case VT_BOOL:
        il_buf_puts(out, val_get_bool(v) ? "true" : "false");
        return;
    case VT_INT:
    case VT_TS:
        il_buf_printf(out, "%lld", (long long)val_get_int(v));
        return;
    case VT_FLOAT:
        fmt_f64_cell(val_get_float(v), out);
        return;
    case VT_STR:
        fmt_str(v, out);
        return;
    case VT_VEC: {
        /* The server widens the elements to f64 for JSON, so a cell shows f32 0.1 as
         * 0.10000000149011612. */
        uint32_t n;
        const float *e = val_get_vec_f32(v, &n);
        il_buf_putc(out, '[');
        for (uint32_t i = 0; i < n; i++) {
            if (i) il_buf_puts(out, ", ");
            fmt_f64_cell((double)e[i], out);
        }
        il_buf_putc(out, ']');
        return;
    }
    case VT_VEC_I8: {
        uint32_t n;
        const int8_t *e = val_get_vec_i8(v, &n);
        il_buf_putc(out, '[');
        for (uint32_t i = 0; i < n; i++) il_buf_printf(out, i ? ", %d" : "%d", e[i]);
        il_buf_putc(out, ']');
        return;
    }
    }
}

void val_fmt_json(val_t v, il_buf *out) {
    if (val_type_of(v) == VT_STR) {
        size_t len;
        const char *s = val_get_str(v, &len);
        il_json_str(out, s, len);
    } else {
        val_fmt_cell(v, out);
    }
}

bool val_cell_is_number(val_t v) {
    switch (val_type_of(v)) {
    case VT_INT:
    case VT_TS:
        return true;
    case VT_FLOAT:
        return isfinite(val_get_float(v));
    default:
        return false;
    }
}

/* Display shows at most this many vector elements in full; longer vectors show
 * DISPLAY_VEC_HEAD elements and a count of the rest. */
#define DISPLAY_VEC_MAX  6
#define DISPLAY_VEC_HEAD 5

/* Rust's `{:.4}` of an f32. */
static void fmt_f32_fixed4(float f, il_buf *out) {
    if (isnan(f)) {
        il_buf_puts(out, "NaN");
    } else if (isinf(f)) {
        il_buf_puts(out, f < 0 ? "-inf" : "inf");
    } else {
        il_buf_printf(out, "%.4f", (double)f);
    }
}

void val_fmt_display(val_t v, il_buf *out) {
    switch (val_type_of(v)) {
    case VT_NULL:
        il_buf_puts(out, "NULL");
        return;
    case VT_BOOL:
        il_buf_puts(out, val_get_bool(v) ? "true" : "false");
        return;
    case VT_INT:
        il_buf_printf(out, "%lld", (long long)val_get_int(v));
        return;
    case VT_TS:
        il_buf_printf(out, "%lldms", (long long)val_get_int(v));
        return;
    case VT_FLOAT:
        fmt_f64_display(val_get_float(v), out);
        return;
    case VT_STR:
        fmt_str(v, out);
        return;
    case VT_VEC:
    case VT_VEC_I8: {
        bool is_i8 = val_type_of(v) == VT_VEC_I8;
        uint32_t n;
        const float *ef = NULL;
        const int8_t *ei = NULL;
        if (is_i8)
            ei = val_get_vec_i8(v, &n);
        else
            ef = val_get_vec_f32(v, &n);
        uint32_t shown = n > DISPLAY_VEC_MAX ? DISPLAY_VEC_HEAD : n;
        il_buf_putc(out, '[');
        for (uint32_t i = 0; i < shown; i++) {
            if (i) il_buf_puts(out, ", ");
            if (is_i8)
                il_buf_printf(out, "%d", ei[i]);
            else
                fmt_f32_fixed4(ef[i], out);
        }
        if (shown < n) il_buf_printf(out, ", ... %u more", n - shown);
        il_buf_puts(out, is_i8 ? "]i8" : "]");
        return;
    }
    }
}
