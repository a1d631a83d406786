/* String interning (see intern.h).
 *
 * The table is split into shards chosen by the top bits of the hash, each with its own
 * mutex, so threads interning different strings rarely wait for each other. An id is
 * (index within its shard << SHARD_BITS) | shard. A shard keeps its entries in segments
 * whose sizes double and which never move, and the bytes in chunks that never move, so
 * il_intern_get can read without a lock: whoever holds an id got it, directly or through
 * other synchronisation, after the entry was written under the shard lock. */
#include "base/intern.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define SHARD_BITS  4
#define SHARD_COUNT (1u << SHARD_BITS)
#define LOCAL_LIMIT (1u << (32 - SHARD_BITS)) /* ids per shard that fit in 32-bit ids */

#define SEGMENT0_BITS 8 /* segment k holds (1 << SEGMENT0_BITS) << k entries */
#define SEGMENT_COUNT (32 - SHARD_BITS - SEGMENT0_BITS + 1)

#define CHUNK_BYTES      (64u * 1024u)
#define CHUNK_SOLO_BYTES (CHUNK_BYTES / 4) /* larger strings get a chunk of their own */
#define BYTE_ALIGN       8u

#define INITIAL_SLOTS 256u

typedef struct intern_entry {
    const char *bytes; /* NUL-terminated copy, BYTE_ALIGN-aligned */
    size_t len;
} intern_entry;

typedef struct intern_slot {
    uint32_t hash;        /* low 32 bits of the string's hash: probe start and quick filter */
    uint32_t local_plus1; /* index within the shard + 1; 0 marks an empty slot */
} intern_slot;

typedef struct byte_chunk {
    struct byte_chunk *next;
    alignas(8) char bytes[];
} byte_chunk;

typedef struct intern_shard {
    alignas(64) pthread_mutex_t lock; /* guards everything below except reads of entries */
    intern_slot *slots;               /* open addressing, linear probing; NULL until used */
    uint32_t mask;                    /* slots has mask + 1 entries, a power of two */
    uint32_t count;                   /* strings held; also the next index */
    intern_entry *segments[SEGMENT_COUNT];
    byte_chunk *chunks; /* every chunk, for shutdown */
    char *cur, *end;    /* free space in the chunk being filled */
} intern_shard;

#define SHARD_INIT                                                                                 \
    { .lock = PTHREAD_MUTEX_INITIALIZER }
#define SHARD_INIT4 SHARD_INIT, SHARD_INIT, SHARD_INIT, SHARD_INIT
static intern_shard shards[SHARD_COUNT] = {SHARD_INIT4, SHARD_INIT4, SHARD_INIT4, SHARD_INIT4};

static void out_of_memory(void) {
    fputs("inputlayer: out of memory in the intern table\n", stderr);
    abort();
}

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) out_of_memory();
    return p;
}

static inline void locate(uint32_t local, unsigned *segment, uint32_t *offset) {
    uint32_t q = (local >> SEGMENT0_BITS) + 1;
    unsigned k = 31u - (unsigned)__builtin_clz(q);
    *segment = k;
    *offset = local - (((uint32_t)1 << SEGMENT0_BITS << k) - ((uint32_t)1 << SEGMENT0_BITS));
}

static inline const intern_entry *entry_at(const intern_shard *sh, uint32_t local) {
    unsigned k;
    uint32_t off;
    locate(local, &k, &off);
    return &sh->segments[k][off];
}

/* The entry for a new index, allocating its segment when the index starts one. */
static intern_entry *entry_new(intern_shard *sh, uint32_t local) {
    unsigned k;
    uint32_t off;
    locate(local, &k, &off);
    if (!sh->segments[k])
        sh->segments[k] = xmalloc(sizeof(intern_entry) * ((size_t)1 << SEGMENT0_BITS << k));
    return &sh->segments[k][off];
}

