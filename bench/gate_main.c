/* inputlayer-bench: the perf gate (bench/README.md).
 *
 *   inputlayer-bench run --server BIN [common options] [--rounds N] [--env K=V]... [--peers]
 *   inputlayer-bench compare --baseline BIN|REV --candidate BIN|REV [common options]
 *       [--rounds N (10)] [--baseline-env K=V]... [--candidate-env K=V]...
 *       [--policy FILE] [--repo DIR] [--build-cache DIR]
 *   inputlayer-bench compare --rejudge REPORT.json [--policy FILE] [--json F] [--markdown F]
 *   common: [--profile smoke|small|standard] [--fixtures LIST] [--server-cpus L]
 *       [--client-cpus L] [--json F] [--markdown F] [--tools DIR] [--scratch DIR]
 *       [--timeout S] [--verbose]
 *
 * `run` measures every fixture (or those listed: names, or the groups gate, engine, views,
 * all) against one server binary and prints a table; exit 0, or 3 when an answer was wrong
 * (INVALID), 1 when a run failed. `compare` runs each fixture on both arms in every round,
 * a fresh server and data directory each, the arms' order alternating by round and by
 * fixture (ABBA; the durable writes' two arms at once, interleaved: gf_fixture.run_pair),
 * and judges every metric against the policy (gate_judge.h): exit 0 PASS,
 * 1 FAIL, 2 INCONCLUSIVE, 3 INVALID. `--rejudge` judges a saved report again without
 * running anything. The Markdown report goes to stdout (and --markdown), the JSON report
 * to --json. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "gate_build.h"
#include "gate_fixtures.h"
#include "gate_judge.h"
#include "gate_policy.h"
#include "gate_proc.h"
#include "gate_report.h"

#ifndef IL_SOURCE_DIR
#define IL_SOURCE_DIR "."
#endif

enum { EXIT_USAGE = 2, MAX_ENV = 32, MAX_SELECTED = 64 };

typedef struct options {
    bool compare, rejudge;
    const char *server, *baseline, *candidate, *report;
    char *env[2][MAX_ENV];
    size_t nenv[2];
    gf_profile profile;
    const char *fixtures;
    long rounds;
    const char *server_cpus, *client_cpus;
    const char *json, *markdown, *tools, *scratch, *policy, *repo, *build_cache;
    int timeout_s;
    bool peers, verbose;
} options;

static void usage(FILE *f) {
    fputs("usage: inputlayer-bench run --server BIN [common] [--rounds N (1)] [--env K=V]...\n"
          "                            [--peers]\n"
          "       inputlayer-bench compare --baseline BIN|REV --candidate BIN|REV [common]\n"
          "                            [--rounds N (10)] [--baseline-env K=V]...\n"
          "                            [--candidate-env K=V]... [--policy FILE]\n"
          "                            [--repo DIR] [--build-cache DIR]\n"
          "       inputlayer-bench compare --rejudge REPORT.json [--policy FILE]\n"
          "                            [--json FILE] [--markdown FILE]\n"
          "  common: --profile smoke|small|standard (small) --fixtures LIST (run: all;\n"
          "          compare: gate) --server-cpus L --client-cpus L (taskset lists)\n"
          "          --json FILE --markdown FILE --tools DIR --scratch DIR --timeout S (900)\n"
          "          --verbose\n"
          "  LIST: fixture names and groups (gate, engine, views, all), comma-separated.\n"
          "  compare exits 0 PASS, 1 FAIL, 2 INCONCLUSIVE, 3 INVALID.\n",
          f);
}

static int bad(const char *what, const char *value) {
    fprintf(stderr, "inputlayer-bench: %s%s%s\n", what, value ? ": " : "", value ? value : "");
    usage(stderr);
    return EXIT_USAGE;
}

static bool parse_long(const char *s, long min, long max, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return false;
    *out = v;
    return true;
}

static bool add_env(options *o, int arm, const char *kv) {
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || o->nenv[arm] == MAX_ENV) return false;
    o->env[arm][o->nenv[arm]++] = (char *)kv;
    return true;
}

/* Returns -1 when the options are good, else the exit status. */
static int parse_args(int argc, char **argv, options *o) {
    if (argc < 2) return bad("a command is needed", NULL);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "compare") == 0)
        o->compare = true;
    else if (strcmp(argv[1], "run") != 0)
        return bad("unknown command", argv[1]);
    o->profile = GF_SMALL;
    o->timeout_s = 900;
    o->rounds = o->compare ? 10 : 1;
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i];
        if (strcmp(k, "--peers") == 0) {
            o->peers = true;
            continue;
        }
        if (strcmp(k, "--verbose") == 0) {
            o->verbose = true;
            continue;
        }
        if (i + 1 >= argc) return bad("a value is missing after", k);
        const char *v = argv[++i];
        long n;
        bool good = true;
        if (strcmp(k, "--server") == 0 && !o->compare)
            o->server = v;
        else if (strcmp(k, "--baseline") == 0 && o->compare)
            o->baseline = v;
        else if (strcmp(k, "--candidate") == 0 && o->compare)
            o->candidate = v;
        else if (strcmp(k, "--rejudge") == 0 && o->compare)
            o->report = v, o->rejudge = true;
        else if (strcmp(k, "--env") == 0 && !o->compare)
            good = add_env(o, 0, v);
        else if (strcmp(k, "--baseline-env") == 0 && o->compare)
            good = add_env(o, 0, v);
        else if (strcmp(k, "--candidate-env") == 0 && o->compare)
            good = add_env(o, 1, v);
        else if (strcmp(k, "--profile") == 0)
            good = gf_profile_parse(v, &o->profile);
        else if (strcmp(k, "--fixtures") == 0)
            o->fixtures = v;
        else if (strcmp(k, "--rounds") == 0)
            good = parse_long(v, 1, 1000, &o->rounds);
        else if (strcmp(k, "--server-cpus") == 0)
            o->server_cpus = v;
        else if (strcmp(k, "--client-cpus") == 0)
            o->client_cpus = v;
        else if (strcmp(k, "--json") == 0)
            o->json = v;
        else if (strcmp(k, "--markdown") == 0)
            o->markdown = v;
        else if (strcmp(k, "--tools") == 0)
            o->tools = v;
        else if (strcmp(k, "--scratch") == 0)
            o->scratch = v;
        else if (strcmp(k, "--policy") == 0 && o->compare)
            o->policy = v;
        else if (strcmp(k, "--repo") == 0 && o->compare)
            o->repo = v;
        else if (strcmp(k, "--build-cache") == 0 && o->compare)
            o->build_cache = v;
        else if (strcmp(k, "--timeout") == 0)
            good = parse_long(v, 1, 86400, &n), o->timeout_s = (int)n;
        else
            return bad("unknown option", k);
        if (!good) {
            fprintf(stderr, "inputlayer-bench: bad value for %s: %s\n", k, v);
            return EXIT_USAGE;
        }
    }
    if (o->rejudge && (o->baseline || o->candidate))
        return bad("--rejudge takes a saved report, not --baseline or --candidate", NULL);
    if (o->compare && !o->rejudge && (!o->baseline || !o->candidate))
        return bad("compare needs --baseline and --candidate (or --rejudge REPORT)", NULL);
    if (!o->compare && !o->server) return bad("run needs --server BIN", NULL);
    if (o->server) {
        /* Servers run in directories of their own: the path must not be relative. */
        static char real[PATH_MAX];
        if (!realpath(o->server, real) || access(real, X_OK) != 0)
            return bad("--server is not an executable file", o->server);
        o->server = real;
    }
    if (!o->fixtures) o->fixtures = o->compare ? "gate" : "all";
    if (!o->policy) o->policy = IL_SOURCE_DIR "/bench/policy.toml";
    if (!o->repo) o->repo = IL_SOURCE_DIR;
    return -1;
}

