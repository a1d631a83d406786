/* Unit tests of the perf gate's statistics, policy and verdicts (bench/gate_stats.c,
 * bench/gate_policy.c, bench/gate_judge.c, bench/gate_report.c): medians, the exact
 * binomial interval for the median against known values, the cost ratios, the verdict
 * rules at their boundaries, the policy's parsing and errors, the judgement of a report
 * (required metrics, short rounds, failed runs, ceilings) and the report's JSON round
 * trip that `compare --rejudge` relies on. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate_judge.h"
#include "gate_policy.h"
#include "gate_report.h"
#include "gate_why.h"
#include "gate_stats.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

Test(gate_stats, median) {
    double odd[] = {5, 1, 3};
    cr_assert(NEAR(gs_median(odd, 3), 3));
    double even[] = {4, 1, 3, 2};
    cr_assert(NEAR(gs_median(even, 4), 2.5));
    cr_assert(isnan(gs_median(NULL, 0)));
}

Test(gate_stats, binomial_cdf_known_values) {
    cr_assert(NEAR(gs_binom_half_cdf(6, 0), 1.0 / 64));
    cr_assert(NEAR(gs_binom_half_cdf(10, 1), 11.0 / 1024));
    cr_assert(NEAR(gs_binom_half_cdf(10, 2), 56.0 / 1024));
    cr_assert(NEAR(gs_binom_half_cdf(20, 5), 21700.0 / 1048576));
    cr_assert(NEAR(gs_binom_half_cdf(10, 10), 1));
    cr_assert(NEAR(gs_binom_half_cdf(10, -1), 0));
    /* Symmetry: P(X <= k) + P(X <= n - k - 1) = 1. */
    cr_assert(NEAR(gs_binom_half_cdf(31, 12) + gs_binom_half_cdf(31, 18), 1));
}

/* The interval [x(k), x(n+1-k)] of the notes: n = 6 gives [min, max] at 96.9%, n = 10
 * [x(2), x(9)], n = 20 [x(6), x(15)], n = 30 [x(10), x(21)]; n = 5 has none at 95%. */
Test(gate_stats, interval_ranks) {
    double cov;
    cr_assert_eq(gs_median_interval_rank(5, 0.95, &cov), 0);
    cr_assert_eq(gs_median_interval_rank(6, 0.95, &cov), 1);
    cr_assert(NEAR(cov, 1 - 2.0 / 64));
    cr_assert_eq(gs_median_interval_rank(10, 0.95, &cov), 2);
    cr_assert(NEAR(cov, 1 - 22.0 / 1024));
    cr_assert_eq(gs_median_interval_rank(20, 0.95, &cov), 6);
    cr_assert(NEAR(cov, 1 - 2 * 21700.0 / 1048576));
    cr_assert_eq(gs_median_interval_rank(30, 0.95, &cov), 10);
    cr_assert(cov > 0.957 && cov < 0.958, "coverage %f", cov);
    /* A lower confidence narrows it: n = 10 at 0.85 is [x(3), x(8)] (89.1%). */
    cr_assert_eq(gs_median_interval_rank(10, 0.85, &cov), 3);
}

Test(gate_stats, estimate_of_ratios) {
    double r[] = {1.09, 0.91, 1.00, 1.30, 0.70, 1.02, 0.98, 1.01, 0.99, 1.05};
    gs_estimate e = gs_estimate_ratios(r, 10, 0.95);
    cr_assert_eq(e.n, 10);
    cr_assert(NEAR(e.median, 1.005));
    cr_assert(NEAR(e.lower, 0.91), "lower %f", e.lower); /* x(2): one outlier dropped */
    cr_assert(NEAR(e.upper, 1.09), "upper %f", e.upper); /* x(9) */
    double few[] = {1, 2, 3};
    e = gs_estimate_ratios(few, 3, 0.95);
    cr_assert(isnan(e.lower) && isnan(e.upper));
    cr_assert(NEAR(e.median, 2));
}

