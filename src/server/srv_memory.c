/* The server's allocator policy; see srv_memory.h. jemalloc rather than glibc's malloc:
 * a durable single-fact write makes about 120 allocator calls on the loop thread (the
 * request's JSON, its statements, the reply, the notification), and with jemalloc's
 * per-thread caches the loop thread runs the whole write in 28 % fewer instructions
 * (BENCHMARKS.md, "Both targets with busy polling"). */
#include "server/srv_memory.h"

#ifdef IL_JEMALLOC
#include <jemalloc/jemalloc.h>
#include <stdio.h>

/* Read by jemalloc at its first allocation. Freed pages go back to the system once they
 * have stayed unused for about a second (dirty_decay_ms), by jemalloc's background thread,
 * so that neither the loop thread nor a worker purges on the path of a request. Without a
 * time limit (dirty_decay_ms -1, as before) freed pages stayed with the process for good:
 * large replies sent to many connections grew it by gigabytes that never came back. The
 * pages of a steady load are reused well within the second, so the write path keeps its
 * warm pages. */
const char *malloc_conf = "dirty_decay_ms:1000,muzzy_decay_ms:0,background_thread:true";

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