/* The fixtures of LIST, in the table's order; 0 with a message for an unknown name. */
static size_t select_fixtures(const char *list, const gf_fixture **out) {
    size_t n, k = 0;
    const gf_fixture *all = gf_all(&n);
    bool want[MAX_SELECTED] = {0};
    char *copy = strdup(list), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (size_t i = 0; i < n && i < MAX_SELECTED; i++)
            if (strcmp(tok, "all") == 0 || strcmp(tok, all[i].name) == 0 ||
                strcmp(tok, all[i].group) == 0)
                want[i] = found = true;
        if (!found) {
            fprintf(stderr, "inputlayer-bench: unknown fixture or group '%s'; fixtures:", tok);
            for (size_t i = 0; i < n; i++) fprintf(stderr, " %s (%s)", all[i].name, all[i].group);
            fprintf(stderr, "\n");
            free(copy);
            return 0;
        }
    }
    free(copy);
    for (size_t i = 0; i < n && i < MAX_SELECTED; i++)
        if (want[i]) out[k++] = &all[i];
    return k;
}

/* The directory this program is in: the build's, where the fixture clients are. */
static void own_dir(char *out, size_t cap) {
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) {
        snprintf(out, cap, ".");
        return;
    }
    path[n] = 0;
    char *slash = strrchr(path, '/');
    if (slash) *slash = 0;
    snprintf(out, cap, "%s", path);
}