Test(gate_stats, cost_ratios) {
    cr_assert(NEAR(gs_cost_ratio(100, 120, false), 1.2));  /* a time: candidate / baseline */
    cr_assert(NEAR(gs_cost_ratio(1000, 800, true), 1.25)); /* a rate: baseline / candidate */
    cr_assert(isnan(gs_cost_ratio(NAN, 1, false)));
    cr_assert(isnan(gs_cost_ratio(0, 1, false)));
    cr_assert(isnan(gs_cost_ratio(1, 0, true)));
}

Test(gate_stats, verdict_rules) {
    gs_estimate e = {.n = 10, .median = 1.0, .lower = 0.97, .upper = 1.04};
    cr_assert_eq(gs_judge(&e, 1.05, 6), GS_PASS);
    e.upper = 1.05; /* on the budget: within it */
    cr_assert_eq(gs_judge(&e, 1.05, 6), GS_PASS);
    e.upper = 1.06;
    cr_assert_eq(gs_judge(&e, 1.05, 6), GS_INCONCLUSIVE);
    e.lower = 1.05; /* not wholly above */
    cr_assert_eq(gs_judge(&e, 1.05, 6), GS_INCONCLUSIVE);
    e.lower = 1.051, e.upper = 1.3;
    cr_assert_eq(gs_judge(&e, 1.05, 6), GS_FAIL);
    e.n = 5;
    cr_assert_eq(gs_judge(&e, 1.05, 6), GS_INVALID);
    e.n = 10, e.lower = NAN;
    cr_assert_eq(gs_judge(&e, 1.05, 6), GS_INVALID);
    cr_assert_eq(gs_worse(GS_PASS, GS_INCONCLUSIVE), GS_INCONCLUSIVE);
    cr_assert_eq(gs_worse(GS_FAIL, GS_INCONCLUSIVE), GS_FAIL);
    cr_assert_eq(gs_worse(GS_FAIL, GS_INVALID), GS_INVALID);
    cr_assert_eq(gs_worse(GS_PASS, GS_PASS), GS_PASS);
    gs_verdict v;
    cr_assert(gs_verdict_parse("INCONCLUSIVE", &v) && v == GS_INCONCLUSIVE);
    cr_assert(!gs_verdict_parse("MAYBE", &v));
}

/* ---- the policy ---- */

static bool parse(const char *text, gp_policy *p, char *err) {
    gp_defaults(p);
    return gp_parse(text, strlen(text), p, err, 300);
}

Test(gate_policy, parses_and_picks_budgets) {
    gp_policy p;
    char err[300];
    cr_assert(parse("[gate]\nconfidence = 0.9\nmin_rounds = 8\nmin_samples_p99 = 200\n"
                    "[budget]\np50 = 1.02\nrate = 2\n"
                    "overrides = [\"delta_keyed.ack_us.p99 = 1.25\"]\n"
                    "[required]\nmetrics = [\"cheap_query.latency_us.p50\", "
                    "\"cheap_query.queries_per_sec\"]\n"
                    "[ceilings]\nlimits = [\"recursive_query.latency_us.p50 <= 200000\"]\n",
                    &p, err),
              "%s", err);
    cr_assert(NEAR(p.confidence, 0.9));
    cr_assert_eq(p.min_rounds, 8);
    cr_assert_eq(p.min_samples_p50, 20);
    cr_assert_eq(gp_min_samples(&p, "a.x_us.p99"), 200);
    cr_assert_eq(gp_min_samples(&p, "a.x_per_sec"), 1);
    cr_assert(NEAR(gp_budget(&p, "cheap_query.latency_us.p50"), 1.02));
    cr_assert(NEAR(gp_budget(&p, "cheap_query.latency_us.p99"), 1.10));
    cr_assert(NEAR(gp_budget(&p, "cheap_query.queries_per_sec"), 2));
    cr_assert(NEAR(gp_budget(&p, "delta_keyed.ack_us.p99"), 1.25));
    cr_assert(NEAR(gp_budget(&p, "x.server_rss_kb"), 1.10));
    cr_assert(gp_is_required(&p, "cheap_query.queries_per_sec"));
    cr_assert(!gp_is_required(&p, "cheap_query.latency_us.p99"));
    double limit;
    cr_assert(gp_ceiling(&p, "recursive_query.latency_us.p50", &limit) && NEAR(limit, 200000));
    cr_assert(!gp_ceiling(&p, "cheap_query.latency_us.p50", &limit));
    cr_assert_str_eq(gp_metric_kind("a.b.p50"), "p50");
    cr_assert_str_eq(gp_metric_kind("a.writes_per_server_cpu_sec"), "rate");
    cr_assert_str_eq(gp_metric_kind("a.server_rss_kb"), "other");
    gp_free(&p);
}

