/* The statistics of the perf gate's paired comparison (docs/performance.md 3.5 in the
 * specification notes; bench/README.md): per metric, the median of the per-round cost
 * ratios (candidate / baseline for times, baseline / candidate for rates, so that above 1
 * is worse either way), the exact distribution-free confidence interval for that median
 * from binomial order statistics, and the verdict against a budget. No I/O: the unit
 * tests (tests/unit/test_gate_stats.c) call it directly. */
#ifndef IL_BENCH_GATE_STATS_H
#define IL_BENCH_GATE_STATS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum gs_verdict {
    GS_PASS = 0,
    GS_FAIL = 1,
    GS_INCONCLUSIVE = 2,
    GS_INVALID = 3,
} gs_verdict;

/* Worst first when verdicts are combined: INVALID, FAIL, INCONCLUSIVE, PASS. */
gs_verdict gs_worse(gs_verdict a, gs_verdict b);
const char *gs_verdict_name(gs_verdict v);
/* Parses a name as gs_verdict_name prints it; false when it is none of them. */
bool gs_verdict_parse(const char *name, gs_verdict *v);

/* The median of n values (sorted in place); NaN when n is 0. */
double gs_median(double *v, size_t n);

/* P(Bin(n, 1/2) <= k), exactly enough for n up to a few hundred. */
double gs_binom_half_cdf(size_t n, long k);

/* The order statistic index k (1-based) of the interval [x(k), x(n+1-k)] for the median of
 * n values: the largest k whose coverage 1 - 2 P(Bin(n, 1/2) <= k - 1) is at least
 * `confidence`; 0 when not even [min, max] reaches it (too few rounds). *coverage (may be
 * NULL) receives the interval's coverage. */
size_t gs_median_interval_rank(size_t n, double confidence, double *coverage);

/* The paired estimate of one metric over n rounds. */
typedef struct gs_estimate {
    size_t n;
    double median, lower, upper; /* NaN when n is 0 or no interval exists */
    double coverage;             /* of [lower, upper]; 0 when none */
} gs_estimate;

/* The cost ratio of one round: candidate / baseline when lower is better, baseline /
 * candidate when higher is better. NaN when either is missing (NaN) or a divisor is not
 * positive. */
double gs_cost_ratio(double baseline, double candidate, bool higher_is_better);

/* The median of the n ratios and its interval (the ratios are sorted in place). */
gs_estimate gs_estimate_ratios(double *ratios, size_t n, double confidence);

/* The verdict of an estimate against budget (a cost ratio, e.g. 1.05):
 * PASS when the whole interval is <= budget, FAIL when the whole interval is above it,
 * INCONCLUSIVE when it straddles it, INVALID when there is no interval (fewer rounds than
 * the confidence needs, or fewer than min_rounds). */
gs_verdict gs_judge(const gs_estimate *e, double budget, size_t min_rounds);

#endif
