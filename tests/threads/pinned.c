/* Reads on pinned sessions beside writers, over the library API, against an oracle
 * (il_session_pin; docs/engine.md, "Concurrency"). Writer threads run random programs
 * under the engine mutex (inserts, deletes, conditional deletes, a rule clause added and
 * dropped, transactions of several writes), each committed one a revision of its own, in
 * a log; each writer on a graph of its own, and the readers on both. Reader threads pin their
 * session under the mutex, note the revision, run their queries without it and unpin with or
 * without it (half each); when a writer holds the mutex they pin the revision it published instead,
 * and note its number without the mutex, checked after (il_session_pin_current: a write to the
 * reader's graph since its pin makes it retry, one to the other graph does not, the graph it reads
 * being the same at both revisions); a write publishes the other graph too, so a reader of one pins
 * its publication while the other is written. One writer publishes before each write and each
 * transaction whoever reads (il_session_set_publish), the other only when pins ran lately. The
 * queries run over the graph's rules (recursion, an aggregate, a negation) and the maintained views
 * earlier locked reads made, every other reader with a session rule and fact of its own layered on
 * its pin; some reads run locked instead, to make and read those views. Afterwards the log is
 * replayed into a fresh engine with maintained views off, and at each revision some read
 * reported, every read of it must equal the evaluation there, on its graph, row for row. Built
 * under ThreadSanitizer too (make threads-tsan): a data race fails it there. Exits 0 when every
 * read matched. Usage: pinned_threads [seed] [writes per writer] [readers] */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inputlayer.h"
#include "threads_common.h"

enum { WRITERS = 2, NODES = 7, MAX_READERS = 8, GRAPHS = 2 };

/* writer i writes graph i; reader i reads graph i % GRAPHS */
static const char *const GRAPH_NAMES[GRAPHS] = {"default", "g2"};

static const char *const QUERIES[] = {"?reach(X, Y)", "?deg(X, N)", "?leaf(X)", "?two(X, Z)",
                                      "?reach(1, Y)"};
enum { NQUERIES = sizeof QUERIES / sizeof QUERIES[0] };
static const char *const RULES[] = {
    "+reach(X, Y) <- edge(X, Y)", "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
    "+deg(X, count<Y>) <- edge(X, Y)", "+leaf(X) <- edge(_, X), !edge(X, _)"};

static il_engine *engine;
static uint64_t revision; /* committed programs so far (tt_engine_mu) */
static char **log_programs;
static int *log_graphs; /* the graph each program of the log wrote */
static size_t log_n, log_cap;

typedef struct read_rec {
    uint64_t revision;
    int graph;
    int query;
    char *answer;
} read_rec;

static pthread_mutex_t reads_mu = PTHREAD_MUTEX_INITIALIZER;
static read_rec *reads;
static size_t reads_n, reads_cap;
static int pinned_reads, locked_reads, published_reads;

static void die(const char *what, const char *detail) {
    tt_die("pinned_threads", what, detail);
}

/* A result as text: its rows sorted (il_execute sorts them), or "error". */
static char *answer_of(il_result *r) {
    size_t cap = 256, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
    if (il_result_kind_of(r) != IL_RESULT_TABLE) {
        strcpy(out, "error");
        return out;
    }
    for (size_t i = 0; i < il_result_nrows(r); i++) {
        size_t w;
        const il_value *row = il_result_row(r, i, &w);
        for (size_t j = 0; j < w; j++) {
            char cell[64];
            il_value_format(row[j], cell, sizeof cell);
            size_t need = len + strlen(cell) + 3;
            if (need > cap) out = realloc(out, cap = need * 2);
            len += (size_t)sprintf(out + len, "%s%c", cell, j + 1 < w ? ',' : ';');
        }
    }
    return out;
}

