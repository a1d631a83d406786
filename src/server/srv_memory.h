/* The server's allocator policy: memory a query frees stays with the process for about a
 * second, so that the next request reuses it, then goes back to the system; all of it goes
 * back after a large peak or reply (srv_release_memory_later). The release build allocates
 * with jemalloc; the sanitizer builds with their own allocator, and glibc's policy is kept
 * for a build without jemalloc. */
#ifndef IL_SERVER_SRV_MEMORY_H
#define IL_SERVER_SRV_MEMORY_H

/* Sets the policy; call once, before the threads start. */
void srv_memory_init(void);

/* Returns the memory freed so far to the system. */
void srv_memory_release(void);

#endif
