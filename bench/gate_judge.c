/* The verdict of a paired comparison; see gate_judge.h. */
#include "gate_judge.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 2, 3))) static char *format(char **out, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(*out);
    *out = strdup(buf);
    return *out;
}

static bool add_line(char ***lines, size_t *n, const char *text) {
    char **grown = realloc(*lines, (*n + 1) * sizeof *grown);
    if (!grown) return false;
    *lines = grown;
    grown[*n] = strdup(text);
    return grown[(*n)++] != NULL;
}

static bool add_problem(gj_judgement *j, const char *text) {
    return add_line(&j->problems, &j->nproblems, text);
}

/* The first skipped run of a fixture, or NULL: the fixture is then not judged at all. */
static const gr_result *skipped_run(const gr_report *r, const char *fixture) {
    for (size_t i = 0; i < r->n; i++)
        if (r->results[i].status == GR_SKIPPED && strcmp(r->results[i].fixture, fixture) == 0)
            return &r->results[i];
    return NULL;
}

/* The result of fixture f, arm a, round k; NULL when there is none. */
static const gr_result *find_result(const gr_report *r, const char *f, int arm, long k) {
    for (size_t i = 0; i < r->n; i++) {
        const gr_result *res = &r->results[i];
        if (res->arm == arm && res->round == k && strcmp(res->fixture, f) == 0) return res;
    }
    return NULL;
}

static gj_metric *find_metric(gj_judgement *j, const char *name) {
    for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->metrics[i].name, name) == 0) return &j->metrics[i];
    return NULL;
}

static gj_metric *add_metric(gj_judgement *j, const char *name, const gp_policy *p) {
    gj_metric *m = find_metric(j, name);
    if (m) return m;
    gj_metric *grown = realloc(j->metrics, (j->n + 1) * sizeof *grown);
    if (!grown) return NULL;
    j->metrics = grown;
    m = &j->metrics[j->n];
    *m = (gj_metric){.name = strdup(name), .verdict = GS_INVALID};
    if (!m->name) return NULL;
    m->required = gp_is_required(p, name);
    m->budget = gp_budget(p, name);
    m->has_ceiling = gp_ceiling(p, name, &m->ceiling);
    j->n++;
    return m;
}

/* The confidence level of one metric's interval over n rounds. With simultaneous intervals,
 * a required metric's is 1 - (1 - confidence) / family, so that an A/A run's intervals all
 * hold at once with the policy's confidence; where n rounds cannot reach that, the widest
 * interval they give, [min, max] (the family's confidence is then reported lower). */
static double metric_level(const gp_policy *p, const gj_metric *m, size_t family, size_t n) {
    if (!p->simultaneous || !m->required || family < 2) return p->confidence;
    double level = 1.0 - (1.0 - p->confidence) / (double)family;
    double widest = n >= 2 ? 1.0 - 2.0 * gs_binom_half_cdf(n, 0) : 0.0;
    return n >= 2 && widest < level ? widest : level;
}

/* Judges one metric over the rounds. */
static bool judge_metric(const gr_report *r, const gp_policy *p, size_t family, gj_metric *m) {
    const char *dot = strchr(m->name, '.');
    char fixture[128];
    snprintf(fixture, sizeof fixture, "%.*s", (int)(dot - m->name), m->name);
    const char *metric = dot + 1;
    long rounds = r->rounds > 0 ? r->rounds : 0;
    double *ratios = calloc((size_t)rounds + 1, sizeof *ratios);
    double *base = calloc((size_t)rounds + 1, sizeof *base);
    double *cand = calloc((size_t)rounds + 1, sizeof *cand);
    if (!ratios || !base || !cand) {
        free(ratios), free(base), free(cand);
        return false;
    }
    long need = gp_min_samples(p, m->name);
    size_t n = 0;
    for (long k = 0; k < rounds; k++) {
        const gr_result *rb = find_result(r, fixture, 0, k), *rc = find_result(r, fixture, 1, k);
        if (!rb || !rc || rb->status != GR_OK || rc->status != GR_OK) {
            if (!m->why)
                format(&m->why, "round %ld: a run of %s is missing or failed", k + 1, fixture);
            continue;
        }
        const gr_metric *b = gr_find_metric(rb, metric), *c = gr_find_metric(rc, metric);
        if (!b || !c) {
            if (!m->why)
                format(&m->why, "round %ld: not measured on %s", k + 1,
                       b ? "the candidate" : "the baseline");
            continue;
        }
        m->higher_is_better = b->higher_is_better;
        if (b->samples < need || c->samples < need || isnan(b->value) || isnan(c->value)) {
            if (!m->why)
                format(&m->why, "round %ld: %ld / %ld samples, %ld needed", k + 1, b->samples,
                       c->samples, need);
            continue;
        }
        /* Measured pair by pair (a paired run): the candidate's ratio to the baseline. */
        double ratio = !isnan(c->paired_ratio)
                           ? c->paired_ratio
                           : gs_cost_ratio(b->value, c->value, b->higher_is_better);
        if (isnan(ratio)) {
            if (!m->why)
                format(&m->why, "round %ld: no ratio of %g and %g", k + 1, b->value, c->value);
            continue;
        }
        base[n] = b->value;
        cand[n] = c->value;
        ratios[n++] = ratio;
    }
    m->rounds = n;
    m->baseline = gs_median(base, n);
    m->candidate = gs_median(cand, n);
    double level = metric_level(p, m, family, n);
    m->est = gs_estimate_ratios(ratios, n, level);
    if (m->why) {
        /* A short or missing round: the metric cannot be judged. */
        m->verdict = GS_INVALID;
    } else {
        m->verdict = gs_judge(&m->est, m->budget, (size_t)p->min_rounds);
        if (m->verdict == GS_INVALID)
            format(&m->why, "%zu rounds: at least %ld needed, and enough for a %.1f%% interval", n,
                   p->min_rounds, level * 100);
    }
    if (m->has_ceiling && n > 0 && m->candidate > m->ceiling) {
        m->verdict = gs_worse(m->verdict, GS_FAIL);
        if (!m->why)
            format(&m->why, "candidate median %g above the ceiling %g", m->candidate, m->ceiling);
    }
    free(ratios), free(base), free(cand);
    return true;
}

