/* The value: one 64-bit word. Every fact, tuple column, constant and computed result
 * is a val_t, so equality and hashing are integer operations and the bytes of a string
 * are touched only when it is printed.
 *
 * Encoding (NaN boxing). A word whose top 13 bits are not all ones is an IEEE double
 * (Float64) with exactly those bits. Every other word is tagged: bits 48..50 hold the
 * tag, bits 0..47 the payload.
 *   NULL    payload 0
 *   BOOL    payload 0 or 1
 *   INT     a 48-bit two's-complement integer, inline
 *   TS      a 48-bit two's-complement timestamp in milliseconds, inline
 *   STR     an interned string id
 *   BOX     an id into the boxed table: integers and timestamps outside 48 bits
 *   VEC     an interned vector id (f32 or i8 elements; the table knows which)
 *   FNAN    the one canonical float NaN (every NaN a computation makes becomes this)
 *
 * Every constructor is canonical: equal values (by the engine's strict value equality:
 * same type and same number or bytes; floats by bit pattern) always give the same word,
 * so word equality is value equality. That is what joins, set semantics and indexes
 * use. Int 1 and Float 1.0 are different values, as in the original (1 != 1.0). The
 * numeric, tolerance-based comparisons of filters live in the evaluator, not here.
 *
 * Interned strings, boxed numbers and vectors live for the life of the process; the
 * tables are global and safe to use from several threads. */
#ifndef IL_VALUE_VALUE_H
#define IL_VALUE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/mix.h"

typedef uint64_t val_t;

/* Value types, in the order of the engine's value order across types (3.8):
 * Null < Bool < Int < Float < Timestamp < String < Vector < VectorInt8. */
typedef enum val_type {
    VT_NULL,
    VT_BOOL,
    VT_INT,
    VT_FLOAT,
    VT_TS,
    VT_STR,
    VT_VEC,    /* f32 elements */
    VT_VEC_I8, /* i8 elements */
} val_type;

#define VAL_TAG_PREFIX   0xFFF8000000000000ull
#define VAL_PAYLOAD_MASK 0x0000FFFFFFFFFFFFull
#define VAL_TAG_SHIFT    48

enum val_tag {
    VAL_TAG_NULL = 0,
    VAL_TAG_BOOL = 1,
    VAL_TAG_INT = 2,
    VAL_TAG_TS = 3,
    VAL_TAG_STR = 4,
    VAL_TAG_BOX = 5,
    VAL_TAG_VEC = 6,
    VAL_TAG_FNAN = 7,
};

#define VAL_MAKE(tag, payload)                                                                     \
    (VAL_TAG_PREFIX | ((uint64_t)(tag) << VAL_TAG_SHIFT) | ((uint64_t)(payload)&VAL_PAYLOAD_MASK))

#define VAL_NULL  VAL_MAKE(VAL_TAG_NULL, 0)
#define VAL_FALSE VAL_MAKE(VAL_TAG_BOOL, 0)
#define VAL_TRUE  VAL_MAKE(VAL_TAG_BOOL, 1)
#define VAL_FNAN  VAL_MAKE(VAL_TAG_FNAN, 0)

static inline bool val_is_tagged(val_t v) {
    return (v & VAL_TAG_PREFIX) == VAL_TAG_PREFIX;
}
static inline unsigned val_tag(val_t v) {
    return (unsigned)((v >> VAL_TAG_SHIFT) & 7);
}
static inline uint64_t val_payload(val_t v) {
    return v & VAL_PAYLOAD_MASK;
}

static inline bool val_fits48(int64_t i) {
    return i >= -(INT64_C(1) << 47) && i < (INT64_C(1) << 47);
}

/* Constructors for numbers that may need the boxed table (value.c). */
val_t val_box_int_(int64_t i, bool is_ts);