Test(gate_policy, refuses_bad_input) {
    gp_policy p;
    char err[300];
    cr_assert(!parse("[gate]\nconfidense = 0.9\n", &p, err));
    cr_assert(strstr(err, "line 2") && strstr(err, "unknown key"), "%s", err);
    gp_free(&p);
    cr_assert(!parse("[gate]\nmin_rounds = \"six\"\n", &p, err));
    cr_assert(strstr(err, "integer"), "%s", err);
    gp_free(&p);
    cr_assert(!parse("[budget]\np50 = 0.5\n", &p, err)); /* a budget below 1 passes nothing */
    gp_free(&p);
    cr_assert(!parse("[budget]\noverrides = [\"delta_keyed.ack_us.p99 1.2\"]\n", &p, err));
    cr_assert(strstr(err, "line 2"), "%s", err);
    gp_free(&p);
    cr_assert(!parse("[required]\nmetrics = [\"no_dot\"]\n", &p, err));
    gp_free(&p);
    cr_assert(!parse("[ceilings]\nlimits = [\"a.b <= -3\"]\n", &p, err));
    gp_free(&p);
    cr_assert(!parse("[gate\n", &p, err)); /* the TOML reader's own errors come through */
    gp_free(&p);
}

Test(gate_policy, the_repository_policy_loads) {
    gp_policy p;
    char err[300];
    gp_defaults(&p);
    cr_assert(gp_load(IL_SOURCE_DIR "/bench/policy.toml", &p, err, sizeof err), "%s", err);
    cr_assert_geq(p.nrequired, 20);
    cr_assert(gp_is_required(&p, "delta_keyed.writes_per_server_cpu_sec"));
    cr_assert(gp_is_required(&p, "recursive_query.latency_us.p50"));
    cr_assert_eq(p.min_rounds, 6);
    gp_free(&p);
}

/* ---- judging a report ---- */

/* Adds round k of fixture f on both arms with metric m: baseline b, candidate c. */
static void add_pair(gr_report *r, const char *f, int k, const char *m, double b, double c,
                     long samples, bool higher) {
    for (int arm = 0; arm < 2; arm++) {
        gr_result *res = NULL;
        for (size_t i = 0; i < r->n; i++)
            if (r->results[i].round == k && r->results[i].arm == arm &&
                strcmp(r->results[i].fixture, f) == 0)
                res = &r->results[i];
        if (!res) res = gr_add_result(r, f, k, arm, arm);
        cr_assert_not_null(res);
        cr_assert(gr_add_metric(res, m, arm ? c : b, samples, higher));
    }
}

static const gj_metric *judged(const gj_judgement *j, const char *name) {
    for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->metrics[i].name, name) == 0) return &j->metrics[i];
    cr_assert_fail("no metric %s", name);
    return NULL;
}

/* Ten rounds: a latency 20% worse, one unchanged, a rate 10% better, a p99 with too few
 * samples in one round. */
static void sample_report(gr_report *r) {
    *r = (gr_report){.rounds = 10};
    gr_set(&r->kind, "compare");
    cr_assert(gr_add_fixture(r, "q") && gr_add_fixture(r, "w"));
    for (int k = 0; k < 10; k++) {
        double wobble = 1 + 0.01 * (k % 3 - 1);
        add_pair(r, "q", k, "latency_us.p50", 100, 120 * wobble, 400, false);
        add_pair(r, "q", k, "latency_us.p99", 200, 200 * wobble, k == 4 ? 50 : 400, false);
        add_pair(r, "q", k, "queries_per_sec", 1000, 1100 * wobble, 400, true);
        add_pair(r, "w", k, "ack_us.p50", 50, 50 * wobble, 400, false);
    }
}

