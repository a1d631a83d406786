/* Request frames decoded without jansson's parser (srv_jsonflat.h). Measured: decoding
 * a 16 KB `execute` frame (a 1,000-fact insert) with json_loadb took as much of the
 * server's time as parsing and inserting the facts together (perf: 16 % of its samples);
 * a frame is one flat object, and its long string needs only a scan for quotes and
 * backslashes and a UTF-8 check, word by word while the text is ASCII. Anything this
 * reader does not handle exactly as jansson does is left to jansson. The members are kept
 * in one buffer (srv_flat) rather than built into a jansson object: that object's
 * allocations (a dozen per frame) and hashing were a tenth of a small write's work. */
#include "server/srv_jsonflat.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

typedef struct reader {
    const unsigned char *p, *end;
    char *buf;   /* decoded strings, each with a NUL; the one being read starts at `at` */
    size_t cap;  /* buf's size */
    size_t at;   /* where the next string is decoded (0 but for srv_flat_read) */
    char *owned; /* buf's first storage, the caller's (never freed here), or NULL */
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

/* Appends k bytes to the string being decoded (n bytes so far) and a NUL after them. */
static bool put(reader *r, size_t *n, const void *src, size_t k) {
    size_t end = r->at + *n;
    if (end + k + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < end + k + 1) cap *= 2;
        bool first = r->owned && r->buf == r->owned;
        char *b = first ? malloc(cap) : realloc(r->buf, cap);
        if (!b) return false;
        if (first) memcpy(b, r->buf, end);
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + end, src, k);
    *n += k;
    r->buf[end + k] = 0;
    return true;
}

/* A string at r->p (its opening quote), decoded into r->buf from r->at; false to give up. */
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

/* The string just read (len bytes at r->at) is kept: *at gets its offset, and the next
 * is decoded after its NUL. */
static void keep(reader *r, size_t len, size_t *at) {
    *at = r->at;
    r->at += len + 1;
}

/* A member's value: a string, a plain integer of at most 18 digits, true, false, null. */
static bool read_value(reader *r, srv_flat_member *m) {
    if (r->p >= r->end) return false;
    unsigned char c = *r->p;
    if (c == '"') {
        m->kind = SRV_FLAT_STRING;
        if (!read_string(r, &m->len)) return false;
        keep(r, m->len, &m->str_at);
        return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        bool neg = c == '-';
        if (neg) r->p++;
        const unsigned char *d = r->p;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
        size_t digits = (size_t)(r->p - d);
        if (digits == 0 || digits > 18 || (digits > 1 && *d == '0')) return false;
        if (r->p < r->end && (*r->p == '.' || *r->p == 'e' || *r->p == 'E')) return false;
        int64_t v = 0;
        for (const unsigned char *q = d; q < r->p; q++) v = v * 10 + (*q - '0');
        m->kind = SRV_FLAT_INT;
        m->num = neg ? -v : v;
        return true;
    }
    static const struct {
        const char *word;
        size_t len;
        srv_flat_kind kind;
    } words[] = {
        {"true", 4, SRV_FLAT_TRUE}, {"false", 5, SRV_FLAT_FALSE}, {"null", 4, SRV_FLAT_NULL}};
    for (size_t i = 0; i < 3; i++)
        if ((size_t)(r->end - r->p) >= words[i].len &&
            memcmp(r->p, words[i].word, words[i].len) == 0) {
            r->p += words[i].len;
            m->kind = words[i].kind;
            return true;
        }
    return false;
}

