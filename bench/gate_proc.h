/* Processes of the perf gate (bench/README.md): a fresh inputlayer-server in an empty
 * directory with a fresh data directory (or a given one, to restart it), on a port the
 * system chooses, limits and heartbeats off as in bench/server-lib.sh, pinned with taskset
 * when asked, with an arm's extra environment; and the fixture clients run to completion
 * with their output in files and a time limit. */
#ifndef IL_BENCH_GATE_PROC_H
#define IL_BENCH_GATE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The API key of the gate's own servers (127.0.0.1, fresh data directories). */
#define GX_API_KEY "perf-gate-key"

typedef struct gx_server {
    pid_t pid;
    char port[16];
    char dir[512];  /* the server's working directory: its output files are beside it */
    char data[600]; /* its data directory */
} gx_server;

/* Starts `binary` with data directory data_dir (created when missing) under scratch
 * directory dir (created), KEY=VALUE pairs env added, pinned to cpus (taskset -c; NULL:
 * not pinned); waits up to 60 s for its listening line. False with the reason (and the end
 * of its output) in why. */
bool gx_server_start(gx_server *s, const char *binary, const char *dir, const char *data_dir,
                     char *const *env, size_t nenv, const char *cpus, char *why, size_t why_len);
/* Starts any program that prints a `listening on: http://HOST:PORT` line (the echo
 * server), in dir with its output in dir.out / dir.err; as gx_server_start otherwise. */
bool gx_start_listening(gx_server *s, char *const *argv, const char *dir, char *const *env,
                        size_t nenv, const char *cpus, char *why, size_t why_len);
/* SIGTERM, up to 10 s to exit, then SIGKILL. Returns its exit status (128 + N for a
 * signal N), -1 when it had to be killed, 0 when none was running. */
int gx_server_stop(gx_server *s);
/* SIGKILL at once (a crash), and the wait. */
void gx_server_kill(gx_server *s);

/* Runs argv (pinned to cpus when not NULL) with stdout in out_path and stderr in
 * err_path; kills it after timeout_s. Returns its exit status, 124 on the timeout, -1
 * when it could not run (the reason in why). */
int gx_run(char *const *argv, const char *cpus, const char *out_path, const char *err_path,
           int timeout_s, char *why, size_t why_len);

/* gx_run in directory dir (NULL: here), with the process's resource use (wait4's: its
 * peak RSS in ru_maxrss) in *ru when ru is not NULL. */
struct rusage;
int gx_run_in(char *const *argv, const char *cpus, const char *dir, const char *out_path,
              const char *err_path, int timeout_s, struct rusage *ru, char *why, size_t why_len);

/* On SIGINT or SIGTERM, kills every process started here that is still running (they
 * run in process groups of their own) before exiting. */
void gx_install_cleanup(void);

/* The first `max` bytes of a file's last lines (the end of a log), for messages. */
void gx_tail(const char *path, char *out, size_t cap);

/* Makes a directory and its parents. */
bool gx_mkdirs(const char *path);
/* Removes a directory tree (best effort). */
void gx_rmtree(const char *path);

#endif