Test(gate_judge, verdicts_of_a_report) {
    gr_report r;
    sample_report(&r);
    gp_policy p;
    char err[300];
    cr_assert(parse("[required]\nmetrics = [\"q.latency_us.p50\", \"w.ack_us.p50\", "
                    "\"q.queries_per_sec\"]\n",
                    &p, err),
              "%s", err);
    gj_judgement j;
    cr_assert(gj_judge(&r, &p, &j));
    const gj_metric *m = judged(&j, "q.latency_us.p50");
    cr_assert_eq(m->verdict, GS_FAIL);
    cr_assert_eq(m->rounds, 10);
    cr_assert(m->est.lower > 1.05 && m->est.median > 1.18 && m->est.median < 1.22);
    cr_assert_eq(judged(&j, "w.ack_us.p50")->verdict, GS_PASS);
    m = judged(&j, "q.queries_per_sec"); /* higher is better: a cost ratio below 1 */
    cr_assert(m->est.median < 0.95, "%f", m->est.median);
    cr_assert_eq(m->verdict, GS_PASS);
    m = judged(&j, "q.latency_us.p99");
    cr_assert_eq(m->verdict, GS_INVALID);
    cr_assert(m->why && strstr(m->why, "round 5"), "%s", m->why);
    cr_assert(!m->required);
    /* The p99 is not required: the run FAILs on the p50. */
    cr_assert_eq(j.verdict, GS_FAIL);
    cr_assert_eq(gj_exit_status(j.verdict), 1);
    gj_free(&j);
    gp_free(&p);

    /* Required of a fixture the run asked for, but never measured: INVALID. A required
     * metric of a fixture it did not ask for is not judged. */
    cr_assert(parse("[required]\nmetrics = [\"w.ack_us.p50\", \"w.missing_us.p50\", "
                    "\"other.latency_us.p50\"]\n",
                    &p, err));
    cr_assert(gj_judge(&r, &p, &j));
    cr_assert_eq(judged(&j, "w.missing_us.p50")->verdict, GS_INVALID);
    for (size_t i = 0; i < j.n; i++) cr_assert_str_neq(j.metrics[i].name, "other.latency_us.p50");
    cr_assert_eq(j.verdict, GS_INVALID);
    gj_free(&j);
    gp_free(&p);

    /* Only passing metrics required: PASS; with a ceiling under the candidate: FAIL. */
    cr_assert(parse("[required]\nmetrics = [\"w.ack_us.p50\"]\n", &p, err));
    cr_assert(gj_judge(&r, &p, &j));
    cr_assert_eq(j.verdict, GS_PASS);
    gj_free(&j);
    gp_free(&p);
    cr_assert(parse("[required]\nmetrics = [\"w.ack_us.p50\"]\n"
                    "[ceilings]\nlimits = [\"w.ack_us.p50 <= 40\"]\n",
                    &p, err));
    cr_assert(gj_judge(&r, &p, &j));
    cr_assert_eq(judged(&j, "w.ack_us.p50")->verdict, GS_FAIL);
    cr_assert_eq(j.verdict, GS_FAIL);
    gj_free(&j);
    gp_free(&p);

    /* A wrong answer anywhere makes the run INVALID, whatever the metrics say. */
    gr_fail(&r.results[3], GR_INVALID, "rows differ");
    cr_assert(parse("[required]\nmetrics = [\"w.ack_us.p50\"]\n", &p, err));
    cr_assert(gj_judge(&r, &p, &j));
    cr_assert_eq(j.verdict, GS_INVALID);
    cr_assert_eq(j.nproblems, 1);
    cr_assert(strstr(j.problems[0], "rows differ"));
    gj_free(&j);
    gp_free(&p);
    gr_free(&r);
}

/* A fixture that one arm cannot run (its commit lacks a binary or a feature) is skipped:
 * neither its metrics nor its required ones are judged, it is no problem, and the run's
 * verdict comes from the other fixtures. */