bool gj_judge(const gr_report *r, const gp_policy *p, gj_judgement *j) {
    *j = (gj_judgement){.verdict = GS_PASS};
    char text[700];
    for (size_t i = 0; i < r->n; i++) {
        const gr_result *res = &r->results[i];
        const gr_result *skip = skipped_run(r, res->fixture);
        if (skip) {
            if (skip == res) {
                snprintf(text, sizeof text, "%s: SKIPPED (the %s: %s)", res->fixture,
                         res->arm ? "candidate" : "baseline", res->message ? res->message : "?");
                if (!add_line(&j->skipped, &j->nskipped, text)) return false;
            }
            continue;
        }
        if (res->status != GR_OK) {
            snprintf(text, sizeof text, "round %d, %s, %s: %s: %s", res->round + 1, res->fixture,
                     res->arm ? "candidate" : "baseline",
                     res->status == GR_INVALID ? "INVALID (a wrong answer)" : "failed",
                     res->message ? res->message : "?");
            if (!add_problem(j, text)) return false;
            j->verdict = GS_INVALID;
        }
        for (size_t k = 0; k < res->nmetrics; k++) {
            char name[300];
            snprintf(name, sizeof name, "%s.%s", res->fixture, res->metrics[k].name);
            gj_metric *m = add_metric(j, name, p);
            if (!m) return false;
            m->measured = true;
        }
    }
    /* A required metric of a fixture the run did not ask for is not this run's concern
     * (`--fixtures cheap_query`); one of a fixture it did ask for must be there. */
    for (size_t i = 0; i < p->nrequired; i++) {
        const char *dot = strchr(p->required[i], '.');
        char fixture[128];
        snprintf(fixture, sizeof fixture, "%.*s", (int)(dot - p->required[i]), p->required[i]);
        if (gr_has_fixture(r, fixture) && !skipped_run(r, fixture) &&
            !add_metric(j, p->required[i], p))
            return false;
    }
    for (size_t i = 0; i < j->n; i++) j->family += j->metrics[i].required;
    double missed = 0; /* the sum of the required intervals' non-coverage */
    for (size_t i = 0; i < j->n; i++) {
        gj_metric *m = &j->metrics[i];
        if (!m->measured) {
            m->est = (gs_estimate){.median = NAN, .lower = NAN, .upper = NAN};
            m->baseline = m->candidate = NAN;
            if (!format(&m->why, "required but not measured")) return false;
        } else if (!judge_metric(r, p, j->family, m)) {
            return false;
        }
        if (m->required) {
            j->verdict = gs_worse(j->verdict, m->verdict);
            missed += isnan(m->est.lower) ? 1.0 : 1.0 - m->est.coverage;
        }
    }
    j->family_confidence = j->family ? (missed < 1.0 ? 1.0 - missed : 0.0) : NAN;
    return true;
}

void gj_free(gj_judgement *j) {
    for (size_t i = 0; i < j->n; i++) free(j->metrics[i].name), free(j->metrics[i].why);
    for (size_t i = 0; i < j->nproblems; i++) free(j->problems[i]);
    for (size_t i = 0; i < j->nskipped; i++) free(j->skipped[i]);
    free(j->metrics);
    free(j->problems);
    free(j->skipped);
    *j = (gj_judgement){0};
}

static json_t *number_or_null(double v) {
    return isnan(v) ? json_null() : json_real(v);
}

