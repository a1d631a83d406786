/* bench_vectors: the HNSW index's quality and speed (src/exec/hnsw.h), HNSW forced on.
 *
 *   bench_vectors [--n N] [--queries Q] [--dim D] [--k K] [--ef EF[,EF...]] [--m M]
 *                 [--efc EFC] [--crossover] [--crossover-ef EF] [--at] [--smoke]
 *
 * Builds an index of N random vectors (components uniform in [-1, 1], SplitMix64 seed 42,
 * bench/gen_vectors.h) with cosine distance, then asks Q query vectors (seed 43) for their
 * K nearest by brute force (every vector's exact distance, as the engine's scan computes
 * it) and through the graph at each beam width EF, and prints
 *   build n=.. dim=.. m=.. efc=.. seconds=.. vectors_per_s=.. cpu_seconds=.. vectors_per_cpu_s=..
 *   search k=.. ef=.. queries=.. recall=.. hnsw_median_us=.. hnsw_p90_us=..
 *          brute_median_us=.. brute_p90_us=.. speedup=..      (one line per EF)
 * --crossover also times both at growing sizes (at --crossover-ef, default 50, the
 * engine's default ef_search), which is how the engine's brute-force threshold
 * (KG_INDEX_EXACT_BELOW) was chosen. --at makes the graph's searches searches at its latest
 * revision (hnsw_search_at), as a pinned read's are: their own scratch space and the
 * graph's reader lock (docs/engine.md, "Vector search"). --smoke runs a tiny version and exits 1
 * when recall falls under 0.9 (make test runs it so that the tool keeps working).
 * Defaults: N 100,000, Q 1,000, D 128, K 10, EF 64, M 16, EFC 200. `make bench-vectors`
 * runs the configuration of BENCHMARKS.md. The build's CPU time (this process's) is printed
 * beside its wall time: on a shared machine the wall time also counts other programs'
 * turns on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/hnsw.h"
#include "gen_vectors.h"
#include "value/value.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_double);
    return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

static void usage(void) {
    fprintf(stderr, "usage: bench_vectors [--n N] [--queries Q] [--dim D] [--k K] "
                    "[--ef EF[,EF...]] [--m M] [--efc EFC] [--crossover] [--crossover-ef EF] "
                    "[--at] [--smoke]\n");
    exit(2);
}

static val_t *make_vectors(size_t n, uint32_t dim, uint64_t seed) {
    float *raw = gv_random_vectors(n, dim, seed);
    val_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!raw || !v) {
        fprintf(stderr, "bench_vectors: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) v[i] = val_vec_f32(raw + i * dim, dim);
    free(raw);
    return v;
}

static hnsw *build(const val_t *vecs, size_t n, uint32_t m, uint32_t efc, double *seconds,
                   double *cpu_seconds) {
    hnsw_params p = {HNSW_COSINE, m, efc, 42};
    hnsw *h = hnsw_new(&p);
    double t0 = now_us(), c0 = cpu_us();
    for (size_t i = 0; i < n; i++)
        if (!hnsw_add(h, val_int((int64_t)i), vecs[i])) {
            fprintf(stderr, "bench_vectors: vector %zu refused\n", i);
            exit(1);
        }
    *seconds = (now_us() - t0) / 1e6;
    *cpu_seconds = (cpu_us() - c0) / 1e6;
    return h;
}

/* Median microseconds of a search of each query (exact: brute force). */
static double median_search(hnsw *h, const val_t *qs, size_t nq, uint32_t k, uint32_t ef,
                            bool exact) {
    double *t = malloc(nq * sizeof *t);
    hnsw_hit *hits = malloc(k * sizeof *hits);
    for (size_t i = 0; i < nq; i++) {
        double t0 = now_us();
        hnsw_search(h, qs[i], k, ef, exact, hits);
        t[i] = now_us() - t0;
    }
    double med = quantile(t, nq, 0.5);
    free(t);
    free(hits);
    return med;
}

/* Both ways at growing sizes: where the graph starts to beat a scan. */
static void crossover(uint32_t dim, uint32_t k, uint32_t ef, uint32_t m, uint32_t efc) {
    static const size_t sizes[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    val_t *vecs = make_vectors(sizes[8], dim, 42);
    val_t *qs = make_vectors(200, dim, 43);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        double secs, cpu;
        hnsw *h = build(vecs, sizes[s], m, efc, &secs, &cpu);
        double g = median_search(h, qs, 200, k, ef, false);
        double b = median_search(h, qs, 200, k, ef, true);
        printf("crossover n=%zu hnsw_median_us=%.1f brute_median_us=%.1f\n", sizes[s], g, b);
        fflush(stdout);
        hnsw_free(h);
    }
    free(vecs);
    free(qs);
}