static void describe_machine(gr_report *r) {
    char cpu[256] = "unknown CPU", line[512], text[512], when[64];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            snprintf(cpu, sizeof cpu, "%.200s", colon ? colon + 2 : line);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
    if (f) fclose(f);
    double load = 0;
    f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf", &load) != 1) load = 0;
    if (f) fclose(f);
    struct utsname u;
    uname(&u);
    snprintf(text, sizeof text, "%s, %ld CPUs, %s %s, load average %.2f at the start", cpu,
             sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release, load);
    gr_set(&r->machine, text);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    gr_set(&r->started, when);
}

static void describe_layout(gr_report *r, const options *o) {
    char text[256];
    if (!o->server_cpus && !o->client_cpus)
        snprintf(text, sizeof text, "no CPU pinning");
    else
        snprintf(text, sizeof text, "servers on CPUs %s, clients on CPUs %s",
                 o->server_cpus ? o->server_cpus : "(any)",
                 o->client_cpus ? o->client_cpus : "(any)");
    gr_set(&r->layout, text);
}

static void describe_arm(char *out, size_t cap, const char *what, char *const *env, size_t nenv) {
    size_t k = (size_t)snprintf(out, cap, "%s", what);
    for (size_t i = 0; i < nenv && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? " " : " with ", env[i]);
}

static bool write_file(const char *path, json_t *o) {
    if (!path) return true;
    if (json_dump_file(o, path, JSON_INDENT(1) | JSON_SORT_KEYS) == 0) return true;
    fprintf(stderr, "inputlayer-bench: cannot write %s\n", path);
    return false;
}

/* ---- run -------------------------------------------------------------------------------- */

static double metric_median(const gr_report *r, const char *fixture, const char *metric,
                            long *samples) {
    double v[1000];
    size_t n = 0;
    *samples = 0;
    for (size_t i = 0; i < r->n && n < 1000; i++) {
        const gr_result *res = &r->results[i];
        if (strcmp(res->fixture, fixture) != 0 || res->status != GR_OK) continue;
        const gr_metric *m = gr_find_metric(res, metric);
        if (!m) continue;
        *samples = m->samples;
        if (!isnan(m->value)) v[n++] = m->value;
    }
    return gs_median(v, n);
}

static const char *status_name(int status) {
    return status == GR_OK        ? "ok"
           : status == GR_INVALID ? "INVALID"
           : status == GR_SKIPPED ? "SKIPPED"
                                  : "FAILED";
}