Test(gate_judge, a_skipped_fixture_is_not_judged) {
    gr_report r;
    sample_report(&r);
    cr_assert(gr_add_fixture(&r, "s"));
    for (int k = 0; k < 10; k++) {
        add_pair(&r, "s", k, "wall_ms", 100, 300, 1, false);
        gr_fail(&r.results[r.n - 2], GR_SKIPPED, "no inputlayer-inproc at this commit");
    }
    gp_policy p;
    char err[300];
    cr_assert(
        parse("[required]\nmetrics = [\"w.ack_us.p50\", \"s.wall_ms\", \"s.rss_kb\"]\n", &p, err),
        "%s", err);
    gj_judgement j;
    cr_assert(gj_judge(&r, &p, &j));
    for (size_t i = 0; i < j.n; i++) cr_assert(strncmp(j.metrics[i].name, "s.", 2) != 0);
    cr_assert_eq(j.nproblems, 0);
    cr_assert_eq(j.nskipped, 1);
    cr_assert(strstr(j.skipped[0], "s: SKIPPED (the baseline: no inputlayer-inproc"), "%s",
              j.skipped[0]);
    cr_assert_eq(j.verdict, GS_PASS);
    gj_free(&j);
    gp_free(&p);
    gr_free(&r);
}

/* A paired run (both arms at once, samples paired in time) gives the round's ratio itself:
 * the judge takes it over the ratio of the two arms' values. Here the two p50s swing
 * between rounds as a bimodal disk makes them do (0.5 to 2.0), while the pairs say 1.2. */
Test(gate_judge, paired_ratio_is_the_rounds_ratio) {
    gr_report r = {.rounds = 10};
    cr_assert(gr_add_fixture(&r, "w"));
    for (int k = 0; k < 10; k++) {
        double swing = k % 2 ? 2.0 : 0.5;
        add_pair(&r, "w", k, "ack_us.p50", 300, 300 * swing, 400, false);
        add_pair(&r, "w", k, "ack_us.p99", 3000, 3000 * swing, 400, false);
        for (size_t i = 0; i < r.n; i++)
            if (r.results[i].round == k)
                cr_assert(gr_set_paired_ratio(&r.results[i], "ack_us.p50",
                                              r.results[i].arm ? 1.2 + 0.01 * (k % 3) : 0.8));
    }
    cr_assert(!gr_set_paired_ratio(&r.results[0], "no_such_metric", 1.0));
    gp_policy p;
    char err[300];
    cr_assert(parse("[required]\nmetrics = [\"w.ack_us.p50\", \"w.ack_us.p99\"]\n", &p, err));
    gj_judgement j;
    cr_assert(gj_judge(&r, &p, &j));
    const gj_metric *m = judged(&j, "w.ack_us.p50");
    cr_assert_eq(m->verdict, GS_FAIL);
    cr_assert(m->est.lower >= 1.2 && m->est.upper <= 1.22, "%f %f", m->est.lower, m->est.upper);
    /* Without paired ratios the same rounds are INCONCLUSIVE. */
    cr_assert_eq(judged(&j, "w.ack_us.p99")->verdict, GS_INCONCLUSIVE);
    gj_free(&j);

    /* The paired ratio survives the JSON report; a paired_ratio that is not a number is
     * an error. */
    char path[] = "/tmp/gate-paired-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    json_t *o = gr_to_json(&r);
    cr_assert_eq(json_dump_file(o, path, 0), 0);
    gr_report back;
    cr_assert(gr_read_file(path, &back, err, sizeof err), "%s", err);
    const gr_metric *b = gr_find_metric(&back.results[1], "ack_us.p50");
    cr_assert(b && NEAR(b->paired_ratio, 1.2), "%f", b ? b->paired_ratio : -1);
    cr_assert(isnan(gr_find_metric(&back.results[1], "ack_us.p99")->paired_ratio));
    gr_free(&back);
    json_t *metrics = json_object_get(json_array_get(json_object_get(o, "results"), 0), "metrics");
    json_object_set_new(json_object_get(metrics, "ack_us.p50"), "paired_ratio", json_string("1.2"));
    cr_assert_eq(json_dump_file(o, path, 0), 0);
    json_decref(o);
    cr_assert(!gr_read_file(path, &back, err, sizeof err));
    cr_assert(strstr(err, "paired_ratio"), "%s", err);
    unlink(path);
    gp_free(&p);
    gr_free(&r);
}

