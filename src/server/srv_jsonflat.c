/* Request frames decoded without jansson's parser (srv_jsonflat.h). Measured: decoding
 * a 16 KB `execute` frame (a 1,000-fact insert) with json_loadb took as much of the
 * server's time as parsing and inserting the facts together (perf: 16 % of its samples);
 * a frame is one flat object, and its long string needs only a scan for quotes and
 * backslashes and a UTF-8 check, word by word while the text is ASCII. Anything this
 * reader does not handle exactly as jansson does is left to jansson. */
#include "server/srv_jsonflat.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

typedef struct reader {
    const unsigned char *p, *end;
    char *buf; /* a decoded string */
    size_t cap;
} reader;

static void skip_space(reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

/* The length of the valid UTF-8 sequence at p (its first byte >= 0x80), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
    int32_t cp;
    size_t n = il_utf8_decode(p, (size_t)(end - p), 0, &cp);
    return cp < 0 ? 0 : n;
}

static bool put(reader *r, size_t *n, const void *src, size_t k) {
    if (*n + k + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < *n + k + 1) cap *= 2;
        char *b = realloc(r->buf, cap);
        if (!b) return false;
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + *n, src, k);
    *n += k;
    r->buf[*n] = 0;
    return true;
}

/* A string at r->p (its opening quote), decoded into r->buf; false to give up. */
static bool read_string(reader *r, size_t *len) {
    if (r->p >= r->end || *r->p != '"') return false;
    r->p++;
    *len = 0;
    if (!put(r, len, "", 0)) return false;
    for (;;) {
        /* A run of plain ASCII, eight bytes at a time while none is special. */
        const unsigned char *s = r->p;
        while (r->end - r->p >= 8) {
            uint64_t w;
            memcpy(&w, r->p, 8);
            /* any byte >= 0x80, < 0x20, '"' (0x22) or '\\' (0x5C) stops the fast run */
            uint64_t high = w & 0x8080808080808080ull;
            uint64_t ctl = (w - 0x2020202020202020ull) & ~w & 0x8080808080808080ull;
            uint64_t q = w ^ 0x2222222222222222ull, b = w ^ 0x5C5C5C5C5C5C5C5Cull;
            uint64_t quote = (q - 0x0101010101010101ull) & ~q & 0x8080808080808080ull;
            uint64_t bslash = (b - 0x0101010101010101ull) & ~b & 0x8080808080808080ull;
            if (high | ctl | quote | bslash) break;
            r->p += 8;
        }
        while (r->p < r->end && *r->p >= 0x20 && *r->p < 0x80 && *r->p != '"' && *r->p != '\\')
            r->p++;
        if (r->p > s && !put(r, len, s, (size_t)(r->p - s))) return false;
        if (r->p >= r->end) return false;
        unsigned char c = *r->p;
        if (c == '"') {
            r->p++;
            return true;
        }
        if (c < 0x20) return false; /* unescaped control character: jansson's error */
        if (c >= 0x80) {
            size_t k = utf8_len(r->p, r->end);
            if (!k || !put(r, len, r->p, k)) return false;
            r->p += k;
            continue;
        }
        /* a backslash */
        if (r->end - r->p < 2) return false;
        char out;
        switch (r->p[1]) {
        case '"':
            out = '"';
            break;
        case '\\':
            out = '\\';
            break;
        case '/':
            out = '/';
            break;
        case 'b':
            out = '\b';
            break;
        case 'f':
            out = '\f';
            break;
        case 'n':
            out = '\n';
            break;
        case 'r':
            out = '\r';
            break;
        case 't':
            out = '\t';
            break;
        default:
            return false; /* \u (surrogates, NUL) and errors: jansson's */
        }
        if (!put(r, len, &out, 1)) return false;
        r->p += 2;
    }
}

/* A member's value: a string, a plain integer of at most 18 digits, true, false, null. */
static json_t *read_value(reader *r) {
    if (r->p >= r->end) return NULL;
    unsigned char c = *r->p;
    if (c == '"') {
        size_t n;
        return read_string(r, &n) ? json_stringn_nocheck(r->buf, n) : NULL;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        bool neg = c == '-';
        if (neg) r->p++;
        const unsigned char *d = r->p;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
        size_t digits = (size_t)(r->p - d);
        if (digits == 0 || digits > 18 || (digits > 1 && *d == '0')) return NULL;
        if (r->p < r->end && (*r->p == '.' || *r->p == 'e' || *r->p == 'E')) return NULL;
        int64_t v = 0;
        for (const unsigned char *q = d; q < r->p; q++) v = v * 10 + (*q - '0');
        return json_integer(neg ? -v : v);
    }
    static const struct {
        const char *word;
        size_t len;
    } words[] = {{"true", 4}, {"false", 5}, {"null", 4}};
    for (size_t i = 0; i < 3; i++)
        if ((size_t)(r->end - r->p) >= words[i].len &&
            memcmp(r->p, words[i].word, words[i].len) == 0) {
            r->p += words[i].len;
            return i == 0 ? json_true() : i == 1 ? json_false() : json_null();
        }
    return NULL;
}

json_t *srv_json_load_flat(const char *text, size_t len) {
    reader r = {(const unsigned char *)text, (const unsigned char *)text + len, NULL, 0};
    json_t *obj = json_object();
    char *key = NULL;
    bool ok = false;
    skip_space(&r);
    if (r.p < r.end && *r.p == '{') {
        r.p++;
        skip_space(&r);
        if (r.p < r.end && *r.p == '}') {
            r.p++;
            ok = true;
        }
        while (!ok) {
            size_t klen;
            if (!read_string(&r, &klen) || memchr(r.buf, 0, klen)) break;
            free(key);
            key = strdup(r.buf);
            skip_space(&r);
            if (r.p >= r.end || *r.p != ':') break;
            r.p++;
            skip_space(&r);
            json_t *v = read_value(&r);
            if (!v || json_object_set_new_nocheck(obj, key, v) != 0) break;
            skip_space(&r);
            if (r.p < r.end && *r.p == ',') {
                r.p++;
                skip_space(&r);
                continue;
            }
            if (r.p < r.end && *r.p == '}') {
                r.p++;
                ok = true;
            }
            break;
        }
    }
    if (ok) {
        skip_space(&r);
        ok = r.p == r.end; /* anything after the object: jansson's error */
    }
    free(key);
    free(r.buf);
    if (!ok) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}