static void add_read(uint64_t rev, int graph, int q, char *answer) {
    pthread_mutex_lock(&reads_mu);
    if (reads_n == reads_cap)
        reads = realloc(reads, (reads_cap = reads_cap * 2 + 64) * sizeof *reads);
    reads[reads_n++] = (read_rec){rev, graph, q, answer};
    pthread_mutex_unlock(&reads_mu);
}

static void program(uint64_t *rng, char *buf, size_t cap) {
    int k = (int)(tt_next_rand(rng) % 20);
    int a = 1 + (int)(tt_next_rand(rng) % NODES), b = 1 + (int)(tt_next_rand(rng) % NODES);
    if (k < 8)
        snprintf(buf, cap, "+edge(%d, %d)", a, b);
    else if (k < 13)
        snprintf(buf, cap, "-edge(%d, %d)", a, b);
    else if (k < 15)
        snprintf(buf, cap, "+edge[(%d, %d), (%d, %d)]", a, b, b, a);
    else if (k < 17)
        snprintf(buf, cap, "-edge(X, Y) <- edge(X, Y), X = %d", a);
    else if (k < 18)
        snprintf(buf, cap, "+two(X, Z) <- edge(X, Y), edge(Y, Z)");
    else if (k < 19)
        snprintf(buf, cap, ".rule drop two");
    else
        snprintf(buf, cap, "txn");
}

typedef struct writer_arg {
    uint64_t seed;
    int writes;
    int graph;    /* the graph it writes */
    bool publish; /* its writes publish whether or not pins ran lately (transactions too) */
} writer_arg;

static void *write_loop(void *p) {
    writer_arg *w = p;
    uint64_t rng = w->seed;
    pthread_mutex_lock(&tt_engine_mu);
    il_session *s = il_session_open(engine);
    il_result_free(il_session_use(s, GRAPH_NAMES[w->graph]));
    il_session_set_publish(s, w->publish);
    pthread_mutex_unlock(&tt_engine_mu);
    for (int i = 0; i < w->writes; i++) {
        char text[128], logged[256];
        program(&rng, text, sizeof text);
        tt_write_begin();
        bool ok;
        if (strcmp(text, "txn") == 0) {
            /* two writes committed as one */
            int a = 1 + (int)(tt_next_rand(&rng) % NODES),
                b = 1 + (int)(tt_next_rand(&rng) % NODES);
            char one[64], two[64];
            snprintf(one, sizeof one, "+edge(%d, %d)", a, b);
            snprintf(two, sizeof two, "-edge(%d, %d)", b, a);
            ok = il_txn_begin(s);
            for (int k = 0; ok && k < 2; k++) {
                const char *t = k ? two : one;
                il_result *r = il_execute(s, t, strlen(t));
                ok = il_result_kind_of(r) == IL_RESULT_MESSAGE;
                il_result_free(r);
            }
            char *err = NULL;
            ok = ok && il_txn_commit(s, &err);
            free(err);
            snprintf(logged, sizeof logged, "%s\n%s", one, two);
        } else {
            il_result *r = il_execute(s, text, strlen(text));
            il_result_kind k = il_result_kind_of(r);
            ok = k != IL_RESULT_ERROR && k != IL_RESULT_PARSE_ERROR;
            il_result_free(r);
            snprintf(logged, sizeof logged, "%s", text);
        }
        if (ok) {
            if (log_n == log_cap) {
                log_cap = log_cap * 2 + 64;
                log_programs = realloc(log_programs, log_cap * sizeof *log_programs);
                log_graphs = realloc(log_graphs, log_cap * sizeof *log_graphs);
            }
            log_graphs[log_n] = w->graph;
            log_programs[log_n++] = strdup(logged);
            /* after the commit counted itself: a reader on a published revision reads
               this without the mutex, then il_session_pin_current (read_loop) */
            __atomic_store_n(&revision, revision + 1, __ATOMIC_RELEASE);
        }
        tt_write_end();
    }
    tt_close_session(s);
    return NULL;
}

typedef struct reader_arg {
    uint64_t seed;
    volatile int *stop;
    bool session_data;
    int graph; /* the graph it reads */
} reader_arg;

