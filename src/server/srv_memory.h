/* The server's allocator policy: memory a query frees stays with the process, so that
 * the next query reuses it, until the server gives it back after a large peak
 * (srv_release_memory_later). The release build allocates with jemalloc; the sanitizer
 * builds with their own allocator, and glibc's policy is kept for a build without
 * jemalloc. */
#ifndef IL_SERVER_SRV_MEMORY_H
#define IL_SERVER_SRV_MEMORY_H

/* Sets the policy; call once, before the threads start. */
void srv_memory_init(void);

/* Returns the memory freed so far to the system. */
void srv_memory_release(void);

#endif
