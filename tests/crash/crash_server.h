/* An inputlayer-server process for the WebSocket crash test: started in a directory of
 * its own (so no ./config.toml is read) on a port the system chooses, with the caller's
 * settings and environment, its output appended to DIR/server.log; killed with SIGKILL
 * or stopped with SIGTERM. */
#ifndef IL_CRASH_SERVER_H
#define IL_CRASH_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct crash_server {
    pid_t pid;
    char port[8];
} crash_server;

/* Starts bin with --port 0 --data-dir data, a `--set` for each of sets (NULL-ended) and
 * the environment without the caller's INPUTLAYER_* variables plus env (NULL-ended
 * "NAME=value"), and waits until it reports the port it listens on (30 s at most).
 * False with the reason in err. */
bool cs_start(crash_server *s, const char *bin, const char *dir, const char *data,
              const char *const *sets, const char *const *env, char *err, size_t errlen);
/* SIGKILL, and waits for the process. */
void cs_kill(crash_server *s);
/* SIGTERM, waits (SIGKILL after 30 s); the exit status, or -1 when it did not exit by
 * itself with one. */
int cs_stop(crash_server *s);

#endif
