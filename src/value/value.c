/* Values (see value.h): the out-of-line constructors and accessors, the two orders and
 * the numeric conversions.
 *
 * Strings, boxed numbers and vectors all live in the one intern table (base/intern.h):
 * a boxed number is interned as its 8 bytes, a vector as its raw element bytes. The word
 * keeps what the bytes mean: a BOX payload is (id << 1) | is_timestamp and a VEC payload
 * is (id << 1) | is_i8, so val_type_of never touches the table, and equal content gives
 * the same id, hence the same word. A string and a vector with the same bytes share an
 * id harmlessly: their tags differ. */
#include "value/value.h"

#include "base/intern.h"

#include <math.h>
#include <stdlib.h>

#define SUBKIND_BIT 1u /* in BOX and VEC payloads: timestamp / i8 elements */

static inline int cmp_i64(int64_t a, int64_t b) {
    return (a > b) - (a < b);
}

/* NaN compares equal to everything (3.8). */
static inline int cmp_f64(double a, double b) {
    if (a < b) return -1;
    if (a > b) return 1;
    return 0;
}

static inline int64_t inline_int(val_t v) {
    /* Sign-extend the 48-bit payload; the shift pair is arithmetic on every target we build for. */
    return val_get_int_inline(v);
}

static inline uint32_t sub_id(val_t v) {
    return (uint32_t)(val_payload(v) >> 1);
}

static inline val_type type_of(val_t v) {
    if (!val_is_tagged(v)) return VT_FLOAT;
    switch (val_tag(v)) {
    case VAL_TAG_NULL:
        return VT_NULL;
    case VAL_TAG_BOOL:
        return VT_BOOL;
    case VAL_TAG_INT:
        return VT_INT;
    case VAL_TAG_TS:
        return VT_TS;
    case VAL_TAG_STR:
        return VT_STR;
    case VAL_TAG_BOX:
        return (val_payload(v) & SUBKIND_BIT) ? VT_TS : VT_INT;
    case VAL_TAG_VEC:
        return (val_payload(v) & SUBKIND_BIT) ? VT_VEC_I8 : VT_VEC;
    default:
        return VT_FLOAT; /* VAL_TAG_FNAN */
    }
}

val_t val_box_int_(int64_t i, bool is_ts) {
    /* Keeps the word canonical even if a caller boxes a value that fits inline. */
    if (val_fits48(i)) return VAL_MAKE(is_ts ? VAL_TAG_TS : VAL_TAG_INT, (uint64_t)i);
    uint32_t id = il_intern((const char *)&i, sizeof i);
    return VAL_MAKE(VAL_TAG_BOX, ((uint64_t)id << 1) | (is_ts ? SUBKIND_BIT : 0));
}

val_t val_str(const char *s, size_t len) {
    return VAL_MAKE(VAL_TAG_STR, il_intern(s, len));
}

/* An f32 vector is interned as its head (val_vec_head) followed by its elements. The
 * head is a function of the elements, so equal vectors still have equal bytes; it holds
 * what every cosine against the vector would otherwise recompute per row. */
val_t val_vec_f32(const float *elems, uint32_t n) {
    enum { STACK_ELEMS = 256 };
    struct {
        val_vec_head head;
        float elems[STACK_ELEMS];
    } local;
    size_t bytes = sizeof(val_vec_head) + (size_t)n * sizeof(float);
    char *buf = n <= STACK_ELEMS ? (char *)&local : malloc(bytes);
    if (!buf) abort();
    val_vec_head head = {0.0f, 1, 0.0, 0.0};
    for (uint32_t i = 0; i < n; i++) {
        /* the sequential f32 sum from +0.0 that cosine's |a|^2 is (iql-language.md 5.2) */
        float sq = elems[i] * elems[i];
        head.sqnorm += sq;
        if (!isfinite(elems[i])) head.finite = 0;
    }
    head.norm = sqrt((double)head.sqnorm);
    head.inv_norm = head.norm > 0.0 ? 1.0 / head.norm : 0.0;
    memcpy(buf, &head, sizeof head);
    if (n) memcpy(buf + sizeof head, elems, (size_t)n * sizeof(float));
    uint32_t id = il_intern(buf, bytes);
    if (buf != (char *)&local) free(buf);
    return VAL_MAKE(VAL_TAG_VEC, (uint64_t)id << 1);
}

val_t val_vec_i8(const int8_t *elems, uint32_t n) {
    uint32_t id = il_intern((const char *)elems, n);
    return VAL_MAKE(VAL_TAG_VEC, ((uint64_t)id << 1) | SUBKIND_BIT);
}

val_type val_type_of(val_t v) {
    return type_of(v);
}

int64_t val_get_int(val_t v) {
    if (val_tag(v) != VAL_TAG_BOX) return inline_int(v);
    int64_t i;
    memcpy(&i, il_intern_get(sub_id(v), NULL), sizeof i);
    return i;
}

const char *val_get_str(val_t v, size_t *len) {
    return il_intern_get((uint32_t)val_payload(v), len);
}

const float *val_get_vec_f32(val_t v, uint32_t *n) {
    return val_get_vec_f32_head(v, n, NULL);
}

