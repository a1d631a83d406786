/* Vector searches on pinned sessions beside a writer, over the library API
 * (il_session_pin with a vector index; docs/engine.md, "Vector search"). A writer thread
 * inserts vectors, deletes them, and adds deleted pairs back, each statement under the
 * engine mutex, publishing the revision before each. Reader threads pin their session
 * (under the mutex, or on the published revision while the writer holds it), then,
 * without the mutex, ask the index for the K nearest of a random query with a beam wider
 * than the graph (so the walk is exact) and compute every distance by brute force on the
 * same pin: the two must agree, row for row, whatever the writer changed meanwhile. A
 * search that saw a node the writer added or removed after the pin, or missed one
 * present at it, fails. Built under ThreadSanitizer too (make threads-tsan): a data race
 * between the writer's changes of the graph and the searches fails it there. Exits 0 when
 * every search matched.
 * Usage: vector_threads [seed] [writes] [readers] */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inputlayer.h"
#include "threads_common.h"

/* Ids below START are loaded first: more than the index's exact-scan threshold (200),
 * so searches walk the graph. */
enum { START = 400, IDS = 600, DIM = 6, K = 5, MAX_READERS = 8 };

static il_engine *engine;
static int pinned_reads, published_reads, locked_reads;

static void die(const char *what, const char *detail) {
    tt_die("vector_threads", what, detail);
}

/* A vector literal of three-digit elements. */
static void random_vec(uint64_t *rng, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < DIM; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s0.%03d", i ? ", " : "",
                                (int)(tt_next_rand(rng) % 1000));
    snprintf(buf + len, cap - len, "]");
}

static void run_ok(il_session *s, const char *text) {
    il_result *r = il_execute(s, text, strlen(text));
    il_result_kind k = il_result_kind_of(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR)
        die(text, il_result_nlines(r) ? il_result_line(r, 0) : "");
    il_result_free(r);
}

/* The writer's idea of each id: its vector literal, and whether it is stored now. */
static char vec_of[IDS][96];
static bool stored[IDS];

static void *write_loop(void *p) {
    int writes = *(int *)p;
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    pthread_mutex_lock(&tt_engine_mu);
    il_session *s = il_session_open(engine);
    il_session_set_publish(s, true);
    pthread_mutex_unlock(&tt_engine_mu);
    for (int i = 0; i < writes; i++) {
        int id = (int)(tt_next_rand(&rng) % IDS);
        char text[160];
        if (stored[id]) {
            snprintf(text, sizeof text, "-emb(%d, %.95s)", id, vec_of[id]);
        } else {
            /* a deleted pair comes back half the time, else the id gets a new vector */
            if (!vec_of[id][0] || tt_next_rand(&rng) % 2) random_vec(&rng, vec_of[id], 96);
            snprintf(text, sizeof text, "+emb(%d, %.95s)", id, vec_of[id]);
        }
        tt_write_begin();
        run_ok(s, text);
        stored[id] = !stored[id];
        tt_write_end();
    }
    tt_close_session(s);
    return NULL;
}

/* A result's rows as "id,dist;" text (their first and last columns), or "error: <line>". */
static char *rows_of(il_result *r, size_t *nrows) {
    size_t cap = 256, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
    *nrows = 0;
    if (il_result_kind_of(r) != IL_RESULT_TABLE) {
        snprintf(out, cap, "error: %s", il_result_nlines(r) ? il_result_line(r, 0) : "");
        return out;
    }
    *nrows = il_result_nrows(r);
    for (size_t i = 0; i < *nrows; i++) {
        size_t w;
        const il_value *row = il_result_row(r, i, &w);
        char id[64], dist[64];
        il_value_format(row[0], id, sizeof id);
        il_value_format(row[w - 1], dist, sizeof dist);
        size_t need = len + strlen(id) + strlen(dist) + 3;
        if (need > cap) out = realloc(out, cap = need * 2);
        len += (size_t)sprintf(out + len, "%s,%s;", id, dist);
    }
    return out;
}

typedef struct hit {
    double d;
    long id;
    char text[96];
} hit;

static int hit_cmp(const void *a, const void *b) {
    const hit *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The K nearest of every distance computed (rows "id,dist;"), nearest first, as the
 * index's rows would print, sorted by id then dist as il_execute sorts them. */
static char *top_k(const char *all, size_t n) {
    hit *h = malloc((n ? n : 1) * sizeof *h);
    const char *p = all;
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(p, ';');
        size_t len = (size_t)(end - p);
        memcpy(h[i].text, p, len);
        h[i].text[len] = 0;
        h[i].id = strtol(p, NULL, 10);
        h[i].d = strtod(strchr(p, ',') + 1, NULL);
        p = end + 1;
    }
    qsort(h, n, sizeof *h, hit_cmp);
    size_t k = n < K ? n : K;
    /* il_execute sorts a table's rows by their values: by id here */
    for (size_t i = 0; i < k; i++)
        for (size_t j = i + 1; j < k; j++)
            if (h[j].id < h[i].id) {
                hit t = h[i];
                h[i] = h[j];
                h[j] = t;
            }
    char *out = malloc(k * 100 + 1);
    out[0] = 0;
    for (size_t i = 0; i < k; i++) strcat(strcat(out, h[i].text), ";");
    free(h);
    return out;
}

