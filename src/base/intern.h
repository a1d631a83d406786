/* String interning: every distinct byte string gets one 32-bit id while anything holds it,
 * so values can carry ids instead of bytes and compare strings by id. The table is global
 * and thread-safe. Looking an id up (il_intern_get) takes no lock; interning takes one
 * short lock on one of several shards.
 *
 * A string is interned for good (permanent), or for a scope (transient): while a thread
 * is inside a scope (il_intern_scope_enter), the strings it interns that the table does
 * not hold yet are held by that scope only, and freed when the last scope holding them is
 * freed (kept idle for a while, il_intern_set_idle_limits), unless something interned them
 * for good meanwhile. A query runs in a scope owned by its result (docs/engine.md,
 * "Values"), so the strings only a query made do not stay in memory after it. Ids of freed
 * strings are given out again. */
#ifndef IL_BASE_INTERN_H
#define IL_BASE_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The id of the byte string s[0..len) (it may contain NUL bytes; s may be NULL when len
 * is 0; len under 4 GiB). Equal bytes always give the same id while the string is held.
 * The bytes are copied; storage for them is at least 8-byte aligned, so an interned array
 * of 8-byte (or smaller) elements can be read in place. Outside a scope the string is
 * held for good from then on; inside one, a string not held for good is held by the scope
 * (as well as by any other scope holding it). */
uint32_t il_intern(const char *s, size_t len);

/* The bytes of an id returned by il_intern: stable while the string is held (for good:
 * until il_intern_shutdown) and followed by a NUL. *len (when len is not NULL) receives
 * the length. Ids never returned by il_intern, or of freed strings, must not be passed. */
const char *il_intern_get(uint32_t id, size_t *len);

/* The strings a statement made for itself. */
typedef struct il_intern_scope il_intern_scope;

il_intern_scope *il_intern_scope_new(void);
/* The calling thread's new strings belong to sc until il_intern_scope_leave(the scope
 * returned), which goes back to the scope entered before (or none). */
il_intern_scope *il_intern_scope_enter(il_intern_scope *sc);
void il_intern_scope_leave(il_intern_scope *previous);
/* A new scope holding every string the calling thread's scope holds now, or NULL when
 * there is none: for what is kept beyond the statement but not for good (a cached
 * program of a query). */
il_intern_scope *il_intern_scope_share(void);
/* Hands every string sc holds to the calling thread's scope (interns them for good when
 * the thread is in none), then frees sc: for the strings a thread made on behalf of
 * another's statement. sc must not be entered. */
void il_intern_scope_absorb(il_intern_scope *sc);
/* Frees sc and every string no other scope holds and nothing interned for good. Any
 * thread; sc must not be entered. */
void il_intern_scope_free(il_intern_scope *sc);
/* Interns every string of sc for good, then frees sc. */
void il_intern_scope_keep(il_intern_scope *sc);
/* Whether the calling thread is inside a scope. */
bool il_intern_in_scope(void);

/* A transient string no scope holds any more is kept idle, for a statement that makes it
 * again, while there are at most `values` idle strings of at most `bytes` in all (roughly:
 * the limits are kept per shard); the oldest go first. The defaults: 65,536 and 16 MiB
 * (none under AddressSanitizer). Lowering them frees what is over at once. */
void il_intern_set_idle_limits(uint32_t values, uint64_t bytes);

/* Counts, for metrics and tests. */
typedef struct il_intern_stats {
    uint64_t strings;    /* held now, idle ones included */
    uint64_t bytes;      /* of the strings held now */
    uint64_t transient;  /* held by scopes only */
    uint64_t idle;       /* held by nothing, kept for reuse */
    uint64_t idle_bytes; /* of those */
} il_intern_stats;
il_intern_stats il_intern_stats_now(void);

/* Frees every interned string; all ids become invalid. For process exit, so that leak
 * checkers stay quiet; no other thread may be using the table. */
void il_intern_shutdown(void);

#endif