/* While a writer holds the mutex: a pin on the revision it published before it began,
 * and that revision's number, read without the mutex and checked after. */
static bool revision_current(il_session *s, void *ctx) {
    *(uint64_t *)ctx = __atomic_load_n(&revision, __ATOMIC_ACQUIRE);
    /* a commit came between: the number may be a later one's */
    return il_session_pin_current(s);
}

static bool pin_published(il_session *s, uint64_t *rev) {
    return tt_pin_published(s, revision_current, rev);
}

static void *read_loop(void *p) {
    reader_arg *ra = p;
    uint64_t rng = ra->seed;
    pthread_mutex_lock(&tt_engine_mu);
    il_session *s = il_session_open(engine);
    il_result_free(il_session_use(s, GRAPH_NAMES[ra->graph]));
    if (ra->session_data) {
        /* a rule and a fact of the session's own, which the queries do not read: they run
           with the session layered on the pin (and row provenance's delta) */
        il_result_free(il_execute(s, "mine(X) <- edge(X, _)", 21));
        il_result_free(il_execute(s, "other(1)", 8));
    }
    pthread_mutex_unlock(&tt_engine_mu);
    while (!__atomic_load_n(ra->stop, __ATOMIC_ACQUIRE)) {
        int q = (int)(tt_next_rand(&rng) % NQUERIES);
        bool locked = tt_next_rand(&rng) % 4 == 0;
        uint64_t rev = 0;
        bool published = !locked && pin_published(s, &rev);
        if (published) __atomic_fetch_add(&published_reads, 1, __ATOMIC_RELAXED);
        if (!published) {
            pthread_mutex_lock(&tt_engine_mu);
            rev = revision;
            if (!locked && !il_session_pin(s)) die("pin refused", QUERIES[q]);
            if (!locked) pthread_mutex_unlock(&tt_engine_mu);
        }
        il_result *r = il_execute(s, QUERIES[q], strlen(QUERIES[q]));
        char *a = answer_of(r);
        il_result_free(r);
        if (!locked) {
            /* the unpin may run beside serialized statements: half of them do */
            bool beside = tt_next_rand(&rng) % 2;
            if (beside) il_session_unpin(s);
            pthread_mutex_lock(&tt_engine_mu);
            if (!beside) il_session_unpin(s);
        }
        pthread_mutex_unlock(&tt_engine_mu);
        add_read(rev, ra->graph, q, a);
        __atomic_fetch_add(locked ? &locked_reads : &pinned_reads, 1, __ATOMIC_RELAXED);
    }
    tt_close_session(s);
    return NULL;
}

static int by_revision(const void *a, const void *b) {
    const read_rec *x = a, *y = b;
    return x->revision < y->revision ? -1 : x->revision > y->revision;
}

static void run_ok(il_session *s, const char *text) {
    il_result *r = il_execute(s, text, strlen(text));
    il_result_kind k = il_result_kind_of(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR)
        die(text, il_result_nlines(r) ? il_result_line(r, 0) : "");
    il_result_free(r);
}

/* What the graphs hold before the first write: the rules and three edges each (for the
 * threads' engine and the oracle's alike); s is left on `default`. */
static void load_start(il_session *s) {
    for (int g = GRAPHS - 1; g >= 0; g--) {
        if (g) run_ok(s, ".kg create g2");
        for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++) run_ok(s, RULES[i]);
        run_ok(s, g ? "+edge[(2, 1), (3, 2), (4, 3)]" : "+edge[(1, 2), (2, 3), (3, 4)]");
        if (g) run_ok(s, ".kg use default");
    }
}

