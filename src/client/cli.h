/* The CLI: runs statements against an in-process engine or a server and prints the
 * transcript the reference client prints (iql-language.md section 6), in script mode or
 * as a REPL. */
#ifndef IL_CLIENT_CLI_H
#define IL_CLIENT_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "client/format.h"
#include "inputlayer.h"

typedef struct cli_remote cli_remote;
typedef struct cli_source cli_source;
typedef struct iql_script iql_script;

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
    bool failed;         /* the server connection failed or was lost: exit status 3 */
    bool bail;           /* --bail or `.bail on`: a failed statement stops the script */
    cli_mode mode;       /* --mode or `.mode`: how result rows are printed */
    bool stop;           /* a statement failed with bail on: the script stops */
    unsigned long run, errors; /* script statements run, and how many failed */
    /* The script being run (NULL in the REPL): its file and splitter, for positions. */
    cli_source *src;
    iql_script *script;
    struct local_sub *local_subs; /* in-process standing queries (local_subs.c) */
    /* The REPL: Ctrl-C sets *interrupt (the running statement is cancelled, a .load
       stops); a `.kg use` sets graph_changed (the prompt shows the graph). */
    const volatile int *interrupt;
    bool graph_changed;
    size_t width;               /* `.width`: table cells cut at this many characters; 0: whole */
    FILE *redirect;             /* `.output FILE`: out is this file (closed when changed) */
    bool pager;                 /* the REPL on a terminal: long tables go through $PAGER */
    unsigned long long written; /* stored facts inserted or deleted (the summary) */
    bool atomic;                /* --atomic: a script runs as one program, all or nothing */
} cli;

/* Runs one statement and prints its transcript lines (echo excluded); false when it
 * failed (an error, a parse error, a lost connection). */
bool cli_run_statement(cli *c, const char *stmt);
/* Runs every statement of a script file ("-": standard input); false when the file
 * cannot be read. */
bool cli_run_file(cli *c, const char *path);
/* Runs a statement for the client itself (the prompt's graph, completion), printing
 * nothing: its reply, or NULL when the server connection failed. */
struct cli_reply *cli_fetch(cli *c, const char *stmt);
/* The first line of its reply (malloc'ed), or NULL. */
char *cli_fetch_first_line(cli *c, const char *stmt);
/* Interactive loop (libedit); returns the exit status. */
int cli_repl(cli *c);

#endif
