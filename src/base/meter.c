/* Memory meters and the shared memory budget (see meter.h). */
#include "base/meter.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct il_mem_budget {
    _Atomic uint64_t used; /* live bytes of every statement charging it */
    uint64_t limit;        /* 0: unlimited */
};

/* Ids are unique for the life of the process, so a block counted by a meter that has
 * ended can never be mistaken for one of a later meter at the same address. Each thread
 * takes them from a block of its own, so that starting a meter touches no shared cache
 * line; blocks are numbered from 1, so no id is 0. */
enum { ID_BLOCK_BITS = 20 };
static _Atomic uint64_t last_id_block;
static _Thread_local uint64_t next_id, id_block_end;

_Thread_local il_meter *il_meter_installed;

il_mem_budget *il_mem_budget_new(uint64_t limit_bytes) {
    il_mem_budget *b = malloc(sizeof *b);
    if (!b) return NULL;
    atomic_init(&b->used, 0);
    b->limit = limit_bytes;
    return b;
}

void il_mem_budget_free(il_mem_budget *b) {
    free(b);
}

uint64_t il_mem_budget_used(const il_mem_budget *b) {
    return atomic_load_explicit(&b->used, memory_order_relaxed);
}

void il_meter_begin(il_meter *m, uint64_t limit, il_mem_budget *budget) {
    if (next_id == id_block_end) {
        uint64_t block = atomic_fetch_add_explicit(&last_id_block, 1, memory_order_relaxed) + 1;
        next_id = block << ID_BLOCK_BITS;
        id_block_end = next_id + (UINT64_C(1) << ID_BLOCK_BITS);
    }
    m->id = next_id++;
    m->live = m->peak = 0;
    m->limit = limit;
    m->budget = budget;
    m->over = IL_STOP_NONE;
}

void il_meter_end(il_meter *m) {
    if (m->budget && m->live)
        atomic_fetch_sub_explicit(&m->budget->used, m->live, memory_order_relaxed);
    m->live = 0;
    if (il_meter_installed == m) il_meter_installed = NULL;
}

uint64_t il_meter_charge(size_t bytes) {
    il_meter *m = il_meter_installed;
    if (!m) return 0;
    m->live += bytes;
    if (m->live > m->peak) m->peak = m->live;
    if (m->limit && m->live > m->limit && !m->over) m->over = IL_STOP_MEMORY;
    if (m->budget) {
        uint64_t used =
            atomic_fetch_add_explicit(&m->budget->used, bytes, memory_order_relaxed) + bytes;
        if (m->budget->limit && used > m->budget->limit && !m->over) m->over = IL_STOP_BUDGET;
    }
    return m->id;
}

void il_meter_release(uint64_t id, size_t bytes) {
    il_meter *m = il_meter_installed;
    if (!id || !m || m->id != id) return;
    m->live -= bytes;
    if (m->budget) atomic_fetch_sub_explicit(&m->budget->used, bytes, memory_order_relaxed);
}

/* In front of every counted block; 16 bytes keep the block aligned as malloc's are. */
typedef struct block_hdr {
    uint64_t bytes; /* the block's size as asked for */
    uint64_t meter; /* id of the meter that counted it, 0 when none */
} block_hdr;

_Static_assert(sizeof(block_hdr) == IL_MEM_HEADER_BYTES, "counted blocks keep malloc's alignment");

static void out_of_memory(size_t bytes) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    abort();
}

void *il_mem_alloc(size_t bytes) {
    block_hdr *h = malloc(sizeof *h + bytes);
    if (!h) out_of_memory(bytes);
    h->bytes = bytes;
    h->meter = il_meter_charge(bytes);
    return h + 1;
}

/* Zeroed blocks up to this size are cleared by memset rather than by calloc: jemalloc
 * (the server's allocator) zeroes a reused large block by giving its pages back
 * (madvise) and faulting them in again, which costs far more than clearing warm memory
 * (a quarter of the CPU of a 1,582-row bound read went to the faults and their TLB
 * flushes). Larger blocks keep calloc, whose fresh pages cost nothing until touched. */
#define MEMSET_ZERO_MAX (4u << 20)

void *il_mem_calloc(size_t n, size_t size) {
    if (size && n > (SIZE_MAX - sizeof(block_hdr)) / size) out_of_memory(SIZE_MAX);
    size_t bytes = n * size;
    block_hdr *h;
    if (bytes <= MEMSET_ZERO_MAX) {
        h = malloc(sizeof *h + bytes);
        if (h) memset(h + 1, 0, bytes);
    } else {
        h = calloc(1, sizeof *h + bytes);
    }
    if (!h) out_of_memory(bytes);
    h->bytes = bytes;
    h->meter = il_meter_charge(bytes);
    return h + 1;
}

void *il_mem_realloc(void *p, size_t bytes) {
    if (!p) return il_mem_alloc(bytes);
    block_hdr old = ((block_hdr *)p)[-1];
    block_hdr *h = realloc((block_hdr *)p - 1, sizeof *h + bytes);
    if (!h) out_of_memory(bytes);
    /* counted before the old size is released: realloc may have held both at once */
    h->bytes = bytes;
    h->meter = il_meter_charge(bytes);
    il_meter_release(old.meter, old.bytes);
    return h + 1;
}

void il_mem_free(void *p) {
    if (!p) return;
    block_hdr *h = (block_hdr *)p - 1;
    il_meter_release(h->meter, h->bytes);
    free(h);
}

void il_mvec_grow_(void **v, uint32_t *cap, uint32_t need, size_t elem) {
    size_t in_header = (IL_MEM_HEADER_BYTES + elem - 1) / elem; /* elements it displaces */
    size_t block = *cap ? *cap + in_header : 8;                 /* in elements, header included */
    while (block - in_header < need) block *= 2;
    *v = il_mem_realloc(*v, (block - in_header) * elem);
    *cap = (uint32_t)(block - in_header);
}
