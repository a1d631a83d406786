/* The arms of a perf-gate comparison (bench/README.md): a server binary given by path
 * (the client and the in-process benchmark are those beside it), or a git revision of the
 * repository built with the project's CMake in a temporary worktree (Release: the server,
 * the client, and inputlayer-inproc built from this tree's harness sources against that
 * revision's library) and kept in a cache by commit, so that a second gate run against the
 * same base does not build it again. */
#ifndef IL_BENCH_GATE_BUILD_H
#define IL_BENCH_GATE_BUILD_H

#include <stdbool.h>
#include <stddef.h>

enum { GB_PATH = 1024 };

typedef struct gb_arm {
    char server[GB_PATH];
    /* Empty when the arm has none; the reason then in *_why. */
    char client[GB_PATH], inproc[GB_PATH];
    char client_why[600], inproc_why[600];
    char label[1200];
} gb_arm;

/* Resolves spec, an executable path or a revision of the git repository `repo`, to an
 * arm. A revision is built into cache_dir/<commit>/ when needed (its build logs there);
 * inputlayer-inproc from the sources in harness_dir (this tree's bench/). False with the
 * reason in why when there is no server; a missing client or inproc is not an error. */
bool gb_resolve(const char *spec, const char *repo, const char *cache_dir, const char *harness_dir,
                gb_arm *arm, char *why, size_t why_len);

/* The arm of a server binary given by path: the client and inproc beside it. */
void gb_beside(const char *server, gb_arm *arm);

#endif
