/* The CLI: runs statements against an in-process engine or a server and prints the
 * transcript the reference client prints (iql-language.md section 6), in script mode or
 * as a REPL. */
#ifndef IL_CLIENT_CLI_H
#define IL_CLIENT_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "inputlayer.h"

typedef struct cli_remote cli_remote;

typedef struct cli {
    il_engine *engine;   /* in-process mode */
    il_session *session; /* in-process mode */
    cli_remote *remote;  /* server mode (remote.h) */
    FILE *out;
    bool interactive;    /* REPL: errors get an "Error: " prefix */
    unsigned rule_count; /* session rules whose follow-up query succeeded (client-side count) */
    unsigned fact_count; /* session facts added (client-side count) */
    bool quit;           /* .quit was run */
    int load_depth;      /* nesting of .load */
    bool failed;         /* the server connection failed: exit status 1 */
} cli;

/* Runs one statement and prints its transcript lines (echo excluded). */
void cli_run_statement(cli *c, const char *stmt);
/* Runs every statement of a script file; false when the file cannot be read. */
bool cli_run_file(cli *c, const char *path);
/* Interactive loop (libedit); returns the exit status. */
int cli_repl(cli *c);

#endif
