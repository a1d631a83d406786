/* Snapshots of a relation (exec/rel.h) read on other threads while one writer changes
 * it: the writer inserts, deletes, changes counts, clears and adds an index, and every so
 * often takes a snapshot, copies the relation's contents as they are at that moment and
 * hands both to a reader thread; the readers check each snapshot against its copy (every
 * index, counts, point lookups, seeks), twice with writes in between, and release it on
 * their own thread. Built under ThreadSanitizer too (make threads-tsan): a data race
 * fails it there. Exits 0 when every check passed.
 * Usage: snapshot_threads [seed] [rounds] [readers] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/rel.h"

enum { ARITY = 3, DOMAIN = 40, QUEUE_MAX = 6, PROBES = 200 };

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A snapshot and what the relation held when it was taken: the tuples present in
 * natural order with their counts, ascending, and the counts of random tuples (negative
 * ones included, which no scan shows). */
typedef struct job {
    const rel_t *snap;
    val_t (*t)[ARITY];
    int64_t *c;
    size_t n; /* entries in t and c */
    int nidx;
    val_t probe[PROBES][ARITY];
    int64_t probe_count[PROBES];
    struct job *next;
} job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static job *head, *tail;
static int queued;
static bool finished;

static void fail(const char *what, size_t at) {
    fprintf(stderr, "snapshot_threads: %s (at %zu)\n", what, at);
    exit(1);
}

