/* Box tables as the CLI prints them (iql-language.md 6.8): widths in characters capped
 * at the `.width` setting (40 by default, as the reference), longer cells cut with an
 * ellipsis, number columns right-aligned. */
#ifndef IL_CLIENT_TABLE_H
#define IL_CLIENT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "client/reply.h"

enum { CLI_DEFAULT_WIDTH = 40 };

/* Prints the table of a TABLE reply (not the row-count line): cells cut at width
 * characters (0: whole), and with `ruled` a rule between rows (`.mode box`). */
void cli_print_table(FILE *out, const cli_reply *r, size_t width, bool ruled);

#endif
