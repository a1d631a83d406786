/* The perf gate's statistics; see gate_stats.h. */
#include "gate_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const NAMES[] = {"PASS", "FAIL", "INCONCLUSIVE", "INVALID"};

/* The order of severity: PASS < INCONCLUSIVE < FAIL < INVALID. */
static int severity(gs_verdict v) {
    switch (v) {
    case GS_PASS:
        return 0;
    case GS_INCONCLUSIVE:
        return 1;
    case GS_FAIL:
        return 2;
    default:
        return 3;
    }
}

gs_verdict gs_worse(gs_verdict a, gs_verdict b) {
    return severity(a) >= severity(b) ? a : b;
}

const char *gs_verdict_name(gs_verdict v) {
    return (unsigned)v < sizeof NAMES / sizeof *NAMES ? NAMES[v] : "INVALID";
}

bool gs_verdict_parse(const char *name, gs_verdict *v) {
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
        if (strcmp(name, NAMES[i]) == 0) {
            *v = (gs_verdict)i;
            return true;
        }
    return false;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double gs_median(double *v, size_t n) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sums C(n, i) / 2^n in logarithms, so that large n neither overflows nor loses the
 * small tail probabilities that decide the interval. */
double gs_binom_half_cdf(size_t n, long k) {
    if (k < 0) return 0;
    if ((size_t)k >= n) return 1;
    double sum = 0, log_half_n = (double)n * log(0.5);
    for (long i = 0; i <= k; i++)
        sum += exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
                   lgamma((double)(n - (size_t)i) + 1) + log_half_n);
    return sum > 1 ? 1 : sum;
}

size_t gs_median_interval_rank(size_t n, double confidence, double *coverage) {
    size_t best = 0;
    double best_cov = 0;
    for (size_t k = 1; 2 * k <= n + 1; k++) {
        double cov = 1 - 2 * gs_binom_half_cdf(n, (long)k - 1);
        /* A tiny tolerance: 0.95 itself must count as reached despite rounding. */
        if (cov + 1e-12 < confidence) break;
        best = k;
        best_cov = cov;
    }
    if (coverage) *coverage = best_cov;
    return best;
}

double gs_cost_ratio(double baseline, double candidate, bool higher_is_better) {
    if (isnan(baseline) || isnan(candidate)) return NAN;
    double num = higher_is_better ? baseline : candidate;
    double den = higher_is_better ? candidate : baseline;
    if (den <= 0 || num < 0) return NAN;
    return num / den;
}

gs_estimate gs_estimate_ratios(double *ratios, size_t n, double confidence) {
    gs_estimate e = {.n = n, .median = NAN, .lower = NAN, .upper = NAN};
    if (n == 0) return e;
    e.median = gs_median(ratios, n); /* sorts */
    size_t k = gs_median_interval_rank(n, confidence, &e.coverage);
    if (k > 0) {
        e.lower = ratios[k - 1];
        e.upper = ratios[n - k];
    }
    return e;
}

gs_verdict gs_judge(const gs_estimate *e, double budget, size_t min_rounds) {
    if (e->n < min_rounds || isnan(e->lower) || isnan(e->upper)) return GS_INVALID;
    if (e->upper <= budget) return GS_PASS;
    if (e->lower > budget) return GS_FAIL;
    return GS_INCONCLUSIVE;
}
