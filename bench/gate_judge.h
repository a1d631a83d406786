/* The verdict of a paired comparison (bench/README.md): every metric of every fixture
 * judged from its per-round values on both arms against the policy, and the run's
 * verdict from the required metrics and the runs' statuses. Used by `inputlayer-bench
 * compare` after measuring and by `compare --rejudge` on a saved report. */
#ifndef IL_BENCH_GATE_JUDGE_H
#define IL_BENCH_GATE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gate_policy.h"
#include "gate_report.h"
#include "gate_stats.h"

typedef struct gj_metric {
    char *name; /* fixture.metric */
    bool required, higher_is_better;
    bool measured;              /* by some run (a required metric may be missing from all) */
    size_t rounds;              /* with a value on both arms */
    double baseline, candidate; /* medians over those rounds */
    gs_estimate est;
    double budget;
    bool has_ceiling;
    double ceiling;
    gs_verdict verdict;
    char *why; /* what made it INVALID or FAIL beyond the interval; NULL otherwise */
} gj_metric;

typedef struct gj_judgement {
    gj_metric *metrics;
    size_t n;
    char **problems; /* runs that failed, required metrics missing */
    size_t nproblems;
    /* Fixtures skipped (a run of either arm GR_SKIPPED): "fixture: why", one per fixture;
     * none of their metrics is judged, required or not. */
    char **skipped;
    size_t nskipped;
    gs_verdict verdict;
    /* The required metrics judged and the confidence that all their intervals hold at
     * once (Bonferroni: 1 - the sum of their intervals' non-coverage; NaN when none). */
    size_t family;
    double family_confidence;
} gj_judgement;

/* Judges a compare report. False only when memory runs out. */
bool gj_judge(const gr_report *r, const gp_policy *p, gj_judgement *j);
void gj_free(gj_judgement *j);
/* The judgement as a JSON object (a json_t *). */
void *gj_to_json(const gj_judgement *j, const gp_policy *p);
/* The Markdown report: the arms, every metric's estimate and verdict, the problems. */
void gj_print_markdown(FILE *f, const gr_report *r, const gj_judgement *j, const gp_policy *p);
/* The exit status of a verdict: 0 PASS, 1 FAIL, 2 INCONCLUSIVE, 3 INVALID. */
int gj_exit_status(gs_verdict v);

#endif