static char *copy_bytes(intern_shard *sh, const char *s, size_t len) {
    size_t need = (len + 1 + BYTE_ALIGN - 1) & ~(size_t)(BYTE_ALIGN - 1);
    char *dst;
    if (need > CHUNK_SOLO_BYTES) {
        byte_chunk *c = xmalloc(sizeof(byte_chunk) + need);
        c->next = sh->chunks;
        sh->chunks = c;
        dst = c->bytes;
    } else {
        if ((size_t)(sh->end - sh->cur) < need) {
            byte_chunk *c = xmalloc(sizeof(byte_chunk) + CHUNK_BYTES);
            c->next = sh->chunks;
            sh->chunks = c;
            sh->cur = c->bytes;
            sh->end = c->bytes + CHUNK_BYTES;
        }
        dst = sh->cur;
        sh->cur += need;
    }
    if (len) memcpy(dst, s, len);
    dst[len] = 0;
    return dst;
}

static void grow_slots(intern_shard *sh) {
    uint32_t old_n = sh->slots ? sh->mask + 1 : 0;
    uint32_t n = old_n ? old_n * 2 : INITIAL_SLOTS;
    intern_slot *slots = calloc(n, sizeof *slots);
    if (!slots) out_of_memory();
    for (uint32_t i = 0; i < old_n; i++) {
        intern_slot s = sh->slots[i];
        if (!s.local_plus1) continue;
        uint32_t j = s.hash & (n - 1);
        while (slots[j].local_plus1) j = (j + 1) & (n - 1);
        slots[j] = s;
    }
    free(sh->slots);
    sh->slots = slots;
    sh->mask = n - 1;
}

uint32_t il_intern(const char *s, size_t len) {
    uint64_t h = XXH3_64bits(len ? s : "", len);
    uint32_t shard_index = (uint32_t)(h >> (64 - SHARD_BITS));
    uint32_t h32 = (uint32_t)h;
    intern_shard *sh = &shards[shard_index];

    pthread_mutex_lock(&sh->lock);
    if (!sh->slots || (uint64_t)(sh->count + 1) * 4 > (uint64_t)(sh->mask + 1) * 3) grow_slots(sh);
    uint32_t j = h32 & sh->mask;
    for (;;) {
        intern_slot slot = sh->slots[j];
        if (!slot.local_plus1) break;
        if (slot.hash == h32) {
            uint32_t local = slot.local_plus1 - 1;
            const intern_entry *e = entry_at(sh, local);
            if (e->len == len && (len == 0 || memcmp(e->bytes, s, len) == 0)) {
                pthread_mutex_unlock(&sh->lock);
                return (local << SHARD_BITS) | shard_index;
            }
        }
        j = (j + 1) & sh->mask;
    }
    if (sh->count >= LOCAL_LIMIT) {
        fputs("inputlayer: intern table full (too many distinct strings)\n", stderr);
        abort();
    }
    uint32_t local = sh->count;
    intern_entry *e = entry_new(sh, local);
    e->bytes = copy_bytes(sh, s, len);
    e->len = len;
    sh->slots[j].hash = h32;
    sh->slots[j].local_plus1 = local + 1;
    sh->count++;
    pthread_mutex_unlock(&sh->lock);
    return (local << SHARD_BITS) | shard_index;
}

const char *il_intern_get(uint32_t id, size_t *len) {
    const intern_entry *e = entry_at(&shards[id & (SHARD_COUNT - 1)], id >> SHARD_BITS);
    if (len) *len = e->len;
    return e->bytes;
}

void il_intern_shutdown(void) {
    for (uint32_t i = 0; i < SHARD_COUNT; i++) {
        intern_shard *sh = &shards[i];
        pthread_mutex_lock(&sh->lock);
        free(sh->slots);
        sh->slots = NULL;
        sh->mask = 0;
        sh->count = 0;
        for (unsigned k = 0; k < SEGMENT_COUNT; k++) {
            free(sh->segments[k]);
            sh->segments[k] = NULL;
        }
        while (sh->chunks) {
            byte_chunk *next = sh->chunks->next;
            free(sh->chunks);
            sh->chunks = next;
        }
        sh->cur = sh->end = NULL;
        pthread_mutex_unlock(&sh->lock);
    }
}
