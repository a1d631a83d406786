/* The fixtures of the perf gate (docs/performance.md 3.4 in the specification notes;
 * bench/README.md): each runs once against one server binary, on fresh servers and data
 * directories of its own, and fills a gr_result with its metrics, or with the status of
 * its failure (GR_INVALID: a wrong answer). The measuring is done by the existing fixture
 * clients (inputlayer-load, inputlayer-fixture, inputlayer-views) run as processes; the
 * datasets those clients do not load themselves are loaded here, and the first answer is
 * checked row for row against the one computed from the generated data. */
#ifndef IL_BENCH_GATE_FIXTURES_H
#define IL_BENCH_GATE_FIXTURES_H

#include <stdbool.h>
#include <stddef.h>

#include "gate_report.h"

typedef enum gf_profile { GF_SMOKE, GF_SMALL, GF_STANDARD } gf_profile;

/* What one arm runs: a server binary and extra KEY=VALUE environment for it; its
 * inputlayer-client and inputlayer-inproc (the in-process fixtures, linked with the arm's
 * library), or NULL with the reason in client_why / inproc_why. */
typedef struct gf_arm {
    const char *server;
    char **env;
    size_t nenv;
    const char *client, *inproc;
    const char *client_why, *inproc_why;
} gf_arm;

typedef struct gf_context {
    const char *tools;   /* the directory of the fixture clients (the build's) */
    const char *scratch; /* where servers and their data go (removed after each) */
    gf_profile profile;
    const char *server_cpus, *client_cpus; /* taskset CPU lists, or NULL */
    bool peers;                            /* `run`: also the echo server and the fsync probe */
    int timeout_s;                         /* per client process */
    bool verbose;
} gf_context;

typedef struct gf_fixture {
    const char *name;
    const char *group; /* "gate", "engine" or "views" */
    void (*run)(const gf_context *ctx, const gf_arm *arm, gr_result *res);
    /* For `compare`, NULL or both arms in one run (arms and results in the round's order):
     * the durable-write fixtures, whose two arms' writes are interleaved so that both see
     * the same disk (bench/README.md). */
    void (*run_pair)(const gf_context *ctx, const gf_arm *const arms[2], gr_result *const res[2]);
    unsigned needs; /* GF_NEEDS_*: what beside the server the arm must have */
} gf_fixture;

enum { GF_NEEDS_CLIENT = 1, GF_NEEDS_INPROC = 2 };

/* Whether the arm lacks what the fixture needs (the fixture is then SKIPPED for it), the
 * reason in why. */
bool gf_missing(const gf_fixture *f, const gf_arm *arm, char *why, size_t cap);

const gf_fixture *gf_all(size_t *n);
const gf_fixture *gf_find(const char *name);
bool gf_profile_parse(const char *name, gf_profile *p);
const char *gf_profile_name(gf_profile p);

#endif