static void print_run_markdown(FILE *f, const gr_report *r, const gf_fixture **sel, size_t nsel) {
    fprintf(f,
            "## inputlayer-bench run (%s)\n\n- server: %s\n- profile %s, %ld round%s; %s\n- %s\n\n",
            r->started, r->arms[0], r->profile, r->rounds, r->rounds == 1 ? "" : "s", r->layout,
            r->machine);
    fputs("Times in µs unless the name says otherwise; with several rounds, the median of the "
          "rounds. Samples: the raw samples behind one round's figure.\n\n"
          "| fixture | metric | value | samples | status |\n|---|---|--:|--:|---|\n",
          f);
    for (size_t s = 0; s < nsel; s++) {
        const gr_result *first = NULL;
        const gr_result *failed = NULL;
        for (size_t i = 0; i < r->n; i++) {
            if (strcmp(r->results[i].fixture, sel[s]->name) != 0) continue;
            if (!first) first = &r->results[i];
            if (r->results[i].status != GR_OK && !failed) failed = &r->results[i];
        }
        if (failed)
            fprintf(f, "| `%s` | | | | %s: %s |\n", sel[s]->name,
                    failed->status == GR_INVALID   ? "INVALID"
                    : failed->status == GR_SKIPPED ? "skipped"
                                                   : "failed",
                    failed->message);
        for (size_t m = 0; first && !failed && m < first->nmetrics; m++) {
            long samples;
            double v = metric_median(r, sel[s]->name, first->metrics[m].name, &samples);
            if (isnan(v))
                fprintf(f, "| `%s` | `%s` | n/a | %ld | too few samples |\n", sel[s]->name,
                        first->metrics[m].name, samples);
            else
                fprintf(f, "| `%s` | `%s` | %.*f | %ld | ok |\n", sel[s]->name,
                        first->metrics[m].name, fabs(v) < 10 ? 3 : 1, v, samples);
        }
    }
}

static int run(const options *o, const gf_context *ctx, const gf_fixture **sel, size_t nsel) {
    gr_report r = {0};
    char label[1024];
    describe_arm(label, sizeof label, o->server, o->env[0], o->nenv[0]);
    gr_set(&r.kind, "run");
    for (size_t s = 0; s < nsel; s++) gr_add_fixture(&r, sel[s]->name);
    gr_set(&r.profile, gf_profile_name(o->profile));
    gr_set(&r.arms[0], label);
    r.rounds = o->rounds;
    describe_machine(&r);
    describe_layout(&r, o);
    /* The client and the in-process benchmark beside the server. */
    static gb_arm beside;
    gb_beside(o->server, &beside);
    gf_arm arm = {o->server, (char **)o->env[0], o->nenv[0],       NULL,
                  NULL,      beside.client_why,  beside.inproc_why};
    if (beside.client[0]) arm.client = beside.client;
    if (beside.inproc[0]) arm.inproc = beside.inproc;
    int status = 0;
    for (long k = 0; k < o->rounds; k++)
        for (size_t s = 0; s < nsel; s++) {
            gr_result *res = gr_add_result(&r, sel[s]->name, (int)k, 0, 0);
            if (!res) {
                fputs("inputlayer-bench: out of memory\n", stderr);
                gr_free(&r);
                return 1;
            }
            fprintf(stderr, "round %ld/%ld %s ...", k + 1, o->rounds, sel[s]->name);
            sel[s]->run(ctx, &arm, res);
            fprintf(stderr, " %.1f s %s%s%s\n", res->seconds, status_name(res->status),
                    res->message ? ": " : "", res->message ? res->message : "");
            if (res->status == GR_INVALID) status = 3;
            if (res->status == GR_FAILED && status == 0) status = 1;
        }
    print_run_markdown(stdout, &r, sel, nsel);
    if (o->markdown) {
        FILE *f = fopen(o->markdown, "w");
        if (f) print_run_markdown(f, &r, sel, nsel), fclose(f);
    }
    json_t *j = gr_to_json(&r);
    if (!write_file(o->json, j) && status == 0) status = 1;
    json_decref(j);
    gr_free(&r);
    return status;
}

/* ---- compare ---------------------------------------------------------------------------- */

