/* The arms of a perf-gate comparison; see gate_build.h. */
#include "gate_build.h"

#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate_proc.h"

enum { BUILD_TIMEOUT_S = 3600 };

/* The sources of inputlayer-inproc, built against each revision's library. */
static const char *const HARNESS[] = {"inproc_main.c", "inproc_common.c", "inproc_common.h",
                                      "gen_graph.c",   "gen_graph.h",     NULL};

static bool executable(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Runs argv with its output in dir/NAME.log; false with the log's end in why. */
static bool step(char *const *argv, const char *dir, const char *name, char *why, size_t why_len) {
    char log[800];
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    char run_why[300];
    int rc = gx_run(argv, NULL, log, log, BUILD_TIMEOUT_S, run_why, sizeof run_why);
    if (rc == 0) return true;
    char tail[300];
    gx_tail(log, tail, sizeof tail);
    snprintf(why, why_len, "%s %s failed (%d; %s): %s", argv[0], argv[1], rc, log, tail);
    return false;
}

/* The commit a revision names, read from `git rev-parse`. */
static bool commit_of(const char *repo, const char *rev, const char *scratch, char *sha, size_t cap,
                      char *why, size_t why_len) {
    char spec[300], out[600], err[600];
    snprintf(spec, sizeof spec, "%s^{commit}", rev);
    snprintf(out, sizeof out, "%s/rev-parse.out", scratch);
    snprintf(err, sizeof err, "%s/rev-parse.err", scratch);
    char *argv[] = {"git", "-C", (char *)repo, "rev-parse", "--verify", "--quiet", spec, NULL};
    char run_why[300];
    if (gx_run(argv, NULL, out, err, 60, run_why, sizeof run_why) != 0) {
        snprintf(why, why_len, "'%s' is neither an executable file nor a revision of %s", rev,
                 repo);
        return false;
    }
    FILE *f = fopen(out, "r");
    bool got = f && fgets(sha, (int)cap, f);
    if (f) fclose(f);
    sha[strcspn(sha, "\n")] = 0;
    if (!got || strlen(sha) < 7) {
        snprintf(why, why_len, "git rev-parse printed no commit for '%s'", rev);
        return false;
    }
    return true;
}

void gb_beside(const char *server, gb_arm *arm) {
    char *real = realpath(server, NULL);
    snprintf(arm->server, sizeof arm->server, "%s", real ? real : server);
    free(real);
    snprintf(arm->label, sizeof arm->label, "binary %s", arm->server);
    char dir[GB_PATH];
    snprintf(dir, sizeof dir, "%s", arm->server);
    char *d = dirname(dir);
    static const char *const NAMES[] = {"inputlayer-client", "inputlayer-inproc"};
    char *paths[] = {arm->client, arm->inproc}, *whys[] = {arm->client_why, arm->inproc_why};
    for (int i = 0; i < 2; i++) {
        char path[GB_PATH + 64];
        snprintf(path, sizeof path, "%s/%s", d, NAMES[i]);
        paths[i][0] = 0;
        /* A path too long for the arm is as good as none. */
        if (!executable(path) || snprintf(paths[i], GB_PATH, "%s", path) >= GB_PATH) {
            paths[i][0] = 0;
            if (snprintf(whys[i], sizeof arm->client_why, "none beside %s", arm->server) < 0)
                whys[i][0] = 0;
        }
    }
}

/* FNV-1a of the harness sources: inputlayer-inproc is cached per commit and harness. */
static bool harness_hash(const char *harness_dir, char *out, size_t cap) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; HARNESS[i]; i++) {
        char path[GB_PATH + 64];
        snprintf(path, sizeof path, "%s/%s", harness_dir, HARNESS[i]);
        FILE *f = fopen(path, "rb");
        if (!f) return false;
        int c;
        while ((c = fgetc(f)) != EOF) h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ull;
        fclose(f);
    }
    snprintf(out, cap, "%016llx", (unsigned long long)h);
    return true;
}

/* The reason a binary was not built, saved beside where it would be. */
static void read_marker(const char *marker, char *why, size_t cap) {
    FILE *f = fopen(marker, "r");
    why[0] = 0;
    if (!f) return;
    size_t got = fread(why, 1, cap - 1, f);
    why[got] = 0;
    fclose(f);
}

static void write_marker(const char *marker, const char *why) {
    FILE *f = fopen(marker, "w");
    if (f) fputs(why, f), fclose(f);
}

/* Appends the harness target to the temporary worktree's CMakeLists.txt: inputlayer-inproc's
 * sources from this tree, the revision's library and headers. Named apart from any target
 * of the revision's own. */
static bool add_harness_target(const char *tree, const char *harness_dir) {
    char path[GB_PATH + 64];
    snprintf(path, sizeof path, "%s/CMakeLists.txt", tree);
    FILE *f = fopen(path, "a");
    if (!f) return false;
    fprintf(f,
            "\n# The perf gate's in-process fixtures against this commit's library.\n"
            "if(TARGET inputlayer)\n"
            "  add_executable(gate-inproc-harness %s/inproc_main.c %s/inproc_common.c "
            "%s/gen_graph.c)\n"
            "  target_include_directories(gate-inproc-harness PRIVATE %s "
            "${CMAKE_CURRENT_SOURCE_DIR}/include)\n"
            "  target_link_libraries(gate-inproc-harness PRIVATE inputlayer)\n"
            "endif()\n",
            harness_dir, harness_dir, harness_dir, harness_dir);
    return fclose(f) == 0;
}

