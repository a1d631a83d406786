/* The guard stops recursion shared out to several threads (src/exec/parallel_fixpoint.c,
 * src/exec/team.c) as it stops it on one: walks with their length over a random graph
 * (partitions) and same generation over a random tree (semi-naive rounds), each run on
 * two threads with a deadline and a cancel falling a third of the way through its time
 * on one thread, and with a memory limit it passes; each must end with that stop. Built
 * under ThreadSanitizer too (make threads-tsan): a data race between the helpers and the
 * thread watching the guard fails it there. Exits 0 when every run stopped as it should.
 * Usage: stop_threads [seed] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inputlayer.h"

static void die(const char *what, const char *detail) {
    fprintf(stderr, "stop_threads: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void exec_ok(il_session *s, const char *text) {
    il_result *r = il_execute(s, text, strlen(text));
    il_result_kind k = il_result_kind_of(r);
    il_result_free(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR) die("statement failed", text);
}

/* `+name[(a, b), ...]` of n pairs. */
static void insert_pairs(il_session *s, const char *name, const int64_t (*pairs)[2], int n) {
    size_t cap = 64 + (size_t)n * 48;
    char *text = malloc(cap);
    if (!text) die("out of memory", NULL);
    size_t len = (size_t)snprintf(text, cap, "+%s[", name);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s(%lld, %lld)", i ? ", " : "",
                                (long long)pairs[i][0], (long long)pairs[i][1]);
    snprintf(text + len, cap - len, "]");
    exec_ok(s, text);
    free(text);
}

typedef struct canceller {
    volatile int flag;
    uint64_t after_ns;
} canceller;

static void *cancel_later(void *arg) {
    canceller *c = arg;
    struct timespec d = {.tv_sec = (time_t)(c->after_ns / 1000000000u),
                         .tv_nsec = (long)(c->after_ns % 1000000000u)};
    nanosleep(&d, NULL);
    __atomic_store_n(&c->flag, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* Runs q under the limits; returns why it stopped. */
static il_stop run_limited(il_session *s, const char *q, const il_limits *lim) {
    il_session_set_limits(s, lim);
    il_result *r = il_execute(s, q, strlen(q));
    il_stop why = il_result_stop(r);
    if (why == IL_STOP_NONE && il_result_kind_of(r) == IL_RESULT_ERROR) die("query failed", q);
    il_result_free(r);
    il_session_set_limits(s, NULL);
    return why;
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    if (!seed) seed = 1;
    char *err = NULL;
    il_engine *e = il_engine_open(NULL, &err);
    if (!e) die("engine", err);
    il_engine_set_maintained_views(e, false); /* every query evaluates its rules */
    il_session *s = il_session_open(e);
    exec_ok(s, ".kg create stops");
    static int64_t pairs[3000][2];
    for (int i = 0; i < 1400; i++) {
        pairs[i][0] = (int64_t)(next_rand(&seed) % 700);
        pairs[i][1] = (int64_t)(next_rand(&seed) % 700);
    }
    insert_pairs(s, "edge", (const int64_t(*)[2])pairs, 1400);
    for (int i = 1; i < 3000; i++) {
        pairs[i - 1][0] = i;
        pairs[i - 1][1] = (int64_t)(next_rand(&seed) % (uint64_t)i);
    }
    insert_pairs(s, "p", (const int64_t(*)[2])pairs, 2999);
    exec_ok(s, "+walk(X, Y, 1) <- edge(X, Y)");
    exec_ok(s, "+walk(X, Z, D) <- walk(X, Y, D0), edge(Y, Z), D = D0 + 1, D < 9");
    exec_ok(s, "+nw(count<X>) <- walk(X, Y, D)");
    exec_ok(s, "+sg(X, X) <- p(X, _)");
    exec_ok(s, "+sg(X, Y) <- p(X, A), sg(A, B), p(Y, B)");
    exec_ok(s, "+ns(count<X>) <- sg(X, Y)");
    const char *queries[] = {"?nw(C)", "?ns(C)"};
    int stopped = 0;
    for (int qi = 0; qi < 2; qi++) {
        const char *q = queries[qi];
        /* The fastest of three runs on one thread: the first also builds the query's plan
           and warms the caches, and one slowed by a busy machine (the tests run side by
           side) would put the deadline and the cancel past the end of a warm run. */
        il_limits one = {.threads = 1};
        uint64_t fastest = UINT64_MAX;
        for (int run = 0; run < 3; run++) {
            uint64_t t0 = now_ns();
            if (run_limited(s, q, &one) != IL_STOP_NONE) die("stopped without a limit", q);
            uint64_t took = now_ns() - t0;
            if (took < fastest) fastest = took;
        }
        uint64_t third = fastest / 3;
        for (int kind = 0; kind < 3; kind++) {
            canceller c = {.flag = 0, .after_ns = third};
            pthread_t th;
            il_limits lim = {.threads = 2};
            il_stop want;
            if (kind == 0) {
                lim.max_memory_bytes = 2u << 20;
                want = IL_STOP_MEMORY;
            } else if (kind == 1) {
                lim.deadline_ns = now_ns() + third;
                want = IL_STOP_DEADLINE;
            } else {
                lim.cancel = &c.flag;
                want = IL_STOP_CANCELLED;
                if (pthread_create(&th, NULL, cancel_later, &c) != 0) die("thread", NULL);
            }
            il_stop got = run_limited(s, q, &lim);
            if (kind == 2) pthread_join(th, NULL);
            if (got != want) {
                fprintf(stderr, "stop_threads: %s, limit %d: stop %d, not %d\n", q, kind, (int)got,
                        (int)want);
                return 1;
            }
            stopped++;
        }
    }
    il_session_close(s);
    il_engine_close(e);
    printf("stop_threads: %d runs on two threads stopped by their memory limit, deadline or "
           "cancel\n",
           stopped);
    return 0;
}