/* An A/A run judges many required metrics at once: at 95 % each, one interval in twenty
 * would miss 1.0 by chance. Simultaneous intervals (the default) share the 5 % among the
 * required metrics; here metric "m0" has one round below 1.0 and nine above, and 27
 * metrics are required. */
static void many_metrics_report(gr_report *r, int nmetrics) {
    *r = (gr_report){.rounds = 10};
    cr_assert(gr_add_fixture(r, "f"));
    for (int i = 0; i < nmetrics; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%d_us.p50", i);
        for (int k = 0; k < 10; k++)
            add_pair(r, "f", k, name, 100, k == 0 ? 99 : 101 + k, 400, false);
    }
}

static void require_metrics(char *text, size_t size, int nmetrics, bool simultaneous) {
    int len = snprintf(text, size, "[gate]\nsimultaneous = %s\n[required]\nmetrics = [",
                       simultaneous ? "true" : "false");
    for (int i = 0; i < nmetrics; i++)
        len += snprintf(text + len, size - (size_t)len, "%s\"f.m%d_us.p50\"", i ? ", " : "", i);
    snprintf(text + len, size - (size_t)len, "]\n");
}

Test(gate_judge, simultaneous_intervals_over_the_required_metrics) {
    gr_report r;
    many_metrics_report(&r, 27);
    char text[2000], err[300];
    gp_policy p;
    gj_judgement j;

    /* Each at 95 %: [x(2), x(9)] = [1.02, 1.09], which misses 1.0. */
    require_metrics(text, sizeof text, 27, false);
    cr_assert(parse(text, &p, err), "%s", err);
    cr_assert(gj_judge(&r, &p, &j));
    const gj_metric *m = judged(&j, "f.m0_us.p50");
    cr_assert(NEAR(m->est.lower, 1.02) && NEAR(m->est.upper, 1.09), "%f %f", m->est.lower,
              m->est.upper);
    cr_assert(j.family_confidence < 0.6, "%f", j.family_confidence);
    gj_free(&j);
    gp_free(&p);

    /* Simultaneous: 1 - 5 % / 27 is more than 10 rounds give, so [min, max] = [0.99, 1.10],
     * and all 27 hold at once with 1 - 27 * 2 / 1024 = 94.7 %. */
    require_metrics(text, sizeof text, 27, true);
    cr_assert(parse(text, &p, err), "%s", err);
    cr_assert(gj_judge(&r, &p, &j));
    m = judged(&j, "f.m0_us.p50");
    cr_assert(NEAR(m->est.lower, 0.99) && NEAR(m->est.upper, 1.10), "%f %f", m->est.lower,
              m->est.upper);
    cr_assert_eq(m->verdict, GS_INCONCLUSIVE);
    cr_assert_eq(j.family, 27);
    cr_assert(NEAR(j.family_confidence, 1 - 27 * 2.0 / 1024), "%f", j.family_confidence);
    gj_free(&j);
    gp_free(&p);
    gr_free(&r);

    /* Two required metrics: 97.5 % each, which [x(2), x(9)] (97.85 %) reaches. */
    many_metrics_report(&r, 2);
    require_metrics(text, sizeof text, 2, true);
    cr_assert(parse(text, &p, err), "%s", err);
    cr_assert(gj_judge(&r, &p, &j));
    m = judged(&j, "f.m1_us.p50");
    cr_assert(NEAR(m->est.lower, 1.02) && NEAR(m->est.upper, 1.09));
    cr_assert(j.family_confidence > 0.95 && j.family_confidence < 0.96, "%f", j.family_confidence);
    gj_free(&j);
    gp_free(&p);
    gr_free(&r);

    cr_assert_not(parse("[gate]\nsimultaneous = 1\n", &p, err));
    cr_assert(strstr(err, "true or false"), "%s", err);
    gp_free(&p);
}