bool gb_resolve(const char *spec, const char *repo, const char *cache_dir, const char *harness_dir,
                gb_arm *arm, char *why, size_t why_len) {
    *arm = (gb_arm){0};
    if (strchr(spec, '/') && executable(spec)) {
        gb_beside(spec, arm);
        return true;
    }
    if (!gx_mkdirs(cache_dir)) {
        snprintf(why, why_len, "cannot create %s", cache_dir);
        return false;
    }
    char sha[128], hash[32];
    if (!commit_of(repo, spec, cache_dir, sha, sizeof sha, why, why_len)) return false;
    if (!harness_hash(harness_dir, hash, sizeof hash)) {
        snprintf(why, why_len, "cannot read the harness sources in %s", harness_dir);
        return false;
    }
    char dir[700], tree[720], build[740];
    char client_marker[GB_PATH + 16], inproc_marker[GB_PATH + 16];
    snprintf(dir, sizeof dir, "%s/%s", cache_dir, sha);
    snprintf(arm->server, sizeof arm->server, "%s/inputlayer-server", dir);
    snprintf(arm->client, sizeof arm->client, "%s/inputlayer-client", dir);
    snprintf(arm->inproc, sizeof arm->inproc, "%s/inputlayer-inproc-%s", dir, hash);
    snprintf(client_marker, sizeof client_marker, "%s.missing", arm->client);
    snprintf(inproc_marker, sizeof inproc_marker, "%s.missing", arm->inproc);
    snprintf(arm->label, sizeof arm->label, "revision %s (%.12s), built Release", spec, sha);
    read_marker(client_marker, arm->client_why, sizeof arm->client_why);
    read_marker(inproc_marker, arm->inproc_why, sizeof arm->inproc_why);
    bool have_client = executable(arm->client) || arm->client_why[0];
    bool have_inproc = executable(arm->inproc) || arm->inproc_why[0];
    bool ok = executable(arm->server);
    if (!ok || !have_client || !have_inproc) {
        snprintf(tree, sizeof tree, "%s/tree", dir);
        snprintf(build, sizeof build, "%s/build", tree);
        gx_rmtree(tree);
        if (!gx_mkdirs(dir)) {
            snprintf(why, why_len, "cannot create %s", dir);
            return false;
        }
        fprintf(stderr,
                "inputlayer-bench: building %s (%.12s) in a temporary worktree; logs in %s\n", spec,
                sha, dir);
        char jobs[24];
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(jobs, sizeof jobs, "%ld", n > 0 ? n : 1);
        char *add[] = {"git", "-C", (char *)repo, "worktree", "add", "--detach", tree, sha, NULL};
        char *configure[] = {"cmake", "-S", tree, "-B", build, "-DCMAKE_BUILD_TYPE=Release", NULL};
        char *make[] = {"cmake",    "--build",           build, "-j", jobs,
                        "--target", "inputlayer-server", NULL};
        char *make_client[] = {"cmake",    "--build",           build, "-j", jobs,
                               "--target", "inputlayer-client", NULL};
        char *make_inproc[] = {
            "cmake", "--build", build, "-j", jobs, "--target", "gate-inproc-harness", NULL};
        char built[800], built_client[800], built_inproc[800];
        snprintf(built, sizeof built, "%s/inputlayer-server", build);
        snprintf(built_client, sizeof built_client, "%s/inputlayer-client", build);
        snprintf(built_inproc, sizeof built_inproc, "%s/gate-inproc-harness", build);
        char *copy[] = {"cp", built, arm->server, NULL};
        char *copy_client[] = {"cp", built_client, arm->client, NULL};
        char *copy_inproc[] = {"cp", built_inproc, arm->inproc, NULL};
        ok = step(add, dir, "worktree", why, why_len);
        if (ok && !add_harness_target(tree, harness_dir)) {
            snprintf(why, why_len, "cannot add the harness target to %s/CMakeLists.txt", tree);
            ok = false;
        }
        ok = ok && step(configure, dir, "configure", why, why_len) &&
             step(make, dir, "build", why, why_len) && step(copy, dir, "copy", why, why_len);
        /* The client and the in-process harness are optional: a commit without them (or
         * whose library lacks what the harness calls) has the fixtures that need them
         * skipped, the reason kept beside. */
        if (ok && !executable(arm->client) && !arm->client_why[0] &&
            !(step(make_client, dir, "build-client", arm->client_why, sizeof arm->client_why) &&
              step(copy_client, dir, "copy-client", arm->client_why, sizeof arm->client_why)))
            write_marker(client_marker, arm->client_why);
        if (ok && !executable(arm->inproc) && !arm->inproc_why[0] &&
            !(step(make_inproc, dir, "build-inproc", arm->inproc_why, sizeof arm->inproc_why) &&
              step(copy_inproc, dir, "copy-inproc", arm->inproc_why, sizeof arm->inproc_why)))
            write_marker(inproc_marker, arm->inproc_why);
        char *remove_tree[] = {"git",    "-C",      (char *)repo, "worktree",
                               "remove", "--force", tree,         NULL};
        char ignored[300];
        step(remove_tree, dir, "cleanup", ignored, sizeof ignored);
        gx_rmtree(tree);
        char *prune[] = {"git", "-C", (char *)repo, "worktree", "prune", NULL};
        step(prune, dir, "prune", ignored, sizeof ignored);
    }
    if (!executable(arm->client)) arm->client[0] = 0;
    if (!executable(arm->inproc)) arm->inproc[0] = 0;
    return ok;
}