void *gj_to_json(const gj_judgement *j, const gp_policy *p) {
    json_t *o = json_object(), *metrics = json_array(), *problems = json_array(),
           *skipped = json_array();
    json_object_set_new(o, "verdict", json_string(gs_verdict_name(j->verdict)));
    json_object_set_new(o, "exit_status", json_integer(gj_exit_status(j->verdict)));
    json_object_set_new(o, "confidence", json_real(p->confidence));
    json_object_set_new(o, "simultaneous", json_boolean(p->simultaneous));
    json_object_set_new(o, "required_judged", json_integer((json_int_t)j->family));
    json_object_set_new(o, "family_confidence", number_or_null(j->family_confidence));
    for (size_t i = 0; i < j->n; i++) {
        const gj_metric *m = &j->metrics[i];
        json_t *e =
            json_pack("{s:s,s:b,s:I,s:o,s:o,s:o,s:o,s:o,s:f,s:s}", "metric", m->name, "required",
                      m->required, "rounds", (json_int_t)m->rounds, "baseline_median",
                      number_or_null(m->baseline), "candidate_median", number_or_null(m->candidate),
                      "ratio_median", number_or_null(m->est.median), "ratio_lower",
                      number_or_null(m->est.lower), "ratio_upper", number_or_null(m->est.upper),
                      "budget", m->budget, "verdict", gs_verdict_name(m->verdict));
        json_object_set_new(e, "coverage",
                            number_or_null(isnan(m->est.lower) ? NAN : m->est.coverage));
        if (m->has_ceiling) json_object_set_new(e, "ceiling", json_real(m->ceiling));
        if (m->why) json_object_set_new(e, "why", json_string(m->why));
        json_array_append_new(metrics, e);
    }
    for (size_t i = 0; i < j->nproblems; i++)
        json_array_append_new(problems, json_string(j->problems[i]));
    for (size_t i = 0; i < j->nskipped; i++)
        json_array_append_new(skipped, json_string(j->skipped[i]));
    json_object_set_new(o, "metrics", metrics);
    json_object_set_new(o, "problems", problems);
    json_object_set_new(o, "skipped", skipped);
    return o;
}

static void print_value(FILE *f, double v) {
    if (isnan(v))
        fputs(" |", f);
    else if (fabs(v) >= 100)
        fprintf(f, " %.0f |", v);
    else
        fprintf(f, " %.3g |", v);
}

void gj_print_markdown(FILE *f, const gr_report *r, const gj_judgement *j, const gp_policy *p) {
    fprintf(f, "## Perf gate: %s\n\n", gs_verdict_name(j->verdict));
    fprintf(f, "- baseline: %s\n- candidate: %s\n", r->arms[0] ? r->arms[0] : "?",
            r->arms[1] ? r->arms[1] : "?");
    fprintf(f,
            "- profile %s, %ld rounds, arms interleaved and alternated (ABBA), a fresh server "
            "and data directory per round, fixture and arm\n",
            r->profile ? r->profile : "?", r->rounds);
    if (r->started) fprintf(f, "- started %s", r->started);
    if (r->machine) fprintf(f, "; %s", r->machine);
    if (r->layout) fprintf(f, "; %s", r->layout);
    fprintf(f, "\n\nRatio: candidate / baseline for times, baseline / candidate for rates (above 1 "
               "is worse); the median of the rounds' ratios with its exact interval (binomial "
               "order statistics). PASS: the interval is within the budget; FAIL: wholly above "
               "it; INCONCLUSIVE: across it. ");
    if (p->simultaneous && j->family > 1)
        fprintf(f,
                "The %zu required metrics' intervals are simultaneous: each at %.2f%% (%.0f%% "
                "shared among them, Bonferroni) where the rounds allow it, otherwise [min, "
                "max]; all of them hold at once with %.1f%% confidence. The others' at %.0f%% "
                "each.\n\n",
                j->family, (1.0 - (1.0 - p->confidence) / (double)j->family) * 100,
                p->confidence * 100, j->family_confidence * 100, p->confidence * 100);
    else
        fprintf(f, "Each interval at %.0f%%.\n\n", p->confidence * 100);
    fputs("| metric | required | rounds | baseline | candidate | ratio | interval | budget | "
          "verdict |\n|---|:-:|--:|--:|--:|--:|---|--:|---|\n",
          f);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < j->n; i++) {
            const gj_metric *m = &j->metrics[i];
            if (m->required != (pass == 0)) continue;
            fprintf(f, "| `%s` | %s | %zu |", m->name, m->required ? "yes" : "", m->rounds);
            print_value(f, m->baseline);
            print_value(f, m->candidate);
            if (isnan(m->est.median))
                fputs(" |", f);
            else
                fprintf(f, " %.3f |", m->est.median);
            if (isnan(m->est.lower))
                fputs(" |", f);
            else
                fprintf(f, " [%.3f, %.3f] |", m->est.lower, m->est.upper);
            fprintf(f, " %.2f | %s%s%s |\n", m->budget, gs_verdict_name(m->verdict),
                    m->why ? ": " : "", m->why ? m->why : "");
        }
    if (j->nskipped) {
        fputs("\nSkipped (not judged):\n\n", f);
        for (size_t i = 0; i < j->nskipped; i++) fprintf(f, "- %s\n", j->skipped[i]);
    }
    if (j->nproblems) {
        fputs("\nProblems:\n\n", f);
        for (size_t i = 0; i < j->nproblems; i++) fprintf(f, "- %s\n", j->problems[i]);
    }
    fprintf(f, "\nVerdict: **%s** (exit status %d).\n", gs_verdict_name(j->verdict),
            gj_exit_status(j->verdict));
}

int gj_exit_status(gs_verdict v) {
    return (int)v;
}