Test(gate_judge, too_few_rounds_are_invalid) {
    gr_report r = {.rounds = 5};
    cr_assert(gr_add_fixture(&r, "q"));
    for (int k = 0; k < 5; k++) add_pair(&r, "q", k, "latency_us.p50", 100, 100, 400, false);
    gp_policy p;
    char err[300];
    cr_assert(parse("[required]\nmetrics = [\"q.latency_us.p50\"]\n", &p, err));
    gj_judgement j;
    cr_assert(gj_judge(&r, &p, &j));
    cr_assert_eq(j.verdict, GS_INVALID);
    cr_assert_eq(gj_exit_status(j.verdict), 3);
    gj_free(&j);
    gp_free(&p);
    gr_free(&r);
}

Test(gate_report, json_round_trip) {
    gr_report r;
    sample_report(&r);
    gr_set(&r.profile, "small");
    gr_set(&r.arms[0], "revision HEAD");
    gr_set(&r.arms[1], "binary build/inputlayer-server");
    r.results[0].metrics[0].value = NAN;
    gr_fail(&r.results[1], GR_FAILED, "timeout");
    char path[] = "/tmp/gate-report-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    json_t *o = gr_to_json(&r);
    cr_assert_eq(json_dump_file(o, path, 0), 0);
    json_decref(o);
    gr_report back;
    char err[300];
    cr_assert(gr_read_file(path, &back, err, sizeof err), "%s", err);
    unlink(path);
    cr_assert_eq(back.n, r.n);
    cr_assert_eq(back.rounds, 10);
    cr_assert_str_eq(back.profile, "small");
    cr_assert_str_eq(back.arms[1], "binary build/inputlayer-server");
    for (size_t i = 0; i < r.n; i++) {
        cr_assert_str_eq(back.results[i].fixture, r.results[i].fixture);
        cr_assert_eq(back.results[i].round, r.results[i].round);
        cr_assert_eq(back.results[i].arm, r.results[i].arm);
        cr_assert_eq(back.results[i].status, r.results[i].status);
        cr_assert_eq(back.results[i].nmetrics, r.results[i].nmetrics);
        for (size_t m = 0; m < r.results[i].nmetrics; m++) {
            const gr_metric *a = &r.results[i].metrics[m];
            const gr_metric *b = gr_find_metric(&back.results[i], a->name);
            cr_assert_not_null(b);
            cr_assert(isnan(a->value) ? isnan(b->value) : NEAR(a->value, b->value));
            cr_assert_eq(a->samples, b->samples);
            cr_assert_eq(a->higher_is_better, b->higher_is_better);
        }
    }
    cr_assert_str_eq(back.results[1].message, "timeout");
    cr_assert_eq(back.nfixtures, 2);
    cr_assert(gr_has_fixture(&back, "q") && gr_has_fixture(&back, "w"));
    gr_free(&back);
    gr_free(&r);

    /* Not a report: a clear error. */
    char bad[] = "/tmp/gate-report-XXXXXX";
    fd = mkstemp(bad);
    cr_assert(write(fd, "{\"rounds\": 3}", 13) == 13);
    close(fd);
    cr_assert(!gr_read_file(bad, &back, err, sizeof err));
    cr_assert(strstr(err, "not a perf-gate report"), "%s", err);
    unlink(bad);
}

/* ---- the why fixture's proof check ---- */

/* edge(1, 2), (1, 3), (2, 3), (3, 4), sorted; reach and two_hop over them. */
static const gg_edge WHY_EDGES[] = {{1, 2}, {1, 3}, {2, 3}, {3, 4}};

/* `trees` is JSON written with ' for " (checked as the server's text). */
static bool proofs_hold(const char *trees, const char *rows, char *why) {
    char *text = strdup(trees);
    for (char *p = text; *p; p++)
        if (*p == '\'') *p = '"';
    json_t *t = json_loads(text, 0, NULL), *r = json_loads(rows, 0, NULL);
    cr_assert(t && r, "bad test JSON: %s", text);
    bool ok = gw_check_proofs(t, r, WHY_EDGES, 4, why, 300);
    json_decref(t);
    json_decref(r);
    free(text);
    return ok;
}