static int judge_and_report(const options *o, gr_report *r) {
    gp_policy p;
    char err[600];
    gp_defaults(&p);
    if (!gp_load(o->policy, &p, err, sizeof err)) {
        fprintf(stderr, "inputlayer-bench: policy: %s\n", err);
        gp_free(&p);
        return 3;
    }
    gj_judgement j;
    if (!gj_judge(r, &p, &j)) {
        fputs("inputlayer-bench: out of memory\n", stderr);
        gp_free(&p);
        return 3;
    }
    gj_print_markdown(stdout, r, &j, &p);
    if (o->markdown) {
        FILE *f = fopen(o->markdown, "w");
        if (f) gj_print_markdown(f, r, &j, &p), fclose(f);
    }
    json_t *report = gr_to_json(r);
    json_object_set_new(report, "judgement", gj_to_json(&j, &p));
    json_object_set_new(report, "policy", json_string(o->policy));
    write_file(o->json, report);
    json_decref(report);
    int status = gj_exit_status(j.verdict);
    gj_free(&j);
    gp_free(&p);
    return status;
}

static int compare(const options *o, const gf_context *ctx, const gf_fixture **sel, size_t nsel) {
    char cache[PATH_MAX + 16], labels[2][1400], why[1024];
    static gb_arm built[2];
    if (o->build_cache)
        snprintf(cache, sizeof cache, "%s", o->build_cache);
    else
        snprintf(cache, sizeof cache, "%s/gate-builds", ctx->tools);
    /* A policy that cannot be read is found before the rounds, not after them. */
    gp_policy policy;
    char err[600];
    gp_defaults(&policy);
    bool policy_ok = gp_load(o->policy, &policy, err, sizeof err);
    gp_free(&policy);
    if (!policy_ok) {
        fprintf(stderr, "inputlayer-bench: policy: %s\n", err);
        return 3;
    }
    const char *specs[2] = {o->baseline, o->candidate};
    gr_report r = {0};
    for (int a = 0; a < 2; a++) {
        if (!gb_resolve(specs[a], o->repo, cache, IL_SOURCE_DIR "/bench", &built[a], why,
                        sizeof why)) {
            fprintf(stderr, "inputlayer-bench: the %s: %s\n", a ? "candidate" : "baseline", why);
            return 3;
        }
        describe_arm(labels[a], sizeof labels[a], built[a].label, o->env[a], o->nenv[a]);
        gr_set(&r.arms[a], labels[a]);
    }
    gr_set(&r.kind, "compare");
    for (size_t s = 0; s < nsel; s++) gr_add_fixture(&r, sel[s]->name);
    gr_set(&r.profile, gf_profile_name(o->profile));
    r.rounds = o->rounds;
    describe_machine(&r);
    describe_layout(&r, o);
    gf_arm arms[2];
    for (int a = 0; a < 2; a++)
        arms[a] = (gf_arm){built[a].server,
                           (char **)o->env[a],
                           o->nenv[a],
                           built[a].client[0] ? built[a].client : NULL,
                           built[a].inproc[0] ? built[a].inproc : NULL,
                           built[a].client_why,
                           built[a].inproc_why};
    fprintf(stderr,
            "inputlayer-bench: %ld rounds of %zu fixtures, profile %s\n  baseline:  %s\n  "
            "candidate: %s\n",
            o->rounds, nsel, gf_profile_name(o->profile), labels[0], labels[1]);
    for (long k = 0; k < o->rounds; k++)
        for (size_t s = 0; s < nsel; s++) {
            /* ABBA: the first arm alternates with the round and with the fixture, so that
             * neither arm always runs first (on a warmer or a busier machine). */
            int first = (int)((k + (long)s) % 2);
            /* An arm without what the fixture needs: skipped on both, neither run. */
            char missing[800];
            int lacking = gf_missing(sel[s], &arms[0], missing, sizeof missing)   ? 0
                          : gf_missing(sel[s], &arms[1], missing, sizeof missing) ? 1
                                                                                  : -1;
            if (lacking >= 0) {
                for (int a = 0; a < 2; a++) {
                    gr_result *res = gr_add_result(&r, sel[s]->name, (int)k, a, a);
                    if (!res) {
                        fputs("inputlayer-bench: out of memory\n", stderr);
                        gr_free(&r);
                        return 3;
                    }
                    if (a == lacking) gr_fail(res, GR_SKIPPED, "%s", missing);
                }
                if (k == 0)
                    fprintf(stderr, "%s: SKIPPED (the %s: %s)\n", sel[s]->name,
                            lacking ? "candidate" : "baseline", missing);
                continue;
            }
            if (sel[s]->run_pair) {
                /* Both arms at once, their writes interleaved (gate_fixtures.h). */
                for (int pos = 0; pos < 2; pos++)
                    if (!gr_add_result(&r, sel[s]->name, (int)k, pos ? 1 - first : first, pos)) {
                        fputs("inputlayer-bench: out of memory\n", stderr);
                        gr_free(&r);
                        return 3;
                    }
                gr_result *const res[2] = {&r.results[r.n - 2], &r.results[r.n - 1]};
                const gf_arm *const run_arms[2] = {&arms[first], &arms[1 - first]};
                fprintf(stderr, "round %ld/%ld %s both arms, interleaved ...", k + 1, o->rounds,
                        sel[s]->name);
                sel[s]->run_pair(ctx, run_arms, res);
                fprintf(stderr, " %.1f s %s%s%s\n", res[0]->seconds, status_name(res[0]->status),
                        res[0]->message ? ": " : "", res[0]->message ? res[0]->message : "");
                continue;
            }
            for (int pos = 0; pos < 2; pos++) {
                int a = pos == 0 ? first : 1 - first;
                gr_result *res = gr_add_result(&r, sel[s]->name, (int)k, a, pos);
                if (!res) {
                    fputs("inputlayer-bench: out of memory\n", stderr);
                    gr_free(&r);
                    return 3;
                }
                fprintf(stderr, "round %ld/%ld %s %s ...", k + 1, o->rounds, sel[s]->name,
                        a ? "candidate" : "baseline");
                sel[s]->run(ctx, &arms[a], res);
                fprintf(stderr, " %.1f s %s%s%s\n", res->seconds, status_name(res->status),
                        res->message ? ": " : "", res->message ? res->message : "");
            }
        }
    int status = judge_and_report(o, &r);
    gr_free(&r);
    return status;
}

