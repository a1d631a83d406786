/* The crash test: runs crash_driver against one data directory, kills it with SIGKILL
 * at a random moment, reopens the directory and checks that every acknowledged insert
 * is there whole, every acknowledged delete is gone, and statements that were not
 * acknowledged are either whole or absent (at most the one in flight per round).
 * Repeats for ROUNDS rounds, each continuing the same directory.
 *
 * usage: crash_test DRIVER ROUNDS [SEED]   (prints "N passed, 0 failed" at the end) */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inputlayer.h"
#include "value/value.h"

/* numbers of round r start at r * STRIDE; a round writes fewer than ROUND_MAX */
enum { STRIDE = 1000000, ROUND_MAX = 1 << 16 };

typedef struct state {
    unsigned char *acked;   /* per number: 1 inserted, 2 deleted (acknowledged) */
    unsigned char *present; /* tuples found on reopening */
    long cap;
    long last[4096]; /* per round: the last acknowledged insert, or -1 */
} state;

static void grow(state *st, long n) {
    if (n < st->cap) return;
    long nc = st->cap ? st->cap : 1024;
    while (nc <= n) nc *= 2;
    st->acked = realloc(st->acked, (size_t)nc);
    st->present = realloc(st->present, (size_t)nc);
    memset(st->acked + st->cap, 0, (size_t)(nc - st->cap));
    memset(st->present + st->cap, 0, (size_t)(nc - st->cap));
    st->cap = nc;
}

static long idx(long round, long i) {
    return (round * ROUND_MAX) + (i - round * STRIDE); /* dense */
}

static int run_round(const char *driver, const char *dir, long round, state *st, unsigned *seed,
                     long *nacks) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        char first[32];
        snprintf(first, sizeof first, "%ld", round * STRIDE);
        char limit[32];
        snprintf(limit, sizeof limit, "%d", ROUND_MAX - 1);
        execl(driver, driver, dir, first, limit, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    st->last[round] = -1;
    /* a random moment: between 5 and 150 ms of writing */
    struct timespec d = {0, (long)(5 + rand_r(seed) % 145) * 1000000L};
    nanosleep(&d, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    /* the acknowledgements, read after the kill: the pipe keeps what was written */
    FILE *f = fdopen(fds[0], "r");
    char line[64];
    while (fgets(line, sizeof line, f)) {
        long i;
        if (line[0] == 'd' && sscanf(line + 2, "%ld", &i) == 1) {
            grow(st, idx(round, i));
            st->acked[idx(round, i)] = 2;
        } else if (sscanf(line, "%ld", &i) == 1) {
            if (i - round * STRIDE >= ROUND_MAX) {
                fprintf(stderr, "crash_test: round %ld wrote too many numbers\n", round);
                fclose(f);
                return -1;
            }
            grow(st, idx(round, i));
            if (!st->acked[idx(round, i)]) st->acked[idx(round, i)] = 1;
            st->last[round] = i;
            (*nacks)++;
        }
    }
    fclose(f);
    if (!WIFSIGNALED(status)) {
        fprintf(stderr, "crash_test: the driver ended by itself (status %d)\n", status);
        return -1;
    }
    return 0;
}

static int check(const char *dir, long rounds_done, state *st) {
    char *err = NULL;
    il_engine *e = il_engine_open(dir, &err);
    if (!e) {
        fprintf(stderr, "crash_test: reopening failed: %s\n", err ? err : "?");
        free(err);
        return -1;
    }
    il_session *s = il_session_open(e);
    /* Every row: il_execute would cut the table at 100,000, which the tuples of some 110
       rounds pass. */
    const char *q = "?n(I, K)";
    il_result *r = il_query_stored(s, q, strlen(q), 0);
    if (il_result_total_rows(r) != il_result_nrows(r)) {
        fprintf(stderr, "crash_test: the check read %zu of %zu rows\n", il_result_nrows(r),
                il_result_total_rows(r));
        il_result_free(r);
        il_session_close(s);
        il_engine_close(e);
        return -1;
    }
    if (st->cap) memset(st->present, 0, (size_t)st->cap); /* nothing acknowledged yet: NULL */
    int bad = 0;
    for (size_t i = 0; i < il_result_nrows(r); i++) {
        size_t w;
        const il_value *row = il_result_row(r, i, &w);
        char a[32], b[32];
        il_value_format(row[0], a, sizeof a);
        il_value_format(row[1], b, sizeof b);
        long n = atol(a), k = atol(b), round = n / STRIDE;
        grow(st, idx(round, n));
        st->present[idx(round, n)] |= (unsigned char)(1u << k);
    }
    il_result_free(r);
    il_engine_close(e);
    for (long round = 0; round < rounds_done; round++) {
        int stray = 0;
        for (long j = 0; j < ROUND_MAX; j++) {
            long x = round * ROUND_MAX + j;
            if (x >= st->cap) break;
            unsigned p = st->present[x];
            if (p != 0 && p != 7) {
                fprintf(stderr, "crash_test: number %ld is partly present (%x)\n",
                        round * STRIDE + j, p);
                bad++;
            }
            /* the delete that follows insert L (L % 5 == 0) may have run unacknowledged */
            long n = round * STRIDE + j, l = st->last[round];
            bool in_flight_delete = l >= 0 && l % 5 == 0 && n == l - 3;
            if (st->acked[x] == 1 && p != 7 && !(p == 0 && in_flight_delete)) {
                fprintf(stderr, "crash_test: acknowledged %ld is missing\n", round * STRIDE + j);
                bad++;
            }
            if (st->acked[x] == 2 && p != 0) {
                fprintf(stderr, "crash_test: %ld came back after an acknowledged delete\n",
                        round * STRIDE + j);
                bad++;
            }
            if (st->acked[x] == 0 && p) stray++;
        }
        if (stray > 1) {
            fprintf(stderr, "crash_test: round %ld has %d unacknowledged numbers\n", round, stray);
            bad++;
        }
    }
    return bad ? -1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fputs("usage: crash_test DRIVER ROUNDS [SEED]\n", stderr);
        return 2;
    }
    long rounds = atol(argv[2]);
    if (rounds < 1 || rounds > 4096) {
        fputs("crash_test: ROUNDS must be 1..4096\n", stderr);
        return 2;
    }
    unsigned seed0 = argc > 3 ? (unsigned)atol(argv[3]) : (unsigned)time(NULL), seed = seed0;
    char dir[] = "/tmp/il_crash_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    state st = {0};
    long passed = 0, failed = 0, acks = 0;
    for (long round = 0; round < rounds; round++) {
        if (run_round(argv[1], dir, round, &st, &seed, &acks) != 0 ||
            check(dir, round + 1, &st) != 0) {
            failed++;
            fprintf(stderr, "crash_test: round %ld failed (seed %u, directory kept: %s)\n", round,
                    seed0, dir);
            break;
        }
        passed++;
    }
    printf("crash test: %ld kills, %ld acknowledged inserts checked (seed %u)\n", passed, acks,
           seed0);
    printf("%ld passed, %ld failed\n", passed, failed);
    if (!failed) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) return 1;
    }
    free(st.acked);
    free(st.present);
    val_shutdown();
    return failed ? 1 : 0;
}