#define HEAD(id) "{'version':1,'query':'q','roots':['" id "'],'nodes':{"
#define E(id, a)                                                                                   \
    "'" id "':{'kind':'fact','conclusion':{'pred':'edge','args':[" a "]},'source':'edb'}"
#define R(id, rel, a) "'" id "':{'kind':'rule','conclusion':{'pred':'" rel "','args':[" a "]},"
#define KIDS(...)     "'rule_id':'r','children':[" __VA_ARGS__ "]"

Test(gate_why, proofs_against_the_graph) {
    char why[300];
    /* two_hop(1, 3) through 2, two_hop(1, 4) through 3: as the server writes them. */
    const char *two_hop = "[" HEAD("n0") R("n0", "two_hop", "1,3")
        KIDS("'n2','n3'") "}," E("n2", "1,2") "," E("n3", "2,3") "}}," HEAD("n1")
            R("n1", "two_hop", "1,4")
                KIDS("'n4','n5'") "}," E("n4", "1,3") "," E("n5", "3,4") "}}]";
    cr_assert(proofs_hold(two_hop, "[[1,3],[1,4]]", why), "%s", why);
    /* reach(1, 3) directly and, as an alternative, through reach(1, 2); reach(1, 4)
     * through reach(1, 3), one node in its tree. */
    const char *reach = "[" HEAD("n0") R("n0", "reach", "1,3")
        KIDS("'e13'") ",'alternatives':['d1']}," R("d1", "reach", "1,3")
            KIDS("'n1','e23'") "}," R("n1", "reach", "1,2") KIDS("'e12'") "}," E(
                "e13", "1,3") "," E("e23", "2,3") "," E("e12", "1,2") "}}," HEAD("n2")
                R("n2", "reach", "1,4") KIDS("'n0','e34'") "}," R("n0", "reach", "1,3")
                    KIDS("'e13'") "}," E("e13", "1,3") "," E("e34", "3,4") "}}]";
    cr_assert(proofs_hold(reach, "[[1,3],[1,4]]", why), "%s", why);

    /* A fact that is not an edge; children that do not join; a child that is no node; a
     * tree short; a tree for another row; a conclusion without derivation; an
     * alternative of another conclusion. */
    cr_assert(!proofs_hold("[" HEAD("n0") R("n0", "two_hop", "1,4")
                               KIDS("'a','b'") "}," E("a", "1,2") "," E("b", "2,4") "}}]",
                           "[[1,4]]", why));
    cr_assert(strstr(why, "edge(2, 4)"), "%s", why);
    cr_assert(!proofs_hold("[" HEAD("n0") R("n0", "two_hop", "1,4")
                               KIDS("'a','b'") "}," E("a", "1,2") "," E("b", "3,4") "}}]",
                           "[[1,4]]", why));
    cr_assert(strstr(why, "does not derive"), "%s", why);
    cr_assert(!proofs_hold("[" HEAD("n0") R("n0", "reach", "1,4")
                               KIDS("'n7','b'") "}," E("b", "3,4") "}}]",
                           "[[1,4]]", why));
    cr_assert(strstr(why, "n7"), "%s", why);
    cr_assert(!proofs_hold("[]", "[[1,3]]", why));
    cr_assert(!proofs_hold("[" HEAD("n0") R("n0", "two_hop", "1,3")
                               KIDS("'a','b'") "}," E("a", "1,2") "," E("b", "2,3") "}}]",
                           "[[1,4]]", why));
    cr_assert(
        !proofs_hold("[" HEAD("n0") R("n0", "two_hop", "1,3") "'rule_id':'r'}}}]", "[[1,3]]", why));
    cr_assert(strstr(why, "0 children"), "%s", why);
    cr_assert(!proofs_hold("[" HEAD("n0") R("n0", "reach", "1,3")
                               KIDS("'a'") ",'alternatives':['d']}," R("d", "reach", "1,2")
                                   KIDS("'b'") "}," E("a", "1,3") "," E("b", "1,2") "}}]",
                           "[[1,3]]", why));
    cr_assert(strstr(why, "alternative"), "%s", why);
}
