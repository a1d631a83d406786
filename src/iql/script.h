/* The script reader: splits program text into statements the way the CLI reads a
 * script (iql-language.md 6.2), except that a statement written over several lines is
 * one statement: a line continues while brackets are open, or when it ends with `,`
 * or `<-`. Block comments (nesting) and `//` comments are removed; each statement's
 * text is its lines trimmed and joined by single spaces (this is what `> ` echoes). */
#ifndef IL_IQL_SCRIPT_H
#define IL_IQL_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct iql_script_item {
    const char *text; /* statement text, NUL-terminated, valid until the next call */
    size_t len;
    bool unterminated; /* brackets still open at a `.` line, at a line that ends with `.`,
                          at a line that starts a new `+`, `-` or `?` statement, or at the
                          end of the text: print "Parse error: unterminated statement
                          (unbalanced delimiters)" */
    bool open_string;  /* a string literal of the statement runs to the end of its line */
} iql_script_item;

#define IQL_SCRIPT_SMALL       256
#define IQL_SCRIPT_SMALL_LINES 8

typedef struct iql_script {
    char *content; /* comment-stripped copy of the text */
    size_t len;
    size_t pos; /* next unread byte of content */
    char *stmt; /* buffer for the current statement */
    size_t stmt_cap;
    /* Where content came from: content offset map_c[i] onwards is text offset map_o[i]
     * onwards, up to the next entry (a removed comment starts a new entry). */
    size_t *map_c, *map_o, nmap, map_cap;
    /* Where the current statement came from: its byte seg_s[i] onwards is content byte
     * seg_c[i] onwards, up to the next entry (one per line of the statement). */
    size_t *seg_s, *seg_c, nseg, seg_cap;
    /* Where a short program and its statements live, so that one of a line or two (most
     * requests to the server) costs no allocation; an iql_script is not to be copied. */
    char content_small[IQL_SCRIPT_SMALL], stmt_small[IQL_SCRIPT_SMALL];
    size_t seg_small[2][IQL_SCRIPT_SMALL_LINES];
} iql_script;

void iql_script_init(iql_script *s, const char *text, size_t len);
/* Returns false at the end of the text. */
bool iql_script_next(iql_script *s, iql_script_item *item);
void iql_script_free(iql_script *s);
/* The offset in the text given to iql_script_init of byte `at` of the statement last
 * returned (an error position within it; 0 is where the statement starts). */
size_t iql_script_source(const iql_script *s, size_t at);

#endif
