/* A statement's reply as the CLI prints it, from either path: an in-process il_result
 * or a server frame. Cells are already formatted as table cell text. */
#ifndef IL_CLIENT_REPLY_H
#define IL_CLIENT_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inputlayer.h"

typedef struct cli_reply {
    il_result_kind kind;
    il_stmt_class cls;
    char **lines; /* MESSAGE, ERROR, PARSE_ERROR (without "Parse error: ") */
    size_t nlines;
    char **cols; /* TABLE */
    size_t ncols, nrows;
    char **cells;    /* nrows * ncols; NULL where a row is shorter than the columns */
    bool *numeric;   /* per cell: a number (right-aligned) */
    char **json;     /* per cell: the value as JSON (for the csv/tsv/json modes); NULL where
                        a row is shorter than the columns */
    char *rule_head; /* SESSION_RULE */
    uint32_t arity;
    char *title; /* REL_SHOW */
    /* TABLE: the rows the result had before a server or engine cap cut it (not the
     * query's own limit); nrows when nothing was cut. */
    size_t total_rows;
    char *proof_trees; /* `.why`, `.why_not`: the proof trees as JSON, else NULL */
    char **warnings;   /* the engine's `metadata.warnings` about the statement */
    size_t nwarnings;
    /* A program of several statements through the server: its `errors[]` entries, and
       the facts its `statements[]` counts say it inserted or deleted. */
    size_t nerrors;
    unsigned long long written;
    bool counted; /* `statements[]` was there */
} cli_reply;

cli_reply *cli_reply_new(il_result_kind kind, il_stmt_class cls);
cli_reply *cli_reply_from_result(const il_result *r);
void cli_reply_add_line(cli_reply *p, const char *line, size_t len);
void cli_reply_free(cli_reply *p);
/* Takes the warnings of a result's `metadata` (JSON text; NULL: none), leaving out the
 * session-provenance notes ("Results include session data ...", "Results use N session
 * rule(s)"), which say where rows came from, not that something is wrong. */
void cli_reply_set_warnings(cli_reply *p, const char *metadata_json);

#endif
