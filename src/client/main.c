/* inputlayer-client: `--local [--data-dir DIR [--recover=salvage]] [--script FILE]` runs statements
 * against an engine in this process; `--server URL [--api-key K | --user U --password P]
 * [--script FILE]` runs them on inputlayer-server. Both print the reference transcript;
 * without `--script` it is an interactive REPL. A script ends with a summary on standard
 * error, and its exit status tells whether every statement succeeded (usage()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "client/cli.h"
#include "client/local_subs.h"
#include "client/remote.h"
#include "client/table.h"
#include "value/value.h"

/* Reads a password from the terminal without echoing it (not from standard input, which
 * may carry a script). NULL when there is no terminal. */
static char *ask_password(const char *user) {
    FILE *tty = fopen("/dev/tty", "r+");
    if (!tty) return NULL;
    /* Echo goes off before the prompt shows, so nothing typed after it is echoed. */
    struct termios old, quiet;
    bool restore = tcgetattr(fileno(tty), &old) == 0;
    if (restore) {
        quiet = old;
        quiet.c_lflag &= (tcflag_t)~ECHO;
        tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
    }
    fprintf(tty, "Password for %s: ", user ? user : "user");
    fflush(tty);
    char buf[1024];
    char *got = fgets(buf, sizeof buf, tty);
    if (restore) tcsetattr(fileno(tty), TCSAFLUSH, &old);
    fputc('\n', tty);
    fclose(tty);
    if (!got) return NULL;
    buf[strcspn(buf, "\r\n")] = 0;
    char *pw = strdup(buf);
    memset(buf, 0, sizeof buf);
    return pw;
}

static void usage(FILE *f) {
    fputs("usage: inputlayer-client --local [--data-dir DIR [--recover=salvage]]\n"
          "                         [--no-maintained-views] [--threads N] [--bail] [--atomic]\n"
          "                         [--mode M]\n"
          "                         [--script FILE | FILE.iql]\n"
          "       inputlayer-client --server URL [--api-key KEY | --user U [--password [P]]]\n"
          "                         [--bail] [--atomic] [--mode M] [--script FILE | FILE.iql]\n"
          "  --script - reads the script from standard input\n"
          "  --bail (or `.bail on` in a script) stops a script at its first failed statement\n"
          "  --atomic runs a script as one program: all of its writes, or none of them\n"
          "  --mode table|box|csv|tsv|json|jsonl (or `.mode`) prints result rows as a box table\n"
          "  (the default; cells cut at 40 characters) or whole in a machine-readable form\n"
          "  --server defaults to http://127.0.0.1:8080; the API key to $INPUTLAYER_API_KEY\n"
          "  --user without a password takes $INPUTLAYER_PASSWORD, else asks for it on the\n"
          "  terminal (as does --password without a value)\n"
          "  --recover=salvage opens a data directory whose recovery cannot reach its last\n"
          "  acknowledged commit from what is readable, moving the damaged files aside\n"
          "  --no-maintained-views: every read of a rule evaluates it (no read makes a rule\n"
          "  maintained; docs/engine.md)\n"
          "  --threads N: threads one statement's evaluation may use (default: the CPUs\n"
          "  online, at most 64; docs/engine.md)\n"
          "exit status: 0 every statement succeeded; 1 a statement failed (or the script\n"
          "  could not be read); 2 bad usage; 3 the server could not be reached, or the\n"
          "  connection was lost (the statement without a reply is named on stderr)\n",
          f);
}

