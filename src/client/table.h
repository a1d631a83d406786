/* Box tables as the CLI prints them (iql-language.md 6.8): widths in characters capped
 * at 40, cells over 40 characters cut with an ellipsis, number columns right-aligned. */
#ifndef IL_CLIENT_TABLE_H
#define IL_CLIENT_TABLE_H

#include <stdio.h>

#include "client/reply.h"

/* Prints the table of a TABLE reply (not the row-count line). */
void cli_print_table(FILE *out, const cli_reply *r);

#endif
