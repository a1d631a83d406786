/* What a perf-gate run measured (bench/README.md): for every (round, fixture, arm) run its
 * status and its metrics, each a value with the number of raw samples behind it and
 * whether higher is better. Saved as the JSON report of `inputlayer-bench run|compare`
 * and read back by `compare --rejudge`, which judges it again without running anything. */
#ifndef IL_BENCH_GATE_REPORT_H
#define IL_BENCH_GATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The status of one run: the fixture clients' exit statuses, and GR_SKIPPED: the arm
 * lacks what the fixture needs (a binary its commit does not build, an option or a
 * statement it does not have), the reason in the message. */
enum { GR_OK = 0, GR_FAILED = 1, GR_INVALID = 3, GR_SKIPPED = 4 };

typedef struct gr_metric {
    char *name;   /* within the fixture: "latency_us.p50", "queries_per_sec" */
    double value; /* NaN: not measured (too few samples for the statistic) */
    long samples; /* raw samples behind the value */
    bool higher_is_better;
    /* A `compare` run of both arms at once, their samples paired in time (the durable
     * writes, gate_fixtures.h): the cost ratio of this arm to the other measured pair by
     * pair (the median of the pairs' ratios); NaN otherwise. The judge takes the
     * candidate's as the round's ratio. */
    double paired_ratio;
} gr_metric;

typedef struct gr_result {
    char *fixture;
    int round; /* 0-based */
    int arm;   /* 0 baseline, 1 candidate (a `run` has arm 0 only) */
    int order; /* 0: the round's first run of this fixture, 1: its second */
    int status;
    char *message; /* why it failed; NULL when it did not */
    double seconds;
    gr_metric *metrics;
    size_t nmetrics, cap;
} gr_result;

typedef struct gr_report {
    char *kind;    /* "run" or "compare" */
    char *profile; /* smoke, small, standard */
    char *arms[2]; /* what each arm ran: a binary, a revision, its environment */
    char *started; /* UTC */
    char *machine;
    char *layout; /* CPU pinning */
    long rounds;
    char **fixtures; /* the fixtures the run was asked for, in order */
    size_t nfixtures;
    gr_result *results;
    size_t n, cap;
} gr_report;

/* Appends a result (zeroed but for the given fields) and returns it; NULL on OOM. */
gr_result *gr_add_result(gr_report *r, const char *fixture, int round, int arm, int order);
/* Adds a metric to a result; false on OOM. */
bool gr_add_metric(gr_result *res, const char *name, double value, long samples,
                   bool higher_is_better);
/* Sets the result's status and message (printf style). */
void gr_fail(gr_result *res, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Fails the result for program `name` that exited with rc (not 0): INVALID for 3 (a wrong
 * answer), FAILED otherwise, with `why` for a signal or a timeout (rc < 0 or 124) and the
 * tail of its error output. */
void gr_fail_exit(gr_result *res, const char *name, int rc, const char *why, const char *tail);
const gr_metric *gr_find_metric(const gr_result *res, const char *name);
/* Sets the paired_ratio of a metric added before; false when there is none of that name. */
bool gr_set_paired_ratio(gr_result *res, const char *name, double ratio);

/* Adds a fixture to the report's list of those asked for; false on OOM. */
bool gr_add_fixture(gr_report *r, const char *name);
/* Whether the run was asked for that fixture. */
bool gr_has_fixture(const gr_report *r, const char *name);

/* Sets a string field, replacing its old value. */
void gr_set(char **field, const char *value);
void gr_free(gr_report *r);

/* The report as a JSON object (jansson's json_t *, as void * to keep jansson out of this
 * header); the caller adds the verdicts and dumps it. */
void *gr_to_json(const gr_report *r);
/* Reads a report written by gr_to_json (other members ignored). False with the reason in
 * err. */
bool gr_read_file(const char *path, gr_report *r, char *err, size_t errlen);

#endif
