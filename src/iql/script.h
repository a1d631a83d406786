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
    bool unterminated; /* brackets still open at a `.` line or at the end of the text:
                          print "Parse error: unterminated statement (unbalanced delimiters)" */
} iql_script_item;

typedef struct iql_script {
    char *content; /* comment-stripped copy of the text */
    size_t len;
    size_t pos; /* next unread byte of content */
    char *stmt; /* buffer for the current statement */
    size_t stmt_cap;
} iql_script;

void iql_script_init(iql_script *s, const char *text, size_t len);
/* Returns false at the end of the text. */
bool iql_script_next(iql_script *s, iql_script_item *item);
void iql_script_free(iql_script *s);

#endif
