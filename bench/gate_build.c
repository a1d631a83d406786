/* The arms of a perf-gate comparison; see gate_build.h. */
#include "gate_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate_proc.h"

enum { BUILD_TIMEOUT_S = 3600 };

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

bool gb_resolve(const char *spec, const char *repo, const char *cache_dir, char *server, size_t cap,
                char *label, size_t label_cap, char *why, size_t why_len) {
    if (strchr(spec, '/') && executable(spec)) {
        char *real = realpath(spec, NULL);
        snprintf(server, cap, "%s", real ? real : spec);
        snprintf(label, label_cap, "binary %s", server);
        free(real);
        return true;
    }
    if (!gx_mkdirs(cache_dir)) {
        snprintf(why, why_len, "cannot create %s", cache_dir);
        return false;
    }
    char sha[128];
    if (!commit_of(repo, spec, cache_dir, sha, sizeof sha, why, why_len)) return false;
    char dir[700], tree[720], build[740];
    snprintf(dir, sizeof dir, "%s/%s", cache_dir, sha);
    snprintf(server, cap, "%s/inputlayer-server", dir);
    snprintf(label, label_cap, "revision %s (%.12s), built Release", spec, sha);
    if (executable(server)) return true;
    snprintf(tree, sizeof tree, "%s/tree", dir);
    snprintf(build, sizeof build, "%s/build", tree);
    gx_rmtree(tree);
    if (!gx_mkdirs(dir)) {
        snprintf(why, why_len, "cannot create %s", dir);
        return false;
    }
    fprintf(stderr, "inputlayer-bench: building %s (%.12s) in a temporary worktree; logs in %s\n",
            spec, sha, dir);
    char jobs[24];
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(jobs, sizeof jobs, "%ld", n > 0 ? n : 1);
    char *add[] = {"git", "-C", (char *)repo, "worktree", "add", "--detach", tree, sha, NULL};
    char *configure[] = {"cmake", "-S", tree, "-B", build, "-DCMAKE_BUILD_TYPE=Release", NULL};
    char *make[] = {"cmake", "--build", build, "-j", jobs, "--target", "inputlayer-server", NULL};
    char built[800];
    snprintf(built, sizeof built, "%s/inputlayer-server", build);
    char *copy[] = {"cp", built, server, NULL};
    bool ok = step(add, dir, "worktree", why, why_len) &&
              step(configure, dir, "configure", why, why_len) &&
              step(make, dir, "build", why, why_len) && step(copy, dir, "copy", why, why_len);
    char *remove_tree[] = {"git", "-C", (char *)repo, "worktree", "remove", "--force", tree, NULL};
    char ignored[300];
    step(remove_tree, dir, "cleanup", ignored, sizeof ignored);
    gx_rmtree(tree);
    char *prune[] = {"git", "-C", (char *)repo, "worktree", "prune", NULL};
    step(prune, dir, "prune", ignored, sizeof ignored);
    return ok;
}
