/* Hash sets of tuples (see tupleset.h): linear probing over indexes into the flat
 * tuple array, load factor at most 1/2. Both arrays are counted (base/meter.h): sets hold
 * much of a query's working data. The tuple array is a counted block, as it may be
 * handed over; the slots, private to the set, are counted by the set itself, so that
 * their power-of-two sizes reach malloc unchanged. */
#include "exec/tupleset.h"

#include <stdlib.h>
#include <string.h>

#include "base/meter.h"

/* The capacity of the next tuple array: blocks of the sizes they had before they were
 * counted (64 tuples, doubling), the header taking the room of the first tuples. */
static uint32_t grown_cap(uint32_t cap, size_t tuple_bytes) {
    size_t in_header = (IL_MEM_HEADER_BYTES + tuple_bytes - 1) / tuple_bytes;
    size_t block = cap ? (cap + in_header) * 2 : 64; /* in tuples, header included */
    return (uint32_t)(block - in_header);
}

static void free_slots(tupleset *s) {
    if (!s->slots) return;
    il_meter_release(s->slots_meter, (size_t)s->nslots * sizeof *s->slots);
    free(s->slots);
}

void tupleset_init(tupleset *s, uint32_t arity) {
    memset(s, 0, sizeof *s);
    s->arity = arity ? arity : 1;
}

void tupleset_free(tupleset *s) {
    il_mem_free(s->tuples);
    free_slots(s);
    memset(s, 0, sizeof *s);
}

void tupleset_clear(tupleset *s) {
    if (s->n && s->slots) memset(s->slots, 0, s->nslots * sizeof *s->slots);
    s->n = 0;
}

static inline bool same_tuple(const val_t *a, const val_t *b, uint32_t w) {
    for (uint32_t i = 0; i < w; i++)
        if (a[i] != b[i]) return false;
    return true;
}

/* One multiply per word, one avalanche at the end: slots take the low bits. */
static inline uint64_t tuple_hash(const val_t *t, uint32_t arity) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (uint32_t i = 0; i < arity; i++) {
        h = (h ^ t[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

static void grow(tupleset *s) {
    /* small sets grow fast: rehashing is most of their cost */
    uint32_t nslots = !s->nslots ? 64 : s->nslots < 8192 ? s->nslots * 4 : s->nslots * 2;
    /* tuples pushed without an index (tupleset_push_distinct) are indexed now */
    while ((size_t)(s->n + 1) * 2 > nslots) nslots *= 2;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots) abort();
    uint64_t meter = il_meter_charge((size_t)nslots * sizeof *slots);
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t h =
            (uint32_t)tuple_hash(&s->tuples[(size_t)i * s->arity], s->arity) & (nslots - 1);
        while (slots[h]) h = (h + 1) & (nslots - 1);
        slots[h] = i + 1;
    }
    free_slots(s);
    s->slots = slots;
    s->nslots = nslots;
    s->slots_meter = meter;
}

static inline void append(tupleset *s, const val_t *t) {
    uint32_t w = s->arity;
    if (s->n == s->cap) {
        s->cap = grown_cap(s->cap, w * sizeof *s->tuples);
        s->tuples = il_mem_realloc(s->tuples, (size_t)s->cap * w * sizeof *s->tuples);
    }
    val_t *dst = &s->tuples[(size_t)s->n * w];
    for (uint32_t i = 0; i < w; i++) dst[i] = t[i];
}

void tupleset_push_distinct(tupleset *s, const val_t *t) {
    if (s->slots) {
        tupleset_insert(s, t); /* an indexed set stays indexed */
        return;
    }
    append(s, t);
    s->n++;
}

bool tupleset_insert(tupleset *s, const val_t *t) {
    if ((s->n + 1) * 2 > s->nslots || !s->slots) grow(s);
    uint32_t mask = s->nslots - 1, w = s->arity;
    /* the common arity, with the loop unrolled */
    uint32_t h = (uint32_t)(w == 2 ? tuple_hash(t, 2) : tuple_hash(t, w)) & mask;
    for (;;) {
        uint32_t e = s->slots[h];
        if (!e) break;
        if (same_tuple(&s->tuples[(size_t)(e - 1) * w], t, w)) return false;
        h = (h + 1) & mask;
    }
    append(s, t);
    s->slots[h] = ++s->n;
    return true;
}
