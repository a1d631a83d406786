/* Result rows in the machine-readable output modes (`.mode`, `--mode`): csv, tsv, json
 * and jsonl, every value whole (the table mode cuts cells at 40 characters). */
#ifndef IL_CLIENT_FORMAT_H
#define IL_CLIENT_FORMAT_H

#include <stdbool.h>
#include <stdio.h>

#include "client/reply.h"

typedef enum cli_mode {
    CLI_MODE_TABLE, /* the reference box table and `N rows` (the default) */
    CLI_MODE_CSV,   /* RFC 4180: a header line, fields quoted when they need it */
    CLI_MODE_TSV,   /* a header line; tab, newline, CR and backslash escaped as \t \n \r \\ */
    CLI_MODE_JSON,  /* one array of objects, one object per line */
    CLI_MODE_JSONL, /* one object per line */
    CLI_MODE_BOX,   /* the box table with a rule between rows */
} cli_mode;

/* False when name is not a mode. */
bool cli_mode_parse(const char *name, size_t len, cli_mode *mode);
const char *cli_mode_name(cli_mode mode);
/* Prints the rows of a TABLE reply (with no row-count line) in a mode other than table. */
void cli_print_rows(FILE *out, const cli_reply *r, cli_mode mode);

#endif