static int cmp3(const val_t *a, const val_t *b) {
    for (int i = 0; i < ARITY; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* The count the copy records for a tuple, 0 when absent. */
static int64_t copy_count(const job *j, const val_t *t) {
    size_t lo = 0, hi = j->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = cmp3(j->t[mid], t);
        if (c == 0) return j->c[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static void check(const job *j, uint64_t *rng) {
    const rel_t *s = j->snap;
    if (rel_count(s) != j->n) fail("count", rel_count(s));
    /* The primary in order, with counts: exactly the copy's present tuples. */
    rel_cursor c;
    rel_seek(s, 0, NULL, 0, &c);
    size_t k = 0;
    int64_t cnt;
    for (const val_t *t; (t = rel_next(&c, &cnt)); k++)
        if (k == j->n || cmp3(t, j->t[k]) != 0 || cnt != j->c[k]) fail("primary scan", k);
    if (k != j->n) fail("primary scan ended early", k);
    /* Every secondary: as many tuples, each with the copy's count, in index order. */
    for (int ix = 1; ix < j->nidx; ix++) {
        const uint32_t *order = rel_index_order(s, ix);
        size_t n = 0;
        val_t prev[ARITY] = {0};
        rel_seek(s, ix, NULL, 0, &c);
        for (const val_t *t; (t = rel_next(&c, &cnt)); n++) {
            val_t nat[ARITY];
            for (int i = 0; i < ARITY; i++) nat[order[i]] = t[i];
            if (cnt <= 0 || copy_count(j, nat) != cnt) fail("secondary count", n);
            if (n && cmp3(prev, t) >= 0) fail("secondary order", n);
            memcpy(prev, t, sizeof prev);
        }
        if (n != j->n) fail("secondary size", n);
    }
    /* Point lookups and one-column seeks at random. */
    for (int q = 0; q < PROBES; q++) {
        if (rel_get_count(s, j->probe[q]) != j->probe_count[q]) fail("lookup", (size_t)q);
        if (rel_contains(s, j->probe[q]) != (j->probe_count[q] > 0)) fail("contains", (size_t)q);
    }
    for (int q = 0; q < 20; q++) {
        val_t t[ARITY];
        for (int i = 0; i < ARITY; i++) t[i] = xorshift(rng) % DOMAIN;
        if (rel_get_count(s, t) > 0 && rel_get_count(s, t) != copy_count(j, t))
            fail("lookup of a present tuple", (size_t)q);
        size_t want = 0;
        for (size_t i = 0; i < j->n; i++) want += j->t[i][0] == t[0];
        size_t got = 0;
        rel_seek(s, 0, t, 1, &c);
        while (rel_next(&c, NULL)) got++;
        if (got != want) fail("seek", (size_t)q);
    }
}

static void *reader(void *arg) {
    uint64_t rng = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (!head && !finished) pthread_cond_wait(&cv, &mu);
        job *j = head;
        if (j) {
            head = j->next;
            if (!head) tail = NULL;
            queued--;
            pthread_cond_broadcast(&cv);
        }
        pthread_mutex_unlock(&mu);
        if (!j) return NULL;
        check(j, &rng);
        check(j, &rng); /* again, after the writer went on */
        rel_snapshot_release(j->snap);
        free(j->t);
        free(j->c);
        free(j);
    }
}

/* The relation as it is now, taken from the writer's own side. */
static job *copy_now(rel_t *r, int nidx, uint64_t *rng) {
    job *j = calloc(1, sizeof *j);
    size_t cap = rel_count(r) + 1;
    j->t = malloc(cap * sizeof *j->t);
    j->c = malloc(cap * sizeof *j->c);
    rel_cursor c;
    rel_seek(r, 0, NULL, 0, &c);
    int64_t cnt;
    for (const val_t *t; (t = rel_next(&c, &cnt));) {
        memcpy(j->t[j->n], t, sizeof *j->t);
        j->c[j->n++] = cnt;
    }
    j->nidx = nidx;
    for (int q = 0; q < PROBES; q++) {
        for (int i = 0; i < ARITY; i++) j->probe[q][i] = xorshift(rng) % DOMAIN;
        j->probe_count[q] = rel_get_count(r, j->probe[q]);
    }
    return j;
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 400;
    int nreaders = argc > 3 ? atoi(argv[3]) : 3;
    uint64_t rng = seed * 2654435761u + 88172645463325252ull;
    pthread_t th[16];
    if (nreaders < 1 || nreaders > 16) return 2;
    for (int i = 0; i < nreaders; i++)
        pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)(i + 1));
    rel_t *r = rel_new_counted(ARITY);
    uint32_t c2[] = {2}, c10[] = {1, 0};
    int nidx = rel_index(r, c2, 1) + 1;
    const rel_t *mine = NULL; /* one snapshot the writer keeps a while and releases itself */
    for (int round = 0; round < rounds; round++) {
        for (int op = 0; op < 300; op++) {
            val_t t[ARITY];
            for (int i = 0; i < ARITY; i++) t[i] = xorshift(&rng) % DOMAIN;
            uint64_t what = xorshift(&rng) % 10;
            if (what < 5)
                rel_add_count(r, t, 1 + (int64_t)(xorshift(&rng) % 3));
            else if (what < 8)
                rel_add_count(r, t, -1 - (int64_t)(xorshift(&rng) % 2));
            else if (what < 9)
                rel_insert(r, t);
            else
                rel_delete(r, t);
        }
        if (round % 97 == 96) rel_clear(r);
        if (round == rounds / 3) nidx = rel_index(r, c10, 2) + 1;
        job *j = copy_now(r, nidx, &rng);
        j->snap = rel_snapshot(r);
        if (round % 5 == 0) {
            rel_snapshot_release(mine);
            mine = rel_snapshot(r);
        }
        pthread_mutex_lock(&mu);
        while (queued >= QUEUE_MAX) pthread_cond_wait(&cv, &mu);
        if (tail)
            tail->next = j;
        else
            head = j;
        tail = j;
        queued++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_lock(&mu);
    finished = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    rel_free(r); /* snapshots still queued outlive it */
    for (int i = 0; i < nreaders; i++) pthread_join(th[i], NULL);
    rel_snapshot_release(mine);
    printf("snapshot_threads: %d snapshots checked on %d reader threads, seed %llu\n", rounds,
           nreaders, (unsigned long long)seed);
    return 0;
}
