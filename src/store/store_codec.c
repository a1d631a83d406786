/* The payload encoding (store_codec.h). Values are written by type, not as their
 * in-memory words: string, vector and boxed-number words are ids into process-local
 * intern tables, meaningless after a restart. */
#include "store/store_codec.h"

#include <stdlib.h>
#include <string.h>

enum {
    VC_NULL,
    VC_FALSE,
    VC_TRUE,
    VC_INT,
    VC_FLOAT,
    VC_TS,
    VC_STR,
    VC_VEC_F32,
    VC_VEC_I8,
};

/* A vector longer than this is a corrupt record, not data: it bounds the allocation a
 * damaged length could ask for. */
enum { CODEC_MAX_VEC = 1 << 24 };

void codec_put_u8(il_buf *b, uint8_t v) {
    il_buf_put(b, &v, 1);
}

void codec_put_uvar(il_buf *b, uint64_t v) {
    unsigned char tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (unsigned char)v;
    il_buf_put(b, tmp, n);
}

void codec_put_svar(il_buf *b, int64_t v) {
    codec_put_uvar(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void codec_put_u32le(il_buf *b, uint32_t v) {
    unsigned char t[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    il_buf_put(b, t, 4);
}

void codec_put_u64le(il_buf *b, uint64_t v) {
    codec_put_u32le(b, (uint32_t)v);
    codec_put_u32le(b, (uint32_t)(v >> 32));
}

void codec_put_bytes(il_buf *b, const void *p, size_t n) {
    codec_put_uvar(b, n);
    if (n) il_buf_put(b, p, n);
}

void codec_put_str(il_buf *b, const char *s) {
    codec_put_bytes(b, s, strlen(s));
}

void codec_put_val(il_buf *b, val_t v) {
    switch (val_type_of(v)) {
    case VT_NULL:
        codec_put_u8(b, VC_NULL);
        break;
    case VT_BOOL:
        codec_put_u8(b, val_get_bool(v) ? VC_TRUE : VC_FALSE);
        break;
    case VT_INT:
        codec_put_u8(b, VC_INT);
        codec_put_svar(b, val_get_int(v));
        break;
    case VT_TS:
        codec_put_u8(b, VC_TS);
        codec_put_svar(b, val_get_int(v));
        break;
    case VT_FLOAT: {
        uint64_t w;
        double d = val_get_float(v);
        memcpy(&w, &d, sizeof w);
        codec_put_u8(b, VC_FLOAT);
        codec_put_u64le(b, w);
        break;
    }
    case VT_STR: {
        size_t len;
        const char *s = val_get_str(v, &len);
        codec_put_u8(b, VC_STR);
        codec_put_bytes(b, s, len);
        break;
    }
    case VT_VEC: {
        uint32_t n;
        const float *e = val_get_vec_f32(v, &n);
        codec_put_u8(b, VC_VEC_F32);
        codec_put_uvar(b, n);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t w;
            memcpy(&w, &e[i], sizeof w);
            codec_put_u32le(b, w);
        }
        break;
    }
    case VT_VEC_I8: {
        uint32_t n;
        const int8_t *e = val_get_vec_i8(v, &n);
        codec_put_u8(b, VC_VEC_I8);
        codec_put_uvar(b, n);
        if (n) il_buf_put(b, e, n);
        break;
    }
    }
}

void codec_reader_init(codec_reader *r, const void *data, size_t len) {
    r->p = data;
    r->end = r->p + len;
    r->ok = true;
}

bool codec_at_end(const codec_reader *r) {
    return r->p >= r->end;
}

static bool need(codec_reader *r, size_t n) {
    if (!r->ok || (size_t)(r->end - r->p) < n) {
        r->ok = false;
        return false;
    }
    return true;
}

uint8_t codec_get_u8(codec_reader *r) {
    if (!need(r, 1)) return 0;
    return *r->p++;
}

uint64_t codec_get_uvar(codec_reader *r) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (!need(r, 1)) return 0;
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return v;
    }
    r->ok = false; /* more than 10 bytes: not a varint we wrote */
    return 0;
}

int64_t codec_get_svar(codec_reader *r) {
    uint64_t u = codec_get_uvar(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

uint32_t codec_load_u32le(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t codec_load_u64le(const unsigned char *p) {
    return (uint64_t)codec_load_u32le(p) | (uint64_t)codec_load_u32le(p + 4) << 32;
}

const char *codec_get_bytes(codec_reader *r, size_t *len) {
    uint64_t n = codec_get_uvar(r);
    *len = 0;
    if (!need(r, n)) return NULL;
    const char *s = (const char *)r->p;
    r->p += n;
    *len = (size_t)n;
    return s;
}

char *codec_get_strdup(codec_reader *r) {
    size_t n;
    const char *s = codec_get_bytes(r, &n);
    if (!r->ok) return NULL;
    char *c = malloc(n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

val_t codec_get_val(codec_reader *r) {
    switch (codec_get_u8(r)) {
    case VC_NULL:
        return val_null();
    case VC_FALSE:
        return val_bool(false);
    case VC_TRUE:
        return val_bool(true);
    case VC_INT:
        return val_int(codec_get_svar(r));
    case VC_TS:
        return val_ts(codec_get_svar(r));
    case VC_FLOAT: {
        if (!need(r, 8)) return val_null();
        uint64_t w = codec_load_u64le(r->p);
        r->p += 8;
        double d;
        memcpy(&d, &w, sizeof d);
        return val_float(d);
    }
    case VC_STR: {
        size_t n;
        const char *s = codec_get_bytes(r, &n);
        return r->ok ? val_str(s, n) : val_null();
    }
    case VC_VEC_F32: {
        uint64_t n = codec_get_uvar(r);
        if (n > CODEC_MAX_VEC || !need(r, n * 4)) {
            r->ok = false;
            return val_null();
        }
        float *e = malloc((n + 1) * sizeof *e);
        for (uint64_t i = 0; i < n; i++) {
            uint32_t w = codec_load_u32le(r->p + 4 * i);
            memcpy(&e[i], &w, sizeof w);
        }
        r->p += n * 4;
        val_t v = val_vec_f32(e, (uint32_t)n);
        free(e);
        return v;
    }
    case VC_VEC_I8: {
        uint64_t n = codec_get_uvar(r);
        if (n > CODEC_MAX_VEC || !need(r, n)) {
            r->ok = false;
            return val_null();
        }
        val_t v = val_vec_i8((const int8_t *)r->p, (uint32_t)n);
        r->p += n;
        return v;
    }
    default:
        r->ok = false;
        return val_null();
    }
}
