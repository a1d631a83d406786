/* The concurrency tests' shared pieces (threads_common.h). */
#include "threads_common.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

pthread_mutex_t tt_engine_mu = PTHREAD_MUTEX_INITIALIZER;
int tt_writing;

uint64_t tt_next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

void tt_die(const char *program, const char *what, const char *detail) {
    fprintf(stderr, "%s: %s: %s\n", program, what, detail ? detail : "");
    exit(1);
}

il_engine *tt_open(int argc, char **argv, const char *program, int default_writes, int max_readers,
                   uint64_t *seed, int *writes, int *nreaders) {
    *seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    *writes = argc > 2 ? atoi(argv[2]) : default_writes;
    *nreaders = argc > 3 ? atoi(argv[3]) : 3;
    if (*nreaders < 1 || *nreaders > max_readers || *writes < 1)
        tt_die(program, "usage", "seed writes readers");
    char *err = NULL;
    il_engine *e = il_engine_open(NULL, &err);
    if (!e) tt_die(program, "engine", err);
    return e;
}

void tt_write_begin(void) {
    pthread_mutex_lock(&tt_engine_mu);
    __atomic_store_n(&tt_writing, 1, __ATOMIC_RELAXED);
}

void tt_write_end(void) {
    __atomic_store_n(&tt_writing, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&tt_engine_mu);
    nanosleep(&(struct timespec){0, 50000}, NULL);
}

void tt_close_session(il_session *s) {
    pthread_mutex_lock(&tt_engine_mu);
    il_session_close(s);
    pthread_mutex_unlock(&tt_engine_mu);
}

bool tt_pin_published(il_session *s, bool (*current)(il_session *s, void *ctx), void *ctx) {
    /* tries while a writer holds the mutex: writes are short here */
    for (int tries = 0; tries < 200 && __atomic_load_n(&tt_writing, __ATOMIC_RELAXED); tries++) {
        if (pthread_mutex_trylock(&tt_engine_mu) == 0) {
            pthread_mutex_unlock(&tt_engine_mu);
            return false;
        }
        if (il_session_pin_published(s)) {
            if (!current || current(s, ctx)) return true;
            il_session_unpin(s); /* refused: tried again */
        }
        sched_yield();
    }
    return false;
}
