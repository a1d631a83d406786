/* Processes of the perf gate; see gate_proc.h. */
#include "gate_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Processes started and not yet waited for, for the signal handler. */
enum { MAX_LIVE = 16 };
static volatile pid_t g_live[MAX_LIVE];

static void track(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (g_live[i] == 0) {
            g_live[i] = pid;
            return;
        }
}

static void untrack(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (g_live[i] == pid) g_live[i] = 0;
}

static void on_signal(int sig) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (g_live[i] > 0) kill(-g_live[i], SIGKILL), kill(g_live[i], SIGKILL);
    _exit(128 + sig);
}

void gx_install_cleanup(void) {
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

bool gx_mkdirs(const char *path) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
            *p = '/';
        }
    return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void gx_rmtree(const char *path) {
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void gx_tail(const char *path, char *out, size_t cap) {
    out[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    long want = (long)cap - 1;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        fseek(f, size > want ? size - want : 0, SEEK_SET);
    }
    size_t got = fread(out, 1, cap - 1, f);
    out[got] = 0;
    fclose(f);
    /* One line for a message. */
    for (char *p = out; *p; p++)
        if (*p == '\n') *p = ' ';
}

/* The argument vector with `taskset -c cpus` in front when cpus is set. */
static char **pinned_argv(char *const *argv, const char *cpus) {
    size_t n = 0;
    while (argv[n]) n++;
    char **out = calloc(n + 4, sizeof *out);
    if (!out) return NULL;
    size_t k = 0;
    if (cpus) {
        out[k++] = "taskset";
        out[k++] = "-c";
        out[k++] = (char *)cpus;
    }
    for (size_t i = 0; i < n; i++) out[k++] = argv[i];
    return out;
}

/* Forks a child that runs argv in dir (NULL: here) with env added and its output in the
 * files; -1 on failure. */
static pid_t spawn(char *const *argv, const char *cpus, const char *dir, char *const *env,
                   size_t nenv, const char *out_path, const char *err_path) {
    char **full = pinned_argv(argv, cpus);
    if (!full) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        /* Its own process group, so that a stop reaches whatever it starts. */
        setpgid(0, 0);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int err = strcmp(err_path, out_path) == 0
                      ? out
                      : open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (out < 0 || err < 0 || devnull < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
            dup2(devnull, 0) < 0)
            _exit(126);
        if (dir && chdir(dir) != 0) _exit(126);
        for (size_t i = 0; i < nenv; i++) putenv(env[i]);
        execvp(full[0], full);
        fprintf(stderr, "cannot run %s: %s\n", full[0], strerror(errno));
        _exit(127);
    }
    free(full);
    if (pid > 0) track(pid);
    return pid;
}

/* Waits for pid up to timeout_ms; its exit status, or -2 when it is still running. Its
 * resource use in *ru when ru is not NULL. Polled every millisecond: whole processes are
 * timed through this. */
static int wait_for(pid_t pid, long timeout_ms, struct rusage *ru) {
    for (long waited = 0;; waited += 1) {
        int st;
        pid_t got = wait4(pid, &st, WNOHANG, ru);
        if (got == pid) {
            untrack(pid);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (got < 0 && errno != EINTR) return -1;
        if (waited >= timeout_ms) return -2;
        sleep_ms(1);
    }
}

int gx_run(char *const *argv, const char *cpus, const char *out_path, const char *err_path,
           int timeout_s, char *why, size_t why_len) {
    return gx_run_in(argv, cpus, NULL, out_path, err_path, timeout_s, NULL, why, why_len);
}

int gx_run_in(char *const *argv, const char *cpus, const char *dir, const char *out_path,
              const char *err_path, int timeout_s, struct rusage *ru, char *why, size_t why_len) {
    pid_t pid = spawn(argv, cpus, dir, NULL, 0, out_path, err_path);
    if (pid < 0) {
        snprintf(why, why_len, "cannot start %s: %s", argv[0], strerror(errno));
        return -1;
    }
    int rc = wait_for(pid, (long)timeout_s * 1000, ru);
    if (rc == -2) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        untrack(pid);
        snprintf(why, why_len, "%s did not finish within %d s", argv[0], timeout_s);
        return 124;
    }
    return rc;
}

