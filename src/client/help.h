/* The client's help: `.help` (the reference text, pinned by the transcripts), `.help all`
 * (every command on one line) and `.help CMD` (one command in detail), and the command
 * names the REPL completes. */
#ifndef IL_CLIENT_HELP_H
#define IL_CLIENT_HELP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Prints the help for the text after `.help` (arg may be empty); `.help CMD` prints the
 * command's detail only with `detail` (interactive use), else the reference text. */
void cli_help(FILE *out, const char *arg, bool detail);
/* The i-th meta command word with its dot (".kg", ".rel", ...), NULL past the last. */
const char *cli_help_command(size_t i);

#endif