int main(int argc, char **argv) {
    const char *script = NULL, *data_dir = NULL, *server = NULL, *api_key = NULL, *user = NULL,
               *password = NULL;
    bool local = false, maintained_views = true, bail = false, ask = false, atomic = false;
    unsigned threads = 0; /* 0: the engine's default */
    cli_mode mode = CLI_MODE_TABLE;
    il_recover_mode recover = IL_RECOVER_STRICT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (strcmp(a, "--local") == 0)
            local = true;
        else if ((strcmp(a, "--script") == 0 || strcmp(a, "-s") == 0) && more)
            script = argv[++i];
        else if (strcmp(a, "--bail") == 0)
            bail = true;
        else if (strcmp(a, "--atomic") == 0)
            atomic = true;
        else if (strcmp(a, "--mode") == 0 && more) {
            const char *m = argv[++i];
            if (!cli_mode_parse(m, strlen(m), &mode)) {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(a, "--data-dir") == 0 && more)
            data_dir = argv[++i];
        else if (strcmp(a, "--recover=salvage") == 0)
            recover = IL_RECOVER_SALVAGE;
        else if (strcmp(a, "--recover=strict") == 0)
            recover = IL_RECOVER_STRICT;
        else if (strcmp(a, "--no-maintained-views") == 0)
            maintained_views = false;
        else if (strcmp(a, "--threads") == 0 && more) {
            char *end;
            unsigned long n = strtoul(argv[++i], &end, 10);
            if (*end || n < 1 || n > IL_EVAL_THREADS_MAX) {
                fprintf(stderr, "inputlayer-client: --threads takes 1 to %d\n",
                        IL_EVAL_THREADS_MAX);
                return 2;
            }
            threads = (unsigned)n;
        } else if (strcmp(a, "--server") == 0 && more)
            server = argv[++i];
        else if ((strcmp(a, "--api-key") == 0 || strcmp(a, "-k") == 0) && more)
            api_key = argv[++i];
        else if (strcmp(a, "--user") == 0 && more)
            user = argv[++i];
        else if (strcmp(a, "--password") == 0 && more && argv[i + 1][0] != '-')
            password = argv[++i];
        else if (strcmp(a, "--password") == 0)
            ask = true; /* no value: asked for on the terminal */
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] != '-' && strlen(a) > 4 && strcmp(a + strlen(a) - 4, ".iql") == 0) {
            script = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    cli c = {
        .out = stdout, .bail = bail, .mode = mode, .width = CLI_DEFAULT_WIDTH, .atomic = atomic};
    il_engine *e = NULL;
    if (local && server) {
        fputs("inputlayer-client: --local and --server exclude each other\n", stderr);
        return 2;
    }
    if (local) {
        char *err = NULL;
        e = il_engine_open_recover(data_dir, recover, &err);
        if (!e) {
            fprintf(stderr, "inputlayer-client: %s\n", err ? err : "cannot open engine");
            free(err);
            return 1;
        }
        il_engine_set_maintained_views(e, maintained_views);
        il_engine_set_eval_threads(e, threads);
        c.engine = e;
        c.session = il_session_open(e);
    } else {
        if (!api_key && !user) api_key = getenv("INPUTLAYER_API_KEY");
        if (api_key && !*api_key) api_key = NULL;
        if (!api_key && !user) {
            fputs("Error: API key required. Use --api-key <KEY> or set INPUTLAYER_API_KEY.\n",
                  stderr);
            return 1;
        }
        char *asked = NULL;
        if (user && !api_key && !password && !ask) password = getenv("INPUTLAYER_PASSWORD");
        if (user && !api_key && !password) {
            asked = ask_password(user);
            if (!asked) {
                fputs("inputlayer-client: a password is needed: --password P, "
                      "$INPUTLAYER_PASSWORD, or a terminal to ask on\n",
                      stderr);
                return 2;
            }
            password = asked;
        }
        char err[512];
        c.remote = cli_remote_connect(server ? server : "http://127.0.0.1:8080", api_key,
                                      api_key ? NULL : user, password, err, sizeof err);
        if (asked) memset(asked, 0, strlen(asked));
        free(asked);
        if (!c.remote) {
            fprintf(stderr, "inputlayer-client: %s\n", err);
            return 3;
        }
    }
    int status = 0;
    if (script) {
        if (!cli_run_file(&c, script)) status = 1;
        fflush(stdout);
        fprintf(stderr,
                "inputlayer-client: %s: %lu statement(s) run, %lu failed%s; %llu fact(s) written\n",
                strcmp(script, "-") == 0 ? "<stdin>" : script, c.run, c.errors,
                c.stop ? " (stopped at the first error)" : "", c.written);
        if (c.errors) status = 1;
    } else {
        status = cli_repl(&c);
    }
    if (c.failed) status = 3;
    if (c.redirect) fclose(c.redirect);
    fflush(stdout);
    cli_remote_close(c.remote);
    cli_local_subs_free(&c);
    if (e) il_engine_close(e);
    val_shutdown();
    return status;
}