static int rejudge(const options *o) {
    gr_report r;
    char err[600];
    if (!gr_read_file(o->report, &r, err, sizeof err)) {
        fprintf(stderr, "inputlayer-bench: %s\n", err);
        return 3;
    }
    int status = judge_and_report(o, &r);
    gr_free(&r);
    return status;
}

int main(int argc, char **argv) {
    options o = {0};
    int status = parse_args(argc, argv, &o);
    if (status >= 0) return status;
    if (o.rejudge) return rejudge(&o);
    const gf_fixture *sel[MAX_SELECTED];
    size_t nsel = select_fixtures(o.fixtures, sel);
    if (nsel == 0) return EXIT_USAGE;
    char tools[PATH_MAX], scratch[PATH_MAX];
    if (o.tools)
        snprintf(tools, sizeof tools, "%s", o.tools);
    else
        own_dir(tools, sizeof tools);
    if (o.scratch) {
        snprintf(scratch, sizeof scratch, "%s", o.scratch);
        if (!gx_mkdirs(scratch)) return bad("cannot create the scratch directory", scratch);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/inputlayer-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(scratch)) return bad("cannot create a scratch directory", scratch);
    }
    gx_install_cleanup();
    gf_context ctx = {.tools = tools,
                      .scratch = scratch,
                      .profile = o.profile,
                      .server_cpus = o.server_cpus,
                      .client_cpus = o.client_cpus,
                      .peers = o.peers,
                      .timeout_s = o.timeout_s,
                      .verbose = o.verbose};
    status = o.compare ? compare(&o, &ctx, sel, nsel) : run(&o, &ctx, sel, nsel);
    /* Only an empty scratch directory goes: a failed fixture's servers are kept in it. */
    if (!o.scratch) rmdir(scratch);
    return status;
}