bool gx_start_listening(gx_server *s, char *const *argv, const char *dir, char *const *env,
                        size_t nenv, const char *cpus, char *why, size_t why_len) {
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    if (!gx_mkdirs(dir)) {
        snprintf(why, why_len, "cannot create %s: %s", dir, strerror(errno));
        return false;
    }
    char out[600], err[600];
    snprintf(out, sizeof out, "%s.out", dir);
    snprintf(err, sizeof err, "%s.err", dir);
    s->pid = spawn(argv, cpus, dir, env, nenv, out, err);
    if (s->pid < 0) {
        snprintf(why, why_len, "cannot start %s: %s", argv[0], strerror(errno));
        s->pid = 0;
        return false;
    }
    /* Polled often: a restart's time to its first login is measured through this. */
    for (long waited_us = 0; waited_us < 60000000L; waited_us += 1000) {
        FILE *f = fopen(out, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            const char *at = strstr(line, "listening on: http://");
            const char *colon = at ? strrchr(at, ':') : NULL;
            int port = colon ? atoi(colon + 1) : 0;
            if (port > 0) {
                snprintf(s->port, sizeof s->port, "%d", port);
                fclose(f);
                return true;
            }
        }
        if (f) fclose(f);
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            untrack(s->pid);
            char tail[300];
            gx_tail(err, tail, sizeof tail);
            snprintf(why, why_len, "%s exited before listening: %s", argv[0], tail);
            s->pid = 0;
            return false;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    snprintf(why, why_len, "%s did not listen within 60 s", argv[0]);
    gx_server_kill(s);
    return false;
}

bool gx_server_start(gx_server *s, const char *binary, const char *dir, const char *data_dir,
                     char *const *env, size_t nenv, const char *cpus, char *why, size_t why_len) {
    *s = (gx_server){0};
    snprintf(s->data, sizeof s->data, "%s", data_dir);
    if (!gx_mkdirs(data_dir)) {
        snprintf(why, why_len, "cannot create %s: %s", data_dir, strerror(errno));
        return false;
    }
    /* Limits off and no heartbeat pings, as bench/server-lib.sh starts benchmark servers;
     * then the arm's own environment, which may override them. */
    static char key[64];
    snprintf(key, sizeof key, "INPUTLAYER_BOOTSTRAP_API_KEY=%s", GX_API_KEY);
    char *const FIXED[] = {
        key,
        "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC=0",
        "INPUTLAYER_HTTP__RATE_LIMIT__PER_IP_MAX_RPS=0",
        "INPUTLAYER_HTTP__RATE_LIMIT__MAX_CONNECTIONS=0",
        "INPUTLAYER_HTTP__RATE_LIMIT__MAX_WS_CONNECTIONS=0",
        "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_PREAUTH_PER_IP=0",
        "INPUTLAYER_HTTP__WS_PING_INTERVAL_MS=0",
    };
    size_t nfixed = sizeof FIXED / sizeof *FIXED;
    char **all = calloc(nfixed + nenv + 1, sizeof *all);
    if (!all) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    for (size_t i = 0; i < nfixed; i++) all[i] = FIXED[i];
    for (size_t i = 0; i < nenv; i++) all[nfixed + i] = env[i];
    char *argv[] = {(char *)binary, "--port", "0", "--data-dir", (char *)data_dir, NULL};
    bool ok = gx_start_listening(s, argv, dir, all, nfixed + nenv, cpus, why, why_len);
    free(all);
    return ok;
}

int gx_server_stop(gx_server *s) {
    if (s->pid <= 0) return 0;
    kill(s->pid, SIGTERM);
    int rc = wait_for(s->pid, 10000, NULL);
    if (rc == -2) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        untrack(s->pid);
        rc = -1;
    }
    s->pid = 0;
    return rc;
}

void gx_server_kill(gx_server *s) {
    if (s->pid <= 0) return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    untrack(s->pid);
    s->pid = 0;
}