int main(int argc, char **argv) {
    size_t n = 100000, nq = 1000;
    uint32_t dim = 128, k = 10, m = 16, efc = 200, cross_ef = 50;
    uint32_t efs[16] = {64}, nef = 1;
    bool smoke = false, cross = false, at = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--smoke") == 0) {
            smoke = true;
            n = 2000;
            nq = 50;
            dim = 32;
            continue;
        }
        if (strcmp(a, "--crossover") == 0) {
            cross = true;
            continue;
        }
        if (strcmp(a, "--at") == 0) {
            at = true;
            continue;
        }
        if (i + 1 >= argc) usage();
        if (strcmp(a, "--ef") == 0) { /* a comma-separated list */
            nef = 0;
            for (char *p = argv[++i], *end; *p && nef < 16; p = *end ? end + 1 : end) {
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || v < 1 || v > 100000 || (*end && *end != ',')) usage();
                efs[nef++] = (uint32_t)v;
            }
            if (!nef) usage();
            continue;
        }
        char *end;
        unsigned long long v = strtoull(argv[++i], &end, 10);
        if (*end || v < 1 || v > 100000000) usage();
        if (strcmp(a, "--n") == 0)
            n = (size_t)v;
        else if (strcmp(a, "--queries") == 0)
            nq = (size_t)v;
        else if (strcmp(a, "--dim") == 0 && v <= 4096)
            dim = (uint32_t)v;
        else if (strcmp(a, "--k") == 0 && v <= 1000)
            k = (uint32_t)v;
        else if (strcmp(a, "--crossover-ef") == 0 && v <= 100000)
            cross_ef = (uint32_t)v;
        else if (strcmp(a, "--m") == 0 && v >= 2 && v <= 256)
            m = (uint32_t)v;
        else if (strcmp(a, "--efc") == 0 && v <= 100000)
            efc = (uint32_t)v;
        else
            usage();
    }
    val_t *vecs = make_vectors(n, dim, 42);
    val_t *qs = make_vectors(nq, dim, 43);
    double secs, cpu;
    hnsw *h = build(vecs, n, m, efc, &secs, &cpu);
    printf("build n=%zu dim=%u m=%u efc=%u seconds=%.2f vectors_per_s=%.0f cpu_seconds=%.2f "
           "vectors_per_cpu_s=%.0f\n",
           n, dim, m, efc, secs, (double)n / secs, cpu, (double)n / cpu);
    fflush(stdout);

    /* brute force once per query: the truth and its time */
    hnsw_hit *got = malloc(k * sizeof *got), *truth = malloc(nq * k * sizeof *truth);
    size_t *ntruth = malloc(nq * sizeof *ntruth);
    double *tg = malloc(nq * sizeof *tg), *tb = malloc(nq * sizeof *tb);
    for (size_t i = 0; i < nq; i++) {
        double t0 = now_us();
        ntruth[i] = hnsw_search(h, qs[i], k, 0, true, truth + i * k);
        tb[i] = now_us() - t0;
    }
    double bm = quantile(tb, nq, 0.5), b90 = quantile(tb, nq, 0.9);
    double recall = 0.0;
    for (uint32_t e = 0; e < nef; e++) {
        size_t found = 0, wanted = 0;
        for (size_t i = 0; i < nq; i++) {
            double t0 = now_us();
            hnsw_rev rev = hnsw_now(h);
            size_t ng = at ? hnsw_search_at(h, &rev, qs[i], k, efs[e], false, got)
                           : hnsw_search(h, qs[i], k, efs[e], false, got);
            tg[i] = now_us() - t0;
            for (size_t a = 0; a < ng; a++)
                for (size_t b = 0; b < ntruth[i]; b++)
                    if (got[a].key == truth[i * k + b].key) found++;
            wanted += ntruth[i];
        }
        recall = wanted ? (double)found / (double)wanted : 0.0;
        double gm = quantile(tg, nq, 0.5), g90 = quantile(tg, nq, 0.9);
        printf("search k=%u ef=%u queries=%zu recall=%.4f hnsw_median_us=%.1f hnsw_p90_us=%.1f "
               "brute_median_us=%.1f brute_p90_us=%.1f speedup=%.1f\n",
               k, efs[e], nq, recall, gm, g90, bm, b90, bm / gm);
        fflush(stdout);
    }
    free(ntruth);
    if (cross) crossover(dim, k, cross_ef, m, efc);
    free(got);
    free(truth);
    free(tg);
    free(tb);
    hnsw_free(h);
    free(vecs);
    free(qs);
    val_shutdown();
    if (smoke && recall < 0.9) {
        fprintf(stderr, "bench_vectors: recall %.3f under 0.9\n", recall);
        return 1;
    }
    return 0;
}
