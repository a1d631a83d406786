/* Starting and ending the server process of the WebSocket crash test (crash_server.h). */
#include "crash_server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { START_TIMEOUT_MS = 30000, STOP_TIMEOUT_MS = 30000, POLL_MS = 20 };

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The port in the first "listening on: http://HOST:PORT" of the log after offset from. */
static bool find_port(const char *log, off_t from, char *port, size_t cap) {
    FILE *f = fopen(log, "r");
    if (!f) return false;
    bool found = false;
    char line[1024];
    if (fseeko(f, from, SEEK_SET) == 0)
        while (!found && fgets(line, sizeof line, f)) {
            char *at = strstr(line, "listening on: http://");
            char *colon = at ? strchr(at + strlen("listening on: http://"), ':') : NULL;
            long p = colon ? strtol(colon + 1, NULL, 10) : 0;
            if (p > 0 && p < 65536) {
                snprintf(port, cap, "%ld", p);
                found = true;
            }
        }
    fclose(f);
    return found;
}

static void exec_server(const char *bin, const char *dir, const char *data, const char *const *sets,
                        const char *const *env, int logfd) {
    if (chdir(dir) != 0) _exit(127);
    dup2(logfd, 1);
    dup2(logfd, 2);
    size_t nenv = 0, nsets = 0;
    while (environ[nenv]) nenv++;
    while (sets[nsets]) nsets++;
    char **envp = calloc(nenv + 64, sizeof *envp);
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "INPUTLAYER_", 11) != 0) envp[k++] = environ[i];
    for (size_t i = 0; env[i] && i < 60; i++) envp[k++] = (char *)env[i];
    char **argv = calloc(2 * nsets + 8, sizeof *argv);
    size_t a = 0;
    argv[a++] = (char *)bin;
    argv[a++] = "--port";
    argv[a++] = "0";
    argv[a++] = "--data-dir";
    argv[a++] = (char *)data;
    for (size_t i = 0; i < nsets; i++) {
        argv[a++] = "--set";
        argv[a++] = (char *)sets[i];
    }
    execve(bin, argv, envp);
    _exit(127);
}

bool cs_start(crash_server *s, const char *bin, const char *dir, const char *data,
              const char *const *sets, const char *const *env, char *err, size_t errlen) {
    char log[4096];
    snprintf(log, sizeof log, "%s/server.log", dir);
    int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct stat sb;
    if (logfd < 0 || fstat(logfd, &sb) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", log, strerror(errno));
        if (logfd >= 0) close(logfd);
        return false;
    }
    off_t from = sb.st_size; /* this start's output follows */
    fflush(NULL);
    s->pid = fork();
    if (s->pid == 0) exec_server(bin, dir, data, sets, env, logfd);
    close(logfd);
    if (s->pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return false;
    }
    for (long waited = 0; waited < START_TIMEOUT_MS; waited += POLL_MS) {
        if (find_port(log, from, s->port, sizeof s->port)) return true;
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            snprintf(err, errlen, "the server exited before listening (status %d); see %s", status,
                     log);
            s->pid = 0;
            return false;
        }
        sleep_ms(POLL_MS);
    }
    snprintf(err, errlen, "the server did not listen within %d s; see %s", START_TIMEOUT_MS / 1000,
             log);
    cs_kill(s);
    return false;
}

void cs_kill(crash_server *s) {
    if (s->pid <= 0) return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

int cs_stop(crash_server *s) {
    if (s->pid <= 0) return -1;
    kill(s->pid, SIGTERM);
    int status = 0;
    for (long waited = 0; waited < STOP_TIMEOUT_MS; waited += POLL_MS) {
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        sleep_ms(POLL_MS);
    }
    cs_kill(s);
    return -1;
}
