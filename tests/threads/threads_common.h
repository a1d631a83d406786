/* What the concurrency tests over the library API share (pinned.c, vectors.c): the mutex
 * that serializes their statements as the server's engine lock does, the flag a writer
 * raises while it holds it, a random stream, and a writer's step out of the mutex. */
#ifndef IL_TESTS_THREADS_COMMON_H
#define IL_TESTS_THREADS_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "inputlayer.h"

extern pthread_mutex_t tt_engine_mu;
extern int tt_writing; /* a writer holds tt_engine_mu (atomic) */

/* xorshift64: the next number of the stream whose state is *s (nonzero). */
uint64_t tt_next_rand(uint64_t *s);
/* The arguments `seed writes readers` (1, default_writes and 3 when left out; readers
 * from 1 to max_readers) and an in-memory engine; exits with a message on a bad one. */
il_engine *tt_open(int argc, char **argv, const char *program, int default_writes, int max_readers,
                   uint64_t *seed, int *writes, int *nreaders);
/* Prints "<program>: what: detail" and exits 1. */
void tt_die(const char *program, const char *what, const char *detail);
/* A writer takes the mutex and raises the flag; then lowers it, lets the mutex go and
 * leaves the readers room before its next write (a mutex is not fair). */
void tt_write_begin(void);
void tt_write_end(void);
/* Closes a session under the mutex (a writer's, at its end). */
void tt_close_session(il_session *s);
/* While a writer holds the mutex, tries for a while to pin s on the revision the writer
 * published before it began; false when the mutex came free first or nothing was
 * published. `current`, when not NULL, is asked after each pin and may refuse it (the
 * pin is then let go and tried again). */
bool tt_pin_published(il_session *s, bool (*current)(il_session *s, void *ctx), void *ctx);

#endif
