/* The perf gate's policy (bench/policy.toml, described in bench/README.md): the
 * confidence of the intervals, the minimum rounds and samples, the budget of each kind of
 * metric (p50, p99, rate, other) with per-metric overrides, the metrics that must be
 * there and must pass, and absolute ceilings on the candidate. Read with the server's
 * TOML reader (src/server/srv_toml.h); an unknown key or a value of the wrong type is an
 * error with its line, never ignored. */
#ifndef IL_BENCH_GATE_POLICY_H
#define IL_BENCH_GATE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gp_override {
    char *metric; /* "fixture.metric", e.g. "delta_keyed.ack_us.p99" */
    double value;
} gp_override;

typedef struct gp_policy {
    double confidence; /* of the median's interval: 0.95 */
    /* The confidence holds for all the required metrics of a run at once (each one's
     * interval at 1 - (1 - confidence) / M, M of them): bench/README.md. */
    bool simultaneous;
    long min_rounds; /* 6 */
    long min_samples_p50, min_samples_p99;
    double budget_p50, budget_p99, budget_rate, budget_other;
    gp_override *budgets; /* per-metric budgets */
    size_t nbudgets;
    char **required; /* "fixture.metric" names */
    size_t nrequired;
    gp_override *ceilings; /* the candidate's median over rounds must be <= value */
    size_t nceilings;
} gp_policy;

/* The built-in defaults of performance.md 3.5 with nothing required. */
void gp_defaults(gp_policy *p);

/* Parses a policy document over the defaults. False with "line N: ..." in err. */
bool gp_parse(const char *text, size_t len, gp_policy *p, char *err, size_t errlen);
/* Reads and parses a file. */
bool gp_load(const char *path, gp_policy *p, char *err, size_t errlen);
void gp_free(gp_policy *p);

/* The kind of a metric from the last part of its name: "p50", "p99", "rate" (a name
 * "..._per_..._sec"), else "other". */
const char *gp_metric_kind(const char *metric);
/* The budget of "fixture.metric": its override, else its kind's. */
double gp_budget(const gp_policy *p, const char *metric);
/* The samples one round needs for the metric: min_samples_p50 / _p99 for those kinds,
 * else 1. */
long gp_min_samples(const gp_policy *p, const char *metric);
bool gp_is_required(const gp_policy *p, const char *metric);
/* The ceiling of the metric, if any, in *limit. */
bool gp_ceiling(const gp_policy *p, const char *metric, double *limit);

#endif
