/* inputlayer-server: `[--host H] [--port P] [--data-dir D]`. One process, one libuv
 * loop and one engine; HTTP (health, metrics) and the WebSocket API on one port. */
#include <errno.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/server.h"
#include "value/value.h"

static void usage(FILE *f) {
    fputs("usage: inputlayer-server [--host ADDR] [--port PORT] [--data-dir DIR]\n"
          "  defaults: --host 127.0.0.1 --port 8080 --data-dir ./data\n",
          f);
}

/* mkdir -p, owner-only for the directories it creates (they hold credentials). */
static bool make_dirs(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return mkdir(buf, 0700) == 0 || errno == EEXIST;
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *data_dir = "./data";
    int port = 8080;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
            host = argv[++i];
        } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            char *end;
            long p = strtol(argv[++i], &end, 10);
            if (*end || p < 0 || p > 65535) {
                fprintf(stderr, "ERROR: invalid port: %s\n", argv[i]);
                return 2;
            }
            port = (int)p;
        } else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            data_dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            puts("inputlayer-server " SRV_VERSION);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    /* A peer that goes away mid-write must not kill the server. */
    signal(SIGPIPE, SIG_IGN);
    printf("InputLayer Server\n=================\n\n");
    if (!make_dirs(data_dir)) {
        fprintf(stderr, "ERROR: Failed to initialize InputLayer: cannot create %s: %s\n", data_dir,
                strerror(errno));
        return 1;
    }
    srv_server s = {0};
    s.loop = uv_default_loop();
    s.started_ms = srv_now_ms();
    srv_random_hex(s.epoch, 8);
    char *err = NULL;
    s.engine = il_engine_open(data_dir, &err);
    if (!s.engine) {
        fprintf(stderr, "ERROR: Failed to initialize InputLayer: %s\n", err ? err : "?");
        free(err);
        return 1;
    }
    int status = 1;
    if (srv_auth_bootstrap(&s.auth, data_dir)) {
        s.stats = il_session_open(s.engine);
        printf("Storage engine initialized (in memory; data dir %s)\nHTTP Server\n-----------\n"
               "Address: %s:%d\n",
               data_dir, host, port);
        status = srv_loop_run(&s, host, port);
        il_session_close(s.stats);
    }
    srv_auth_free(&s.auth);
    il_engine_close(s.engine);
    uv_loop_close(s.loop);
    val_shutdown();
    return status;
}
