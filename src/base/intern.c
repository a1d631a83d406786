/* String interning (see intern.h).
 *
 * The table is split into shards chosen by the top bits of the hash, each with its own
 * mutex, so threads interning different strings rarely wait for each other. An id is
 * (index within its shard << SHARD_BITS) | shard. A shard keeps its entries in segments
 * whose sizes double and which never move, so il_intern_get can read without a lock:
 * whoever holds an id got it, directly or through other synchronisation, after the entry
 * was written under the shard lock. Permanent strings' bytes go to chunks that never move;
 * a transient string's bytes have an allocation of their own, freed with it, and its index
 * goes to the shard's free list for the next new string. A transient string that no
 * scope holds any more stays idle for a while (a query run again makes the same strings),
 * within limits on how many and how many bytes, oldest freed first. Builds with
 * AddressSanitizer keep nothing idle and never give an index out again, so that a freed
 * string read through a stale id is reported rather than read as another string. */
#include "base/intern.h"
#include "base/checked.h"
#include "base/mix.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* Under AddressSanitizer nothing freed is kept idle or given out again (see above). */
#define REUSE_FREED_IDS   (!IL_CHECKED_BUILD)
#define IDLE_VALUES_LIMIT (IL_CHECKED_BUILD ? 0u : 65536u)
#define IDLE_BYTES_LIMIT  (IL_CHECKED_BUILD ? 0u : 16u << 20)

#define SHARD_BITS  4
#define SHARD_COUNT (1u << SHARD_BITS)
#define LOCAL_LIMIT (1u << (32 - SHARD_BITS)) /* ids per shard that fit in 32-bit ids */

#define SEGMENT0_BITS 8 /* segment k holds (1 << SEGMENT0_BITS) << k entries */
#define SEGMENT_COUNT (32 - SHARD_BITS - SEGMENT0_BITS + 1)

#define CHUNK_BYTES      (64u * 1024u)
#define CHUNK_SOLO_BYTES (CHUNK_BYTES / 4) /* larger strings get a chunk of their own */
#define BYTE_ALIGN       8u

#define INITIAL_SLOTS 256u

/* entry state: the number of scopes holding a transient string, and flags */
#define ST_TRANSIENT 1u  /* held by scopes only */
#define ST_OWN_BYTES 2u  /* bytes allocated for this entry alone (made transient) */
#define ST_IDLE      4u  /* transient, held by no scope: kept for the next to make it */
#define ST_IN_RING   8u  /* in the shard's ring of idle strings */
#define ST_REF       16u /* one scope's reference */

typedef struct intern_entry {
    const char *bytes; /* NUL-terminated copy, BYTE_ALIGN-aligned */
    uint32_t len;
    uint32_t state; /* ST_* flags plus ST_REF per holding scope; under the shard lock */
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
    uint32_t live;                    /* strings held */
    uint32_t next;                    /* indexes given out so far */
    uint32_t transient;               /* strings held by scopes only, or idle */
    uint32_t idle;                    /* of those, held by no scope */
    uint64_t live_bytes, idle_bytes;
    /* idle strings oldest first (and strings that were idle and are held again) */
    uint32_t *ring;
    uint32_t ring_head, ring_n, ring_cap;
    uint32_t *free_ids; /* indexes of freed strings, to give out again */
    uint32_t nfree, free_cap;
    intern_entry *segments[SEGMENT_COUNT];
    byte_chunk *chunks; /* every chunk, for shutdown */
    char *cur, *end;    /* free space in the chunk being filled */
} intern_shard;

#define SHARD_INIT                                                                                 \
    { .lock = PTHREAD_MUTEX_INITIALIZER }
#define SHARD_INIT4 SHARD_INIT, SHARD_INIT, SHARD_INIT, SHARD_INIT
static intern_shard shards[SHARD_COUNT] = {SHARD_INIT4, SHARD_INIT4, SHARD_INIT4, SHARD_INIT4};

/* How many idle strings, and bytes of them, a shard keeps (il_intern_set_idle_limits). */
static uint32_t idle_values_per_shard = (IDLE_VALUES_LIMIT + SHARD_COUNT - 1) / SHARD_COUNT;
static uint64_t idle_bytes_per_shard = (IDLE_BYTES_LIMIT + SHARD_COUNT - 1) / SHARD_COUNT;

/* The ids a scope holds: an open-addressing set of id + 1 (0: empty). */
struct il_intern_scope {
    uint32_t *ids;
    uint32_t mask, n;
};

/* The scope the calling thread's new strings go to, or NULL. */
static _Thread_local il_intern_scope *current_scope;

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