bool srv_flat_read(srv_flat *f, const char *text, size_t len) {
    /* decoded straight into f's buffer, the small one first */
    reader r = {(const unsigned char *)text,
                (const unsigned char *)text + len,
                f->small,
                sizeof f->small,
                0,
                f->small};
    f->n = 0;
    bool ok = false;
    skip_space(&r);
    if (r.p < r.end && *r.p == '{') {
        r.p++;
        skip_space(&r);
        if (r.p < r.end && *r.p == '}') {
            r.p++;
            ok = true;
        }
        while (!ok && f->n < SRV_FLAT_MAX) {
            srv_flat_member *m = &f->m[f->n];
            if (!read_string(&r, &m->klen) || memchr(r.buf + r.at, 0, m->klen)) break;
            keep(&r, m->klen, &m->key_at);
            skip_space(&r);
            if (r.p >= r.end || *r.p != ':') break;
            r.p++;
            skip_space(&r);
            if (!read_value(&r, m)) break;
            f->n++;
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
    f->buf = r.buf;
    if (!ok) {
        srv_flat_free(f);
        return false;
    }
    /* the buffer moves while it grows: its strings are placed once it is done */
    for (size_t i = 0; i < f->n; i++) {
        f->m[i].key = f->buf + f->m[i].key_at;
        f->m[i].str = f->m[i].kind == SRV_FLAT_STRING ? f->buf + f->m[i].str_at : NULL;
    }
    return true;
}

void srv_flat_free(srv_flat *f) {
    if (f->buf != f->small) free(f->buf);
    f->buf = f->small;
    f->n = 0;
}

const srv_flat_member *srv_flat_get(const srv_flat *f, const char *key) {
    size_t klen = strlen(key);
    for (size_t i = f->n; i-- > 0;) /* the last of a repeated key, as jansson keeps it */
        if (f->m[i].klen == klen && memcmp(f->m[i].key, key, klen) == 0) return &f->m[i];
    return NULL;
}

json_t *srv_flat_json(const srv_flat *f) {
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < f->n; i++) {
        const srv_flat_member *m = &f->m[i];
        json_t *v = m->kind == SRV_FLAT_STRING  ? json_stringn_nocheck(m->str, m->len)
                    : m->kind == SRV_FLAT_INT   ? json_integer(m->num)
                    : m->kind == SRV_FLAT_TRUE  ? json_true()
                    : m->kind == SRV_FLAT_FALSE ? json_false()
                                                : json_null();
        if (!v || json_object_set_new_nocheck(obj, m->key, v) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

json_t *srv_json_load_flat(const char *text, size_t len) {
    srv_flat f;
    if (!srv_flat_read(&f, text, len)) return NULL;
    json_t *obj = srv_flat_json(&f);
    srv_flat_free(&f);
    return obj;
}

/* Skips a string at r->p (its opening quote), \u escapes included, without decoding it. */
static bool skip_string(reader *r) {
    if (r->p >= r->end || *r->p != '"') return false;
    for (r->p++; r->p < r->end; r->p++) {
        if (*r->p == '"') {
            r->p++;
            return true;
        }
        if (*r->p < 0x20) return false;
        if (*r->p == '\\' && ++r->p >= r->end) return false;
    }
    return false;
}

static int hex4(const unsigned char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The id's string at r->p, decoded into out (at most cap - 1 bytes, NUL-terminated), \u
 * escapes and surrogate pairs included; false when it is not a valid string or does not
 * fit. */
static bool read_id(reader *r, char *out, size_t cap, size_t *len) {
    const unsigned char *at = r->p;
    size_t n;
    if (read_string(r, &n)) {
        if (n >= cap) return false;
        memcpy(out, r->buf, n + 1);
        *len = n;
        return true;
    }
    r->p = at;
    if (!skip_string(r)) return false;
    /* a \u escape, which the fast reader leaves to jansson: decoded here */
    const unsigned char *end = r->p - 1; /* the closing quote */
    *len = 0;
    for (const unsigned char *p = at + 1; p < end;) {
        char u[IL_UTF8_MAX];
        size_t k = 1;
        if (*p != '\\') {
            u[0] = (char)*p++;
        } else if (p[1] != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *e = memchr(from, p[1], sizeof from - 1);
            if (!e) return false;
            u[0] = to[e - from];
            p += 2;
        } else {
            if (end - p < 6) return false;
            int cp = hex4(p + 2);
            p += 6;
            if (cp >= 0xD800 && cp < 0xDC00) { /* a high surrogate: its low one follows */
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return false;
                int lo = hex4(p + 2);
                if (lo < 0xDC00 || lo > 0xDFFF) return false;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            } else if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) {
                return false;
            }
            k = il_utf8_encode((uint32_t)cp, u);
        }
        if (*len + k >= cap) return false;
        memcpy(out + *len, u, k);
        *len += k;
    }
    out[*len] = 0;
    /* the bytes copied as they were must be UTF-8 too, as jansson would have them */
    for (size_t i = 0; i < *len;) {
        int32_t cp;
        size_t k = il_utf8_decode((const unsigned char *)out, *len, i, &cp);
        if (cp < 0 || !k) return false;
        i += k;
    }
    return true;
}

/* A member's key: whether it is "id" (\u escapes decoded, as jansson does). */
static bool read_key(reader *r, bool *is_id) {
    const unsigned char *at = r->p;
    char key[8];
    size_t n;
    if (read_id(r, key, sizeof key, &n)) {
        *is_id = n == 2 && memcmp(key, "id", 2) == 0;
        return true;
    }
    r->p = at; /* longer than any "id", or not a string: skipped, or the text stops */
    *is_id = false;
    return skip_string(r);
}

/* Skips one value of any kind, nested ones included; a number is taken lexically, so
 * one too large for jansson is skipped too. False at anything that is not JSON. */
static bool skip_value(reader *r, int depth) {
    skip_space(r);
    if (r->p >= r->end || depth > 64) return false;
    unsigned char c = *r->p;
    if (c == '"') return skip_string(r);
    if (c == '{' || c == '[') {
        unsigned char close = c == '{' ? '}' : ']';
        r->p++;
        skip_space(r);
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return true;
        }
        for (;;) {
            if (c == '{') {
                skip_space(r);
                if (!skip_string(r)) return false;
                skip_space(r);
                if (r->p >= r->end || *r->p != ':') return false;
                r->p++;
            }
            if (!skip_value(r, depth + 1)) return false;
            skip_space(r);
            if (r->p >= r->end) return false;
            if (*r->p == close) {
                r->p++;
                return true;
            }
            if (*r->p != ',') return false;
            r->p++;
        }
    }
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i], n) == 0) {
            r->p += n;
            return true;
        }
    }
    const unsigned char *s = r->p;
    while (r->p < r->end && *r->p && (strchr("+-.eE", *r->p) || (*r->p >= '0' && *r->p <= '9')))
        r->p++;
    return r->p > s;
}

