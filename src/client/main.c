/* inputlayer-client: `--local [--data-dir DIR] [--script FILE]` runs statements
 * against an engine in this process, printing the reference transcript; without
 * `--script` it is an interactive REPL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/cli.h"
#include "value/value.h"

static void usage(FILE *f) {
    fputs("usage: inputlayer-client --local [--data-dir DIR] [--script FILE | FILE.iql]\n", f);
}

int main(int argc, char **argv) {
    const char *script = NULL, *data_dir = NULL;
    bool local = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--local") == 0)
            local = true;
        else if (strcmp(argv[i], "--script") == 0 && i + 1 < argc)
            script = argv[++i];
        else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc)
            data_dir = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && strlen(argv[i]) > 4 &&
                   strcmp(argv[i] + strlen(argv[i]) - 4, ".iql") == 0) {
            script = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!local) {
        fputs("inputlayer-client: only --local (in-process) mode is available\n", stderr);
        return 2;
    }
    char *err = NULL;
    il_engine *e = il_engine_open(data_dir, &err);
    if (!e) {
        fprintf(stderr, "inputlayer-client: %s\n", err ? err : "cannot open engine");
        free(err);
        return 1;
    }
    cli c = {.engine = e, .session = il_session_open(e), .out = stdout};
    int status = 0;
    if (script) {
        if (!cli_run_file(&c, script)) status = 1;
    } else {
        status = cli_repl(&c);
    }
    fflush(stdout);
    il_engine_close(e);
    val_shutdown();
    return status;
}