/* While the writer holds the mutex: a pin on the revision it published before it began. */
static bool pin_published(il_session *s) {
    return tt_pin_published(s, NULL, NULL);
}

typedef struct reader_arg {
    uint64_t seed;
    volatile int *stop;
    int mismatches;
} reader_arg;

static void *read_loop(void *p) {
    reader_arg *ra = p;
    uint64_t rng = ra->seed;
    pthread_mutex_lock(&tt_engine_mu);
    il_session *s = il_session_open(engine);
    pthread_mutex_unlock(&tt_engine_mu);
    while (!__atomic_load_n(ra->stop, __ATOMIC_ACQUIRE)) {
        char q[96], near[192], all[192];
        random_vec(&rng, q, sizeof q);
        snprintf(near, sizeof near, "?hnsw_nearest(\"e\", %s, %d, Id, D, %d)", q, K, 4 * IDS);
        snprintf(all, sizeof all, "?emb(Id, V), D = euclidean(V, %s)", q);
        bool locked = tt_next_rand(&rng) % 4 == 0;
        bool published = !locked && pin_published(s);
        if (!published) {
            pthread_mutex_lock(&tt_engine_mu);
            if (!locked && !il_session_pin(s)) die("pin refused", near);
            if (!locked) pthread_mutex_unlock(&tt_engine_mu);
        }
        /* the brute force first: a writer commits between the two */
        il_result *r = il_execute(s, all, strlen(all));
        size_t n;
        char *every = rows_of(r, &n);
        il_result_free(r);
        if (!locked) sched_yield();
        r = il_execute(s, near, strlen(near));
        size_t nk;
        char *got = rows_of(r, &nk);
        il_result_free(r);
        if (!locked)
            il_session_unpin(s);
        else
            pthread_mutex_unlock(&tt_engine_mu);
        char *want = top_k(every, n);
        if (strcmp(got, want) != 0) {
            fprintf(stderr,
                    "vector_threads: a %s search of %s found\n  %s\nwhere the facts it read "
                    "give\n  %s\n",
                    locked      ? "locked"
                    : published ? "published"
                                : "pinned",
                    q, got, want);
            ra->mismatches++;
        }
        free(every);
        free(got);
        free(want);
        __atomic_fetch_add(locked      ? &locked_reads
                           : published ? &published_reads
                                       : &pinned_reads,
                           1, __ATOMIC_RELAXED);
    }
    tt_close_session(s);
    return NULL;
}

int main(int argc, char **argv) {
    uint64_t seed;
    int writes, nreaders;
    engine = tt_open(argc, argv, "vector_threads", 300, MAX_READERS, &seed, &writes, &nreaders);
    il_session *setup = il_session_open(engine);
    run_ok(setup, "+emb(id: int, vec: vector)");
    run_ok(setup, ".index create e on emb(vec) metric euclidean m 8 ef_construction 64");
    uint64_t rng = seed * 2654435761u + 1;
    for (int id = 0; id < START; id++) {
        char text[160];
        random_vec(&rng, vec_of[id], 96);
        snprintf(text, sizeof text, "+emb(%d, %.95s)", id, vec_of[id]);
        run_ok(setup, text);
        stored[id] = true;
    }
    il_session_close(setup);

    pthread_t wt, rt[MAX_READERS];
    reader_arg ra[MAX_READERS];
    volatile int stop = 0;
    for (int i = 0; i < nreaders; i++) {
        ra[i] = (reader_arg){seed * 7919 + (uint64_t)i * 104729 + 1, &stop, 0};
        pthread_create(&rt[i], NULL, read_loop, &ra[i]);
    }
    pthread_create(&wt, NULL, write_loop, &writes);
    pthread_join(wt, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    int mismatches = 0;
    for (int i = 0; i < nreaders; i++) {
        pthread_join(rt[i], NULL);
        mismatches += ra[i].mismatches;
    }
    il_engine_close(engine);
    printf("vector_threads: seed %llu: %d writes, %d searches pinned, %d on a published "
           "revision, %d locked: %d differ from the facts they read\n",
           (unsigned long long)seed, writes, pinned_reads, published_reads, locked_reads,
           mismatches);
    return mismatches == 0 && pinned_reads > 0 ? 0 : 1;
}
