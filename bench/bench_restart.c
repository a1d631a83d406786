/* bench_restart: restart time of a durable engine (docs/durability.md) on the 1M-edge
 * hot chains of docs/performance.md 3.2 with the views benchmark's rules (r1, path,
 * hot_reach) deployed: half of the edges in a checkpoint, the other half only in the
 * log.
 *
 *   bench_restart [--edges N] [--dir DIR]
 *
 * Loads the data into DIR (a fresh temporary directory by default), then runs itself
 * again as a new process that opens DIR and answers one query, and reports the time
 * from that process's start to the answer, with the recovery part alone. Also prints
 * how long the checkpoint's snapshot held up the engine (the pause writers see) and the
 * whole `.compact`. For our own checks; not a gate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen_graph.h"
#include "inputlayer.h"
#include "kg/kg.h"
#include "store/store.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static il_result *exec_ok(il_session *s, const char *text, size_t len) {
    il_result *r = il_execute(s, text, len);
    il_result_kind k = il_result_kind_of(r);
    if (k == IL_RESULT_ERROR || k == IL_RESULT_PARSE_ERROR) {
        fprintf(stderr, "bench_restart: failed: %.200s: %s\n", text,
                il_result_nlines(r) ? il_result_line(r, 0) : "?");
        exit(1);
    }
    return r;
}

static void exec_str(il_session *s, const char *text) {
    il_result_free(exec_ok(s, text, strlen(text)));
}

static int exec_cb(void *ctx, const char *stmt, size_t len) {
    il_result_free(exec_ok(ctx, stmt, len));
    return 0;
}

static const char QUERY[] = "?hot_reach(400, Y)";

/* The restarted process: open, then the first query. */
static int restart(const char *dir, double t_start) {
    char *err = NULL;
    il_engine *e = il_engine_open(dir, &err);
    if (!e) {
        fprintf(stderr, "bench_restart: %s\n", err ? err : "open failed");
        return 1;
    }
    double t_open = now_ms();
    il_session *s = il_session_open(e);
    exec_str(s, ".kg use bench");
    il_result *r = exec_ok(s, QUERY, strlen(QUERY));
    double t_answer = now_ms();
    size_t rows = il_result_nrows(r);
    il_result_free(r);
    printf("restart: open (checkpoint + log) %.0f ms, first query %.1f ms, start to answer "
           "%.0f ms (%zu rows)\n",
           t_open - t_start, t_answer - t_open, t_answer - t_start, rows);
    il_session_close(s);
    il_engine_close(e);
    return 0;
}

int main(int argc, char **argv) {
    double t_start = now_ms();
    size_t want = 1000000;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--restart") == 0 && i + 1 < argc) return restart(argv[i + 1], t_start);
        if (strcmp(argv[i], "--edges") == 0 && i + 1 < argc) want = (size_t)atoll(argv[++i]);
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
    }
    char tmp[] = "/tmp/il_bench_restart_XXXXXX";
    if (!dir && !(dir = mkdtemp(tmp))) return 1;
    char *err = NULL;
    il_engine *e = il_engine_open(dir, &err);
    if (!e) {
        fprintf(stderr, "bench_restart: %s\n", err ? err : "open failed");
        return 1;
    }
    /* loading speed is not what is measured: sync once at the end */
    il_engine_set_durability(e, IL_DURABILITY_ASYNC, 0);
    il_engine_set_checkpoint_bytes(e, 0);
    il_session *s = il_session_open(e);
    exec_str(s, ".kg create bench");
    exec_str(s, ".kg use bench");
    size_t n;
    gg_edge *edges = gg_chains(want, &n);
    size_t half = n / 2;
    gg_emit_hot_labels("label", "hot", gg_hot_count(gg_chain_count(want)), GG_CHUNK, exec_cb, s);
    exec_str(s, "+r1(X,Y) <- edge(X,Y), label(X,\"hot\")");
    exec_str(s, "+path(X,Y) <- edge(X,Y)");
    exec_str(s, "+path(X,Z) <- edge(X,Y), path(Y,Z)");
    exec_str(s, "+hot_reach(X,Y) <- label(X,\"hot\"), path(X,Y)");
    gg_emit_edges("edge", edges, half, GG_CHUNK, exec_cb, s);
    double t0 = now_ms();
    exec_str(s, ".compact");
    double compact_ms = now_ms() - t0;
    double pause_ms = store_checkpoint_pause_ms(e->store);
    gg_emit_edges("edge", edges + half, n - half, GG_CHUNK, exec_cb, s);
    free(edges);
    if (!il_engine_sync(e, &err)) {
        fprintf(stderr, "bench_restart: %s\n", err ? err : "sync failed");
        return 1;
    }
    printf("data: %zu edges, %zu in the checkpoint, %zu only in the log\n", n, half, n - half);
    printf("checkpoint: snapshot pause %.1f ms, whole .compact %.0f ms\n", pause_ms, compact_ms);
    il_session_close(s);
    il_engine_close(e);
    fflush(stdout);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "du -sh %s/ckpt %s/wal | sed 's|%s/||'", dir, dir, dir);
    if (system(cmd) != 0) return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "--restart", dir, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (dir == tmp) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