static inline val_t val_null(void) {
    return VAL_NULL;
}
static inline val_t val_bool(bool b) {
    return b ? VAL_TRUE : VAL_FALSE;
}
static inline val_t val_int(int64_t i) {
    return val_fits48(i) ? VAL_MAKE(VAL_TAG_INT, (uint64_t)i) : val_box_int_(i, false);
}
static inline val_t val_ts(int64_t ms) {
    return val_fits48(ms) ? VAL_MAKE(VAL_TAG_TS, (uint64_t)ms) : val_box_int_(ms, true);
}
static inline val_t val_float(double d) {
    uint64_t w;
    memcpy(&w, &d, sizeof w);
    if (d != d) return VAL_FNAN;
    return w;
}

val_t val_str(const char *s, size_t len);          /* interns */
val_t val_vec_f32(const float *elems, uint32_t n); /* interns */
val_t val_vec_i8(const int8_t *elems, uint32_t n); /* interns */

/* The type of a value (boxed numbers report VT_INT or VT_TS). */
val_type val_type_of(val_t v);

static inline bool val_is_float(val_t v) {
    return !val_is_tagged(v) || val_tag(v) == VAL_TAG_FNAN;
}
static inline bool val_is_vec_f32(val_t v) {
    return val_is_tagged(v) && val_tag(v) == VAL_TAG_VEC && !(val_payload(v) & 1);
}
static inline bool val_is_int_inline(val_t v) {
    return val_is_tagged(v) && val_tag(v) == VAL_TAG_INT;
}

/* Accessors; each is only meaningful for its own type. */
int64_t val_get_int(val_t v); /* VT_INT and VT_TS */
/* The integer of a value for which val_is_int_inline holds, without a call: its 48-bit
 * payload sign-extended (for encoders that write many of them). */
static inline int64_t val_get_int_inline(val_t v) {
    return (int64_t)(v << (64 - VAL_TAG_SHIFT)) >> (64 - VAL_TAG_SHIFT);
}
static inline double val_get_float(val_t v) {
    if (val_is_tagged(v)) return __builtin_nan("");
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}
static inline bool val_get_bool(val_t v) {
    return val_payload(v) != 0;
}
const char *val_get_str(val_t v, size_t *len);      /* VT_STR; not NUL-terminated */
const float *val_get_vec_f32(val_t v, uint32_t *n); /* VT_VEC */
/* What is kept with each interned f32 vector, computed once when it is first made. */
typedef struct val_vec_head {
    float sqnorm;    /* sum of x*x in f32, sequentially from +0.0 (cosine's |a|^2) */
    uint32_t finite; /* 1 when no element is NaN or infinite */
    double norm;     /* sqrt((double)sqnorm) */
    double inv_norm; /* 1 / norm (0 when norm is 0) */
} val_vec_head;
/* The elements of a VT_VEC value and its head. */
const float *val_get_vec_f32_head(val_t v, uint32_t *n, const val_vec_head **head);
const int8_t *val_get_vec_i8(val_t v, uint32_t *n); /* VT_VEC_I8 */

/* The engine's total order over values (iql-language.md 3.8): by type rank first, then
 * within a type (numbers numerically, NaN equal to everything; strings bytewise;
 * false < true; vectors by length then element bit patterns as u32; i8 vectors by
 * length then element value). Result rows are sorted by it. */
int val_cmp(val_t a, val_t b);
/* The comparator of `:asc` / `:desc` sort annotations (3.8): Int and Float compare
 * numerically with each other; otherwise the rank Null 0, Bool 1, Int 2, Float 3 (numeric
 * family), String 5, Timestamp 6, Vector 7. */
int val_cmp_sort(val_t a, val_t b);

/* A well-mixed hash of the word (value equality is word equality). */
static inline uint64_t val_hash(val_t v) {
    return il_mix64(v);
}

/* Numeric conversions of 3.7: to_f64 maps Int and Timestamp to f64, Float to itself,
 * Bool to 1/0, everything else to 0. to_i64 maps Int/Timestamp to themselves, a finite
 * Float truncated with saturation, a non-finite Float to 0, Bool to 0/1, else 0. */
double val_to_f64(val_t v);
int64_t val_to_i64(val_t v);
bool val_is_numeric(val_t v); /* Int, Timestamp or Float */

/* Frees the interned strings, boxed numbers and vectors (all of them live in the intern
 * table); every such value becomes invalid. For process exit, so leak checkers stay quiet. */
void val_shutdown(void);

#endif