int main(int argc, char **argv) {
    uint64_t seed;
    int writes, nreaders;
    engine = tt_open(argc, argv, "pinned_threads", 200, MAX_READERS, &seed, &writes, &nreaders);
    il_session *setup = il_session_open(engine);
    load_start(setup);
    il_session_close(setup);

    pthread_t wt[WRITERS], rt[MAX_READERS];
    writer_arg wa[WRITERS];
    reader_arg ra[MAX_READERS];
    volatile int stop = 0;
    for (int i = 0; i < nreaders; i++) {
        ra[i] = (reader_arg){seed * 7919 + (uint64_t)i * 104729 + 1, &stop, i / GRAPHS % 2 == 1,
                             i % GRAPHS};
        pthread_create(&rt[i], NULL, read_loop, &ra[i]);
    }
    for (int i = 0; i < WRITERS; i++) {
        wa[i] = (writer_arg){seed * 31337 + (uint64_t)i * 65537 + 1, writes, i % GRAPHS, i == 0};
        pthread_create(&wt[i], NULL, write_loop, &wa[i]);
    }
    for (int i = 0; i < WRITERS; i++) pthread_join(wt[i], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < nreaders; i++) pthread_join(rt[i], NULL);
    il_engine_close(engine);

    /* The oracle: the log replayed, every revision read evaluated from scratch. */
    qsort(reads, reads_n, sizeof *reads, by_revision);
    char *err = NULL;
    il_engine *oracle = il_engine_open(NULL, &err);
    if (!oracle) die("oracle", err);
    il_engine_set_maintained_views(oracle, false);
    il_session *o[GRAPHS];
    for (int g = 0; g < GRAPHS; g++) o[g] = il_session_open(oracle);
    load_start(o[0]);
    for (int g = 1; g < GRAPHS; g++) il_result_free(il_session_use(o[g], GRAPH_NAMES[g]));
    uint64_t at = 0;
    size_t revisions = 0;
    char *expected[GRAPHS][NQUERIES] = {0};
    for (size_t i = 0; i < reads_n; i++) {
        if (i == 0 || reads[i].revision != reads[i - 1].revision) {
            for (; at < reads[i].revision; at++) {
                char *prog = log_programs[at], *line = prog;
                while (line && *line) {
                    char *nl = strchr(line, '\n');
                    if (nl) *nl = 0;
                    run_ok(o[log_graphs[at]], line);
                    line = nl ? nl + 1 : NULL;
                }
            }
            for (int g = 0; g < GRAPHS; g++)
                for (int q = 0; q < NQUERIES; q++) {
                    free(expected[g][q]);
                    il_result *r = il_execute(o[g], QUERIES[q], strlen(QUERIES[q]));
                    expected[g][q] = answer_of(r);
                    il_result_free(r);
                }
            revisions++;
        }
        const char *want = expected[reads[i].graph][reads[i].query];
        if (strcmp(reads[i].answer, want) != 0) {
            fprintf(stderr,
                    "pinned_threads: seed %llu: a read of %s on %s at revision %llu saw\n  "
                    "%s\nwhere the log replayed gives\n  %s\n",
                    (unsigned long long)seed, QUERIES[reads[i].query], GRAPH_NAMES[reads[i].graph],
                    (unsigned long long)reads[i].revision, reads[i].answer, want);
            return 1;
        }
    }
    printf("pinned_threads: seed %llu: %llu commits, %zu reads (%d pinned, %d of them on a "
           "published revision, %d locked) at %zu revisions, each equal to the log replayed\n",
           (unsigned long long)seed, (unsigned long long)revision, reads_n, pinned_reads,
           published_reads, locked_reads, revisions);
    for (int g = 0; g < GRAPHS; g++)
        for (int q = 0; q < NQUERIES; q++) free(expected[g][q]);
    for (size_t i = 0; i < reads_n; i++) free(reads[i].answer);
    free(reads);
    for (size_t i = 0; i < log_n; i++) free(log_programs[i]);
    free(log_programs);
    free(log_graphs);
    for (int g = 0; g < GRAPHS; g++) il_session_close(o[g]);
    il_engine_close(oracle);
    return pinned_reads > 0 && revisions > 10 ? 0 : 1;
}
