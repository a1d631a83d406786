/* Where a statement of a script came from: file line and column of a byte of the file,
 * and the rustc-style `   --> FILE:LINE:COL` and `    | ` lines that point at it (the
 * reference transcript comparison ignores both shapes). */
#ifndef IL_CLIENT_SOURCE_H
#define IL_CLIENT_SOURCE_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_source {
    const char *path; /* as given; "<stdin>" for standard input */
    const char *text; /* the whole file, not owned */
    size_t len;
    size_t at, line, line_start; /* a cursor: byte `at` is on `line`, which starts there */
} cli_source;

void cli_source_init(cli_source *s, const char *path, const char *text, size_t len);
/* 1-based line and column (in characters) of byte off. */
void cli_source_locate(cli_source *s, size_t off, size_t *line, size_t *col);
/* Prints the `-->` line, the source line and a caret under byte off. */
void cli_source_point(cli_source *s, FILE *out, size_t off);

#endif