bool srv_json_probe_id(const char *text, size_t len, char *out, size_t cap) {
    reader r = {(const unsigned char *)text, (const unsigned char *)text + len, NULL, 0, 0, NULL};
    bool found = false;
    skip_space(&r);
    if (r.p >= r.end || *r.p != '{') return false;
    r.p++;
    for (;;) {
        size_t n;
        bool is_id;
        skip_space(&r);
        if (!read_key(&r, &is_id)) break;
        skip_space(&r);
        if (r.p >= r.end || *r.p != ':') break;
        r.p++;
        skip_space(&r);
        if (is_id) {
            /* an id that is not such a string is not echoed */
            found = read_id(&r, out, cap, &n) && n >= 1 && n <= 64 && !memchr(out, 0, n);
            break;
        }
        if (!skip_value(&r, 0)) break;
        skip_space(&r);
        if (r.p >= r.end || *r.p != ',') break;
        r.p++;
    }
    free(r.buf);
    return found;
}

bool srv_json_has_nul(const json_t *v) {
    if (json_is_string(v)) return memchr(json_string_value(v), 0, json_string_length(v)) != NULL;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (srv_json_has_nul(json_array_get(v, i))) return true;
        return false;
    }
    const char *key;
    json_t *member;
    json_object_foreach((json_t *)v, key, member) {
        if (srv_json_has_nul(member)) return true;
    }
    return false;
}
