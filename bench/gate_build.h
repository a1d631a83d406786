/* The arms of a perf-gate comparison (bench/README.md): a server binary given by path, or
 * a git revision of the repository built with the project's CMake in a temporary worktree
 * (Release, the server target only) and kept in a cache by commit, so that a second gate
 * run against the same base does not build it again. */
#ifndef IL_BENCH_GATE_BUILD_H
#define IL_BENCH_GATE_BUILD_H

#include <stdbool.h>
#include <stddef.h>

/* Resolves spec, an executable path or a revision of the git repository `repo`, to a
 * server binary in server (cap bytes), and describes it in label. Builds into
 * cache_dir/<commit>/ when needed (its build log there). False with the reason in why. */
bool gb_resolve(const char *spec, const char *repo, const char *cache_dir, char *server, size_t cap,
                char *label, size_t label_cap, char *why, size_t why_len);

#endif
