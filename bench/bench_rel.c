/* Micro-benchmark of relation storage (exec/rel.h): insert (ascending and random
 * order), bulk index creation, point seeks, scans, deletes, and the memory each
 * layout costs, both as rel_bytes and as resident-set growth, snapshots, and the
 * difference between a snapshot and its relation. Standalone: prints one
 * line per figure. Usage: bench_rel [tuples] (default 1000000). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "exec/rel.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Resident bytes, from /proc/self/statm (second field, in pages). */
static size_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &res) != 2) res = 0;
        fclose(f);
    }
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void shuffle(val_t *ts, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t k = rnd() % i;
        val_t a = ts[2 * (i - 1)], b = ts[2 * (i - 1) + 1];
        ts[2 * (i - 1)] = ts[2 * k];
        ts[2 * (i - 1) + 1] = ts[2 * k + 1];
        ts[2 * k] = a;
        ts[2 * k + 1] = b;
    }
}

static void report(const char *what, double ns, size_t ops) {
    printf("%-52s %8.1f ns/op\n", what, ns / (double)ops);
}

static void memory(const char *what, const rel_t *r, size_t rss0, size_t n) {
    printf("%-52s %8.1f B/tuple (rel_bytes), %.1f B/tuple (RSS growth)\n", what,
           (double)rel_bytes(r) / (double)n, (double)(rss_bytes() - rss0) / (double)n);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    if (n < 2) n = 2;
    /* Two-column tuples: ascending (x, 3x + 1) and a shuffled copy. */
    val_t *asc = malloc(n * 2 * sizeof *asc), *rnd_ts = malloc(n * 2 * sizeof *rnd_ts);
    val_t *probe = malloc(n * sizeof *probe), *sorted = malloc(n * sizeof *sorted);
    if (!asc || !rnd_ts || !probe || !sorted) return 1;
    for (size_t i = 0; i < n; i++) {
        asc[2 * i] = i;
        asc[2 * i + 1] = 3 * i + 1;
        rnd_ts[2 * i] = i;
        rnd_ts[2 * i + 1] = 3 * i + 1;
        probe[i] = rnd() % n;
    }
    shuffle(rnd_ts, n);
    /* Touch every page now so that RSS growth below counts only the relations. */
    volatile val_t sink = 0;
    for (size_t i = 0; i < n; i++) sink += asc[2 * i] + rnd_ts[2 * i] + probe[i] + (sorted[i] = 0);
    printf("relation storage, %zu two-column tuples\n", n);

    /* Ascending load, primary index only. */
    size_t rss0 = rss_bytes();
    rel_t *r = rel_new(2);
    double t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_insert(r, asc + 2 * i);
    report("insert, ascending order", now_ns() - t0, n);
    memory("memory, ascending load, primary only", r, rss0, n);

    uint32_t c1[] = {1};
    t0 = now_ns();
    rel_index(r, c1, 1);
    report("add index (1,0) to the loaded relation, per tuple", now_ns() - t0, n);
    memory("memory, with index (1,0) too", r, rss0, n);

    /* Point seeks: each prefix (x) has exactly one tuple. */
    rel_cursor c;
    uint64_t sum = 0;
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        rel_seek(r, 0, probe + i, 1, &c);
        const val_t *t;
        while ((t = rel_next(&c, NULL))) sum += t[1];
    }
    report("seek (x) + next until done, random x, primary", now_ns() - t0, n);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        val_t y = 3 * probe[i] + 1;
        rel_seek(r, 1, &y, 1, &c);
        const val_t *t;
        while ((t = rel_next(&c, NULL))) sum += t[1];
    }
    report("seek (y) + next until done, random y, index (1,0)", now_ns() - t0, n);
    /* The same seeks in ascending key order (a random half of the keys), as a merge
     * join or a sorted batch of probes issues them: the path stays in cache. */
    size_t nsorted = 0;
    for (size_t i = 0; i < n; i++)
        if (rnd() & 1) sorted[nsorted++] = i;
    t0 = now_ns();
    for (size_t i = 0; i < nsorted; i++) {
        rel_seek(r, 0, sorted + i, 1, &c);
        const val_t *t;
        while ((t = rel_next(&c, NULL))) sum += t[1];
    }
    report("seek (x) + next until done, ascending x, primary", now_ns() - t0, nsorted);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        val_t tup[2] = {probe[i], 3 * probe[i] + 1};
        sum += rel_contains(r, tup);
    }
    report("contains, random present tuple", now_ns() - t0, n);

    /* Full scans. */
    for (int ix = 0; ix < 2; ix++) {
        t0 = now_ns();
        rel_seek(r, ix, NULL, 0, &c);
        const val_t *t;
        size_t k = 0;
        while ((t = rel_next(&c, NULL))) {
            sum += t[0];
            k++;
        }
        report(ix ? "full scan, index (1,0), per tuple" : "full scan, primary, per tuple",
               now_ns() - t0, k);
    }

    t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_delete(r, rnd_ts + 2 * i);
    report("delete, random order, two indexes", now_ns() - t0, n);
    rel_free(r);

    /* Point seeks in a relation that fits in cache: the cost of the code itself. */
    size_t small = n < 10000 ? n : 10000;
    r = rel_new(2);
    for (size_t i = 0; i < small; i++) rel_insert(r, asc + 2 * i);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        val_t x = probe[i] % small;
        rel_seek(r, 0, &x, 1, &c);
        const val_t *t;
        while ((t = rel_next(&c, NULL))) sum += t[1];
    }
    report("seek (x) + next until done, random x, 10K tuples", now_ns() - t0, n);
    rel_free(r);

    /* Random-order load. RSS growth is not shown: freed memory gets reused. */
    r = rel_new(2);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_insert(r, rnd_ts + 2 * i);
    report("insert, random order", now_ns() - t0, n);
    printf("%-52s %8.1f B/tuple (rel_bytes)\n", "memory, random load, primary only",
           (double)rel_bytes(r) / (double)n);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_insert(r, rnd_ts + 2 * i);
    report("insert of present tuples (duplicates), random", now_ns() - t0, n);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        rel_seek(r, 0, probe + i, 1, &c);
        const val_t *t;
        while ((t = rel_next(&c, NULL))) sum += t[1];
    }
    report("seek (x) + next until done, random-loaded tree", now_ns() - t0, n);
    t0 = now_ns();
    rel_seek(r, 0, NULL, 0, &c);
    for (const val_t *t; (t = rel_next(&c, NULL));) sum += t[0];
    report("full scan, random-loaded tree, per tuple", now_ns() - t0, n);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_delete(r, rnd_ts + 2 * i);
    report("delete, random order, primary only", now_ns() - t0, n);
    rel_free(r);

    /* Counted relation (the derived-relation case), ascending. */
    r = rel_new_counted(2);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_add_count(r, asc + 2 * i, 1);
    report("add_count +1, new tuples, ascending, counted", now_ns() - t0, n);
    printf("%-52s %8.1f B/tuple (rel_bytes)\n", "memory, counted, primary only",
           (double)rel_bytes(r) / (double)n);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_add_count(r, rnd_ts + 2 * i, -1);
    report("add_count -1 to vanish, random order, counted", now_ns() - t0, n);
    rel_free(r);

    /* Snapshots: taking and releasing one, and what the writer pays for path copying
     * while snapshots are outstanding, beside the same writes with none. */
    r = rel_new(2);
    for (size_t i = 0; i < n; i++) rel_insert(r, asc + 2 * i);
    rel_index(r, c1, 1);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) rel_snapshot_release(rel_snapshot(r));
    report("snapshot + release, two indexes", now_ns() - t0, n);
    const rel_t *snap = rel_snapshot(r);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        val_t tu[2] = {rnd_ts[2 * i], rnd_ts[2 * i + 1] + 1};
        rel_insert(r, tu);
    }
    report("insert, random, one snapshot outstanding, 2 indexes", now_ns() - t0, n);
    printf("%-52s %8.1f B/tuple (rel_bytes)\n", "memory, relation and snapshot",
           (double)rel_bytes(r) / (double)n);
    t0 = now_ns();
    rel_seek(snap, 0, NULL, 0, &c);
    for (const val_t *t; (t = rel_next(&c, NULL));) sum += t[0];
    report("full scan of the snapshot, per tuple", now_ns() - t0, n);
    t0 = now_ns();
    rel_snapshot_release(snap);
    report("release of that snapshot (frees what it kept)", now_ns() - t0, 1);
    t0 = now_ns();
    snap = NULL;
    for (size_t i = 0; i < n; i++) {
        if (i % 1000 == 0) {
            rel_snapshot_release(snap);
            snap = rel_snapshot(r);
        }
        val_t tu[2] = {rnd_ts[2 * i], rnd_ts[2 * i + 1] + 2};
        rel_insert(r, tu);
    }
    rel_snapshot_release(snap);
    report("insert, random, a new snapshot per 1000, 2 indexes", now_ns() - t0, n);
    t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        val_t tu[2] = {rnd_ts[2 * i], rnd_ts[2 * i + 1] + 3};
        rel_insert(r, tu);
    }
    report("insert, random, no snapshot, 2 indexes (same tree)", now_ns() - t0, n);
    rel_free(r);

    /* The difference between a snapshot and its relation after 10 random inserts (what
     * catching up a view computed on a pin costs): the leaves both still share are
     * skipped, so it costs the leaves the inserts changed and a step per leaf. */
    r = rel_new(2);
    for (size_t i = 0; i < n; i++) rel_insert(r, asc + 2 * i);
    snap = rel_snapshot(r);
    for (size_t i = 0; i < 10; i++) {
        val_t tu[2] = {rnd_ts[2 * i], rnd_ts[2 * i + 1] + 4};
        rel_insert(r, tu);
    }
    double best = 0;
    for (int k = 0; k < 11; k++) {
        rel_t *plus = rel_new(2), *minus = rel_new(2);
        t0 = now_ns();
        rel_difference(snap, r, plus, minus);
        double took = now_ns() - t0;
        if (k == 0 || took < best) best = took;
        sink += rel_count(plus) + rel_count(minus);
        rel_free(plus);
        rel_free(minus);
    }
    report("difference, snapshot and 10 inserts since (best of 11)", best, 1);
    rel_snapshot_release(snap);
    rel_free(r);

    /* The floor for anything random in a big relation: one dependent memory load into
     * a 16 MB array (about the size of the 1M-tuple relation). */
    size_t words = (16u << 20) / sizeof(size_t);
    size_t *chase = malloc(words * sizeof *chase);
    if (!chase) return 1;
    for (size_t i = 0; i < words; i++) chase[i] = i;
    for (size_t i = words - 1; i > 0; i--) { /* one random cycle (Sattolo) */
        size_t k = rnd() % i, tmp = chase[i];
        chase[i] = chase[k];
        chase[k] = tmp;
    }
    size_t at = 0;
    t0 = now_ns();
    for (size_t i = 0; i < 2000000; i++) at = chase[at];
    report("reference: one random memory load in 16 MB", now_ns() - t0, 2000000);
    sum += at;
    free(chase);

    printf("(checksum %llu)\n", (unsigned long long)(sum + sink));
    free(asc);
    free(rnd_ts);
    free(probe);
    free(sorted);
    return 0;
}