const float *val_get_vec_f32_head(val_t v, uint32_t *n, const val_vec_head **head) {
    size_t bytes;
    const char *p = il_intern_get(sub_id(v), &bytes);
    if (n) *n = (uint32_t)((bytes - sizeof(val_vec_head)) / sizeof(float));
    if (head) *head = (const val_vec_head *)(const void *)p;
    /* intern storage is 8-byte aligned and the head is 24 bytes */
    return (const float *)(const void *)(p + sizeof(val_vec_head));
}

const int8_t *val_get_vec_i8(val_t v, uint32_t *n) {
    size_t bytes;
    const char *p = il_intern_get(sub_id(v), &bytes);
    if (n) *n = (uint32_t)bytes;
    return (const int8_t *)p;
}

static int cmp_bytes(const char *a, size_t na, const char *b, size_t nb) {
    size_t n = na < nb ? na : nb;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (na > nb) - (na < nb);
}

static int cmp_vec_f32(val_t a, val_t b) {
    uint32_t na, nb;
    const float *ea = val_get_vec_f32(a, &na), *eb = val_get_vec_f32(b, &nb);
    if (na != nb) return na < nb ? -1 : 1;
    for (uint32_t i = 0; i < na; i++) {
        /* The original orders elements by raw bits as u32, so negatives follow positives. */
        uint32_t ba, bb;
        memcpy(&ba, &ea[i], sizeof ba);
        memcpy(&bb, &eb[i], sizeof bb);
        if (ba != bb) return ba < bb ? -1 : 1;
    }
    return 0;
}

static int cmp_vec_i8(val_t a, val_t b) {
    uint32_t na, nb;
    const int8_t *ea = val_get_vec_i8(a, &na), *eb = val_get_vec_i8(b, &nb);
    if (na != nb) return na < nb ? -1 : 1;
    for (uint32_t i = 0; i < na; i++)
        if (ea[i] != eb[i]) return ea[i] < eb[i] ? -1 : 1;
    return 0;
}

/* Both values have type t. */
static int cmp_same_type(val_type t, val_t a, val_t b) {
    switch (t) {
    case VT_NULL:
        return 0;
    case VT_BOOL:
        return cmp_i64((int64_t)val_payload(a), (int64_t)val_payload(b));
    case VT_INT:
    case VT_TS:
        return cmp_i64(val_get_int(a), val_get_int(b));
    case VT_FLOAT:
        return cmp_f64(val_get_float(a), val_get_float(b));
    case VT_STR: {
        size_t na, nb;
        const char *sa = val_get_str(a, &na), *sb = val_get_str(b, &nb);
        return cmp_bytes(sa, na, sb, nb);
    }
    case VT_VEC:
        return cmp_vec_f32(a, b);
    case VT_VEC_I8:
        return cmp_vec_i8(a, b);
    }
    return 0;
}

int val_cmp(val_t a, val_t b) {
    if (a == b) return 0;
    /* The common case of joins and sorts: no type dispatch, no table. */
    if (val_is_int_inline(a) && val_is_int_inline(b)) return cmp_i64(inline_int(a), inline_int(b));
    val_type ta = type_of(a), tb = type_of(b);
    if (ta != tb) return ta < tb ? -1 : 1;
    return cmp_same_type(ta, a, b);
}

/* Type rank of the `:asc`/`:desc` comparator when no rule pairs the two types. */
static int sort_rank(val_type t) {
    switch (t) {
    case VT_NULL:
        return 0;
    case VT_BOOL:
        return 1;
    case VT_INT:
        return 2;
    case VT_FLOAT:
        return 3;
    case VT_STR:
        return 5;
    case VT_TS:
        return 6;
    case VT_VEC:
    case VT_VEC_I8:
        return 7;
    }
    return 7;
}

int val_cmp_sort(val_t a, val_t b) {
    if (a == b) return 0;
    if (val_is_int_inline(a) && val_is_int_inline(b)) return cmp_i64(inline_int(a), inline_int(b));
    val_type ta = type_of(a), tb = type_of(b);
    if (ta == tb) return cmp_same_type(ta, a, b);
    if (ta == VT_INT && tb == VT_FLOAT) return cmp_f64((double)val_get_int(a), val_get_float(b));
    if (ta == VT_FLOAT && tb == VT_INT) return cmp_f64(val_get_float(a), (double)val_get_int(b));
    int ra = sort_rank(ta), rb = sort_rank(tb);
    return (ra > rb) - (ra < rb);
}

double val_to_f64(val_t v) {
    switch (type_of(v)) {
    case VT_INT:
    case VT_TS:
        return (double)val_get_int(v);
    case VT_FLOAT:
        return val_get_float(v);
    case VT_BOOL:
        return val_get_bool(v) ? 1.0 : 0.0;
    default:
        return 0.0;
    }
}

int64_t val_to_i64(val_t v) {
    switch (type_of(v)) {
    case VT_INT:
    case VT_TS:
        return val_get_int(v);
    case VT_FLOAT: {
        double d = val_get_float(v);
        if (!isfinite(d)) return 0;
        if (d >= 9223372036854775808.0) return INT64_MAX;
        if (d <= -9223372036854775808.0) return INT64_MIN;
        return (int64_t)d; /* truncates toward zero */
    }
    case VT_BOOL:
        return val_get_bool(v) ? 1 : 0;
    default:
        return 0;
    }
}

bool val_is_numeric(val_t v) {
    val_type t = type_of(v);
    return t == VT_INT || t == VT_TS || t == VT_FLOAT;
}

void val_shutdown(void) {
    il_intern_shutdown();
}
