/* The server's allocator policy; see srv_memory.h. jemalloc rather than glibc's malloc:
 * a durable single-fact write makes about 120 allocator calls on the loop thread (the
 * request's JSON, its statements, the reply, the notification), and with jemalloc's
 * per-thread caches the loop thread runs the whole write in 28 % fewer instructions
 * (BENCHMARKS.md, "Both targets with busy polling"). */
#include "server/srv_memory.h"

#ifdef IL_JEMALLOC
#include <jemalloc/jemalloc.h>
#include <stdio.h>

/* Read by jemalloc at its first allocation. Freed pages are never purged by time
 * (dirty_decay_ms -1): only srv_memory_release gives them back. */
const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:0";

void srv_memory_init(void) {
    /* Nothing to set at run time: malloc_conf above is the policy. */
}

void srv_memory_release(void) {
    char cmd[64];
    snprintf(cmd, sizeof cmd, "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
    mallctl(cmd, NULL, NULL, NULL, 0);
}

#else
#include <malloc.h>

void srv_memory_init(void) {
    /* No munmap or trim per query. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void srv_memory_release(void) {
    malloc_trim(0);
}
#endif
