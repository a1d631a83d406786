/* String interning: every distinct byte string gets one stable 32-bit id for the life of
 * the process, so values can carry ids instead of bytes and compare strings by id.
 * The table is global and thread-safe. Looking an id up (il_intern_get) takes no lock;
 * interning takes one short lock on one of several shards. */
#ifndef IL_BASE_INTERN_H
#define IL_BASE_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* The id of the byte string s[0..len) (it may contain NUL bytes; s may be NULL when len
 * is 0). Equal bytes always give the same id. The bytes are copied; storage for them is
 * at least 8-byte aligned, so an interned array of 8-byte (or smaller) elements can be read in
 * place. */
uint32_t il_intern(const char *s, size_t len);

/* The bytes of an id returned by il_intern: stable for the life of the process (until
 * il_intern_shutdown) and followed by a NUL. *len (when len is not NULL) receives the
 * length. Ids never returned by il_intern must not be passed. */
const char *il_intern_get(uint32_t id, size_t *len);

/* Frees every interned string; all ids become invalid. For process exit, so that leak
 * checkers stay quiet; no other thread may be using the table. */
void il_intern_shutdown(void);

#endif