static inline intern_entry *entry_at(const intern_shard *sh, uint32_t local) {
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

static size_t padded(size_t len) {
    return (len + 1 + BYTE_ALIGN - 1) & ~(size_t)(BYTE_ALIGN - 1);
}

static char *copy_bytes(intern_shard *sh, const char *s, size_t len) {
    size_t need = padded(len);
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

/* A transient string's bytes, freed with it (malloc aligns to 16). */
static char *copy_own_bytes(const char *s, size_t len) {
    char *dst = xmalloc(padded(len));
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

/* Removes index `local` from the hash slots: backward-shift deletion, so that probes for
 * the strings after it still find them without tombstones. */
static void slot_remove(intern_shard *sh, uint32_t h32, uint32_t local) {
    uint32_t j = h32 & sh->mask;
    while (sh->slots[j].local_plus1 != local + 1) j = (j + 1) & sh->mask;
    for (;;) {
        sh->slots[j].local_plus1 = 0;
        uint32_t k = j;
        for (;;) {
            k = (k + 1) & sh->mask;
            intern_slot s = sh->slots[k];
            if (!s.local_plus1) return;
            uint32_t home = s.hash & sh->mask;
            /* s may move back to j unless its home lies cyclically in (j, k] */
            bool stays = j <= k ? (home > j && home <= k) : (home > j || home <= k);
            if (!stays) {
                sh->slots[j] = s;
                j = k;
                break;
            }
        }
    }
}

/* Frees an idle string. Under the shard lock. */
static void entry_free(intern_shard *sh, uint32_t local, intern_entry *e) {
    uint32_t h32 = (uint32_t)XXH3_64bits(e->len ? e->bytes : "", e->len);
    slot_remove(sh, h32, local);
    free((void *)e->bytes);
    e->state = 0; /* its bytes are no longer its own to free */
    sh->live--;
    sh->transient--;
    sh->live_bytes -= e->len;
    if (!REUSE_FREED_IDS) return;
    if (sh->nfree == sh->free_cap) {
        sh->free_cap = sh->free_cap ? sh->free_cap * 2 : 64;
        sh->free_ids = realloc(sh->free_ids, sizeof *sh->free_ids * sh->free_cap);
        if (!sh->free_ids) out_of_memory();
    }
    sh->free_ids[sh->nfree++] = local;
}

static void ring_push(intern_shard *sh, uint32_t local) {
    if (sh->ring_n == sh->ring_cap) {
        uint32_t cap = sh->ring_cap ? sh->ring_cap * 2 : 64;
        uint32_t *ring = malloc(sizeof *ring * cap);
        if (!ring) out_of_memory();
        for (uint32_t i = 0; i < sh->ring_n; i++)
            ring[i] = sh->ring[(sh->ring_head + i) % sh->ring_cap];
        free(sh->ring);
        sh->ring = ring;
        sh->ring_cap = cap;
        sh->ring_head = 0;
    }
    sh->ring[(sh->ring_head + sh->ring_n) % sh->ring_cap] = local;
    sh->ring_n++;
}

/* Frees the oldest idle strings while the shard keeps more than its limits. A string that
 * was held again since it went into the ring only leaves the ring (it goes back in when it
 * is idle again). Under the shard lock. */
static void idle_trim(intern_shard *sh) {
    uint32_t max_values = __atomic_load_n(&idle_values_per_shard, __ATOMIC_RELAXED);
    uint64_t max_bytes = __atomic_load_n(&idle_bytes_per_shard, __ATOMIC_RELAXED);
    while ((sh->idle > max_values || sh->idle_bytes > max_bytes) && sh->ring_n) {
        uint32_t local = sh->ring[sh->ring_head];
        sh->ring_head = (sh->ring_head + 1) % sh->ring_cap;
        sh->ring_n--;
        intern_entry *e = entry_at(sh, local);
        e->state &= ~ST_IN_RING;
        if (!(e->state & ST_IDLE)) continue;
        sh->idle--;
        sh->idle_bytes -= e->len;
        entry_free(sh, local, e);
    }
}

/* A transient string the last scope holding it let go: idle, so that the next statement
 * making it again (the same query run again) finds it, until the shard's limits push it
 * out. Under the shard lock. */
static void entry_release(intern_shard *sh, uint32_t local, intern_entry *e) {
    e->state |= ST_IDLE;
    sh->idle++;
    sh->idle_bytes += e->len;
    if (!(e->state & ST_IN_RING)) {
        e->state |= ST_IN_RING;
        ring_push(sh, local);
    }
    idle_trim(sh);
}

/* An idle string held again (by a scope, or for good). Under the shard lock. */
static void entry_wake(intern_shard *sh, intern_entry *e) {
    e->state &= ~ST_IDLE;
    sh->idle--;
    sh->idle_bytes -= e->len;
}

void il_intern_set_idle_limits(uint32_t values, uint64_t bytes) {
    __atomic_store_n(&idle_values_per_shard, (values + SHARD_COUNT - 1) / SHARD_COUNT,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&idle_bytes_per_shard, (bytes + SHARD_COUNT - 1) / SHARD_COUNT,
                     __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < SHARD_COUNT; i++) {
        pthread_mutex_lock(&shards[i].lock);
        idle_trim(&shards[i]);
        pthread_mutex_unlock(&shards[i].lock);
    }
}

/* ---- scopes ---- */

/* A mix of all of id's bits: ids come in arithmetic runs per shard, which a
 * multiplicative hash alone lays out in clusters at some table sizes. */
static uint32_t id_hash(uint32_t id) {
    return (uint32_t)il_mix64(id);
}

/* Adds id to sc; false when sc holds it already. Only the thread inside sc calls it. */
static bool scope_add(il_intern_scope *sc, uint32_t id) {
    if (!sc->ids || (sc->n + 1) * 4 > (sc->mask + 1) * 3) {
        uint32_t old_n = sc->ids ? sc->mask + 1 : 0, n = old_n ? old_n * 2 : 16;
        uint32_t *ids = calloc(n, sizeof *ids);
        if (!ids) out_of_memory();
        for (uint32_t i = 0; i < old_n; i++) {
            if (!sc->ids[i]) continue;
            uint32_t j = id_hash(sc->ids[i] - 1) & (n - 1);
            while (ids[j]) j = (j + 1) & (n - 1);
            ids[j] = sc->ids[i];
        }
        free(sc->ids);
        sc->ids = ids;
        sc->mask = n - 1;
    }
    uint32_t j = id_hash(id) & sc->mask;
    while (sc->ids[j]) {
        if (sc->ids[j] == id + 1) return false;
        j = (j + 1) & sc->mask;
    }
    sc->ids[j] = id + 1;
    sc->n++;
    return true;
}

il_intern_scope *il_intern_scope_new(void) {
    il_intern_scope *sc = calloc(1, sizeof *sc);
    if (!sc) out_of_memory();
    return sc;
}

il_intern_scope *il_intern_scope_enter(il_intern_scope *sc) {
    il_intern_scope *previous = current_scope;
    current_scope = sc;
    return previous;
}

void il_intern_scope_leave(il_intern_scope *previous) {
    current_scope = previous;
}

il_intern_scope *il_intern_scope_share(void) {
    il_intern_scope *from = current_scope;
    if (!from || !from->n) return NULL;
    il_intern_scope *sc = il_intern_scope_new();
    for (uint32_t i = 0; i <= from->mask; i++) {
        if (!from->ids[i]) continue;
        uint32_t id = from->ids[i] - 1;
        intern_shard *sh = &shards[id & (SHARD_COUNT - 1)];
        pthread_mutex_lock(&sh->lock);
        intern_entry *e = entry_at(sh, id >> SHARD_BITS);
        if ((e->state & ST_TRANSIENT) && scope_add(sc, id)) e->state += ST_REF;
        pthread_mutex_unlock(&sh->lock);
    }
    return sc;
}

bool il_intern_in_scope(void) {
    return current_scope != NULL;
}

/* Lets go of every string of sc, interning them for good first when `keep`. */
static void scope_release(il_intern_scope *sc, bool keep) {
    if (!sc) return;
    for (uint32_t i = 0; sc->ids && i <= sc->mask; i++) {
        if (!sc->ids[i]) continue;
        uint32_t id = sc->ids[i] - 1;
        intern_shard *sh = &shards[id & (SHARD_COUNT - 1)];
        uint32_t local = id >> SHARD_BITS;
        pthread_mutex_lock(&sh->lock);
        intern_entry *e = entry_at(sh, local);
        e->state -= ST_REF;
        if (keep && (e->state & ST_TRANSIENT)) {
            e->state &= ~ST_TRANSIENT;
            sh->transient--;
        }
        if ((e->state & ST_TRANSIENT) && e->state < ST_REF) entry_release(sh, local, e);
        pthread_mutex_unlock(&sh->lock);
    }
    free(sc->ids);
    free(sc);
}

void il_intern_scope_free(il_intern_scope *sc) {
    scope_release(sc, false);
}

void il_intern_scope_keep(il_intern_scope *sc) {
    scope_release(sc, true);
}

void il_intern_scope_absorb(il_intern_scope *sc) {
    il_intern_scope *into = current_scope;
    if (!sc || !into) {
        scope_release(sc, true);
        return;
    }
    for (uint32_t i = 0; sc->ids && i <= sc->mask; i++) {
        if (!sc->ids[i]) continue;
        uint32_t id = sc->ids[i] - 1;
        intern_shard *sh = &shards[id & (SHARD_COUNT - 1)];
        pthread_mutex_lock(&sh->lock);
        /* sc's reference becomes the scope's, or goes when the scope holds one already */
        if (!scope_add(into, id)) entry_at(sh, id >> SHARD_BITS)->state -= ST_REF;
        pthread_mutex_unlock(&sh->lock);
    }
    free(sc->ids);
    free(sc);
}

uint32_t il_intern(const char *s, size_t len) {
    if (len >= UINT32_MAX) out_of_memory();
    uint64_t h = XXH3_64bits(len ? s : "", len);
    uint32_t shard_index = (uint32_t)(h >> (64 - SHARD_BITS));
    uint32_t h32 = (uint32_t)h;
    intern_shard *sh = &shards[shard_index];
    il_intern_scope *sc = current_scope;

    pthread_mutex_lock(&sh->lock);
    if (!sh->slots || (uint64_t)(sh->live + 1) * 4 > (uint64_t)(sh->mask + 1) * 3) grow_slots(sh);
    uint32_t j = h32 & sh->mask;
    for (;;) {
        intern_slot slot = sh->slots[j];
        if (!slot.local_plus1) break;
        if (slot.hash == h32) {
            uint32_t local = slot.local_plus1 - 1;
            intern_entry *e = entry_at(sh, local);
            if (e->len == len && (len == 0 || memcmp(e->bytes, s, len) == 0)) {
                uint32_t id = (local << SHARD_BITS) | shard_index;
                if (e->state & ST_TRANSIENT) {
                    if (e->state & ST_IDLE) entry_wake(sh, e);
                    if (!sc) {
                        /* interned for good now: the scopes holding it no longer free it */
                        e->state &= ~ST_TRANSIENT;
                        sh->transient--;
                    } else if (scope_add(sc, id)) {
                        e->state += ST_REF;
                    }
                }
                pthread_mutex_unlock(&sh->lock);
                return id;
            }
        }
        j = (j + 1) & sh->mask;
    }
    uint32_t local;
    if (sh->nfree) {
        local = sh->free_ids[--sh->nfree];
    } else {
        if (sh->next >= LOCAL_LIMIT) {
            fputs("inputlayer: intern table full (too many distinct strings)\n", stderr);
            abort();
        }
        local = sh->next++;
    }
    uint32_t id = (local << SHARD_BITS) | shard_index;
    intern_entry *e = entry_new(sh, local);
    if (sc) {
        e->bytes = copy_own_bytes(s, len);
        e->state = ST_TRANSIENT | ST_OWN_BYTES | ST_REF;
        scope_add(sc, id);
        sh->transient++;
    } else {
        e->bytes = copy_bytes(sh, s, len);
        e->state = 0;
    }
    e->len = (uint32_t)len;
    sh->slots[j].hash = h32;
    sh->slots[j].local_plus1 = local + 1;
    sh->live++;
    sh->live_bytes += len;
    pthread_mutex_unlock(&sh->lock);
    return id;
}

const char *il_intern_get(uint32_t id, size_t *len) {
    const intern_entry *e = entry_at(&shards[id & (SHARD_COUNT - 1)], id >> SHARD_BITS);
    if (len) *len = e->len;
    return e->bytes;
}

il_intern_stats il_intern_stats_now(void) {
    il_intern_stats st = {0};
    for (uint32_t i = 0; i < SHARD_COUNT; i++) {
        intern_shard *sh = &shards[i];
        pthread_mutex_lock(&sh->lock);
        st.strings += sh->live;
        st.transient += sh->transient - sh->idle;
        st.idle += sh->idle;
        st.idle_bytes += sh->idle_bytes;
        st.bytes += sh->live_bytes;
        pthread_mutex_unlock(&sh->lock);
    }
    return st;
}

void il_intern_shutdown(void) {
    for (uint32_t i = 0; i < SHARD_COUNT; i++) {
        intern_shard *sh = &shards[i];
        pthread_mutex_lock(&sh->lock);
        for (uint32_t local = 0; local < sh->next; local++) {
            intern_entry *e = entry_at(sh, local);
            if (e->state & ST_OWN_BYTES) free((void *)e->bytes);
        }
        free(sh->slots);
        sh->slots = NULL;
        sh->mask = 0;
        sh->live = sh->next = sh->transient = sh->idle = 0;
        sh->live_bytes = sh->idle_bytes = 0;
        free(sh->ring);
        sh->ring = NULL;
        sh->ring_head = sh->ring_n = sh->ring_cap = 0;
        free(sh->free_ids);
        sh->free_ids = NULL;
        sh->nfree = sh->free_cap = 0;
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
