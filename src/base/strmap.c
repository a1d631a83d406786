/* String-keyed hash map (strmap.h): FNV-1a hashes, kept in the slots so that growing and
 * shifting never hash again. */
#include "base/strmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_of(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* The slot holding key, or the free slot where it would go. */
static uint32_t slot_of(const il_strmap *m, const char *key, uint32_t h) {
    uint32_t mask = m->cap - 1, i = h & mask;
    while (m->slots[i].key && (m->slots[i].hash != h || strcmp(m->slots[i].key, key) != 0))
        i = (i + 1) & mask;
    return i;
}

void *il_strmap_get(const il_strmap *m, const char *key) {
    if (!m->n) return NULL;
    uint32_t i = slot_of(m, key, hash_of(key));
    return m->slots[i].key ? m->slots[i].val : NULL;
}

static void grow(il_strmap *m) {
    il_strmap bigger = {.cap = m->cap ? m->cap * 2 : 16};
    bigger.slots = calloc(bigger.cap, sizeof *bigger.slots);
    if (!bigger.slots) abort();
    for (uint32_t i = 0; i < m->cap; i++) {
        const il_strmap_slot *s = &m->slots[i];
        if (!s->key) continue;
        bigger.slots[slot_of(&bigger, s->key, s->hash)] = *s;
        bigger.n++;
    }
    free(m->slots);
    *m = bigger;
}

void il_strmap_put(il_strmap *m, const char *key, void *val) {
    if (2 * (m->n + 1) > m->cap) grow(m);
    uint32_t h = hash_of(key), i = slot_of(m, key, h);
    if (!m->slots[i].key) m->n++;
    m->slots[i] = (il_strmap_slot){key, val, h};
}

void il_strmap_del(il_strmap *m, const char *key) {
    if (!m->n) return;
    uint32_t mask = m->cap - 1, i = slot_of(m, key, hash_of(key));
    if (!m->slots[i].key) return;
    m->n--;
    /* Backward shift: every later entry of the run whose home is not between the hole
       and itself moves into the hole, so that lookups never stop early. */
    for (uint32_t j = i;;) {
        j = (j + 1) & mask;
        if (!m->slots[j].key) break;
        uint32_t home = m->slots[j].hash & mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays) continue;
        m->slots[i] = m->slots[j];
        i = j;
    }
    m->slots[i].key = NULL;
}

void il_strmap_copy(il_strmap *dst, const il_strmap *src) {
    *dst = (il_strmap){.cap = src->cap, .n = src->n};
    if (!src->cap) return;
    dst->slots = malloc(src->cap * sizeof *dst->slots);
    if (!dst->slots) abort();
    memcpy(dst->slots, src->slots, src->cap * sizeof *dst->slots);
}

void il_strmap_free(il_strmap *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}
